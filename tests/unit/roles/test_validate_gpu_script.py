"""roles/gpu_validate/files/validate_gpu.py outside a GPU: what it writes without torch and without a GPU.

The measurements themselves run on the GPU host (tests/gpu); here the script's own paths are checked.
"""

import importlib.util
import json
import os
import subprocess
import sys
import types

import pytest
from conftest import REPO_ROOT
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.multi_gpu_env import MULTICAST_OFF_ENV

SCRIPT = os.path.join(REPO_ROOT, "roles", "gpu_validate", "files", "validate_gpu.py")


def load_script():
    spec = importlib.util.spec_from_file_location("validate_gpu", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_torch_it_writes_an_error_and_exits_1(tmp_path):
    out = tmp_path / "figures.json"
    python = os.path.join(REPO_ROOT, ".venv", "bin", "python")
    env = dict(os.environ, PYTHONNOUSERSITE="1")
    proc = subprocess.run([python if os.path.exists(python) else sys.executable, "-S", SCRIPT, "--json", str(out)],
                          capture_output=True, text=True, env=env, check=False)
    figures = json.loads(out.read_text())
    assert proc.returncode == 1, proc.stderr
    assert figures["status"] == "error"
    assert figures["reason"].startswith("torch is not importable by ")
    assert proc.stdout.startswith("GPU validation on %s: error (torch is not importable" % figures["host"])


def test_without_a_gpu_it_reports_skipped_not_passed(tmp_path, monkeypatch, capsys):
    fake_torch = types.ModuleType("torch")
    fake_torch.__version__ = "2.13.0+cpu"
    fake_torch.version = types.SimpleNamespace(cuda=None)
    fake_torch.cuda = types.SimpleNamespace(is_available=lambda: False, device_count=lambda: 0)
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    script = load_script()
    out = tmp_path / "figures.json"
    assert script.main(["--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert (figures["status"], figures["reason"], figures["torch"]) == ("skipped", "no GPU", "2.13.0+cpu")
    assert "gpus" not in figures
    assert capsys.readouterr().out.strip().endswith(": skipped (no GPU)")


def test_it_keeps_nvlink_multicast_off_in_its_environment(tmp_path, monkeypatch):
    for name in MULTICAST_OFF_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch fails
    script = load_script()
    # As roles/gpu_validate/tasks/measure.yml passes it: the gpu_validation module's multicast_off_env, as JSON.
    assert script.main(["--json", str(tmp_path / "f.json"), "--env=" + json.dumps(MULTICAST_OFF_ENV)]) == 1
    assert (os.environ["NCCL_NVLS_ENABLE"], os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"],
            os.environ["NVSHMEM_DISABLE_NVLS"]) == ("0", "1", "1")


def test_the_role_passes_the_modules_multicast_off_env():
    with open(os.path.join(REPO_ROOT, "roles", "gpu_validate", "tasks", "measure.yml")) as handle:
        assert "- --env={{ __gpu_validate_thresholds.multicast_off_env | to_json }}" in handle.read()


@pytest.mark.parametrize("value", ['["NCCL_NVLS_ENABLE"]', '{"NCCL_NVLS_ENABLE": 0}', "NCCL_NVLS_ENABLE=0"])
def test_it_refuses_an_env_that_is_not_an_object_of_strings(tmp_path, capsys, value):
    script = load_script()
    with pytest.raises(SystemExit) as exited:
        script.main(["--json", str(tmp_path / "f.json"), "--env", value])
    assert exited.value.code == 2
    assert "expected a JSON object of variable names to strings" in capsys.readouterr().err


def test_summary_of_measured_figures():
    script = load_script()
    text = script.summary({
        "host": "gpu-h200", "status": "measured",
        "gpus": [{"index": 0, "name": "NVIDIA H200", "gemm_bf16_tflops": 783.79, "gemm_fp16_tflops": 780.1,
                  "copy_gbps": 4012.5, "fused_adamw_ms": 1.7116}],
        "amp": {"samples_per_s": 51234.0, "loss_first": 1.02, "loss_last": 0.31},
        "allreduce": {"status": "measured", "world_size": 2, "sizes": [
            {"bytes": 1048576, "algbw_gbps": 50.0, "busbw_gbps": 50.0}]},
    })
    assert text.splitlines() == [
        "GPU validation on gpu-h200: measured",
        "  GPU 0 NVIDIA H200: bf16 784 TFLOP/s, fp16 780 TFLOP/s, copy 4012 GB/s, fused AdamW 1.71 ms",
        "  AMP step: 51234 samples/s, loss 1.0200 -> 0.3100",
        "  all-reduce 2 ranks, 1048576 B: algbw 50.0 GB/s, busbw 50.0 GB/s",
    ]


@pytest.mark.parametrize("text, value", [("true", True), ("0", False), ("off", False)])
def test_boolean_options(text, value):
    assert load_script().parse_args(["--json", "x", "--pin-memory", text]).pin_memory is value


def test_a_bad_boolean_is_refused():
    with pytest.raises(SystemExit):
        load_script().parse_args(["--json", "x", "--persistent-workers", "maybe"])


def test_a_failure_while_measuring_is_recorded_as_an_error(tmp_path, monkeypatch):
    def broken(_index):
        raise RuntimeError("CUDA error: uncorrectable ECC error encountered")

    fake_torch = types.ModuleType("torch")
    fake_torch.__version__ = "2.11.0+cu130"
    fake_torch.version = types.SimpleNamespace(cuda="13.0")
    fake_torch.backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace()))
    fake_torch.device = lambda kind, index: (kind, index)
    fake_torch.cuda = types.SimpleNamespace(is_available=lambda: True, device_count=lambda: 1, get_device_name=broken)
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    out = tmp_path / "figures.json"
    assert load_script().main(["--json", str(out)]) == 1
    figures = json.loads(out.read_text())
    assert figures["status"] == "error"
    assert figures["reason"] == "measuring failed: RuntimeError: CUDA error: uncorrectable ECC error encountered"


def h100_torch():
    """torch's view of the project's H100 (its recorded torch-info: 132 SMs, 85017493504 bytes)."""
    props = types.SimpleNamespace(multi_processor_count=132, total_memory=85017493504,
                                  uuid="bd5f5fb1-8555-756c-09db-6be1a5ac4fe3")
    return types.SimpleNamespace(cuda=types.SimpleNamespace(get_device_properties=lambda index: props))


class FakeLibcuda(object):
    """The driver API calls device_properties makes, answering as the H100's driver does (nvidia-smi -q's max clocks)."""

    ATTRIBUTES = {13: 1980000, 36: 2619000, 37: 5120}

    def cuInit(self, flags):  # noqa: N802 - the driver API's names
        return 0

    def cuDeviceGet(self, device, index):  # noqa: N802
        return 0

    def cuDeviceGetAttribute(self, value, attribute, device):  # noqa: N802
        value._obj.value = self.ATTRIBUTES[attribute]
        return 0


def test_device_properties_read_what_an_unknown_gpu_is_judged_by(monkeypatch):
    script = load_script()
    monkeypatch.setattr(script.ctypes, "CDLL", lambda name: FakeLibcuda())
    assert script.device_properties(h100_torch(), 0) == {
        "sm_count": 132, "memory_total_mib": 81079, "uuid": "GPU-bd5f5fb1-8555-756c-09db-6be1a5ac4fe3",
        "sm_clock_max_mhz": 1980, "memory_clock_max_mhz": 2619, "memory_bus_width_bits": 5120}


def test_device_properties_without_the_driver_library_leave_the_clocks_unknown(monkeypatch):
    script = load_script()

    def missing(name):
        raise OSError("libcuda.so.1: cannot open shared object file")
    monkeypatch.setattr(script.ctypes, "CDLL", missing)
    found = script.device_properties(h100_torch(), 0)
    assert found["sm_count"] == 132
    assert (found["sm_clock_max_mhz"], found["memory_clock_max_mhz"], found["memory_bus_width_bits"]) == (None, None, None)
