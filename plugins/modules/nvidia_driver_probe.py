#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: nvidia_driver_probe
short_description: Read what the nvidia_driver role's decisions rest on from a node
version_added: 0.2.0
description:
  - Internal to the P(aistack.gpu_node.nvidia_driver#role) role. The M(aistack.gpu_node.nvidia_driver_plan) action
    runs it on the node, once per stage that needs the node, and decides on the controller with what it read. It
    reads, never changes, and decides nothing.
  - With O(stage=preflight) it reads the role's install record, the packages that own the driver's files, the
    installed driver packages and kernel headers, the installed kernels, the NVSwitches on the PCI bus (and, when
    there are some, the installed Fabric Manager's version), the Secure Boot state and the boot id.
  - With O(stage=installed) it reads C(dkms status) for O(dkms_module), what O(hold_list) holds, the driver packages
    and kernel headers O(package_list) lists as installed, and the boot id.
author: aistack.gpu_node contributors (@aistack)
options:
  stage:
    description: What to read, see the description.
    type: str
    required: true
    choices: [preflight, installed]
  record_path:
    description: The role's record of its own install (JSON). Read by O(stage=preflight); a missing one reads as null.
    type: path
    default: /var/lib/aistack/nvidia_driver.json
  pkg_mgr:
    description:
      - The node's package manager (C(ansible_facts.pkg_mgr)). With O(stage=preflight), C(apt) asks dpkg who owns the
        driver's files, which of the driver's packages and headers are installed and which Fabric Manager is, anything
        else rpm.
    type: str
    default: apt
  dkms_module:
    description: The DKMS module whose C(dkms status) O(stage=installed) reads; none read without it.
    type: str
  hold_list:
    description:
      - The package manager whose holds O(stage=installed) reads (C(dpkg --get-selections), C(dnf versionlock list));
        none read without it. A dnf without its versionlock plugin lists nothing.
    type: str
    choices: [apt, dnf]
  package_list:
    description:
      - The package manager (C(dpkg-query -W), C(rpm -qa)) that O(stage=installed) asks which of the driver's packages
        and kernel headers are installed; none read without it.
    type: str
    choices: [apt, dnf]
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
attributes:
  platform:
    support: full
    platforms: posix
    description: Linux nodes with apt or dnf.
notes:
  - A record that is not JSON, a failing C(dkms status) and a failing C(dpkg --get-selections) fail the task, each
    with its way out.
seealso:
  - module: aistack.gpu_node.nvidia_driver_plan
'''

EXAMPLES = r'''
# The nvidia_driver_plan action runs this module itself; a task can run it to see what the role reads.
- name: Read what the driver decision rests on
  aistack.gpu_node.nvidia_driver_probe:
    stage: preflight
    pkg_mgr: "{{ ansible_facts.pkg_mgr }}"
  register: driver_reading

- name: Read DKMS, the holds and the installed packages after the install
  aistack.gpu_node.nvidia_driver_probe:
    stage: installed
    dkms_module: nvidia-current
    hold_list: apt
    package_list: apt
  register: driver_installed_reading
'''

RETURN = r'''
record:
  description: The role's record of its own install, null when there is none.
  returned: O(stage=preflight)
  type: dict
  sample: {"branch": 535, "module_changed_boot": "0b6cf4f6-8d0c-4a0c-9c5a-2f8ad0b8b7e1"}
owners:
  description: The packages that own the driver's files.
  returned: O(stage=preflight)
  type: list
  elements: str
  sample: ["libnvidia-ml1", "nvidia-smi"]
packages:
  description:
    - The installed driver packages and kernel headers (the names the role's pin and hold cover, C(linux-headers-*),
      C(kernel-devel-*)), by name, with their version as the package manager gives it (rpm's with its epoch).
    - Null with O(stage=installed) without O(package_list).
  returned: always
  type: dict
  sample: {"nvidia-kernel-dkms": "535.309.01-0+deb12u1", "linux-headers-6.1.0-41-amd64": "6.1.158-1"}
kernels:
  description: The installed kernels (C(/lib/modules/*) with a C(modules.order)).
  returned: O(stage=preflight)
  type: list
  elements: str
  sample: ["6.1.0-41-amd64"]
switches:
  description: The NVSwitches on the PCI bus (C(slot), C(vendor), C(device), C(class), C(generation)); empty without one.
  returned: O(stage=preflight)
  type: list
  elements: dict
fabric_manager_version:
  description: The installed Fabric Manager's version, read only where there are NVSwitches; null otherwise.
  returned: O(stage=preflight)
  type: str
  sample: 580.95.05
secure_boot:
  description: C(enabled), C(disabled) or C(unsupported) (no EFI), from C(mokutil --sb-state) or the EFI variable.
  returned: O(stage=preflight)
  type: str
  sample: disabled
dkms_status:
  description: The output of C(dkms status -m) O(dkms_module); null without O(dkms_module).
  returned: O(stage=installed)
  type: str
  sample: "nvidia-current/535.309.01: added"
hold_list:
  description: What the package manager of O(hold_list) holds, as it lists it; null without O(hold_list).
  returned: O(stage=installed)
  type: str
  sample: "libcuda1:amd64\t\t\t\t\thold\n"
boot_id:
  description: The current boot id.
  returned: always
  type: str
  sample: 0b6cf4f6-8d0c-4a0c-9c5a-2f8ad0b8b7e1
'''

import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_text
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_access import read_file
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.packages import installed_packages
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import fabric_manager, nvidia_driver


def read_record(path):
    """The role's record at ``path``, None when there is none; ValueError naming it when it is not JSON."""
    data = read_file(path, "rb")
    if data is None:
        return None
    try:
        return json.loads(to_text(data, errors="surrogate_or_replace"))
    except ValueError as error:
        raise ValueError("nvidia_driver: the role's record %s is not JSON (%s); remove it to let the role decide afresh"
                         % (path, error))


def read_boot_id(path=nvidia_driver.BOOT_ID_PATH):
    return to_text(read_file(path, "rb") or b"").strip()


def installed_kernels(root=nvidia_driver.MODULES_DIR):
    """The kernels under ``root`` with a modules.order (a headers-only folder is no kernel)."""
    if not os.path.isdir(root):
        return []
    return sorted(name for name in os.listdir(root) if os.path.isfile(os.path.join(root, name, "modules.order")))


def read_nvswitches(root=fabric_manager.PCI_DEVICES):
    """The NVSwitches among the PCI devices under ``root`` (vendor, device and class of each)."""
    devices = []
    for slot in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        files = [to_text(read_file(os.path.join(root, slot, name), "rb") or b"", errors="surrogate_or_replace")
                 for name in ("vendor", "device", "class")]
        devices.append(fabric_manager.sysfs_device(slot, *files))
    return fabric_manager.nvswitches(devices)


def read_secure_boot(run_command, mokutil=nvidia_driver.MOKUTIL, efivar=nvidia_driver.SECURE_BOOT_EFIVAR):
    """The Secure Boot state from mokutil where it is installed, else from the EFI variable."""
    if os.path.exists(mokutil):
        dummy, out, err = run_command([mokutil, "--sb-state"])
        return nvidia_driver.parse_secure_boot(out + err)
    return nvidia_driver.parse_secure_boot(None, read_file(efivar, "rb"))


def read_packages(module, pkg_mgr):
    """{name: version} of the installed packages the driver's plan names or its hold covers."""
    package_manager = "apt" if pkg_mgr == "apt" else "dnf"
    return installed_packages(module, package_manager, nvidia_driver.PACKAGE_GLOBS[package_manager])[0]


def preflight(module):
    params = module.params
    try:
        record = read_record(params["record_path"])
    except ValueError as error:
        module.fail_json(msg=str(error))
    dummy, out, err = module.run_command(nvidia_driver.owner_query_argv(params["pkg_mgr"]))
    switches = read_nvswitches(fabric_manager.PCI_DEVICES)
    fm_version = None
    if switches and params["pkg_mgr"] in fabric_manager.FM_VERSION_QUERY:
        dummy, fm_out, err = module.run_command(fabric_manager.FM_VERSION_QUERY[params["pkg_mgr"]])
        fm_version = fabric_manager.parse_installed_version(fm_out)
    return dict(record=record, owners=nvidia_driver.parse_owners(out), packages=read_packages(module, params["pkg_mgr"]),
                kernels=installed_kernels(nvidia_driver.MODULES_DIR),
                switches=switches, fabric_manager_version=fm_version, secure_boot=read_secure_boot(module.run_command))


def installed(module):
    params = module.params
    dkms_status = hold_list = packages = None
    if params["dkms_module"]:
        rc, out, err = module.run_command(["dkms", "status", "-m", params["dkms_module"]])
        if rc != 0:
            module.fail_json(msg="nvidia_driver: dkms status failed (rc %d): %s" % (rc, err.strip()))
        dkms_status = out
    if params["hold_list"]:
        rc, out, err = module.run_command(nvidia_driver.HOLD_LIST[params["hold_list"]])
        # dnf without its versionlock plugin (check mode before the install) lists nothing: nothing is locked.
        if rc != 0 and params["hold_list"] == "apt":
            module.fail_json(msg="nvidia_driver: dpkg --get-selections failed (rc %d): %s" % (rc, err.strip()))
        hold_list = out if rc == 0 else ""
    if params["package_list"]:
        packages = read_packages(module, params["package_list"])
    return dict(dkms_status=dkms_status, hold_list=hold_list, packages=packages)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            stage=dict(type="str", required=True, choices=["preflight", "installed"]),
            record_path=dict(type="path", default="/var/lib/aistack/nvidia_driver.json"),
            pkg_mgr=dict(type="str", default="apt"),
            dkms_module=dict(type="str"),
            hold_list=dict(type="str", choices=["apt", "dnf"]),
            package_list=dict(type="str", choices=["apt", "dnf"]),
        ),
        supports_check_mode=True,
    )
    reading = preflight(module) if module.params["stage"] == "preflight" else installed(module)
    module.exit_json(changed=False, boot_id=read_boot_id(nvidia_driver.BOOT_ID_PATH), **reading)


if __name__ == "__main__":
    main()
