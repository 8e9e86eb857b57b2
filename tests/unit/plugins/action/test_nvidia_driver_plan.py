# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The nvidia_driver_plan action: the role's settings read from the task's variables, the facts from
ansible_facts, the node read through nvidia_driver_probe (counted: one round-trip, only in the stages
that need the node), the keyed preflight decision, and what each stage hands the role.

The rules themselves are tested on module_utils.decide.nvidia_driver; what the probe reads on a node, on
the probe module. Here the probe answers what a (fake) node would."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re


from conftest import read_role_vars, read_public, run_planner
from ansible.template import trust_as_template
from ansible_collections.aistack.gpu_node.plugins.action.nvidia_driver_plan import ActionModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import fabric_manager

PROBE = "aistack.gpu_node.nvidia_driver_probe"


DEFAULTS, ROLE_VARS = read_role_vars("nvidia_driver")

NO_GPU = {"state": "no_gpu", "gpus": [], "messages": [], "driver": {"version": None, "loaded_version": None, "mismatch": False}}
H200_RUNNING = {"state": "ok", "gpus": [{"name": "NVIDIA H200", "compute_capability": "9.0"}], "messages": [],
                "pci_devices": [{"slot": "0000:1b:00.0"}],
                "driver": {"version": "580.95.05", "loaded_version": "580.95.05", "kernel_module_flavour": "open", "mismatch": False}}
DEBIAN_CONTAINER = dict(distribution="Debian", distribution_version="12.11", distribution_release="bookworm",
                        architecture="x86_64", pkg_mgr="apt", virtualization_role="guest", virtualization_type="podman")
ROCKY_VM = dict(distribution="Rocky", distribution_version="9.6", distribution_release="Blue Onyx", architecture="x86_64",
                pkg_mgr="dnf", virtualization_role="guest", virtualization_type="kvm")
# A bare node as the probe reads it.
BARE = {"record": None, "owners": [], "packages": {}, "kernels": [], "switches": [], "fabric_manager_version": None,
        "secure_boot": "unsupported", "boot_id": "boot-1"}


class Node(object):
    """The probe as the action sees it: ``preflight`` and ``installed`` are what it reads in each stage
    (a dict of keys, or a failed result); every call is kept, in order (the round-trips)."""

    def __init__(self, preflight=None, installed=None):
        self.preflight = dict(BARE, **(preflight or {}))
        self.installed = installed or {}
        self.calls = []

    def __call__(self, module_name=None, module_args=None, task_vars=None):
        self.calls.append((module_name, module_args))
        assert module_name == PROBE
        if module_args["stage"] == "preflight":
            return dict(self.preflight, changed=False)
        return dict(dict(dkms_status=None, hold_list=None, packages=None, boot_id="boot-1"), **self.installed)


def host(gpu=None, facts=None, **settings):
    """The task's variables of a host: the role's defaults and vars, the facts, ``settings`` by their short names."""
    values = dict(DEFAULTS, **ROLE_VARS)
    values.update(inventory_hostname="node1", ansible_check_mode=False,
                  ansible_facts=dict(facts or DEBIAN_CONTAINER, aistack_gpu=gpu or NO_GPU))
    values.update(("nvidia_driver_" + name, value) for name, value in settings.items())
    return values


def plan(args, variables, node=None, check_mode=False, register=None):
    """Run the action as a task with ``args`` on a host with ``variables``; (result, node)."""
    node = node or Node()
    return run_planner(ActionModule, variables, node, args=args, check_mode=check_mode, register=register), node


def preflight(node=None, gpu=None, facts=None, **settings):
    return plan(dict(stage="preflight"), host(gpu, facts, **settings), node)


# ---------------------------------------------------------------------------
# preflight
# ---------------------------------------------------------------------------

def test_a_node_without_gpu_is_skipped_with_one_line_after_one_node_read():
    result, node = preflight()
    assert result["changed"] is False and not result.get("failed")
    assert result["mode"] == "skip" and result["plan"] is None and result["problems"] == []
    assert result["reason"].startswith("no NVIDIA GPU on this node") and "nothing to install" in result["reason"]
    assert result["boot_id"] == "boot-1" and result["container"] is True and result["secure_boot"] is None
    assert node.calls == [(PROBE, {"stage": "preflight", "record_path": "/var/lib/aistack/nvidia_driver.json", "pkg_mgr": "apt"})]
    assert result["reused"] is False and len(result["inputs_key"]) == 64


def test_an_image_build_plans_debians_driver_and_takes_secure_boot_from_the_probe():
    node = Node(preflight=dict(kernels=["6.1.0-41-amd64"], secure_boot="disabled"))
    result, node = preflight(node, install_without_gpu=True, source="distro", version="535.309.01")
    assert result["problems"] == [] and result["mode"] == "install" and result["reason"] == "no driver on the node"
    plan_ = result["plan"]
    assert plan_["packages"][0] == "nvidia-kernel-dkms" and plan_["version_package"] == "nvidia-kernel-dkms"
    assert plan_["hold_pattern"].startswith("^(nvidia-|libnvidia-|libcuda1") and plan_["dkms_module"] == "nvidia-current"
    assert plan_["headers"] == ["linux-headers-6.1.0-41-amd64"] and result["kernels"] == ["6.1.0-41-amd64"]
    assert result["secure_boot"] == "disabled" and result["record"] is None and result["owners"] == []
    # R535 is past its end of life: a warning naming R580.
    assert any("R580" in warning for warning in result["warnings"])


def test_secure_boot_refuses_unsigned_modules_until_a_mok_is_enrolled():
    node = Node(preflight=dict(secure_boot="enabled"))
    result, _node = preflight(node, install_without_gpu=True)
    assert result["secure_boot"] == "enabled" and len(result["problems"]) == 1
    assert result["problems"][0].startswith("Secure Boot is enabled and the dkms kernel modules would be unsigned")
    assert "nvidia_driver_secure_boot_mok_enrolled: true" in result["problems"][0]
    result, _node = preflight(node, install_without_gpu=True, secure_boot_mok_enrolled=True)
    assert result["problems"] == []


def test_install_refuses_a_driver_other_packages_own():
    node = Node(preflight=dict(owners=["libnvidia-ml1", "nvidia-smi"]))
    result, _node = preflight(node, gpu=H200_RUNNING, mode="install")
    assert result["owners"] == ["libnvidia-ml1", "nvidia-smi"]
    assert result["problems"][0].startswith("nvidia_driver_mode: install refuses to touch the driver 580.95.05 from "
                                            "libnvidia-ml1, nvidia-smi")
    assert result["plan"] is None and result["adopt"] is None


def test_adopt_reports_the_running_driver_and_its_policy_problems():
    # The branch as the inventory may give it, a number, is typed by the argument spec.
    result, _node = preflight(gpu=H200_RUNNING, branch=570)
    assert result["mode"] == "adopt" and result["adopt"]["branch"] == 580
    assert result["problems"] == ["nvidia_driver_branch: the node runs driver 580.95.05, not branch 570"]
    result, _node = preflight(gpu=H200_RUNNING, branch="580")
    assert result["problems"] == [] and result["adopt"]["flavour"] == "open" and result["adopt"]["reboot_needed"] is False


def test_the_settings_are_templated_and_a_bad_one_is_named():
    variables = host(install_without_gpu=trust_as_template("{{ __wanted }}"), source="distro", version="535.309.01")
    variables["__wanted"] = True
    result, _node = plan(dict(stage="preflight"), variables)
    assert result["mode"] == "install"
    result, node = preflight(precompiled="maybe")
    assert result["failed"] and "nvidia_driver_precompiled" in result["msg"] and node.calls == []


def test_a_record_that_is_not_json_fails_with_the_probes_message():
    msg = ("nvidia_driver: the role's record /var/lib/aistack/nvidia_driver.json is not JSON (Expecting property name "
           "enclosed in double quotes: line 1 column 2 (char 1)); remove it to let the role decide afresh")
    node = Node()
    node.preflight = {"failed": True, "msg": msg}
    result, _node = preflight(node)
    assert result["failed"] and result["msg"] == msg


def test_the_record_is_read_back():
    node = Node(preflight=dict(record={"branch": 535, "module_changed_boot": "boot-1"}))
    result, _node = preflight(node)
    assert result["record"]["branch"] == 535
    assert "the driver this role installed earlier is left as it is" in result["reason"]


def test_adopt_without_nvswitch_reports_no_nvswitch():
    result, _node = preflight(gpu=H200_RUNNING, mode="adopt")
    assert result["problems"] == [] and result["adopt"]["fabric_manager"]["needed"] is False
    assert result["adopt"]["fabric_manager"]["reason"].startswith("no NVSwitch")
    assert result["adopt"]["lifecycle"]["branch"] == "R580"


HGX_SWITCHES = [fabric_manager.sysfs_device(slot, "0x10de", "0x22a3", "0x068000") for slot in ("0000:07:00.0", "0000:08:00.0")]


def test_adopt_on_nvswitches_refuses_a_fabric_manager_of_another_version():
    switches = fabric_manager.nvswitches(HGX_SWITCHES)
    node = Node(preflight=dict(switches=switches, fabric_manager_version="580.95.04"))
    result, _node = preflight(node, gpu=H200_RUNNING, mode="adopt")
    assert result["adopt"]["fabric_manager"] == {
        "needed": True, "switches": 2, "version": "580.95.04",
        "reason": "2 NVSwitch(es) on the PCI bus: Fabric Manager must run at the driver's exact version"}
    assert result["problems"][0].startswith("Fabric Manager 580.95.04 differs from the driver 580.95.05")
    node.preflight["fabric_manager_version"] = "580.95.05"
    assert preflight(node, gpu=H200_RUNNING, mode="adopt")[0]["problems"] == []


def test_install_on_nvswitches_pins_fabric_manager_with_the_driver():
    node = Node(preflight=dict(switches=fabric_manager.nvswitches(HGX_SWITCHES)))
    result, _node = preflight(node, install_without_gpu=True, version="580.95.05")
    plan_ = result["plan"]
    assert result["problems"] == [] and plan_["source"] == "nvidia"
    assert plan_["install_names"][-2:] == ["nvidia-fabricmanager-580=580.95.05*", "libnvidia-nscq-580=580.95.05*"]
    assert plan_["fabric_manager"]["needed"] and plan_["fabric_manager"]["service"] == "nvidia-fabricmanager"
    assert all(re.match(plan_["hold_pattern"], name) for name in plan_["fabric_manager"]["packages"])
    unpinned = preflight(node, install_without_gpu=True)[0]
    assert unpinned["problems"][0].startswith("nvidia_driver_version: a node with NVSwitches needs the exact driver version")


# ---------------------------------------------------------------------------
# the keyed preflight decision
# ---------------------------------------------------------------------------

def test_the_preflight_decision_is_reused_with_the_same_inputs_and_decided_again_otherwise():
    variables = host(install_without_gpu=True, source="distro", version="535.309.01")
    first, node = plan(dict(stage="preflight"), variables, register="__nvidia_driver_decision")
    assert first["reused"] is False and len(node.calls) == 1
    registered = dict(first, invocation={"module_args": {"stage": "preflight"}})
    # The role's run right after the preflight play: the same inputs, no node read.
    again, node = plan(dict(stage="preflight"), dict(variables, __nvidia_driver_decision=registered),
                       register="__nvidia_driver_decision")
    assert node.calls == [] and again["reused"] is True
    assert dict(again, reused=False) == dict((key, value) for key, value in first.items() if key != "warnings")
    # A setting, a fact, the record's path, check mode or the role's report that differs decides afresh.
    for name, value in (("nvidia_driver_version", "535.288.01"), ("nvidia_driver_reboot_timeout", 1800),
                        ("ansible_facts", dict(variables["ansible_facts"], distribution_version="12.12")),
                        ("__nvidia_driver_record_path", "/srv/record.json"), ("ansible_check_mode", True),
                        ("nvidia_driver_report", {"mode": "install", "managed": True})):
        changed = dict(variables, __nvidia_driver_decision=registered, **{name: value})
        fresh, node = plan(dict(stage="preflight"), changed, register="__nvidia_driver_decision")
        if name == "nvidia_driver_reboot_timeout":
            # Not a setting the decision rests on.
            assert fresh["reused"] is True and node.calls == [], name
            continue
        assert fresh["reused"] is False and len(node.calls) == 1 and fresh["inputs_key"] != first["inputs_key"], name


def test_a_failed_decision_is_never_reused():
    variables = host()
    first, _node = plan(dict(stage="preflight"), variables, register="__nvidia_driver_decision")
    again, node = plan(dict(stage="preflight"), dict(variables, __nvidia_driver_decision=dict(first, failed=True)),
                       register="__nvidia_driver_decision")
    assert again["reused"] is False and len(node.calls) == 1


def test_the_later_stages_are_not_keyed():
    result, _node = plan(dict(stage="works", installed={"installed_version": None}), host())
    assert "inputs_key" not in result and "reused" not in result


# ---------------------------------------------------------------------------
# installed
# ---------------------------------------------------------------------------

DKMS_CONTAINER = read_public("dkms-status-debian12-container.txt")


def container_decision():
    result, _node = preflight(install_without_gpu=True, source="distro", version="535.309.01")
    assert not result["problems"]
    return result


def installed(decision, install=None, node=None, check_mode=False, gpu=None, packages=None, facts=None, **settings):
    """The installed stage after ``install``; ``packages``: what the preflight read installed."""
    variables = host(gpu, facts, **settings)
    decision = dict(decision, packages=packages or {})
    return plan(dict(stage="installed", decision=decision, install=install or {"changed": False}), variables, node,
                check_mode=check_mode)


def test_installed_reads_dkms_and_needs_a_reboot_it_may_not_do_in_a_container():
    # apt ran: the packages are read again, in the same round-trip as DKMS.
    node = Node(installed=dict(dkms_status=DKMS_CONTAINER, boot_id="boot-1",
                               packages={"nvidia-kernel-dkms": "535.309.01-0+deb12u1"}))
    result, node = installed(container_decision(), {"changed": True}, node, reboot_ok=True, hold=False)
    assert result["changed"] is False and not result.get("failed")
    assert node.calls == [(PROBE, {"stage": "installed", "dkms_module": "nvidia-current", "package_list": "apt"})]
    assert result["installed_version"] == "535.309.01"
    assert result["dkms"] == {"checked": True, "problems": [], "entries": [
        {"module": "nvidia-current", "version": "535.309.01", "kernel": None, "arch": None, "state": "added"}]}
    assert result["reboot_needed"] is True and result["reboot_now"] is False and result["reboot_pending"] is True
    assert result["hold"] == {"names": [], "missing": []} and result["boot_id"] == "boot-1"


def test_installed_names_the_driver_packages_not_held_yet():
    node = Node(installed=dict(dkms_status=DKMS_CONTAINER, hold_list="libcuda1:amd64\t\t\t\t\thold\nnvidia-smi\t\t\t\t\tinstall\n"))
    result, node = installed(container_decision(), node=node, packages=dict.fromkeys(["bash", "libcuda1", "nvidia-smi"], "1"))
    assert node.calls[-1][1]["hold_list"] == "apt"
    assert result["hold"] == {"names": ["libcuda1", "nvidia-smi"], "missing": ["nvidia-smi"]}


def test_apt_skipped_on_a_node_with_every_package_leaves_the_preflights_reading_standing():
    packages = {"nvidia-kernel-dkms": "535.309.01-0+deb12u1", "libcuda1": "535.309.01-0+deb12u1"}
    node = Node(preflight=dict(packages=packages))
    decision, _node = preflight(node, install_without_gpu=True, source="distro", version="535.309.01")
    assert decision["packages"] == packages and decision["plan"]["missing"] == [
        name for name in decision["plan"]["install_names"] if name.split("=")[0] not in packages]
    node = Node(installed=dict(dkms_status=DKMS_CONTAINER, hold_list="libcuda1:amd64\t\t\t\t\thold\n"))
    result, node = installed(dict(decision, plan=dict(decision["plan"], missing=[])), {"skipped": True}, node,
                             packages=packages)
    assert node.calls == [(PROBE, {"stage": "installed", "dkms_module": "nvidia-current", "hold_list": "apt"})]
    assert result["installed_version"] == "535.309.01" and result["hold"]["missing"] == ["nvidia-kernel-dkms"]
    # In check mode, too, DKMS is read: the packages were there before the run.
    result, node = installed(dict(decision, plan=dict(decision["plan"], missing=[])), {"skipped": True}, Node(),
                             check_mode=True, packages=packages, hold=False)
    assert node.calls == [(PROBE, {"stage": "installed", "dkms_module": "nvidia-current"})]


def test_installed_fails_with_the_probes_message():
    node = Node()
    node.installed = {"failed": True, "msg": "nvidia_driver: dpkg --get-selections failed (rc 2): dpkg: error: broken status"}
    result, _node = installed(container_decision(), node=node)
    assert result["failed"] and result["msg"] == "nvidia_driver: dpkg --get-selections failed (rc 2): dpkg: error: broken status"


def test_installed_on_el_asks_versionlock():
    decision, _node = preflight(facts=ROCKY_VM, install_without_gpu=True)
    assert decision["plan"]["package_manager"] == "dnf" and decision["container"] is False
    node = Node(installed=dict(hold_list=""))
    result, node = installed(decision, {"skipped": True}, node, check_mode=True, facts=ROCKY_VM,
                             packages={"nvidia-driver": "3:580.95.05-1.el9"})
    assert node.calls[-1][1]["hold_list"] == "dnf" and "dkms_module" not in node.calls[-1][1]
    assert result["hold"] == {"names": ["nvidia-driver"], "missing": ["nvidia-driver"]}


def test_installed_names_a_kernel_without_the_module():
    decision = container_decision()
    decision["kernels"] = ["6.1.0-41-amd64"]
    node = Node(installed=dict(dkms_status=DKMS_CONTAINER))
    result, _node = installed(decision, node=node, packages={"nvidia-kernel-dkms": "535.309.01-0+deb12u1"})
    assert result["problems"] == result["dkms"]["problems"] == [
        "dkms: module nvidia-current is not installed for kernel 6.1.0-41-amd64; install linux-headers/kernel-devel for it "
        "and run dkms autoinstall -k 6.1.0-41-amd64"]
    assert result["reboot_needed"] is False


def test_installed_in_check_mode_before_the_packages_reads_nothing_without_the_hold():
    result, node = installed(container_decision(), {"skipped": True}, check_mode=True, hold=False)
    assert result["dkms"] == {"checked": False, "entries": [], "problems": []} and node.calls == []
    assert result["installed_version"] is None and result["boot_id"] == "boot-1"


def test_installed_needs_the_preflight_decision_and_the_install():
    try:
        plan(dict(stage="installed", decision={"mode": "install"}), host())
    except Exception as error:  # AnsibleActionFail: required_if
        assert "install" in str(error)
    else:
        raise AssertionError("stage=installed without install was accepted")
    result, _node = installed({"mode": "skip", "plan": None})
    assert result["failed"] and result["msg"].startswith("nvidia_driver_plan: stage=installed needs decision")


# ---------------------------------------------------------------------------
# works, fabric: no node read
# ---------------------------------------------------------------------------

def test_works_judges_the_gpu_facts_read_after_the_install_without_reading_the_node():
    installed_ = {"installed_version": "580.95.05", "reboot_pending": False}
    result, node = plan(dict(stage="works", installed=installed_), host(H200_RUNNING))
    assert result["problems"] == [] and node.calls == []
    stale = dict(H200_RUNNING, state="driver_mismatch", driver=dict(H200_RUNNING["driver"], version="570.1.2"))
    result, node = plan(dict(stage="works", installed=installed_), host(stale))
    assert result["problems"][0].startswith("the driver does not work after the install: GPU state driver_mismatch")
    assert node.calls == []


def test_stage_fabric_judges_the_fabric_state_without_reading_the_node():
    text = read_public("nvidia-smi-q-fabric-completed.txt")
    result, node = plan(dict(stage="fabric", fabric_state=text), host(H200_RUNNING))
    assert result["states"] == [{"state": "Completed", "status": "Success"}] and result["problems"] == []
    assert node.calls == []
    result, _node = plan(dict(stage="fabric", fabric_state=text.replace("Completed", "In Progress")), host(H200_RUNNING))
    assert result["problems"][0].startswith("GPU 0: fabric state In Progress")


# ---------------------------------------------------------------------------
# a role run alone; the problems that fail the task
# ---------------------------------------------------------------------------

NODE_FACTS = "aistack.gpu_node.node_facts"


class UnreadNode(Node):
    """A node this run has not read yet (a role run alone): node_facts answers as setup prefixes its facts, with
    the GPUs; the probe as Node."""

    def __call__(self, module_name=None, module_args=None, task_vars=None):
        if module_name != NODE_FACTS:
            return super(UnreadNode, self).__call__(module_name, module_args, task_vars)
        self.calls.append((module_name, module_args))
        facts = dict(("ansible_" + name, value) for name, value in DEBIAN_CONTAINER.items())
        facts.update(aistack_gpu=H200_RUNNING, aistack_container_runtimes=[])
        return dict(changed=False, ansible_facts=facts, paths=[])


def test_a_role_run_alone_reads_the_facts_and_gpus_once_and_publishes_them():
    variables = dict(host(), ansible_facts={})
    result, node = plan(dict(stage="preflight"), variables, UnreadNode(), register="__nvidia_driver_decision")
    assert [name for name, _args in node.calls] == [NODE_FACTS, PROBE] and node.calls[0][1] == {"gpu": True}
    assert node.calls[1][1]["pkg_mgr"] == "apt"
    assert result["mode"] == "adopt" and result["container"] is True and not result.get("failed")
    assert result["ansible_facts"]["ansible_virtualization_type"] == "podman"
    assert result["ansible_facts"]["aistack_gpu"] == H200_RUNNING
    # With those facts published, the role's next task reads none of them, and the decision handed back carries
    # no facts: the same key as on a host whose facts were there.
    again, node = plan(dict(stage="preflight"), dict(host(gpu=H200_RUNNING), __nvidia_driver_decision=result),
                       Node(), register="__nvidia_driver_decision")
    assert again["reused"] is True and node.calls == [] and "ansible_facts" not in again


def test_only_the_gpus_are_read_where_the_os_facts_are_there():
    variables = host()
    del variables["ansible_facts"]["aistack_gpu"]
    result, node = plan(dict(stage="preflight"), variables, UnreadNode())
    assert node.calls[0] == (NODE_FACTS, {"gpu": True}) and result["mode"] == "adopt"


def test_a_decision_with_problems_fails_the_task_naming_the_host_and_each_problem():
    # Seen failing against the planner that returned the problems without failing (the role's fail task's job).
    result, _node = preflight(gpu=H200_RUNNING, branch=570)
    assert result["failed"] is True and result["msg"] == (
        "nvidia_driver on node1 (adopt): nvidia_driver_branch: the node runs driver 580.95.05, not branch 570")
    node = Node(preflight=dict(secure_boot="enabled"))
    result, _node = preflight(node, install_without_gpu=True)
    assert result["failed"] is True and result["msg"].startswith(
        "nvidia_driver on node1: Secure Boot is enabled and the dkms kernel modules would be unsigned")
    assert result["secure_boot"] == "enabled" and result["inputs_key"]
    # A refused node runs no task after it: nothing read is published.
    refused, _node = plan(dict(stage="preflight"), dict(host(branch=570), ansible_facts={}), UnreadNode())
    assert refused["failed"] is True and "ansible_facts" not in refused


def test_bad_input_is_refused_before_the_node_is_read():
    # The message the role's assert gave, word for word (tests/bad_inputs.yml); seen failing against a planner
    # without the check (it read the node and decided).
    result, node = plan(dict(stage="preflight"), dict(host(version="latest"), ansible_facts={}), UnreadNode())
    assert result["failed"] is True and node.calls == []
    assert result["msg"] == (
        'nvidia_driver: bad input. nvidia_driver_branch must be digits ("580"), nvidia_driver_version an exact version '
        '("580.95.05"), nvidia_driver_min_version dotted digits, nvidia_driver_reboot_timeout a number of seconds above 0, '
        'nvidia_driver_debian_components not empty, nvidia_driver_nvidia_repo_base an http(s):// or file:// URL. Got '
        'branch= version=latest min_version= reboot_timeout=1800 components=["contrib", "non-free", '
        '"non-free-firmware"] repo_base=https://developer.download.nvidia.com/compute/cuda/repos.')
