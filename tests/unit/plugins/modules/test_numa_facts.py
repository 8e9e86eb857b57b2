# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import hashlib
import json

import pytest
from ansible.module_utils import basic

from conftest import h200_host, read_h200, run_module, write
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import multi_gpu_env
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import host_tuning, numa_proof, numa_topology
from ansible_collections.aistack.gpu_node.plugins.modules import numa_facts


@pytest.fixture
def h200(tmp_path, monkeypatch):
    """The H200 host's sysfs as recorded, nvidia-smi topo -m answering from the recording, and a
    torch venv whose wheel bundles GNU OpenMP."""
    root = tmp_path / "root"
    h200_host(root)
    venv = tmp_path / "venv"
    write(venv, "lib/python3.12/site-packages/torch/lib/libgomp.so.1", "")
    write(venv, "bin/python", "")
    write(venv, "pyvenv.cfg", "home = /usr/bin\n")
    calls = []

    def run_command(self, argv, **kwargs):
        calls.append(argv[1:])
        return 0, read_h200("nvidia-smi-topo-m.txt"), ""
    real_collect, real_host = numa_topology.collect_topology, host_tuning.read_host
    monkeypatch.setattr(numa_facts, "collect_topology", lambda runner, root: real_collect(runner, str(tmp_path / "root")))
    monkeypatch.setattr(numa_facts, "read_host", lambda root: real_host(str(tmp_path / "root")))
    program = tmp_path / "nvidia-smi"
    program.write_text("")
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: str(program))
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    return {"venv": str(venv), "calls": calls, "program": str(program)}


def test_h200_plan_and_env(h200, capsys):
    rc, result = run_module(numa_facts, {"env_prefix": h200["venv"]}, capsys)
    facts = result["ansible_facts"]["aistack_numa"]
    assert rc == 0 and result["changed"] is False
    assert h200["calls"] == [["topo", "-m"]]
    assert facts["openmp"]["runtimes"] == ["gnu"]
    assert facts["env"] == {"prefix": h200["venv"], "type": "venv", "python": True, "activate": False}
    assert facts["plan"] == [{"index": 0, "numa_node": 0, "cpus": "0-15", "threads": 16, "env": {
        "OMP_NUM_THREADS": "16", "MKL_NUM_THREADS": "16", "OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}}]
    assert facts["session_env"] == {"OMP_NUM_THREADS": "16", "MKL_NUM_THREADS": "16"}
    assert facts["affinity_env"] == {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}
    assert facts["multicast_off_env"] == multi_gpu_env.MULTICAST_OFF_ENV
    assert facts["numactl"] == h200["program"]  # get_bin_path's answer
    # the recording's host: THP and numa_balancing files are absent from the fake tree
    assert facts["host"]["thp"]["supported"] is False and facts["host"]["governor"]["supported"] is False


def test_overrides(h200, capsys):
    _rc, result = run_module(numa_facts, {"env_prefix": h200["venv"], "threads_per_gpu": 6, "session_affinity": True}, capsys)
    facts = result["ansible_facts"]["aistack_numa"]
    assert facts["plan"][0]["threads"] == 6
    assert facts["session_env"] == {"OMP_NUM_THREADS": "6", "MKL_NUM_THREADS": "6", "OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}


def test_without_env_prefix_no_affinity(h200, capsys):
    _rc, result = run_module(numa_facts, {}, capsys)
    facts = result["ansible_facts"]["aistack_numa"]
    assert facts["openmp"] == {"runtimes": [], "libraries": []} and facts["env"] is None
    assert facts["plan"][0]["env"] == {"OMP_NUM_THREADS": "16", "MKL_NUM_THREADS": "16"}


def test_bad_input_named(h200, capsys, tmp_path):
    rc, result = run_module(numa_facts, {"threads_per_gpu": -2}, capsys)
    assert rc == 1 and "threads_per_gpu" in result["msg"]
    missing = str(tmp_path / "no-such-env")
    rc, result = run_module(numa_facts, {"env_prefix": missing}, capsys)
    assert rc == 1 and "env_prefix %s is not a directory" % missing in result["msg"]


def test_no_numactl_is_null(h200, capsys, monkeypatch):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, required=False, opt_dirs=None: h200["program"] if name == "nvidia-smi" else None)
    facts = run_module(numa_facts, {}, capsys)[1]["ansible_facts"]["aistack_numa"]
    assert facts["numactl"] is None


def test_the_recorded_check_comes_back_with_the_node_as_it_is_now(h200, capsys, tmp_path):
    launcher = tmp_path / "aistack-numa-launch"
    launcher.write_text("#!/bin/sh\n")
    record = tmp_path / "proof.json"
    record.write_text(json.dumps({"key": "k", "state": {"files": {str(launcher): "0" * 64, str(tmp_path / "gone"): None},
                                                        "allowed": {}, "numactl": ""}}))
    result = run_module(numa_facts, {"env_prefix": h200["venv"], "proof_path": str(record)}, capsys)[1]
    assert result["proof"]["recorded"]["key"] == "k"
    now = result["proof"]["state"]
    assert now["files"] == {str(launcher): hashlib.sha256(b"#!/bin/sh\n").hexdigest(), str(tmp_path / "gone"): None}
    assert set(now["allowed"]) == {"Cpus_allowed_list", "Mems_allowed_list"} and "numactl" in now
    record.write_text("{cut short")
    assert run_module(numa_facts, {"proof_path": str(record)}, capsys)[1]["proof"] == {"recorded": None, "state": None}
    assert "proof" not in run_module(numa_facts, {}, capsys)[1]


def test_numactl_is_looked_for_as_command_v_does(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        folder.mkdir()
    (first / "numactl").write_text("")  # not executable: skipped, as the shell skips it
    program = second / "numactl"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    path = "%s:%s" % (first, second)
    assert numa_proof.command_path("numactl", path) == str(program)
    assert numa_proof.command_path("numactl", str(first)) == ""
