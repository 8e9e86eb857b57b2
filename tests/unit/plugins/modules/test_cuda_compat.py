# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

import pytest
from ansible.module_utils import basic

from conftest import read_h200, run_module
from ansible_collections.aistack.gpu_node.plugins.modules import cuda_compat


H200_FACTS = {
    "state": "ok", "source": "nvidia-smi", "gpu_count": 1,
    "gpus": [{"index": 0, "name": "NVIDIA H200", "uuid": "GPU-33ea3011-d795-9321-b26f-fa72c6fe6db3", "compute_capability": "9.0",
              "compute_capability_from": "driver", "memory_total_mib": 143771, "pci_bus_id": "0000:00:06.0", "numa_node": -1,
              "persistence_mode": True, "mig_mode": False}],
    "driver": {"version": "580.159.04", "kernel_module_flavour": "open", "cuda_version": "13.0", "loaded_version": "580.159.04",
               "userspace_version": "580.159.04", "mismatch": False},
    "pci_devices": [], "messages": [],
}
H200_TORCH = {"python_version": "3.12.3", "executable": "/opt/torch/.venv/bin/python3",
              "torch": {"present": True, "version": "2.11.0+cu130", "cuda": "13.0", "cudnn": 91900, "cuda_available": True,
                        "arch_list": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], "arch_list_source": "torch.cuda.get_arch_list"},
              "apex": {"present": False, "extensions": {}}}


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A fake interpreter and CUDA home; run_command answers the probe and nvcc from fixtures."""
    python = tmp_path / "venv/bin/python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    nvcc = tmp_path / "cuda/bin/nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text("")
    answers = {"probe": (0, json.dumps(H200_TORCH) + "\n", ""), "nvcc": (0, read_h200("nvcc-version.txt"), "")}

    def run_command(self, argv, **kwargs):
        if argv[1:2] == ["-c"]:
            return answers["probe"]
        if argv[0].endswith("nvcc"):
            return answers["nvcc"]
        return 127, "", "unexpected %s" % argv
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(cuda_compat, "find_forward_compat", lambda root, cuda: {"path": "/usr/local/cuda-13.0/compat", "present": True})
    return {"python": str(python), "cuda_home": str(tmp_path / "cuda"), "answers": answers, "tmp": tmp_path}


def args(env, **extra):
    result = {"python": env["python"], "cuda_home": env["cuda_home"], "gpu_facts": H200_FACTS}
    result.update(extra)
    return result


def test_h200_is_ok(env, capsys):
    rc, result = run_module(cuda_compat, args(env, required_cuda="13.0"), capsys)
    assert rc == 0 and result["changed"] is False and result["verdict"] == "ok"
    report = result["report"]
    assert report["findings"] == []
    assert report["torch"]["cudnn_version"] == "9.19.0"
    assert report["nvcc"]["release"] == "13.0" and report["nvcc"]["found_by"] == "cuda_home option"
    assert report["torch_cuda_arch_list"] == "9.0"
    assert report["python"] == {"interpreter": env["python"], "version": "3.12.3", "error": None}
    assert report["driver_lifecycle"]["branch"] == "R580" and report["driver_lifecycle"]["eol"] == "2028-06"
    assert report["driver_lifecycle"]["designation"] == "LTSB"


def test_check_mode_is_the_same_read_only_run(env, capsys):
    _rc, normal = run_module(cuda_compat, args(env), capsys)
    rc, checked = run_module(cuda_compat, args(env, _ansible_check_mode=True), capsys)
    assert rc == 0 and checked["changed"] is False and checked["report"] == normal["report"]


def test_fail_on_error_lists_findings_and_fixes(env, capsys):
    env["answers"]["nvcc"] = (0, read_h200("nvcc-version.txt").replace("release 13.0, V13.0.88", "release 12.8, V12.8.93"), "")
    rc, result = run_module(cuda_compat, args(env), capsys)
    assert rc == 1 and result["failed"] is True and result["verdict"] == "error"
    assert "nvcc.torch_major_mismatch" in result["msg"] and "Fix:" in result["msg"]
    assert result["report"]["nvcc"]["release"] == "12.8"


def test_fail_on_never_and_warning(env, capsys):
    env["answers"]["nvcc"] = (0, read_h200("nvcc-version.txt").replace("release 13.0, V13.0.88", "release 13.1, V13.1.80"), "")
    rc, result = run_module(cuda_compat, args(env, fail_on="never"), capsys)
    assert rc == 0 and result["verdict"] == "error"
    rc, result = run_module(cuda_compat, args(env, apex=False), capsys)
    assert rc == 0 and result["verdict"] == "warning"
    rc, result = run_module(cuda_compat, args(env, apex=False, fail_on="warning"), capsys)
    assert rc == 1 and "nvcc.torch_minor_mismatch" in result["msg"] and "apex.cuda_mismatch" not in result["msg"]


def test_no_torch_and_no_gpu_report_cleanly(env, capsys, monkeypatch):
    env["answers"]["probe"] = (0, json.dumps({"python_version": "3.12.3", "torch": {"present": False, "error": "ModuleNotFoundError"},
                                              "apex": {"present": False, "extensions": {}}}) + "\n", "")
    monkeypatch.setattr(cuda_compat, "collect_gpu_facts", lambda runner, root, nvml: {"state": "no_gpu", "gpus": [], "driver": {}})
    monkeypatch.setattr(cuda_compat, "import_nvml", lambda: None)
    rc, result = run_module(cuda_compat, {"python": env["python"], "cuda_home": env["cuda_home"]}, capsys)
    assert rc == 0 and result["verdict"] == "ok"
    assert sorted(item["id"] for item in result["report"]["findings"]) == ["gpu.none", "torch.missing"]
    assert result["report"]["gpu_state"] == "no_gpu" and result["report"]["torch_cuda_arch_list"] == ""
    assert result["report"]["driver_lifecycle"] is None


def test_missing_interpreter_fails_with_report(env, capsys):
    rc, result = run_module(cuda_compat, args(env, python=str(env["tmp"] / "nope/bin/python")), capsys)
    assert rc == 1 and "python.error" in result["msg"]
    assert result["report"]["python"]["error"]


def test_cuda_home_found_like_torch(env, capsys, monkeypatch):
    monkeypatch.setenv("CUDA_HOME", env["cuda_home"])
    monkeypatch.delenv("CUDA_PATH", raising=False)
    rc, result = run_module(cuda_compat, {"python": env["python"], "gpu_facts": H200_FACTS}, capsys)
    assert rc == 0 and result["report"]["nvcc"]["found_by"] == "CUDA_HOME"
    assert result["report"]["nvcc"]["path"] == os.path.join(env["cuda_home"], "bin", "nvcc")


def test_reading_stands_for_the_environment_without_running_it(env, capsys):
    _rc, first = run_module(cuda_compat, args(env, required_cuda="13.0"), capsys)
    # The environment would now answer differently: a reading must not run it again.
    env["answers"]["probe"] = (1, "", "the env was run a second time")
    rc, again = run_module(cuda_compat, args(env, required_cuda="13.0", reading=first["report"]), capsys)
    assert rc == 0 and again["report"] == first["report"]


def test_reading_of_another_interpreter_or_a_failed_probe_is_refused(env, capsys):
    _rc, first = run_module(cuda_compat, args(env), capsys)
    rc, result = run_module(cuda_compat, args(env, python="/opt/other/bin/python", reading=first["report"]), capsys)
    assert rc == 1 and result["msg"] == "reading is the report of %s, not of python /opt/other/bin/python" % env["python"]
    env["answers"]["probe"] = (1, "", "ImportError: broken env")
    _rc, failed = run_module(cuda_compat, args(env, fail_on="never"), capsys)
    rc, result = run_module(cuda_compat, args(env, reading=failed["report"]), capsys)
    assert rc == 1 and result["msg"].startswith("reading is the report of a probe of %s that did not run" % env["python"])
