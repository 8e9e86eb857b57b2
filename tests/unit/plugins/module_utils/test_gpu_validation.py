"""The GPU acceptance gate, fed with the figures recorded on the project's H200 and H100 and the role's GPU catalogue."""

import copy
import json
import os

import pytest
import yaml
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import gpu_validation
from conftest import REPO_ROOT, read_h100, read_h200

with open(os.path.join(REPO_ROOT, "roles", "gpu_validate", "vars", "gpu_catalogue.yml")) as _handle:
    CATALOGUE = yaml.safe_load(_handle)["__gpu_validate_catalogue"]
# A site's own figures for the H200 (gpu_validate_reference), as the role took them before the catalogue.
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
    args = dict(reference=REFERENCE, min_fraction=MIN_FRACTION, min_amp_samples_per_s=1000, min_allreduce_busbw_gbps=40,
                catalogue=CATALOGUE)
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
    assert verdict["summary"] == "passed: all 6 checks; GPU 0 judged against figures measured on a H200 SXM 141GB"


def test_a_slow_gemm_fails_naming_the_figure_and_the_limit():
    results = h200_results()
    results["gpus"][0]["gemm_bf16_tflops"] = 600.0  # throttled: below 0.85 x 784 = 666.4
    verdict = gate(results)
    assert verdict["status"] == "failed" and not verdict["passed"]
    assert verdict["failed"] == ["GPU 0 NVIDIA H200 gemm_bf16_tflops: BELOW THRESHOLD 600 TFLOP/s "
                                 "(needs >= 666.4 = 0.85 x reference 784, gpu_validate_reference)"]
    assert verdict["summary"].startswith("failed: 1 of 6 checks below threshold; GPU 0 judged against figures measured")


def test_a_slow_optimizer_step_fails_as_a_time():
    results = h200_results()
    results["gpus"][0]["fused_adamw_ms"] = 14.08  # the recorded for-loop Adam, as if fused were not used
    (message,) = gate(results)["failed"]
    assert message.startswith("GPU 0 NVIDIA H200 fused_adamw_ms: BELOW THRESHOLD 14.08 ms (needs <= 2.85")


def test_threshold_strings_from_extra_vars_count_as_numbers():
    assert gate(h200_results(), min_amp_samples_per_s="1000", min_fraction=dict(MIN_FRACTION, copy_gbps="0.6"))["passed"]


def test_an_unknown_gpu_is_judged_by_estimates_as_warnings_or_fails_by_name_when_asked():
    results = h200_results()
    gpu = results["gpus"][0]
    # What a GPU of a generation the catalogue does not list reports (compute capability 10.0, a new name).
    gpu.update(name="NVIDIA B300 SXM6 AC", compute_capability="10.0", sm_count=148, sm_clock_max_mhz=2032,
               memory_clock_max_mhz=3996, memory_bus_width_bits=8192, gemm_bf16_tflops=500.0,
               gemm_fp16_tflops=1800.0, copy_gbps=7000.0, fused_adamw_ms=0.9)
    verdict = gate(results, reference={})
    assert verdict["passed"] and verdict["failed"] == []
    (warning,) = verdict["warnings"]
    assert warning.startswith("GPU 0 NVIDIA B300 SXM6 AC gemm_bf16_tflops: BELOW ESTIMATE (warning) 500 TFLOP/s")
    assert "estimated from what the GPU reports: dense_bf16_tflops 2464 x achievable share 0.77" in warning
    assert "not in the GPU catalogue: judged against estimates from what it reports, as warnings" in verdict["summary"]
    strict = gate(results, reference={}, unknown_gpu="fail")
    assert not strict["passed"]
    assert strict["failed"][0].startswith("GPU 0 NVIDIA B300 SXM6 AC reference: FAILED (not in the GPU catalogue and no "
                                          "gpu_validate_reference for 'NVIDIA B300 SXM6 AC', and gpu_validate_unknown_gpu is fail")
    # A figure the site gives is enforced even for an unknown GPU.
    site = gate(results, reference={"NVIDIA B300 SXM6 AC": {"gemm_bf16_tflops": 1500}})
    assert site["failed"][0].startswith("GPU 0 NVIDIA B300 SXM6 AC gemm_bf16_tflops: BELOW THRESHOLD 500 TFLOP/s")


def test_an_unknown_gpu_that_reports_nothing_is_not_judged_and_says_why():
    results = h200_results()
    results["gpus"][0].update(name="NVIDIA Future GPU", compute_capability="13.0")
    verdict = gate(results, reference={})
    assert verdict["passed"] and verdict["warnings"] == []
    (judged,) = verdict["judged"]
    assert judged["basis"] == "estimate"
    assert judged["not_judged"] == [
        "gemm_bf16_tflops: no tensor rate known for compute capability 13.0",
        "gemm_fp16_tflops: no tensor rate known for compute capability 13.0",
        "copy_gbps: the GPU did not report its SM count, clocks and memory bus",
        "fused_adamw_ms: the GPU did not report its SM count, clocks and memory bus"]


def h100_results():
    """gpu_validate's figures on the project's H100 (recorded in the shared fixtures), as the script wrote them."""
    recorded = json.loads(read_h100("validation-2026-12-06.json"))
    return {"schema": 1, "status": "measured", "gpus": recorded["gpus"], "amp": recorded["amp"],
            "allreduce": recorded["allreduce"], "parameters": {"adamw_params_millions": 200}}


def test_the_recorded_h100_passes_on_the_catalogue_alone():
    verdict = gate(h100_results(), reference={})
    assert verdict["passed"], verdict["failed"]
    assert verdict["judged"][0]["basis"] == "measured" and verdict["judged"][0]["model"] == "H100 SXM5 80GB"
    # The same figures on a GPU judged by its datasheet: a 20% slower H100 PCIe still passes, a throttled one not.
    pcie = h100_results()
    pcie["gpus"][0].update(name="NVIDIA H100 PCIe", gemm_bf16_tflops=763 * 756 / 989.0, gemm_fp16_tflops=719 * 756 / 989.0,
                           copy_gbps=3031 * 2000 / 3350.0, fused_adamw_ms=2.28 * 3350 / 2000.0)
    verdict = gate(pcie, reference={})
    assert verdict["passed"] and verdict["judged"][0]["basis"] == "datasheet", verdict["failed"]
    pcie["gpus"][0]["gemm_bf16_tflops"] = 400.0
    assert [m.split(":")[0] for m in gate(pcie, reference={})["failed"]] == ["GPU 0 NVIDIA H100 PCIe gemm_bf16_tflops"]


def test_the_catalogue_covers_the_common_skus_each_figure_with_a_source():
    assert gpu_validation.catalogue_problems(CATALOGUE) == []
    names = [name for sku in CATALOGUE["skus"] for name in sku["names"]]
    assert len(CATALOGUE["skus"]) >= 14 and len(names) == len(set(names))
    for wanted in ("NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200", "NVIDIA H200 NVL",
                   "NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe",
                   "NVIDIA B200", "NVIDIA L40S", "NVIDIA L4", "NVIDIA A10G", "NVIDIA A10", "Tesla T4"):
        assert wanted in names
    for sku in CATALOGUE["skus"]:
        assert len(sku["datasheet"]["source"]) > 40, sku["model"]
        if "measured" in sku:
            assert "driver" in sku["measured"]["source"] and "torch" in sku["measured"]["source"]


def test_the_achievable_share_is_the_lowest_measured_over_datasheet_ratio():
    shares = gpu_validation.achievable_shares(CATALOGUE)
    # H100 SXM 763 / 989 and H200 773 / 989: the lower is the H100's.
    assert shares["gemm_bf16_tflops"]["share"] == pytest.approx(763 / 989.0)
    assert shares["copy_gbps"]["share"] == pytest.approx(min(3031 / 3350.0, 4222 / 4800.0))
    adamw_bytes = 28 * 200 * (1 << 20)
    assert shares["fused_adamw_ms"]["share"] == pytest.approx(min(adamw_bytes / 2.28e-3 / 3350e9, adamw_bytes / 1.72e-3 / 4800e9))
    assert shares["gemm_bf16_tflops"]["from"] == ["H100 SXM5 80GB", "H200 SXM 141GB"]


def test_a_gpu_without_bf16_tensor_cores_is_not_judged_on_bf16():
    results = h100_results()
    results["gpus"][0].update(name="Tesla T4", compute_capability="7.5", gemm_bf16_tflops=3.0, gemm_fp16_tflops=50.0,
                              copy_gbps=280.0, fused_adamw_ms=25.0)
    verdict = gate(results, reference={})
    assert verdict["passed"], verdict["failed"]
    assert verdict["judged"][0]["not_judged"] == ["gemm_bf16_tflops: the T4 16GB datasheet gives no dense_bf16_tflops "
                                                  "(no such tensor cores)"]


def test_a_broken_catalogue_entry_is_named():
    broken = copy.deepcopy(CATALOGUE)
    broken["skus"][0]["datasheet"] = dict(broken["skus"][0]["datasheet"], source="")
    broken["skus"][1]["names"] = list(broken["skus"][2]["names"])
    problems = gpu_validation.catalogue_problems(broken)
    assert problems == ["GPU catalogue A100 SXM4 40GB: datasheet figures need a source",
                        "GPU catalogue: 'NVIDIA A100-SXM4-80GB' is named by both A100 PCIe 40GB and A100 SXM4 80GB"]


def facts_gpus():
    """gpu_facts' GPUs of the H100 host, from its recorded nvidia-smi query (one GPU)."""
    header, row = read_h100("nvidia-smi-query-gpu.csv").splitlines()[:2]
    values = [value.strip() for value in row.split(",")]
    return [{"index": int(values[0]), "name": values[1], "compute_capability": values[3], "uuid": values[4],
             "pci_bus_id": values[5], "memory_total_mib": int(values[6].split()[0]), "mig_mode": False}]


def test_expectations_met_on_the_recorded_h100():
    verdict = gpu_validation.expectation_checks({"count": 1, "model": "^NVIDIA H100", "memory_gb": 80, "mig_mode": "disabled"},
                                                facts_gpus())
    assert verdict["failed"] == [] and verdict["summary"] == "GPU expectations: all 4 met"


def test_a_missing_gpu_another_model_and_less_memory_are_named():
    gpus = facts_gpus()
    verdict = gpu_validation.expectation_checks({"count": 2}, gpus)
    assert verdict["failed"] == ["node count: FAILED 1 GPUs (expected 2 GPU(s) (gpu_validate_expect.count), found 1: "
                                 "missing GPU index 1)"]
    verdict = gpu_validation.expectation_checks({"model": "^NVIDIA H200", "memory_gb": 141, "mig_mode": "enabled"}, gpus)
    assert verdict["failed"] == [
        "GPU 0 NVIDIA H100 80GB HBM3 (00000000:00:06.0) model: FAILED (name 'NVIDIA H100 80GB HBM3', expected to match "
        "'^NVIDIA H200' (gpu_validate_expect.model))",
        "GPU 0 NVIDIA H100 80GB HBM3 (00000000:00:06.0) memory: BELOW THRESHOLD 8.156e+04 MiB (expected 141 GB "
        "(gpu_validate_expect.memory_gb): at least 121021 MiB reported)",
        "GPU 0 NVIDIA H100 80GB HBM3 (00000000:00:06.0) mig_mode: FAILED (MIG mode disabled, expected enabled "
        "(gpu_validate_expect.mig_mode))"]
    assert verdict["summary"] == "GPU expectations: 3 of 3 not met"


def test_a_gpu_validated_before_and_gone_now_is_named_whatever_is_expected():
    recorded = [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-bd5f5fb1-8555-756c-09db-6be1a5ac4fe3"},
                {"index": 1, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-00000000-1111-2222-3333-444444444444"}]
    verdict = gpu_validation.expectation_checks({}, facts_gpus(), recorded)
    (message,) = verdict["failed"]
    assert message.startswith("GPU 1 NVIDIA H100 80GB HBM3 present: FAILED (GPU-00000000-1111-2222-3333-444444444444 "
                              "was validated on this node and is missing now")
    assert gpu_validation.expectation_checks({}, facts_gpus(), recorded[:1])["failed"] == []


@pytest.mark.parametrize("expect, expected", [
    ({"count": 0}, "gpu_validate_expect.count must be a whole number of at least 1, got 0"),
    ({"count": "eight"}, "gpu_validate_expect.count must be a whole number of at least 1, got 'eight'"),
    ({"count": True}, "gpu_validate_expect.count must be a whole number of at least 1, got True"),
    ({"memory_gb": "80GB"}, "gpu_validate_expect.memory_gb must be a positive number (GB per GPU, as sold), got '80GB'"),
    ({"model": "H100("}, "gpu_validate_expect.model must be a regular expression the GPU name is searched with, got 'H100('"),
    ({"mig_mode": "on"}, "gpu_validate_expect.mig_mode must be enabled or disabled, got 'on'"),
    ({"gpus": 8}, "gpu_validate_expect.gpus is not an expectation (expected one of count, model, memory_gb, mig_mode)"),
    ([8], "gpu_validate_expect must be a mapping"),
])
def test_bad_expectations_are_named(expect, expected):
    problems = gpu_validation.expect_problems(expect)
    assert len(problems) == 1 and problems[0].startswith(expected)
    with pytest.raises(ValueError, match="gpu_validate_expect"):
        gpu_validation.expectation_checks(expect, facts_gpus())


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
    ({"reference": {"NVIDIA H200": {"gemm_tflops": 700}}},
     "gpu_validate_reference['NVIDIA H200'].gemm_tflops is not a metric"),
    ({"unknown_gpu": "ignore"}, "gpu_validate_unknown_gpu must be one of warn, fail, got 'ignore'"),
    ({"reference": None}, "gpu_validate_reference must be a mapping"),
])
def test_bad_thresholds_are_named(overrides, expected):
    args = dict(min_fraction=MIN_FRACTION, min_amp_samples_per_s=1000, min_allreduce_busbw_gbps=40, reference=REFERENCE,
                catalogue=CATALOGUE)
    args.update(overrides)
    problems = gpu_validation.input_problems(**args)
    assert len(problems) == 1 and problems[0].startswith(expected)
    with pytest.raises(ValueError, match="gpu_validate_"):
        gate(h200_results(), **overrides)


def _readme():
    with open(os.path.join(REPO_ROOT, "roles", "gpu_validate", "README.md")) as handle:
        return " ".join(handle.read().split())


def test_the_readme_failure_example_is_what_the_gate_says_of_a_throttled_h100():
    results = h100_results()
    results["gpus"][0]["gemm_bf16_tflops"] = 600.0
    verdict = gate(results, reference={})
    (message,) = verdict["failed"]
    example = "gpu_validate failed on gpu-node-07: %s: %s" % (verdict["summary"], message)
    assert example in _readme()


def test_the_readme_count_example_is_what_an_eight_gpu_node_missing_one_gets():
    gpus = [dict(facts_gpus()[0], index=index, uuid="GPU-%d" % index) for index in range(7)]
    (message,) = gpu_validation.expectation_checks({"count": 8}, gpus)["failed"]
    assert "`%s`" % message in _readme()


# The measurement's input, checked by the gpu_validation action where the role's preflight assert checked it (issue 37
# item 7): the same messages word for word (molecule/bad_inputs and tests/bad_inputs.yml look for them).
@pytest.mark.parametrize("python", ["", None, "/opt/conda/envs/train/bin/python"])
def test_an_absolute_or_empty_interpreter_and_workers_are_no_problem(python):
    assert gpu_validation.measurement_problems(python, {"num_workers": 4}) == []


def test_a_relative_interpreter_is_named():
    assert gpu_validation.measurement_problems("python3", {"num_workers": 4}) == [
        "gpu_validate_python must be an absolute path or empty, got python3"]


@pytest.mark.parametrize("dataloader", [{"num_workers": 0}, {}, {"num_workers": None}, {"num_workers": "none"},
                                        {"num_workers": -2}, None])
def test_a_dataloader_without_workers_is_named(dataloader):
    assert gpu_validation.measurement_problems("", dataloader) == [
        "gpu_validate_dataloader.num_workers must be at least 1: the step checks a DataLoader with workers"]


@pytest.mark.parametrize("workers", [1, "2", "3.5", 1.5, True])
def test_workers_read_as_jinja_int_reads_them(workers):
    # The assert read num_workers | default(0) | int: a number in a string or with a fraction counts.
    assert gpu_validation.measurement_problems("", {"num_workers": workers}) == []


def test_both_measurement_problems_in_the_assert_order():
    assert gpu_validation.measurement_problems("bin/python", {"num_workers": 0}) == [
        "gpu_validate_python must be an absolute path or empty, got bin/python",
        "gpu_validate_dataloader.num_workers must be at least 1: the step checks a DataLoader with workers"]


def test_the_refusal_names_every_problem_joined_as_the_assert_joined_them():
    assert gpu_validation.refusal([]) is None
    assert gpu_validation.refusal(["a", "b"]) == "gpu_validate: bad input: a | b"
