"""The GPU acceptance gate, fed with the figures recorded on the project's H200."""

import copy

import pytest
from ansible_collections.aistack.gpu_node.plugins.module_utils import gpu_validation
from conftest import read_h200

REFERENCE = {"NVIDIA H200": {"gemm_bf16_tflops": 784, "gemm_fp16_tflops": 784, "copy_gbps": 4800, "fused_adamw_ms": 1.71}}
MIN_FRACTION = {"gemm_bf16_tflops": 0.85, "gemm_fp16_tflops": 0.85, "copy_gbps": 0.6, "fused_adamw_ms": 0.6}


def recorded_bench():
    """apex-bench.txt from the H200 host: 'bf16_gemm_tflops 783.79...', 'adam_ms torch_fused 1.71...'."""
    figures = {}
    for line in read_h200("apex-bench.txt").splitlines():
        parts = line.split()
        if parts[0] == "bf16_gemm_tflops":
            figures["bf16"] = float(parts[1])
        elif parts[:2] == ["adam_ms", "torch_fused"]:
            figures["fused_adam_ms"] = float(parts[2])
    return figures


def h200_results():
    """The script's JSON for the H200, bf16 GEMM and fused optimizer step as recorded there.

    fp16 GEMM, copy bandwidth, AMP and all-reduce were not recorded on that host: they are set here
    (fp16 = bf16, Hopper's datasheet rate; copy 4100 GB/s) and each test says which one it moves.
    """
    bench = recorded_bench()
    return {
        "schema": 1, "status": "measured", "host": "gpu-h200", "torch": "2.11.0+cu130", "cuda": "13.0",
        "gpus": [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0",
                  "gemm_bf16_tflops": bench["bf16"], "gemm_fp16_tflops": bench["bf16"],
                  "copy_gbps": 4100.0, "fused_adamw_ms": bench["fused_adam_ms"]}],
        "amp": {"samples_per_s": 52000.0, "loss_first": 1.02, "loss_last": 0.31, "loss_finite": True,
                "loss_decreased": True},
        "allreduce": {"status": "skipped", "reason": "1 GPU on the node"},
    }


def gate(results, **overrides):
    args = dict(reference=REFERENCE, min_fraction=MIN_FRACTION, min_amp_samples_per_s=1000, min_allreduce_busbw_gbps=40)
    args.update(overrides)
    return gpu_validation.gate(results, **args)


def test_recorded_h200_figures_pass():
    assert recorded_bench() == {"bf16": pytest.approx(783.79, abs=0.01), "fused_adam_ms": pytest.approx(1.7116, abs=1e-4)}
    verdict = gate(h200_results())
    assert verdict["status"] == "passed" and verdict["passed"]
    assert verdict["failed"] == []
    names = [c["name"] for c in verdict["checks"]]
    assert names == ["gemm_bf16_tflops", "gemm_fp16_tflops", "copy_gbps", "fused_adamw_ms", "amp_loss", "amp_samples_per_s"]
    bf16 = verdict["checks"][0]
    assert bf16["limit"] == pytest.approx(784 * 0.85)
    assert bf16["message"].startswith("GPU 0 NVIDIA H200 gemm_bf16_tflops: ok 783.8 TFLOP/s")


def test_a_slow_gemm_fails_naming_the_figure_and_the_limit():
    results = h200_results()
    results["gpus"][0]["gemm_bf16_tflops"] = 600.0  # throttled: below 0.85 x 784 = 666.4
    verdict = gate(results)
    assert verdict["status"] == "failed" and not verdict["passed"]
    assert verdict["failed"] == ["GPU 0 NVIDIA H200 gemm_bf16_tflops: BELOW THRESHOLD 600 TFLOP/s "
                                 "(needs >= 666.4 = 0.85 x reference 784)"]
    assert verdict["summary"] == "failed: 1 of 6 checks below threshold"


def test_a_slow_optimizer_step_fails_as_a_time():
    results = h200_results()
    results["gpus"][0]["fused_adamw_ms"] = 14.08  # the recorded for-loop Adam, as if fused were not used
    (message,) = gate(results)["failed"]
    assert message.startswith("GPU 0 NVIDIA H200 fused_adamw_ms: BELOW THRESHOLD 14.08 ms (needs <= 2.85")


def test_threshold_strings_from_extra_vars_count_as_numbers():
    assert gate(h200_results(), min_amp_samples_per_s="1000", min_fraction=dict(MIN_FRACTION, copy_gbps="0.6"))["passed"]


def test_an_unknown_gpu_fails_by_name():
    results = h200_results()
    results["gpus"][0]["name"] = "NVIDIA B200"
    assert gate(results)["failed"] == ["GPU 0 NVIDIA B200 reference: FAILED "
                                       "(no reference figures for 'NVIDIA B200': add them to gpu_validate_reference)"]


def test_no_gpu_is_skipped_not_passed_and_no_torch_is_an_error():
    verdict = gate({"schema": 1, "status": "skipped", "reason": "no GPU"})
    assert (verdict["status"], verdict["passed"], verdict["summary"]) == ("skipped", False, "skipped: no GPU")
    verdict = gate({"schema": 1, "status": "error", "reason": "torch is not importable"})
    assert (verdict["status"], verdict["passed"]) == ("error", False)


def test_amp_loss_that_does_not_fall_fails():
    results = h200_results()
    results["amp"].update(loss_last=float("nan"), loss_finite=False, loss_decreased=False)
    assert [m.split(":")[0] for m in gate(results)["failed"]] == ["AMP step amp_loss"]
    assert gate(results)["failed"][0] == "AMP step amp_loss: FAILED nan (the loss must stay finite and fall, from 1.02)"


def test_allreduce_on_several_gpus_is_judged_at_the_largest_message():
    results = h200_results()
    gpu = results["gpus"][0]
    results["gpus"] = [dict(gpu, index=i) for i in range(8)]
    results["allreduce"] = {"status": "measured", "world_size": 8, "correct": True, "sizes": [
        {"bytes": 1 << 20, "algbw_gbps": 20.0, "busbw_gbps": 35.0, "time_ms": 0.05},
        {"bytes": 1 << 28, "algbw_gbps": 200.0, "busbw_gbps": 350.0, "time_ms": 1.3}]}
    verdict = gate(results)
    assert verdict["passed"] and len(verdict["checks"]) == 8 * 4 + 2 + 2
    verdict = gate(results, min_allreduce_busbw_gbps=400)
    assert verdict["failed"] == ["all-reduce x8 allreduce_busbw_gbps: BELOW THRESHOLD 350 GB/s "
                                 "(at 268435456 B, needs >= 400 (gpu_validate_min_allreduce_busbw_gbps))"]
    wrong = copy.deepcopy(results)
    wrong["allreduce"]["correct"] = False
    assert gate(wrong)["failed"][0].startswith("all-reduce x8 allreduce_correct: FAILED (the reduced")


def test_figures_without_gpus_fail():
    results = h200_results()
    results["gpus"] = []
    assert gate(results)["failed"][0] == "node gpus: FAILED (the figures list no GPU)"


@pytest.mark.parametrize("overrides, expected", [
    ({"min_amp_samples_per_s": "fast"}, "gpu_validate_min_amp_samples_per_s must be a number of at least 0, got 'fast'"),
    ({"min_allreduce_busbw_gbps": True}, "gpu_validate_min_allreduce_busbw_gbps must be a number of at least 0, got True"),
    ({"min_fraction": dict(MIN_FRACTION, copy_gbps="most")},
     "gpu_validate_min_fraction.copy_gbps must be a number above 0 and at most 1.5 (a fraction of the reference figure), got 'most'"),
    ({"min_fraction": dict(MIN_FRACTION, gemm_tf32_tflops=0.8)},
     "gpu_validate_min_fraction.gemm_tf32_tflops is not a metric (expected one of gemm_bf16_tflops, gemm_fp16_tflops, "
     "copy_gbps, fused_adamw_ms)"),
    ({"min_fraction": [0.85]}, "gpu_validate_min_fraction must be a mapping"),
    ({"reference": {"NVIDIA H200": dict(REFERENCE["NVIDIA H200"], copy_gbps="4.8 TB/s")}},
     "gpu_validate_reference['NVIDIA H200'].copy_gbps must be a positive number, got '4.8 TB/s'"),
    ({"reference": {"NVIDIA H200": 784}}, "gpu_validate_reference['NVIDIA H200'] must be a mapping"),
    ({"reference": None}, "gpu_validate_reference must be a mapping"),
])
def test_bad_thresholds_are_named(overrides, expected):
    args = dict(min_fraction=MIN_FRACTION, min_amp_samples_per_s=1000, min_allreduce_busbw_gbps=40, reference=REFERENCE)
    args.update(overrides)
    problems = gpu_validation.input_problems(**args)
    assert len(problems) == 1 and problems[0].startswith(expected)
    with pytest.raises(ValueError, match="gpu_validate_"):
        gate(h200_results(), **overrides)
