# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""NUMA topology of a GPU node and the thread plan derived from it.

Readers take a filesystem ``root`` so tests feed them recorded sysfs trees; parsers are pure
functions of command output. PCI devices and ``nvidia-smi topo -m`` come from gpu_collection and nvidia_parsers.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os
import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.gpu_collection import scan_pci
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_access import read_root_file
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.nvidia_parsers import (
    parse_cpulist,
    parse_topo_matrix,
)

# Library file names of the OpenMP runtimes a Python env can carry (auditwheel renames vendored
# copies, e.g. libgomp-a34b3233.so.1, so the hash suffix is allowed).
OPENMP_LIBRARIES = (
    ("gnu", re.compile(r"^libgomp(-[0-9a-f]+)?\.so(\.\d+)*$")),
    ("intel", re.compile(r"^libiomp5(-[0-9a-f]+)?\.so(\.\d+)*$")),
    ("llvm", re.compile(r"^libomp(-[0-9a-f]+)?\.so(\.\d+)*$")),
)
# Where envs keep shared libraries: conda's lib/, a wheel's own lib/ (torch/lib) and the
# <dist>.libs folders auditwheel creates.
OPENMP_SEARCH_GLOBS = (
    "lib", "lib64",
    "lib/python*/site-packages/*/lib", "lib/python*/site-packages/*.libs",
    "lib64/python*/site-packages/*/lib", "lib64/python*/site-packages/*.libs",
)
INTEL_KMP_AFFINITY = "granularity=fine,compact,1,0"


def format_cpulist(cpus):
    """[0, 1, 2, 8, 10, 11] -> "0-2,8,10-11" (the kernel's cpulist format)."""
    ranges = []
    for cpu in sorted(set(cpus)):
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join("%d" % a if a == b else "%d-%d" % (a, b) for a, b in ranges)


# ---------------------------------------------------------------------------
# Parsers of command output (cross-checks)
# ---------------------------------------------------------------------------

def parse_numactl_hardware(text):
    """``numactl -H`` -> ``{node: [cpus]}``."""
    nodes = {}
    for node, cpus in re.findall(r"^node (\d+) cpus:(.*)$", text or "", re.MULTILINE):
        nodes[int(node)] = sorted(int(cpu) for cpu in cpus.split())
    return nodes


def parse_lscpu(text):
    """``lscpu`` -> sockets, threads per core, and the CPUs of each NUMA node."""
    fields = dict((key.strip(), value.strip()) for key, value in
                  (line.split(":", 1) for line in (text or "").splitlines() if ":" in line))

    def number(key):
        value = fields.get(key)
        return int(value) if value and value.isdigit() else None

    nodes = {}
    for key, value in fields.items():
        match = re.match(r"^NUMA node(\d+) CPU\(s\)$", key)
        if match:
            nodes[int(match.group(1))] = parse_cpulist(value)
    return {"sockets": number("Socket(s)"), "threads_per_core": number("Thread(s) per core"),
            "cpus": number("CPU(s)"), "numa_nodes": nodes}


# ---------------------------------------------------------------------------
# sysfs readers
# ---------------------------------------------------------------------------

def read_numa_nodes(root="/"):
    """``{node: [cpus]}`` from /sys/devices/system/node, and where it came from.

    Kernels without NUMA support have no node directories: all online CPUs are then node 0.
    Memory-only nodes (CXL, HBM) have an empty cpulist and are kept, with no CPUs.
    """
    nodes = {}
    for path in glob.glob(os.path.join(root, "sys/devices/system/node/node[0-9]*")):
        nodes[int(os.path.basename(path)[4:])] = parse_cpulist(read_root_file(path, "cpulist"))
    if nodes:
        return nodes, "sysfs"
    online = parse_cpulist(read_root_file(root, "/sys/devices/system/cpu/online"))
    return ({0: online}, "cpu/online (no NUMA in sysfs)") if online else ({}, "none")


def read_core_siblings(root, cpus):
    """Physical cores of ``cpus``: a sorted list of sibling lists (SMT threads of one core)."""
    cores = set()
    for cpu in cpus:
        topology = "/sys/devices/system/cpu/cpu%d/topology/" % cpu
        siblings = read_root_file(root, topology + "thread_siblings_list") or read_root_file(root, topology + "core_cpus_list")
        group = parse_cpulist(siblings) or [cpu]
        cores.add(tuple(sibling for sibling in group if sibling in cpus) or (cpu,))
    return sorted(list(core) for core in cores)


# ---------------------------------------------------------------------------
# Topology
# ---------------------------------------------------------------------------

def place_gpus(pci_devices, nodes, topo_gpus):
    """NUMA node of each GPU, with how it was decided.

    sysfs ``numa_node`` first; ``-1`` (VMs, single-socket firmware) is resolved when the host has
    one NUMA node with CPUs, else from ``nvidia-smi topo -m``'s NUMA Affinity of the same index.
    GPUs are indexed in PCI bus order, the order nvidia-smi uses.
    """
    cpu_nodes = [node for node, cpus in nodes.items() if cpus]
    topo_by_index = dict((gpu["index"], gpu) for gpu in topo_gpus or [])
    placed = []
    for index, device in enumerate(sorted(pci_devices, key=lambda d: d["pci_bus_id"])):
        node, source = device["numa_node"], "sysfs"
        topo = topo_by_index.get(index, {})
        if node < 0:
            if len(cpu_nodes) == 1:
                node, source = cpu_nodes[0], "only NUMA node with CPUs"
            elif topo.get("numa_affinity") is not None:
                node, source = topo["numa_affinity"], "nvidia-smi topo -m"
            else:
                node, source = -1, "unknown"
        placed.append({
            "index": index,
            "pci_bus_id": device["pci_bus_id"],
            "sysfs_numa_node": device["numa_node"],
            "numa_node": node,
            "numa_node_from": source,
            "local_cpulist": device.get("local_cpulist"),
            "topo_cpu_affinity": topo.get("cpu_affinity"),
            "topo_numa_affinity": topo.get("numa_affinity"),
        })
    return placed


def cross_check(placed, nodes, topo):
    """Disagreements between sysfs and ``nvidia-smi topo -m``, as readable messages."""
    messages = []
    if topo is not None and topo["gpus"] and len(topo["gpus"]) != len(placed):
        messages.append("nvidia-smi topo -m lists %d GPUs, PCI sysfs %d" % (len(topo["gpus"]), len(placed)))
    for gpu in placed:
        affinity = gpu["topo_numa_affinity"]
        if affinity is not None and gpu["numa_node"] >= 0 and affinity != gpu["numa_node"]:
            messages.append("GPU%d: NUMA node %d (%s) but nvidia-smi topo -m says %d"
                            % (gpu["index"], gpu["numa_node"], gpu["numa_node_from"], affinity))
        topo_cpus = parse_cpulist(gpu["topo_cpu_affinity"])
        node_cpus = nodes.get(gpu["numa_node"], [])
        if topo_cpus and node_cpus and not set(topo_cpus) <= set(node_cpus):
            messages.append("GPU%d: nvidia-smi topo -m CPU affinity %s is not within NUMA node %d (%s)"
                            % (gpu["index"], gpu["topo_cpu_affinity"], gpu["numa_node"], format_cpulist(node_cpus)))
    return messages


def collect_topology(runner, root="/"):
    """NUMA nodes with their physical cores, GPUs placed on them, and the topo -m matrix."""
    nodes, nodes_from = read_numa_nodes(root)
    pci_devices = scan_pci(root)
    topo = None
    messages = []
    if pci_devices:
        rc, out, err = runner(["nvidia-smi", "topo", "-m"])
        if rc == 0:
            topo = parse_topo_matrix(out)
        else:
            messages.append("nvidia-smi topo -m: %s" % ((err or out or "").strip() or "exit status %d" % rc))
    placed = place_gpus(pci_devices, nodes, topo["gpus"] if topo else None)
    messages.extend(cross_check(placed, nodes, topo))
    node_list = []
    for node in sorted(nodes):
        cores = read_core_siblings(root, nodes[node])
        node_list.append({
            "id": node, "cpus": nodes[node], "cpulist": format_cpulist(nodes[node]),
            "cores": cores, "physical_cores": len(cores),
            "gpus": [gpu["index"] for gpu in placed if gpu["numa_node"] == node],
        })
    smt = any(len(core) > 1 for node in node_list for core in node["cores"])
    return {
        "nodes": node_list,
        "nodes_from": nodes_from,
        "smt": smt,
        "gpus": placed,
        "links": topo["links"] if topo else {},
        "messages": messages,
    }


# ---------------------------------------------------------------------------
# Thread plan
# ---------------------------------------------------------------------------

def thread_plan(topology, threads_per_gpu=0):
    """Per GPU: the slice of its NUMA node's physical cores it owns, and its thread count.

    A node's physical cores are divided between the GPUs on that node, in index order; each
    GPU's CPU list holds all SMT threads of its cores, and its thread count is its number of
    cores (``threads_per_gpu`` > 0 overrides the count). A GPU whose node is unknown gets the
    host's physical cores divided by all GPUs and no CPU list (nothing to bind to).
    """
    nodes = dict((node["id"], node) for node in topology["nodes"])
    all_cores = sum(node["physical_cores"] for node in topology["nodes"])
    gpu_count = len(topology["gpus"])
    plan = []
    for gpu in topology["gpus"]:
        node = nodes.get(gpu["numa_node"])
        if node is None or not node["cores"]:
            threads = max(1, all_cores // max(1, gpu_count))
            cpus = []
        else:
            share = node["gpus"].index(gpu["index"])
            count = len(node["gpus"])
            cores = node["cores"]
            mine = cores[share * len(cores) // count:(share + 1) * len(cores) // count] or cores
            threads = len(mine)
            cpus = sorted(cpu for core in mine for cpu in core)
        plan.append({
            "index": gpu["index"],
            "numa_node": gpu["numa_node"] if node is not None else -1,
            "cpus": format_cpulist(cpus),
            "threads": threads_per_gpu if threads_per_gpu > 0 else threads,
        })
    return plan


def session_threads(topology, plan, threads_per_gpu=0):
    """Thread count for a shell or kernel not tied to one GPU: the smallest GPU share, or every
    physical core of the host when it has no GPU."""
    if threads_per_gpu > 0:
        return threads_per_gpu
    if plan:
        return min(entry["threads"] for entry in plan)
    return max(1, sum(node["physical_cores"] for node in topology["nodes"]))


# ---------------------------------------------------------------------------
# OpenMP runtime of an env
# ---------------------------------------------------------------------------

def describe_env(prefix):
    """What kind of Python env ``prefix`` is: conda (conda-meta/), venv (pyvenv.cfg) or None."""
    def exists(name):
        return os.path.exists(os.path.join(prefix, name))
    kind = "conda" if exists("conda-meta") else ("venv" if exists("pyvenv.cfg") else None)
    return {"prefix": prefix, "type": kind, "python": exists("bin/python"), "activate": exists("bin/activate")}


def find_openmp_runtimes(prefix):
    """OpenMP runtimes shipped inside the env at ``prefix``: ``{"runtimes": [...], "libraries": [...]}``."""
    runtimes, libraries = set(), []
    for pattern in OPENMP_SEARCH_GLOBS:
        for directory in sorted(glob.glob(os.path.join(prefix, pattern))):
            try:
                names = sorted(os.listdir(directory))
            except OSError:
                continue
            for name in names:
                for runtime, library in OPENMP_LIBRARIES:
                    if library.match(name):
                        runtimes.add(runtime)
                        libraries.append(os.path.join(directory, name))
    return {"runtimes": sorted(runtimes), "libraries": libraries}


def affinity_env(runtimes):
    """Thread-affinity variables for the OpenMP runtimes present.

    GNU and LLVM OpenMP read the standard OMP_PROC_BIND/OMP_PLACES (Intel's reads them too), so
    those are used whenever either is present; KMP_AFFINITY only reaches Intel's runtime and is
    used only when it is the sole one. No OpenMP runtime: nothing to set.
    """
    if "gnu" in runtimes or "llvm" in runtimes:
        return {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}
    if "intel" in runtimes:
        return {"KMP_AFFINITY": INTEL_KMP_AFFINITY}
    return {}


def thread_env(threads, runtimes, affinity=True):
    """Environment of one process using ``threads`` CPU threads."""
    env = {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    if affinity:
        env.update(affinity_env(runtimes))
    return env
