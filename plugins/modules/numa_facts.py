#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
---
module: numa_facts
short_description: Read the NUMA topology of a GPU node and derive its thread plan
version_added: "0.1.0"
description:
  - Reads NUMA nodes and their CPUs from C(/sys/devices/system/node), physical cores and SMT siblings from
    C(/sys/devices/system/cpu), and each NVIDIA GPU's C(numa_node) and C(local_cpulist) from PCI sysfs.
  - C(nvidia-smi topo -m) is parsed as a cross-check (terminal escape codes stripped); disagreements are reported in
    C(messages). A GPU whose sysfs C(numa_node) is C(-1), as in VMs, is placed on the host's only NUMA node, or on the
    node C(nvidia-smi topo -m) names.
  - Derives, per GPU, the slice of its NUMA node's physical cores it owns and its thread count (cores of the node
    divided by the GPUs on it), and finds which OpenMP runtime (GNU, Intel, LLVM) the Python env at O(env_prefix) ships,
    which decides the affinity variables.
  - Gives the variables that keep NVLink multicast off in a multi-GPU process (RV(ansible_facts.aistack_numa.multicast_off_env)).
  - Also reports the host-level knobs (C(kernel.numa_balancing), transparent hugepages, CPU governor) and whether this
    process can write them.
  - Returns the fact C(aistack_numa). Never changes the host.
author: aistack.gpu_node contributors (@aistack)
options:
  env_prefix:
    description:
      - Prefix of the Python env (venv or conda) whose OpenMP runtime decides the affinity variables.
      - Without it no runtime is looked for and no affinity variable is proposed.
    type: path
  threads_per_gpu:
    description:
      - Thread count per GPU instead of the derived one; V(0) derives it.
    type: int
    default: 0
  session_affinity:
    description:
      - Put the affinity variables in RV(ansible_facts.aistack_numa.session_env) too, not only in each GPU's C(env).
      - Off by default; a shell or Jupyter kernel is not bound to a CPU slice, and two such processes binding their
        threads to the same first cores would slow each other down.
    type: bool
    default: false
  proof_path:
    description:
      - Where the P(aistack.gpu_node.numa_tuning#role) role records its last passing activation and launcher check.
      - Returns that record in RV(proof), with the node as it is now for what the record rests on, so that the role
        can tell whether the record still proves its run without running the check again.
    type: path
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
attributes:
  platform:
    support: full
    platforms: posix
    description: Linux hosts, with or without NVIDIA GPUs.
notes:
  - GPUs are numbered in PCI bus order, the order C(nvidia-smi) uses.
seealso:
  - module: aistack.gpu_node.gpu_facts
  - module: aistack.gpu_node.numa_host_tuning
"""

EXAMPLES = r"""
- name: Read the NUMA topology and the thread plan of the torch env
  aistack.gpu_node.numa_facts:
    env_prefix: /opt/torch/.venv

- name: Show each GPU's NUMA node and CPUs
  ansible.builtin.debug:
    msg: "{{ ansible_facts.aistack_numa.plan }}"
"""

RETURN = r"""
proof:
  description:
    - The record at O(proof_path) (null when there is none, or it is no JSON object), and the node now for what its
      C(state) holds - each file's sha256 (null when unreadable), C(numactl) as C(command -v) finds it on C(PATH), and
      the C(Cpus_allowed_list) and C(Mems_allowed_list) of this process.
  returned: when O(proof_path) is given
  type: dict
  sample: {recorded: {key: 0c9f27a1d2e34b5c6d7e8f90, state: {files: {/opt/env/bin/aistack-numa-launch: "9f86d0..."}}},
           state: {files: {/opt/env/bin/aistack-numa-launch: "9f86d0..."}, allowed: {Cpus_allowed_list: 0-15}}}
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: dict
  contains:
    aistack_numa:
      description: NUMA topology, GPU placement, thread plan and host knobs.
      returned: always
      type: dict
      contains:
        nodes:
          description: NUMA nodes with C(id), C(cpus), C(cpulist), C(cores) (SMT sibling lists), C(physical_cores), C(gpus).
          type: list
          elements: dict
          sample: [{id: 0, cpulist: 0-15, physical_cores: 16, gpus: [0]}]
        nodes_from:
          description: V(sysfs), or C(cpu/online) when the kernel has no NUMA nodes in sysfs.
          type: str
          sample: sysfs
        smt:
          description: Whether any physical core has more than one thread.
          type: bool
          sample: false
        gpus:
          description: GPUs with their sysfs C(numa_node), the node decided and how (C(numa_node_from)), and topo -m affinity.
          type: list
          elements: dict
          sample: [{index: 0, pci_bus_id: "0000:00:06.0", sysfs_numa_node: -1, numa_node: 0,
                    numa_node_from: only NUMA node with CPUs, local_cpulist: 0-15, topo_cpu_affinity: 0-15,
                    topo_numa_affinity: 0}]
        links:
          description: The C(nvidia-smi topo -m) matrix, row to column to link (C(NV18), C(SYS), C(PXB), ...).
          type: dict
          sample: {GPU0: {GPU1: NV18}}
        plan:
          description:
            - Per GPU its NUMA node (C(-1) unknown), its CPU slice (cpulist), thread count, and C(env), the thread and
              affinity variables of a process bound to that slice.
          type: list
          elements: dict
          sample: [{index: 0, numa_node: 0, cpus: 0-15, threads: 16,
                    env: {OMP_NUM_THREADS: "16", MKL_NUM_THREADS: "16", OMP_PROC_BIND: close, OMP_PLACES: cores}}]
        session_env:
          description: Thread variables for a shell or Jupyter kernel (affinity only with O(session_affinity)).
          type: dict
          sample: {OMP_NUM_THREADS: "16", MKL_NUM_THREADS: "16"}
        session_threads:
          description: Threads for a shell or Jupyter kernel not tied to one GPU (the smallest GPU share).
          type: int
          sample: 16
        openmp:
          description: OpenMP runtimes in the env (V(gnu), V(intel), V(llvm)) and the library files found.
          type: dict
          sample: {runtimes: [gnu], libraries: [/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libgomp.so.1]}
        env:
          description:
            - The env at O(env_prefix), null without it; C(type) is V(conda) (C(conda-meta/)), V(venv) (C(pyvenv.cfg)) or
              null, C(python) and C(activate) whether C(bin/python) and C(bin/activate) exist.
          type: dict
          sample: {prefix: /opt/torch/.venv, type: venv, python: true, activate: true}
        affinity_env:
          description: Affinity variables for that runtime (C(OMP_PROC_BIND)/C(OMP_PLACES), or C(KMP_AFFINITY) for Intel alone).
          type: dict
          sample: {OMP_PROC_BIND: close, OMP_PLACES: cores}
        multicast_off_env:
          description:
            - The variables that keep NVLink SHARP / multicast (NVLS) off in NCCL, torch symmetric memory and NVSHMEM,
              which fail or hang with it on where the fabric gives no multicast objects (VMs, containers).
          type: dict
          sample: {NCCL_NVLS_ENABLE: "0", TORCH_SYMM_MEM_DISABLE_MULTICAST: "1", NVSHMEM_DISABLE_NVLS: "1"}
        host:
          description: C(numa_balancing), C(thp) and C(governor), each with C(value), C(writable) and C(supported).
          type: dict
        numactl:
          description: The path of C(numactl), which the per-GPU launcher binds with; null when the node has none.
          type: str
          sample: /usr/bin/numactl
        messages:
          description: Cross-check disagreements and why C(nvidia-smi topo -m) could not be read.
          type: list
          elements: str
          sample: []
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_access import module_runner
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.host_tuning import read_host
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.numa_proof import read_proof
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.multi_gpu_env import multicast_off_env
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.numa_topology import (
    affinity_env,
    collect_topology,
    describe_env,
    find_openmp_runtimes,
    session_threads,
    thread_env,
    thread_plan,
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            env_prefix=dict(type="path"),
            threads_per_gpu=dict(type="int", default=0),
            session_affinity=dict(type="bool", default=False),
            proof_path=dict(type="path"),
        ),
        supports_check_mode=True,
    )
    threads_per_gpu = module.params["threads_per_gpu"]
    if threads_per_gpu < 0:
        module.fail_json(msg="threads_per_gpu must be 0 (derive) or a positive count, got %d" % threads_per_gpu)
    prefix = module.params["env_prefix"]
    openmp = {"runtimes": [], "libraries": []}
    env = None
    if prefix:
        if not os.path.isdir(prefix):
            module.fail_json(msg="env_prefix %s is not a directory; expected the prefix of a venv or conda env. Create the env first." % prefix)
        openmp = find_openmp_runtimes(prefix)
        env = describe_env(prefix)
    topology = collect_topology(module_runner(module), root="/")
    plan = thread_plan(topology, threads_per_gpu)
    for entry in plan:
        entry["env"] = thread_env(entry["threads"], openmp["runtimes"])
    threads = session_threads(topology, plan, threads_per_gpu)
    topology.update(
        plan=plan,
        session_threads=threads,
        session_env=thread_env(threads, openmp["runtimes"], affinity=module.params["session_affinity"]),
        openmp=openmp,
        env=env,
        affinity_env=affinity_env(openmp["runtimes"]),
        numactl=module.get_bin_path("numactl"),
        multicast_off_env=multicast_off_env(),
        host=read_host("/"),
    )
    extra = dict(proof=read_proof(module.params["proof_path"])) if module.params["proof_path"] else {}
    module.exit_json(changed=False, ansible_facts=dict(aistack_numa=topology), **extra)


if __name__ == "__main__":
    main()
