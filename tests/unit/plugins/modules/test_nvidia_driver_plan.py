# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The nvidia_driver_plan module: what it reads on a (fake) node and the decision it hands the role.

The rules themselves are tested on module_utils.nvidia_driver; here the node's files and commands
are faked: /lib/modules, the boot id, the role's record, mokutil or the Secure Boot efivar,
dpkg-query and dkms (dkms with the output recorded by the nvidia_driver molecule scenario).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import re

import pytest

from ansible.module_utils import basic
from conftest import read_public, run_module
from ansible_collections.aistack.gpu_node.plugins.module_utils import fabric_manager, nvidia_driver
from ansible_collections.aistack.gpu_node.plugins.modules import nvidia_driver_plan

NO_GPU = {"state": "no_gpu", "gpus": [], "messages": [], "driver": {"version": None, "loaded_version": None, "mismatch": False}}
H200_RUNNING = {"state": "ok", "gpus": [{"name": "NVIDIA H200", "compute_capability": "9.0"}], "messages": [],
                "driver": {"version": "580.95.05", "loaded_version": "580.95.05", "kernel_module_flavour": "open", "mismatch": False}}
DEBIAN_CONTAINER = dict(distribution="Debian", distribution_version="12.11", architecture="x86_64", pkg_mgr="apt",
                        virtualization_role="guest", virtualization_type="podman")


@pytest.fixture
def node(tmp_path, monkeypatch):
    """A node without kernels, mokutil or EFI, whose commands answer from ``node.outputs`` by program name."""
    (tmp_path / "modules").mkdir()
    (tmp_path / "boot_id").write_text(u"boot-1\n")
    monkeypatch.setattr(nvidia_driver, "MODULES_DIR", str(tmp_path / "modules"))
    monkeypatch.setattr(nvidia_driver, "BOOT_ID_PATH", str(tmp_path / "boot_id"))
    monkeypatch.setattr(nvidia_driver, "MOKUTIL", str(tmp_path / "mokutil"))
    monkeypatch.setattr(nvidia_driver, "SECURE_BOOT_EFIVAR", str(tmp_path / "SecureBoot"))
    monkeypatch.setattr(fabric_manager, "PCI_DEVICES", str(tmp_path / "pci"))

    class Node(object):
        root = tmp_path
        record = str(tmp_path / "record.json")
        outputs = {"dpkg-query": (1, "", "dpkg-query: no path found matching pattern */nvidia-smi\n")}
        calls = []

    def run_command(self, argv, **kwargs):
        Node.calls.append(argv)
        return Node.outputs[argv[0].rsplit("/", 1)[-1]]

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    Node.calls = []
    return Node


def preflight(node, capsys, gpu=None, **settings):
    args = dict(DEBIAN_CONTAINER, gpu=gpu or NO_GPU, record_path=node.record, _ansible_check_mode=True)
    args.update(settings)
    return run_module(nvidia_driver_plan, args, capsys)


def test_a_node_without_gpu_is_skipped_with_one_line(node, capsys):
    code, result = preflight(node, capsys)
    assert code == 0 and result["changed"] is False
    assert result["mode"] == "skip" and result["plan"] is None and result["problems"] == []
    assert result["reason"].startswith("no NVIDIA GPU on this node") and "nothing to install" in result["reason"]
    assert result["boot_id"] == "boot-1" and result["container"] is True and result["secure_boot"] is None


def test_an_image_build_plans_debians_driver_and_reads_secure_boot_from_efi(node, capsys):
    (node.root / "modules" / "6.1.0-41-amd64").mkdir()
    (node.root / "modules" / "6.1.0-41-amd64" / "modules.order").write_text(u"")
    (node.root / "modules" / "headers-only").mkdir()
    (node.root / "SecureBoot").write_bytes(b"\x06\x00\x00\x00\x00")
    code, result = preflight(node, capsys, install_without_gpu=True, source="distro", version="535.309.01")
    assert code == 0 and result["problems"] == []
    assert result["mode"] == "install" and result["reason"] == "no driver on the node"
    plan = result["plan"]
    assert plan["packages"][0] == "nvidia-kernel-dkms" and plan["version_package"] == "nvidia-kernel-dkms"
    assert plan["hold_pattern"].startswith("^(nvidia-|libnvidia-|libcuda1") and plan["dkms_module"] == "nvidia-current"
    assert plan["headers"] == ["linux-headers-6.1.0-41-amd64"] and result["kernels"] == ["6.1.0-41-amd64"]
    assert result["secure_boot"] == "disabled" and result["record"] is None and result["owners"] == []
    assert node.calls == [nvidia_driver.owner_query_argv("apt")]


def test_secure_boot_refuses_unsigned_modules_until_a_mok_is_enrolled(node, capsys):
    (node.root / "mokutil").write_text(u"")
    node.outputs["mokutil"] = (0, "SecureBoot enabled\n", "")
    code, result = preflight(node, capsys, install_without_gpu=True)
    assert code == 0 and result["secure_boot"] == "enabled"
    assert len(result["problems"]) == 1
    assert result["problems"][0].startswith("Secure Boot is enabled and the dkms kernel modules would be unsigned")
    assert "nvidia_driver_secure_boot_mok_enrolled: true" in result["problems"][0]
    code, result = preflight(node, capsys, install_without_gpu=True, secure_boot_mok_enrolled=True)
    assert code == 0 and result["problems"] == []


def test_install_refuses_a_driver_other_packages_own(node, capsys):
    node.outputs["dpkg-query"] = (0, "libnvidia-ml1:amd64: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n"
                                     "nvidia-smi: /usr/bin/nvidia-smi\n", "")
    code, result = preflight(node, capsys, gpu=H200_RUNNING, mode="install")
    assert code == 0 and result["owners"] == ["libnvidia-ml1", "nvidia-smi"]
    assert result["problems"][0].startswith("nvidia_driver_mode: install refuses to touch the driver 580.95.05 from "
                                            "libnvidia-ml1, nvidia-smi")
    assert result["plan"] is None and result["adopt"] is None


def test_adopt_reports_the_running_driver_and_its_policy_problems(node, capsys):
    code, result = preflight(node, capsys, gpu=H200_RUNNING, branch="570")
    assert code == 0 and result["mode"] == "adopt" and result["adopt"]["branch"] == 580
    assert result["problems"] == ["nvidia_driver_branch: the node runs driver 580.95.05, not branch 570"]
    code, result = preflight(node, capsys, gpu=H200_RUNNING, branch=580)
    assert result["problems"] == [] and result["adopt"]["flavour"] == "open" and result["adopt"]["reboot_needed"] is False


def test_a_record_that_is_not_json_is_refused_by_name(node, capsys):
    (node.root / "record.json").write_text(u"{half")
    code, result = preflight(node, capsys)
    assert code == 1 and result["msg"].startswith("nvidia_driver: the role's record %s is not JSON" % node.record)


def installed(node, capsys, decision, **settings):
    args = dict(stage="installed", gpu=NO_GPU, decision=decision, _ansible_check_mode=False)
    args.update(settings)
    return run_module(nvidia_driver_plan, args, capsys)


def container_decision(node, capsys):
    code, result = preflight(node, capsys, install_without_gpu=True, source="distro", version="535.309.01")
    assert code == 0
    return result


def test_installed_reads_dkms_and_needs_a_reboot_it_may_not_do_in_a_container(node, capsys):
    decision = container_decision(node, capsys)
    node.outputs["dkms"] = (0, read_public("dkms-status-debian12-container.txt"), "")
    code, result = installed(node, capsys, decision, packages_changed=True, reboot_ok=True,
                             installed_package_version="535.309.01-0+deb12u1")
    assert code == 0 and result["changed"] is False
    assert node.calls[-1] == ["dkms", "status", "-m", "nvidia-current"]
    assert result["installed_version"] == "535.309.01"
    assert result["dkms"] == {"checked": True, "problems": [], "entries": [
        {"module": "nvidia-current", "version": "535.309.01", "kernel": None, "arch": None, "state": "added"}]}
    assert result["reboot_needed"] is True and result["reboot_now"] is False and result["reboot_pending"] is True
    assert result["hold"] == {"names": [], "missing": []}


def test_installed_names_the_driver_packages_not_held_yet(node, capsys):
    decision = container_decision(node, capsys)
    node.outputs["dkms"] = (0, read_public("dkms-status-debian12-container.txt"), "")
    node.outputs["dpkg"] = (0, "libcuda1:amd64\t\t\t\t\thold\nnvidia-smi\t\t\t\t\tinstall\n", "")
    code, result = installed(node, capsys, decision, hold=True, installed_packages=["bash", "libcuda1", "nvidia-smi"])
    assert code == 0 and node.calls[-1] == ["dpkg", "--get-selections"]
    assert result["hold"] == {"names": ["libcuda1", "nvidia-smi"], "missing": ["nvidia-smi"]}
    node.outputs["dpkg"] = (2, "", "dpkg: error: broken status\n")
    code, result = installed(node, capsys, decision, hold=True)
    assert code == 1 and result["msg"] == "nvidia_driver: dpkg --get-selections failed (rc 2): dpkg: error: broken status"


def test_installed_on_el_without_versionlock_sees_nothing_locked(node, capsys):
    rocky = dict(distribution="Rocky", distribution_version="9.6", pkg_mgr="dnf", virtualization_role="host", virtualization_type="kvm")
    node.outputs["rpm"] = (1, "no package provides nvidia-driver-cuda\n", "")
    code, decision = preflight(node, capsys, install_without_gpu=True, **rocky)
    assert code == 0 and decision["plan"]["package_manager"] == "dnf" and decision["container"] is False
    node.outputs["dkms"] = (0, "", "")
    node.outputs["dnf"] = (1, "", "No such command: versionlock.\n")
    code, result = installed(node, capsys, decision, hold=True, packages_skipped=True, _ansible_check_mode=True,
                             installed_packages=["nvidia-driver"])
    assert code == 0 and result["hold"] == {"names": ["nvidia-driver"], "missing": ["nvidia-driver"]}


def test_installed_names_a_kernel_without_the_module(node, capsys):
    decision = container_decision(node, capsys)
    decision["kernels"] = ["6.1.0-41-amd64"]
    node.outputs["dkms"] = (0, read_public("dkms-status-debian12-container.txt"), "")
    code, result = installed(node, capsys, decision, installed_package_version="535.309.01-0+deb12u1")
    assert result["problems"] == result["dkms"]["problems"] == [
        "dkms: module nvidia-current is not installed for kernel 6.1.0-41-amd64; install linux-headers/kernel-devel for it "
        "and run dkms autoinstall -k 6.1.0-41-amd64"]
    assert result["reboot_needed"] is False


def test_installed_in_check_mode_before_the_packages_leaves_dkms_alone(node, capsys):
    decision = container_decision(node, capsys)
    calls = len(node.calls)
    code, result = installed(node, capsys, decision, packages_skipped=True, _ansible_check_mode=True)
    assert code == 0 and result["dkms"] == {"checked": False, "entries": [], "problems": []}
    assert result["installed_version"] is None and len(node.calls) == calls


def test_installed_fails_when_dkms_fails(node, capsys):
    decision = container_decision(node, capsys)
    node.outputs["dkms"] = (3, "", "dkms: command broke\n")
    code, result = installed(node, capsys, decision)
    assert code == 1 and result["msg"] == "nvidia_driver: dkms status failed (rc 3): dkms: command broke"


def test_installed_needs_the_preflight_decision(node, capsys):
    code, result = installed(node, capsys, None)
    assert code == 1 and "decision" in result["msg"]
    code, result = installed(node, capsys, {"mode": "skip", "plan": None})
    assert code == 1 and result["msg"].startswith("nvidia_driver_plan: stage=installed needs decision")


def test_the_record_is_read_back(node, capsys):
    (node.root / "record.json").write_text(json.dumps({"branch": 535, "module_changed_boot": "boot-1"}))
    code, result = preflight(node, capsys)
    assert result["record"]["branch"] == 535
    assert "the driver this role installed earlier is left as it is" in result["reason"]


def hgx_sysfs(node):
    """The sysfs entries of an HGX H100 baseboard's NVSwitches and one GPU (ids of the FM user guide's lspci sample)."""
    for slot, device, pci_class in (("0000:07:00.0", "0x22a3", "0x068000"), ("0000:08:00.0", "0x22a3", "0x068000"),
                                    ("0000:1b:00.0", "0x2330", "0x030200")):
        path = node.root / "pci" / slot
        path.mkdir(parents=True)
        for name, value in (("vendor", "0x10de"), ("device", device), ("class", pci_class)):
            (path / name).write_text(value + u"\n")


def test_adopt_without_nvswitch_reports_no_nvswitch(node, capsys):
    code, result = preflight(node, capsys, gpu=H200_RUNNING, mode="adopt")
    assert code == 0 and result["problems"] == []
    assert result["adopt"]["fabric_manager"]["needed"] is False
    assert result["adopt"]["fabric_manager"]["reason"].startswith("no NVSwitch")
    assert result["adopt"]["lifecycle"]["branch"] == "R580"


def test_adopt_on_nvswitches_refuses_a_fabric_manager_of_another_version(node, capsys):
    hgx_sysfs(node)
    node.outputs["dpkg-query"] = (0, "nvidia-fabricmanager-580 install ok installed 580.95.04-1\n", "")
    code, result = preflight(node, capsys, gpu=H200_RUNNING, mode="adopt")
    assert code == 0 and result["adopt"]["fabric_manager"] == {
        "needed": True, "switches": 2, "version": "580.95.04",
        "reason": "2 NVSwitch(es) on the PCI bus: Fabric Manager must run at the driver's exact version"}
    assert result["problems"][0].startswith("Fabric Manager 580.95.04 differs from the driver 580.95.05")
    assert node.calls[-1] == fabric_manager.FM_VERSION_QUERY["apt"]
    node.outputs["dpkg-query"] = (0, "nvidia-fabricmanager-580 install ok installed 580.95.05-1\n", "")
    assert preflight(node, capsys, gpu=H200_RUNNING, mode="adopt")[1]["problems"] == []


def test_install_on_nvswitches_pins_fabric_manager_with_the_driver(node, capsys):
    hgx_sysfs(node)
    node.outputs["dpkg-query"] = (1, "", "dpkg-query: no packages found matching nvidia-fabricmanager*\n")
    code, result = preflight(node, capsys, install_without_gpu=True, version="580.95.05")
    plan = result["plan"]
    assert code == 0 and result["problems"] == [] and plan["source"] == "nvidia"
    assert plan["install_names"][-2:] == ["nvidia-fabricmanager-580=580.95.05*", "libnvidia-nscq-580=580.95.05*"]
    assert plan["fabric_manager"]["needed"] and plan["fabric_manager"]["service"] == "nvidia-fabricmanager"
    # The pin and the hold cover Fabric Manager with the driver.
    assert all(re.match(plan["hold_pattern"], name) for name in plan["fabric_manager"]["packages"])
    unpinned = preflight(node, capsys, install_without_gpu=True)[1]
    assert unpinned["problems"][0].startswith("nvidia_driver_version: a node with NVSwitches needs the exact driver version")


def test_stage_fabric_judges_the_fabric_state(node, capsys):
    text = read_public("nvidia-smi-q-fabric-completed.txt")
    code, result = run_module(nvidia_driver_plan, {"stage": "fabric", "gpu": H200_RUNNING, "fabric_state": text}, capsys)
    assert code == 0 and result["states"] == [{"state": "Completed", "status": "Success"}] and result["problems"] == []
    training = text.replace("Completed", "In Progress")
    code, result = run_module(nvidia_driver_plan, {"stage": "fabric", "gpu": H200_RUNNING, "fabric_state": training}, capsys)
    assert result["problems"][0].startswith("GPU 0: fabric state In Progress")
