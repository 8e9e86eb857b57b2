"""The gpu_validation module: the gpu_validate role's thresholds check and gate, over module_utils.gpu_validation.

Moved from the retired gpu_validation_gate / gpu_validation_input_problems filter tests (the
verdicts on recorded H200 figures are tested on module_utils.gpu_validation itself).
"""

from conftest import run_module
from ansible_collections.aistack.gpu_node.plugins.module_utils.multi_gpu_env import MULTICAST_OFF_ENV
from ansible_collections.aistack.gpu_node.plugins.modules import gpu_validation

REFERENCE = {"NVIDIA H200": {"gemm_bf16_tflops": 784, "gemm_fp16_tflops": 784, "copy_gbps": 4800, "fused_adamw_ms": 1.71}}
MIN_FRACTION = {"gemm_bf16_tflops": 0.85, "gemm_fp16_tflops": 0.85, "copy_gbps": 0.6, "fused_adamw_ms": 0.6}


def args(**overrides):
    base = dict(reference=REFERENCE, min_fraction=MIN_FRACTION, min_amp_samples_per_s=1000, min_allreduce_busbw_gbps=40,
                _ansible_check_mode=True)
    base.update(overrides)
    return base


def test_thresholds_only_lists_no_problem_for_the_defaults(capsys):
    code, result = run_module(gpu_validation, args(), capsys)
    assert code == 0 and result["changed"] is False
    assert result["problems"] == [] and "gate" not in result
    assert result["multicast_off_env"] == MULTICAST_OFF_ENV


def test_thresholds_only_names_each_bad_variable(capsys):
    code, result = run_module(gpu_validation, args(min_allreduce_busbw_gbps="x"), capsys)
    assert code == 0
    assert result["problems"] == ["gpu_validate_min_allreduce_busbw_gbps must be a number of at least 0, got 'x'"]


def test_gate_passes_skipped_through(capsys):
    code, result = run_module(gpu_validation, args(results={"status": "skipped", "reason": "no GPU"}), capsys)
    assert code == 0 and result["changed"] is False
    assert result["gate"]["status"] == "skipped" and not result["gate"]["passed"]
    assert result["multicast_off_env"] == MULTICAST_OFF_ENV


def test_gate_refuses_bad_thresholds_naming_them(capsys):
    code, result = run_module(gpu_validation, args(results={"status": "measured"}, min_amp_samples_per_s="fast"), capsys)
    assert code == 1
    assert result["msg"].startswith("gpu_validate: bad input: gpu_validate_min_amp_samples_per_s must be a number")


def test_gate_refuses_figures_that_are_not_a_mapping(capsys):
    code, result = run_module(gpu_validation, args(results="not json"), capsys)
    assert code == 1 and "results" in result["msg"]
