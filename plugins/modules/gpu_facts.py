#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpu_facts
short_description: Gather NVIDIA GPU and driver facts
version_added: "0.1.0"
description:
  - Reads the NVIDIA GPUs of a host and the state of their driver, and returns them as the
    C(aistack_gpu) fact.
  - Sources are tried in order; NVML (through the C(pynvml) module of nvidia-ml-py when the target
    Python can import it, else the driver's C(libnvidia-ml.so.1) through ctypes), then
    C(nvidia-smi --query-gpu), then C(/proc/driver/nvidia/version) and PCI sysfs (vendor C(0x10de)).
    A GPU without a working driver is reported as a state, not an error.
  - Compares the loaded kernel module version with the installed userspace driver, which is the
    C(Driver/library version mismatch) case after an upgrade without a reboot.
  - Never changes the host.
author: aistack.gpu_node contributors (@aistack)
options:
  use_nvml:
    description:
      - Query NVML in the module's own process, through C(pynvml) when the target Python can import it,
        else through the driver's library. One NVML session replaces two C(nvidia-smi) runs.
      - When V(false), or when NVML fails (no driver library, a driver/library mismatch), C(nvidia-smi) is used.
    type: bool
    default: true
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
attributes:
  platform:
    support: full
    platforms: posix
    description: Linux hosts with NVIDIA GPUs, or without (then C(state=no_gpu)).
notes:
  - O(use_nvml) needs no package on the target Python; C(nvidia-smi) gives the same facts where NVML cannot be used.
  - C(numa_node) comes from PCI sysfs; C(-1) means the platform does not report one (common in VMs).
seealso:
  - module: aistack.gpu_node.cuda_compat
"""

EXAMPLES = r"""
- name: Read GPU facts
  aistack.gpu_node.gpu_facts:

- name: Stop when the driver does not work
  ansible.builtin.assert:
    that: ansible_facts.aistack_gpu.state in ['ok', 'no_gpu']
    fail_msg: "GPU state is {{ ansible_facts.aistack_gpu.state }}: {{ ansible_facts.aistack_gpu.messages }}"

- name: Reboot needed when the loaded module is not the installed driver
  ansible.builtin.set_fact:
    gpu_reboot_needed: "{{ ansible_facts.aistack_gpu.driver.mismatch }}"

- name: Compute capabilities of the GPUs of this host
  ansible.builtin.debug:
    msg: "{{ ansible_facts.aistack_gpu.gpus | map(attribute='compute_capability') | list }}"
"""

RETURN = r"""
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: dict
  contains:
    aistack_gpu:
      description: NVIDIA GPUs and driver of the host.
      returned: always
      type: dict
      contains:
        state:
          description:
            - V(ok) GPUs answer; V(no_gpu) no NVIDIA GPU on the PCI bus; V(gpu_no_driver) GPU present, kernel module not loaded;
              V(mismatch) loaded kernel module differs from the userspace driver; V(driver_error) module loaded but NVML and
              nvidia-smi failed.
          type: str
          returned: always
          sample: ok
        source:
          description: Where the GPU list came from, V(nvml), V(nvidia-smi), V(sysfs) or V(none).
          type: str
          returned: always
          sample: nvidia-smi
        gpu_count:
          description: Number of GPUs in RV(ansible_facts.aistack_gpu.gpus).
          type: int
          returned: always
          sample: 1
        gpus:
          description: One entry per GPU. With source V(sysfs) only C(index), C(pci_bus_id) and C(numa_node) are known.
          type: list
          elements: dict
          returned: always
          sample:
            - index: 0
              name: NVIDIA H200
              uuid: GPU-33ea3011-d795-9321-b26f-fa72c6fe6db3
              compute_capability: "9.0"
              compute_capability_from: driver
              memory_total_mib: 143771
              pci_bus_id: "0000:00:06.0"
              numa_node: -1
              persistence_mode: true
              mig_mode: false
          contains:
            index:
              description: GPU index as NVML and nvidia-smi count them.
              type: int
            name:
              description: Product name.
              type: str
            uuid:
              description: GPU UUID.
              type: str
            compute_capability:
              description: Compute capability as C(major.minor).
              type: str
            compute_capability_from:
              description:
                - V(driver) when reported by NVML/nvidia-smi, V(name table (<status>\)) when looked up by name
                  (old drivers cannot report it), null when unknown.
              type: str
            memory_total_mib:
              description: Total memory in MiB.
              type: int
            pci_bus_id:
              description: PCI address, C(domain:bus:device.function) with a 4-digit domain.
              type: str
            numa_node:
              description: NUMA node of the GPU from sysfs; C(-1) when unknown.
              type: int
            persistence_mode:
              description: Persistence mode; null when unknown.
              type: bool
            mig_mode:
              description: Current MIG mode; null when the GPU has no MIG or it is unknown.
              type: bool
        driver:
          description: Driver state.
          type: dict
          returned: always
          contains:
            version:
              description: Driver version in use (the loaded kernel module, else the userspace driver).
              type: str
              sample: 580.159.04
            kernel_module_flavour:
              description: V(open) or V(proprietary) from C(/proc/driver/nvidia/version); null when no module is loaded.
              type: str
              sample: open
            cuda_version:
              description: Highest CUDA version the driver supports (the C(CUDA Version) of nvidia-smi).
              type: str
              sample: "13.0"
            loaded_version:
              description: Version of the loaded kernel module.
              type: str
              sample: 580.159.04
            userspace_version:
              description: Version of the userspace driver (NVML library).
              type: str
              sample: 580.159.04
            mismatch:
              description: True when the loaded kernel module and the userspace driver differ.
              type: bool
              sample: false
        pci_devices:
          description: NVIDIA display and 3D controllers found in sysfs, whatever driver is bound.
          type: list
          elements: dict
          returned: always
          sample:
            - pci_bus_id: "0000:00:06.0"
              vendor_id: "0x10de"
              device_id: "0x2335"
              class: "0x030200"
              numa_node: -1
              local_cpulist: 0-15
              kernel_driver: nvidia
        messages:
          description: Why a source was skipped (for example the nvidia-smi error text).
          type: list
          elements: str
          returned: always
          sample: []
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.gpu_collection import (
    collect_gpu_facts,
    import_nvml,
)
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_access import module_runner


def main():
    module = AnsibleModule(
        argument_spec=dict(use_nvml=dict(type="bool", default=True)),
        supports_check_mode=True,
    )
    nvml = import_nvml() if module.params["use_nvml"] else None
    facts = collect_gpu_facts(module_runner(module), root="/", nvml=nvml)
    module.exit_json(changed=False, ansible_facts=dict(aistack_gpu=facts))


if __name__ == "__main__":
    main()
