# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from conftest import h200_host, make_host, read_h200, read_public, write
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import numa_topology
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.nvidia_parsers import (
    parse_cpulist,
    parse_topo_matrix,
)


def runner_answering(text, rc=0):
    calls = []

    def runner(argv):
        calls.append(argv)
        return rc, text, "" if rc == 0 else "NVIDIA-SMI has failed"
    runner.calls = calls
    return runner


def test_h200_single_node_gpu_numa_unknown_in_sysfs(tmp_path):
    h200_host(tmp_path)
    runner = runner_answering(read_h200("nvidia-smi-topo-m.txt"))
    topology = numa_topology.collect_topology(runner, str(tmp_path))
    assert runner.calls == [["nvidia-smi", "topo", "-m"]]
    assert topology["nodes_from"] == "sysfs"
    [node] = topology["nodes"]
    assert (node["id"], node["cpulist"], node["physical_cores"], node["gpus"]) == (0, "0-15", 16, [0])
    assert topology["smt"] is False
    [gpu] = topology["gpus"]
    assert gpu["sysfs_numa_node"] == -1
    assert (gpu["numa_node"], gpu["numa_node_from"]) == (0, "only NUMA node with CPUs")
    assert (gpu["topo_cpu_affinity"], gpu["topo_numa_affinity"]) == ("0-15", 0)
    assert topology["messages"] == []
    plan = numa_topology.thread_plan(topology)
    assert plan == [{"index": 0, "numa_node": 0, "cpus": "0-15", "threads": 16}]
    assert numa_topology.session_threads(topology, plan) == 16


def test_h200_recordings_agree_with_sysfs(tmp_path):
    h200_host(tmp_path)
    topology = numa_topology.collect_topology(runner_answering(read_h200("nvidia-smi-topo-m.txt")), str(tmp_path))
    by_sysfs = dict((node["id"], node["cpus"]) for node in topology["nodes"])
    assert numa_topology.parse_numactl_hardware(read_h200("numactl-H.txt")) == by_sysfs
    lscpu = numa_topology.parse_lscpu(read_h200("lscpu.txt"))
    assert lscpu["numa_nodes"] == by_sysfs
    assert (lscpu["sockets"], lscpu["threads_per_core"], lscpu["cpus"]) == (1, 1, 16)
    assert (lscpu["threads_per_core"] > 1) is topology["smt"]


def dgx_h100(root, sysfs_numa=True):
    """Two sockets of 56 cores with SMT (siblings +112), GPUs 0-3 on node 0 and 4-7 on node 1, as
    in the public DGX H100 sample."""
    topo = parse_topo_matrix(read_public("nvidia-smi-topo-m-dgx-h100-8gpu.txt"))
    gpus = [("0000:%02x:00.0" % (0x18 + 0x10 * gpu["index"]), gpu["numa_affinity"] if sysfs_numa else -1,
             gpu["cpu_affinity"]) for gpu in topo["gpus"]]
    make_host(root, {0: "0-55,112-167", 1: "56-111,168-223"}, siblings_offset=112, gpus=gpus)


def test_dgx_h100_sample_parses_despite_run_together_cells():
    topo = parse_topo_matrix(read_public("nvidia-smi-topo-m-dgx-h100-8gpu.txt"))
    assert [gpu["numa_affinity"] for gpu in topo["gpus"]] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert [gpu["cpu_affinity"] for gpu in topo["gpus"]] == ["0-55,112-167"] * 4 + ["56-111,168-223"] * 4
    assert topo["links"]["GPU0"]["GPU7"] == "NV18"
    assert topo["links"]["GPU0"]["NIC0"] == "PXB"


def test_dgx_h100_two_sockets_smt(tmp_path):
    dgx_h100(tmp_path)
    topology = numa_topology.collect_topology(
        runner_answering(read_public("nvidia-smi-topo-m-dgx-h100-8gpu.txt")), str(tmp_path))
    assert [(node["physical_cores"], node["gpus"]) for node in topology["nodes"]] == [(56, [0, 1, 2, 3]), (56, [4, 5, 6, 7])]
    assert topology["smt"] is True
    assert topology["messages"] == []
    plan = numa_topology.thread_plan(topology)
    assert [entry["threads"] for entry in plan] == [14] * 8
    # each GPU owns 14 whole cores of its socket, both SMT threads of each, and no two GPUs share a CPU
    assert plan[0]["cpus"] == "0-13,112-125"
    assert plan[3]["cpus"] == "42-55,154-167"
    assert plan[4] == {"index": 4, "numa_node": 1, "cpus": "56-69,168-181", "threads": 14}
    owned = [cpu for entry in plan for cpu in parse_cpulist(entry["cpus"])]
    assert len(owned) == len(set(owned)) == 224
    assert numa_topology.thread_plan(topology, threads_per_gpu=8)[5]["threads"] == 8
    assert numa_topology.session_threads(topology, plan) == 14


def test_vm_without_sysfs_numa_uses_topo_affinity(tmp_path):
    dgx_h100(tmp_path, sysfs_numa=False)
    topology = numa_topology.collect_topology(
        runner_answering(read_public("nvidia-smi-topo-m-dgx-h100-8gpu.txt")), str(tmp_path))
    assert [gpu["numa_node"] for gpu in topology["gpus"]] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert {gpu["numa_node_from"] for gpu in topology["gpus"]} == {"nvidia-smi topo -m"}


def test_numa_unknown_without_topo_means_no_binding(tmp_path):
    dgx_h100(tmp_path, sysfs_numa=False)
    topology = numa_topology.collect_topology(runner_answering("", rc=127), str(tmp_path))
    assert topology["messages"] == ["nvidia-smi topo -m: NVIDIA-SMI has failed"]
    plan = numa_topology.thread_plan(topology)
    assert {(entry["numa_node"], entry["cpus"], entry["threads"]) for entry in plan} == {(-1, "", 14)}


def test_dgx_a100_nps4_and_a_disagreement(tmp_path):
    # DGX A100 sample: GPU0/1 on NUMA node 3 (48-63,176-191), GPU2/3 on node 1 (16-31,144-159); 8 nodes of 16 cores.
    topo_text = read_public("nvidia-smi-topo-m-dgx-a100-8gpu.txt")
    topo = parse_topo_matrix(topo_text)
    nodes = dict((n, "%d-%d,%d-%d" % (16 * n, 16 * n + 15, 128 + 16 * n, 128 + 16 * n + 15)) for n in range(8))
    gpus = [("0000:%02x:00.0" % (0x07 + 0x10 * gpu["index"]), gpu["numa_affinity"], gpu["cpu_affinity"])
            for gpu in topo["gpus"]]
    gpus[2] = (gpus[2][0], 2, gpus[2][2])  # firmware reporting another node than the driver
    make_host(tmp_path, nodes, siblings_offset=128, gpus=gpus)
    topology = numa_topology.collect_topology(runner_answering(topo_text), str(tmp_path))
    assert [gpu["numa_node"] for gpu in topology["gpus"]] == [3, 3, 2, 1]
    assert topology["messages"] == [
        "GPU2: NUMA node 2 (sysfs) but nvidia-smi topo -m says 1",
        "GPU2: nvidia-smi topo -m CPU affinity 16-31,144-159 is not within NUMA node 2 (32-47,160-175)",
    ]
    plan = numa_topology.thread_plan(topology)
    assert [(entry["cpus"], entry["threads"]) for entry in plan] == [
        ("48-55,176-183", 8), ("56-63,184-191", 8), ("32-47,160-175", 16), ("16-31,144-159", 16)]


def test_old_topo_format_has_cpu_affinity_only():
    topo = parse_topo_matrix(read_public("nvidia-smi-topo-m-dgx2-16gpu-old.txt"))
    assert len(topo["devices"]) == 26 and topo["devices"][16] == "mlx5_0"
    assert [(gpu["cpu_affinity"], gpu["numa_affinity"]) for gpu in topo["gpus"]] == [("0-23,48-71", None)] * 4
    assert topo["links"]["GPU3"]["mlx5_1"] == "PIX"


def test_no_numa_in_sysfs_and_no_gpu(tmp_path):
    write(tmp_path, "sys/devices/system/cpu/online", "0-3\n")
    runner = runner_answering("")
    topology = numa_topology.collect_topology(runner, str(tmp_path))
    assert runner.calls == []  # no GPU: nvidia-smi is not asked
    assert topology["nodes_from"] == "cpu/online (no NUMA in sysfs)"
    assert topology["nodes"][0]["physical_cores"] == 4  # no topology files: each CPU its own core
    assert numa_topology.thread_plan(topology) == []
    assert numa_topology.session_threads(topology, []) == 4
    assert numa_topology.read_numa_nodes(str(tmp_path / "empty")) == ({}, "none")


def test_format_cpulist_round_trip():
    for text in ("0-15", "0-55,112-167", "3", "0,2,4-6"):
        assert numa_topology.format_cpulist(parse_cpulist(text)) == text
    assert numa_topology.format_cpulist([]) == ""


@pytest.mark.parametrize("files, runtimes, env", [
    (["lib/python3.12/site-packages/torch/lib/libgomp.so.1"], ["gnu"], {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}),
    (["lib/python3.11/site-packages/scikit_learn.libs/libgomp-a34b3233.so.1.0.0"], ["gnu"],
     {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}),
    (["lib/libiomp5.so", "lib/libmkl_core.so.2"], ["intel"], {"KMP_AFFINITY": "granularity=fine,compact,1,0"}),
    (["lib/libiomp5.so", "lib/python3.12/site-packages/torch/lib/libgomp.so.1"], ["gnu", "intel"],
     {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}),
    (["lib/libomp.so"], ["llvm"], {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}),
    (["lib/libgompx.so", "lib/python3.12/site-packages/numpy.libs/libopenblas64_p-r0-0cf96a72.3.23.dev.so"], [], {}),
])
def test_openmp_runtime_decides_affinity(tmp_path, files, runtimes, env):
    for name in files:
        write(tmp_path, name, "")
    found = numa_topology.find_openmp_runtimes(str(tmp_path))
    assert found["runtimes"] == runtimes
    assert numa_topology.affinity_env(found["runtimes"]) == env
    assert numa_topology.thread_env(12, found["runtimes"]) == dict(env, OMP_NUM_THREADS="12", MKL_NUM_THREADS="12")
    assert numa_topology.thread_env(12, found["runtimes"], affinity=False) == {"OMP_NUM_THREADS": "12", "MKL_NUM_THREADS": "12"}


def test_describe_env(tmp_path):
    write(tmp_path, "conda/conda-meta/history", "")
    write(tmp_path, "conda/bin/python", "")
    assert numa_topology.describe_env(str(tmp_path / "conda")) == {
        "prefix": str(tmp_path / "conda"), "type": "conda", "python": True, "activate": False}
    write(tmp_path, "venv/pyvenv.cfg", "")
    write(tmp_path, "venv/bin/activate", "")
    assert numa_topology.describe_env(str(tmp_path / "venv"))["type"] == "venv"
    assert numa_topology.describe_env(str(tmp_path / "venv"))["python"] is False
    assert numa_topology.describe_env(str(tmp_path))["type"] is None
