#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: nvidia_driver_plan
short_description: Decide what the nvidia_driver role does on a node, and check its install
version_added: 0.1.0
description:
  - The decisions of the P(aistack.gpu_node.nvidia_driver#role) role. Read-only, it never changes the node.
  - With O(stage=preflight) it reads the role's install record, the boot id, the packages that own the driver's files,
    the installed kernels and, when unsigned kernel modules are planned, the Secure Boot state (C(mokutil --sb-state)
    or the EFI variable); then it returns the mode (C(install), C(adopt) or C(skip)), the install plan or the adopt
    report, and every problem that stops the role, each naming its variable and the way out.
  - With O(stage=installed), after the packages, it reads C(dkms status) for the planned module and what is held, and
    returns the installed driver version, the DKMS registrations and their problems, the packages to hold, and whether
    the node needs a reboot.
  - With O(stage=works), after the install and the reboot the role made, if any, it judges the install against the GPU
    facts read then (O(gpu)), with a problem when a GPU node does not run the installed version and none while a
    reboot is still pending.
  - It takes the GPU facts it is given (O(gpu), gathered once per run by the P(aistack.gpu_node.preflight#role) role);
    it never probes the GPUs.
author: aistack.gpu_node contributors (@aistack)
options:
  stage:
    description:
      - C(preflight) decides before any change; C(installed) checks the install after the packages; C(works) checks
        the driver runs at the installed version; C(fabric) checks the NVSwitch fabric state in O(fabric_state).
    type: str
    choices: [preflight, installed, works, fabric]
    default: preflight
  gpu:
    description: The GPU facts, C(ansible_facts.aistack_gpu) from M(aistack.gpu_node.gpu_facts).
    type: dict
    required: true
  record_path:
    description: The role's record of its own install (JSON); install mode owns the driver only when it exists.
    type: path
    default: /var/lib/aistack/nvidia_driver.json
  distribution:
    description: C(ansible_facts.distribution). Used by O(stage=preflight).
    type: str
  distribution_version:
    description: C(ansible_facts.distribution_version). Used by O(stage=preflight).
    type: str
  architecture:
    description: C(ansible_facts.architecture). Used by O(stage=preflight).
    type: str
  pkg_mgr:
    description: C(ansible_facts.pkg_mgr); C(apt) asks dpkg who owns the driver's files, anything else rpm.
    type: str
  virtualization_role:
    description: C(ansible_facts.virtualization_role); a guest of a container type shares the host's kernel.
    type: str
  virtualization_type:
    description: C(ansible_facts.virtualization_type).
    type: str
  mode:
    description: The role's C(nvidia_driver_mode).
    type: str
    default: auto
  source:
    description: The role's C(nvidia_driver_source).
    type: str
    default: auto
  branch:
    description: The role's C(nvidia_driver_branch), digits; empty takes the source's branch.
    type: raw
  version:
    description: The role's C(nvidia_driver_version), an exact driver version.
    type: raw
  flavour:
    description: The role's C(nvidia_driver_flavour).
    type: str
    default: auto
  precompiled:
    description: The role's C(nvidia_driver_precompiled).
    type: bool
    default: false
  ubuntu_server:
    description: The role's C(nvidia_driver_ubuntu_server).
    type: bool
    default: true
  min_version:
    description: The role's C(nvidia_driver_min_version) (adopt mode).
    type: raw
  takeover:
    description: The role's C(nvidia_driver_takeover).
    type: bool
    default: false
  install_without_gpu:
    description: The role's C(nvidia_driver_install_without_gpu).
    type: bool
    default: false
  secure_boot_mok_enrolled:
    description: The role's C(nvidia_driver_secure_boot_mok_enrolled).
    type: bool
    default: false
  refuse_eol:
    description:
      - The role's C(nvidia_driver_refuse_eol). An end-of-life driver branch (planned or adopted, judged on the node's
        date against NVIDIA's end-of-life table) is a warning naming its supported successor; with this, a problem.
    type: bool
    default: false
  decision:
    description: What O(stage=preflight) returned (registered). Required by O(stage=installed).
    type: dict
  packages_changed:
    description: Whether the install task changed packages (a new kernel module). Used by O(stage=installed).
    type: bool
    default: false
  packages_skipped:
    description: Whether the install task was skipped (check mode before the repository exists). Used by O(stage=installed).
    type: bool
    default: false
  installed_package_version:
    description: The installed version of the plan's C(version_package), as C(package_facts) reports it; empty when not installed.
    type: str
  reboot_ok:
    description: The role's C(nvidia_driver_reboot_ok).
    type: bool
    default: false
  hold:
    description:
      - The role's C(nvidia_driver_hold). Used by O(stage=installed), which then reads what is held
        (C(dpkg --get-selections), C(dnf versionlock list)).
    type: bool
    default: false
  installed_packages:
    description: The names of the installed packages (the keys of C(ansible_facts.packages)). Used by O(stage=installed).
    type: list
    elements: str
    default: []
  fabric_state:
    description: The output of C(nvidia-smi -q) on a node with NVSwitches. Used by O(stage=fabric).
    type: str
  installed:
    description: What O(stage=installed) returned (registered). Required by O(stage=works), which judges it against
      O(gpu) read after the install (and the reboot, if any).
    type: dict
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
attributes:
  platform:
    support: full
    platforms: posix
    description: Linux nodes with apt or dnf.
notes:
  - Bad values of the role's variables come back as RV(problems), each naming its variable; the role's argument
    spec and preflight refuse them before this module runs.
seealso:
  - module: aistack.gpu_node.gpu_facts
'''

EXAMPLES = r'''
- name: Decide install, adopt or skip, and plan the packages
  aistack.gpu_node.nvidia_driver_plan:
    gpu: "{{ ansible_facts.aistack_gpu }}"
    distribution: "{{ ansible_facts.distribution }}"
    distribution_version: "{{ ansible_facts.distribution_version }}"
    architecture: "{{ ansible_facts.architecture }}"
    pkg_mgr: "{{ ansible_facts.pkg_mgr }}"
    virtualization_role: "{{ ansible_facts.virtualization_role }}"
    virtualization_type: "{{ ansible_facts.virtualization_type }}"
    mode: auto
    branch: "580"
  register: driver_decision

- name: Stop on its problems
  ansible.builtin.fail:
    msg: "{{ driver_decision.problems | join(' | ') }}"
  when: driver_decision.problems | length > 0

- name: Check the install after the packages
  aistack.gpu_node.nvidia_driver_plan:
    stage: installed
    gpu: "{{ ansible_facts.aistack_gpu }}"
    decision: "{{ driver_decision }}"
    packages_changed: "{{ driver_install is changed }}"
    installed_package_version: "{{ ansible_facts.packages['nvidia-driver'][0].version }}"
  register: driver_installed
'''

RETURN = r'''
mode:
  description: C(install), C(adopt) or C(skip) (no NVIDIA GPU); null when the requested mode is unknown.
  returned: O(stage=preflight)
  type: str
  sample: install
reason:
  description:
    - Why that mode, in one line; null when a problem stops the role. A node left alone (no GPU) also hears the branch
      it would get and that branch's lifecycle.
  returned: O(stage=preflight)
  type: str
  sample: no driver on the node
plan:
  description:
    - The install plan (install mode), null otherwise. Keys C(family), C(package_manager) (apt, dnf), C(source),
      C(branch), C(version) (exact pin or null), C(flavour) (open, proprietary), C(flavour_reason), C(build)
      (dkms, precompiled), C(dkms_module), C(packages), C(install_names) (with the version pin), C(version_package),
      C(pin_version), C(dnf_module) (null without module streams, as on EL10), C(el_repositories) (distribution
      repositories enabled first, such as RHEL 10's extensions one for Red Hat's signed kmod-nvidia), C(packaging_sources)
      (where this plan's package names and pinning rules come from), C(hold_pattern) (what the pin and the hold cover),
      C(pinning_package) (NVIDIA's
      version-locking package, installed before the driver; null where NVIDIA publishes none), C(upgrader_exclusions)
      (unattended-upgrades blacklist entries or dnf-automatic C(excludepkgs) globs), C(headers), C(nvidia_repo),
      C(signed_modules), C(lifecycle) (the branch's C(status) V(supported), V(end_of_life) or V(unknown), its
      C(designation), C(eol) month and an end-of-life branch's C(successor)), C(warnings) (an end-of-life branch, shown
      as task warnings too), C(fabric_manager) (C(needed), C(reason) (V(no NVSwitch ...) without one), C(switches),
      C(packages), C(service)), C(problems).
  returned: O(stage=preflight)
  type: dict
  sample: {"family": "debian", "source": "distro", "branch": 535, "version": "535.309.01", "flavour": "proprietary",
           "build": "dkms", "dkms_module": "nvidia-current", "packages": ["nvidia-kernel-dkms", "nvidia-smi", "libcuda1",
           "nvidia-persistenced"]}
adopt:
  description:
    - Adopt mode, what the node runs (C(version), C(branch), C(flavour), C(owners), C(gpus), C(reboot_needed), C(lifecycle)...).
    - C(fabric_manager) (C(needed), C(switches), C(version), C(reason)) says "no NVSwitch" on a node without one; with
      NVSwitches a Fabric Manager at another version than the driver is a problem.
  returned: O(stage=preflight)
  type: dict
problems:
  description:
    - What stops the role, each naming its variable and the way out; empty when nothing does. Only the first failing
      step's (mode, then the plan or the adopt policy, then Secure Boot).
  returned: always
  type: list
  elements: str
  sample: ["nvidia_driver_flavour: proprietary is impossible here: ..."]
secure_boot:
  description: C(enabled), C(disabled) or C(unsupported) (no EFI); null when no unsigned module is planned.
  returned: O(stage=preflight)
  type: str
  sample: disabled
record:
  description: The role's record of its own install, null when there is none.
  returned: O(stage=preflight)
  type: dict
owners:
  description: The packages that own the driver's files.
  returned: O(stage=preflight)
  type: list
  elements: str
  sample: ["libnvidia-ml1", "nvidia-smi"]
kernels:
  description: The installed kernels (C(/lib/modules/*) with a C(modules.order)).
  returned: O(stage=preflight)
  type: list
  elements: str
  sample: ["6.1.0-41-amd64"]
container:
  description: Whether the node is a container sharing its host's kernel (no reboot, no initramfs).
  returned: O(stage=preflight)
  type: bool
boot_id:
  description: The current boot id.
  returned: always
  type: str
installed_version:
  description: The driver version of the installed package, null when it is not installed.
  returned: O(stage=installed)
  type: str
  sample: 535.309.01
dkms:
  description: C(checked) (bool), C(entries) (module, version, kernel, arch, state) and C(problems).
  returned: O(stage=installed)
  type: dict
hold:
  description:
    - C(names), the installed driver packages the hold covers, and C(missing), those not held yet; both empty
      without O(hold).
  returned: O(stage=installed)
  type: dict
  sample: {"names": ["libcuda1", "nvidia-kernel-dkms"], "missing": ["libcuda1"]}
reboot_needed:
  description: The kernel module changed and no reboot followed, or the loaded module is not the installed one.
  returned: O(stage=installed)
  type: bool
reboot_now:
  description: Reboot needed, allowed by O(reboot_ok), and the node is not a container.
  returned: O(stage=installed)
  type: bool
reboot_pending:
  description: Reboot needed and not done by the role; what it reports.
  returned: O(stage=installed)
  type: bool
states:
  description: O(stage=fabric), the C(Fabric) section of each GPU, C(state) and C(status) (C(N/A) where the GPU reports none).
  returned: O(stage=fabric)
  type: list
  elements: dict
'''

import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.node_access import read_file
from ansible_collections.aistack.gpu_node.plugins.module_utils import fabric_manager, node_preflight, nvidia_driver

SETTINGS = ("mode", "source", "branch", "version", "flavour", "precompiled", "ubuntu_server", "min_version", "takeover",
            "install_without_gpu", "refuse_eol")


def read_record(module, path):
    text = read_file(path, "rb")
    if text is None:
        return None
    try:
        return json.loads(text.decode("utf-8"))
    except ValueError as error:
        module.fail_json(msg="nvidia_driver: the role's record %s is not JSON (%s); remove it to let the role decide afresh"
                         % (path, error))


def installed_kernels():
    root = nvidia_driver.MODULES_DIR
    if not os.path.isdir(root):
        return []
    return sorted(name for name in os.listdir(root) if os.path.isfile(os.path.join(root, name, "modules.order")))


def read_nvswitches():
    """The NVSwitches in sysfs (vendor, device and class of every PCI device)."""
    root = fabric_manager.PCI_DEVICES
    devices = []
    for slot in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        files = [(read_file(os.path.join(root, slot, name), "rb") or b"").decode("ascii", "replace") for name in ("vendor", "device", "class")]
        devices.append(fabric_manager.sysfs_device(slot, *files))
    return fabric_manager.nvswitches(devices)


def fabric(module):
    """stage=fabric: the fabric state of nvidia-smi -q, and its problems."""
    states = fabric_manager.parse_fabric_state(module.params["fabric_state"])
    return {"states": states, "problems": fabric_manager.fabric_problems(states)}


def read_secure_boot(module):
    if os.path.exists(nvidia_driver.MOKUTIL):
        dummy, out, err = module.run_command([nvidia_driver.MOKUTIL, "--sb-state"])
        return nvidia_driver.parse_secure_boot(out + err)
    return nvidia_driver.parse_secure_boot(None, read_file(nvidia_driver.SECURE_BOOT_EFIVAR, "rb"))


def preflight(module, boot_id):
    params = module.params
    record = read_record(module, params["record_path"])
    dummy, out, err = module.run_command(nvidia_driver.owner_query_argv(params["pkg_mgr"]))
    owners = nvidia_driver.parse_owners(out)
    kernels = installed_kernels()
    os_facts = dict((key, params[key]) for key in ("distribution", "distribution_version", "architecture"))
    switches = read_nvswitches()
    fm_version = None
    if switches and params["pkg_mgr"] in fabric_manager.FM_VERSION_QUERY:
        dummy, out, err = module.run_command(fabric_manager.FM_VERSION_QUERY[params["pkg_mgr"]])
        fm_version = fabric_manager.parse_installed_version(out)
    decision = nvidia_driver.decide(dict((key, params[key]) for key in SETTINGS), params["gpu"], os_facts, record, owners, kernels,
                                    switches=switches, fabric_manager_version=fm_version)
    for warning in decision.pop("warnings"):
        module.warn(warning)
    secure_boot = None
    if decision.pop("secure_boot_check"):
        secure_boot = read_secure_boot(module)
        decision["problems"] = nvidia_driver.secure_boot_problems(secure_boot, decision["plan"]["build"],
                                                                  params["secure_boot_mok_enrolled"])
    decision.update(secure_boot=secure_boot, record=record, owners=owners, kernels=kernels, boot_id=boot_id,
                    container=node_preflight.is_container(params["virtualization_role"], params["virtualization_type"]))
    return decision


def installed(module, boot_id):
    params = module.params
    decision = params["decision"]
    if not decision or not decision.get("plan"):
        module.fail_json(msg="nvidia_driver_plan: stage=installed needs decision, the registered result of stage=preflight in install mode")
    dkms_status = None
    if nvidia_driver.dkms_checked(decision["plan"], module.check_mode, params["packages_changed"], params["packages_skipped"]):
        rc, out, err = module.run_command(["dkms", "status", "-m", decision["plan"]["dkms_module"]])
        if rc != 0:
            module.fail_json(msg="nvidia_driver: dkms status failed (rc %d): %s" % (rc, err.strip()))
        dkms_status = out
    hold = None
    if params["hold"]:
        plan = decision["plan"]
        rc, out, err = module.run_command(nvidia_driver.HOLD_LIST[plan["package_manager"]])
        # dnf without its versionlock plugin (check mode before the install) lists nothing: nothing is locked.
        if rc != 0 and plan["package_manager"] == "apt":
            module.fail_json(msg="nvidia_driver: dpkg --get-selections failed (rc %d): %s" % (rc, err.strip()))
        hold = nvidia_driver.hold_plan(plan, params["installed_packages"], out if rc == 0 else "")
    result = nvidia_driver.check_install(decision, params["gpu"], params["installed_package_version"], params["packages_changed"],
                                         params["reboot_ok"], dkms_status=dkms_status, boot_id=decision.get("boot_id"), hold=hold)
    result.update(boot_id=boot_id, problems=result["dkms"]["problems"])
    return result


def main():
    module = AnsibleModule(
        argument_spec=dict(
            stage=dict(type="str", choices=["preflight", "installed", "works", "fabric"], default="preflight"),
            gpu=dict(type="dict", required=True),
            record_path=dict(type="path", default="/var/lib/aistack/nvidia_driver.json"),
            distribution=dict(type="str"),
            distribution_version=dict(type="str"),
            architecture=dict(type="str"),
            pkg_mgr=dict(type="str"),
            virtualization_role=dict(type="str"),
            virtualization_type=dict(type="str"),
            mode=dict(type="str", default="auto"),
            source=dict(type="str", default="auto"),
            branch=dict(type="raw"),
            version=dict(type="raw"),
            flavour=dict(type="str", default="auto"),
            precompiled=dict(type="bool", default=False),
            ubuntu_server=dict(type="bool", default=True),
            min_version=dict(type="raw"),
            takeover=dict(type="bool", default=False),
            install_without_gpu=dict(type="bool", default=False),
            secure_boot_mok_enrolled=dict(type="bool", default=False),
            refuse_eol=dict(type="bool", default=False),
            decision=dict(type="dict"),
            packages_changed=dict(type="bool", default=False),
            packages_skipped=dict(type="bool", default=False),
            installed_package_version=dict(type="str"),
            reboot_ok=dict(type="bool", default=False),
            hold=dict(type="bool", default=False),
            installed_packages=dict(type="list", elements="str", default=[]),
            fabric_state=dict(type="str"),
            installed=dict(type="dict"),
        ),
        required_if=[("stage", "installed", ("decision",)), ("stage", "works", ("installed",))],
        supports_check_mode=True,
    )
    boot_id = (read_file(nvidia_driver.BOOT_ID_PATH, "rb") or b"").decode("utf-8").strip()
    if module.params["stage"] == "fabric":
        module.exit_json(changed=False, **fabric(module))
    if module.params["stage"] == "works":
        module.exit_json(changed=False, problems=nvidia_driver.works_problems(module.params["gpu"], module.params["installed"]))
    stage = preflight if module.params["stage"] == "preflight" else installed
    module.exit_json(changed=False, **stage(module, boot_id))


if __name__ == "__main__":
    main()
