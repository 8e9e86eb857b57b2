"""The gpu_validation filters: thin shells over module_utils.gpu_validation."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.aistack.gpu_node.plugins.filter import gpu_validation

REFERENCE = {"NVIDIA H200": {"gemm_bf16_tflops": 784, "gemm_fp16_tflops": 784, "copy_gbps": 4800, "fused_adamw_ms": 1.71}}
MIN_FRACTION = {"gemm_bf16_tflops": 0.85, "gemm_fp16_tflops": 0.85, "copy_gbps": 0.6, "fused_adamw_ms": 0.6}


def test_filters_are_registered():
    assert sorted(gpu_validation.FilterModule().filters()) == ["gpu_validation_gate", "gpu_validation_input_problems"]


def test_gate_passes_skipped_through_and_names_bad_input():
    skipped = gpu_validation.gpu_validation_gate({"status": "skipped", "reason": "no GPU"}, REFERENCE, MIN_FRACTION, 1000, 40)
    assert skipped["status"] == "skipped" and not skipped["passed"]
    with pytest.raises(AnsibleFilterError, match="gpu_validate: bad input: gpu_validate_min_amp_samples_per_s must be a number"):
        gpu_validation.gpu_validation_gate({"status": "measured"}, REFERENCE, MIN_FRACTION, "fast", 40)
    with pytest.raises(AnsibleFilterError, match="expects the figures of validate_gpu.py"):
        gpu_validation.gpu_validation_gate("not json", REFERENCE, MIN_FRACTION, 1000, 40)


def test_input_problems():
    assert gpu_validation.gpu_validation_input_problems(MIN_FRACTION, 1000, 40, REFERENCE) == []
    assert gpu_validation.gpu_validation_input_problems(MIN_FRACTION, 1000, "x", REFERENCE) == [
        "gpu_validate_min_allreduce_busbw_gbps must be a number of at least 0, got 'x'"]
