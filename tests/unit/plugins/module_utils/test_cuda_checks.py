# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ast
import datetime

import pytest

from conftest import read_h100, read_h200
from ansible_collections.aistack.gpu_node.plugins.module_utils.cuda import checks as cuda_checks
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import nvidia_parsers


CU130_ARCH = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
CU124_ARCH = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]


def gpu(name="NVIDIA H200", cc="9.0", index=0, cc_from="driver"):
    return {"index": index, "name": name, "compute_capability": cc, "compute_capability_from": cc_from, "pci_bus_id": "0000:00:06.0"}


def facts(driver="580.159.04", gpus=None, flavour="open", state="ok", **extra):
    result = {
        "state": state,
        "gpus": [gpu()] if gpus is None else gpus,
        "driver": {"version": driver, "kernel_module_flavour": flavour, "loaded_version": driver,
                   "userspace_version": driver, "mismatch": False},
        "pci_devices": [],
        "messages": [],
    }
    result.update(extra)
    return result


def probe(version="2.11.0+cu130", cuda="13.0", arch=None, available=True):
    return {"torch": {"present": True, "version": version, "cuda": cuda, "arch_list": CU130_ARCH if arch is None else arch,
                      "cuda_available": available}, "apex": {"present": False, "extensions": {}}, "interpreter": "/env/bin/python"}


def nvcc(release="13.0"):
    if release is None:
        return {"present": False, "error": "no CUDA home"}
    return {"present": True, "release": release, "version": release + ".0"}


def ids(result, severity=None):
    return sorted(item["id"] for item in result["findings"] if severity in (None, item["severity"]))


# ---------------------------------------------------------------------------
# the required verdicts
# ---------------------------------------------------------------------------

def test_driver_535_runs_cu124_by_minor_compatibility():
    # Judged while R535 was still supported: the end-of-life warning has its own tests.
    result = cuda_checks.evaluate(facts("535.104.05", [gpu("NVIDIA A100-SXM4-80GB", "8.0")], flavour="proprietary"),
                                  probe("2.5.1+cu124", "12.4", CU124_ARCH), nvcc("12.4"), today=datetime.date(2026, 6, 30))
    assert result["verdict"] == "ok"
    assert "driver.minor_compat" in ids(result, "info")


def test_driver_470_with_cu121_is_an_error_with_fix():
    result = cuda_checks.evaluate(facts("470.182.03", [gpu("Tesla V100-SXM2-16GB", "7.0")], flavour="proprietary"),
                                  probe("2.5.1+cu121", "12.1", CU124_ARCH), nvcc("12.1"))
    assert result["verdict"] == "error"
    too_old = [item for item in result["findings"] if item["id"] == "driver.too_old_for_torch"][0]
    assert too_old["severity"] == "error"
    assert "525.60.13" in too_old["message"]
    assert "530.30.02" in too_old["fix"] and "cu118" in too_old["fix"]


def test_nvcc_124_with_torch_cu121():
    result = cuda_checks.evaluate(facts(), probe("2.5.1+cu121", "12.1", CU124_ARCH), nvcc("12.4"))
    severities = dict((item["id"], item["severity"]) for item in result["findings"])
    assert severities["apex.cuda_mismatch"] == "error"
    assert severities["nvcc.torch_minor_mismatch"] == "warning"
    assert "nvcc.torch_major_mismatch" not in severities


def test_nvcc_124_with_torch_cu121_without_apex_is_a_warning():
    result = cuda_checks.evaluate(facts(), probe("2.5.1+cu121", "12.1", CU124_ARCH), nvcc("12.4"), apex=False)
    assert result["verdict"] == "warning"
    assert ("apex.cuda_mismatch", "info") in [(item["id"], item["severity"]) for item in result["findings"]]


def test_v100_with_nvcc_13_is_an_error():
    result = cuda_checks.evaluate(facts("580.95.05", [gpu("Tesla V100-SXM2-32GB", "7.0")], flavour="proprietary"),
                                  probe("2.10.0+cu128", "12.8", ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]),
                                  nvcc("13.0"))
    assert result["verdict"] == "error"
    assert "arch.toolkit_cannot_target" in ids(result, "error")
    assert "nvcc.torch_major_mismatch" in ids(result, "error")


def test_h200_host_is_ok():
    """The real H200 host: driver 580.159.04 open, torch 2.11.0+cu130, nvcc 13.0."""
    proc = nvidia_parsers.parse_proc_driver_version(read_h200("proc-driver-nvidia-version.txt"))
    banner = nvidia_parsers.parse_smi_banner(read_h200("nvidia-smi.txt"))
    row = nvidia_parsers.parse_query_gpu_csv(read_h200("nvidia-smi-query-gpu-noheader-nounits.csv"),
                                             ["name", "driver_version", "compute_cap", "memory.total", "pci.bus_id"])[0]
    torch_line = [line for line in read_h200("torch-info.txt").splitlines() if line.startswith("torch ")][0].split()
    arch = ast.literal_eval(read_h200("torch-info.txt").split("arch_list ", 1)[1].splitlines()[0])
    host = facts(proc["version"], [gpu(row["name"], row["compute_cap"])], flavour=proc["flavour"])
    host["driver"]["cuda_version"] = banner["cuda_version"]
    torch_probe = probe(torch_line[1], torch_line[3], arch)
    result = cuda_checks.evaluate(host, torch_probe, nvidia_parsers.parse_nvcc_version(read_h200("nvcc-version.txt")) and dict(
        nvcc(), **nvidia_parsers.parse_nvcc_version(read_h200("nvcc-version.txt"))), required_cuda="13.0")
    assert result == {"findings": [], "verdict": "ok"}


# ---------------------------------------------------------------------------
# more rules
# ---------------------------------------------------------------------------

def test_blackwell_with_proprietary_module_is_an_error():
    result = cuda_checks.evaluate(facts("580.95.05", [gpu("NVIDIA B200", "10.0")], flavour="proprietary"), probe(), nvcc())
    assert "driver.flavour_open_required" in ids(result, "error")


def test_grace_hopper_needs_open_module():
    result = cuda_checks.evaluate(facts("580.95.05", [gpu("NVIDIA GH200 480GB", "9.0")], flavour="proprietary"), probe(), nvcc())
    assert "driver.flavour_open_required" in ids(result, "error")


def test_volta_with_open_module_is_an_error_and_turing_proprietary_is_info():
    volta = cuda_checks.evaluate(facts("575.57.08", [gpu("Tesla V100-SXM2-32GB", "7.0")], flavour="open"),
                                 probe("2.10.0+cu128", "12.8", ["sm_70", "sm_90"]), nvcc("12.8"))
    assert "driver.flavour_proprietary_required" in ids(volta, "error")
    turing = cuda_checks.evaluate(facts(gpus=[gpu("Tesla T4", "7.5")], flavour="proprietary"), probe(), nvcc())
    assert ids(turing) == ["driver.flavour_open_recommended"] and turing["verdict"] == "ok"


def test_driver_branch_after_580_drops_volta():
    result = cuda_checks.evaluate(facts("595.58.03", [gpu("Tesla V100-SXM2-32GB", "7.0")], flavour="proprietary"),
                                  probe("2.10.0+cu128", "12.8", ["sm_70"]), nvcc("12.8"))
    assert ids(result) == ["driver.branch_drops_gpu"]


def test_kepler_after_470_and_blackwell_before_570():
    kepler = cuda_checks.evaluate(facts("535.104.05", [gpu("Tesla K80", "3.7")], flavour="proprietary"),
                                  probe("2.5.1+cu121", "12.1", ["sm_37"]), nvcc(None))
    drop = [item for item in kepler["findings"] if item["id"] == "driver.branch_drops_gpu"][0]
    assert drop["severity"] == "error" and "R470" in drop["message"]
    blackwell = cuda_checks.evaluate(facts("560.35.03", [gpu("NVIDIA B200", "10.0")]), probe("2.7.0+cu126", "12.6", CU124_ARCH), nvcc(None))
    early = [item for item in blackwell["findings"] if item["id"] == "driver.branch_too_old_for_gpu"][0]
    assert early["severity"] == "warning"  # blackwell_min_branch is unconfirmed


def test_no_gpu_is_info_only():
    result = cuda_checks.evaluate(facts(None, [], flavour=None, state="no_gpu"), probe(available=False), nvcc())
    assert result["verdict"] == "ok"
    assert ids(result) == ["gpu.none"]


def test_gpu_without_driver_is_a_warning():
    no_driver = facts(None, [gpu(None, None)], flavour=None, state="gpu_no_driver",
                      pci_devices=[{"kernel_driver": "nouveau"}, {"kernel_driver": None}])
    result = cuda_checks.evaluate(no_driver, probe(available=False), nvcc())
    assert result["verdict"] == "warning" and ids(result) == ["driver.not_loaded"]
    assert "none, nouveau" in result["findings"][0]["message"]


def test_driver_error_state():
    result = cuda_checks.evaluate(facts(state="driver_error", messages=["nvidia-smi: exit status 9"]), probe(available=False), nvcc())
    assert "driver.error" in ids(result, "warning")


def test_no_torch_and_cpu_only_torch():
    missing = {"torch": {"present": False, "error": "ModuleNotFoundError: No module named 'torch'"}, "interpreter": "/env/bin/python"}
    result = cuda_checks.evaluate(facts(), missing, nvcc())
    assert ids(result) == ["torch.missing"] and result["verdict"] == "warning"
    no_gpu = cuda_checks.evaluate(facts(None, [], flavour=None, state="no_gpu"), missing, nvcc(None))
    assert no_gpu["verdict"] == "ok" and ids(no_gpu) == ["gpu.none", "nvcc.missing", "torch.missing"]
    cpu = cuda_checks.evaluate(facts(), probe("2.11.0+cpu", None, []), nvcc())
    assert ids(cpu) == ["torch.cpu_only"] and cpu["verdict"] == "warning"


def test_probe_that_did_not_run_is_an_error():
    result = cuda_checks.evaluate(facts(), {"error": "/x/bin/python did not run the probe", "torch": {"present": False}}, nvcc())
    assert ids(result) == ["python.error"] and result["verdict"] == "error"


def test_no_nvcc_is_info():
    result = cuda_checks.evaluate(facts(), probe(), nvcc(None))
    assert ids(result) == ["nvcc.missing"] and result["verdict"] == "ok"
    assert "cuda-toolkit-13-0" in result["findings"][0]["fix"]


def test_mismatch_loaded_vs_userspace_is_an_error():
    broken = facts("570.124.06", state="mismatch")
    broken["driver"].update(userspace_version="570.124", mismatch=True)
    result = cuda_checks.evaluate(broken, probe("2.7.0+cu126", "12.6", available=False), nvcc("12.6"))
    mismatch = [item for item in result["findings"] if item["id"] == "driver.mismatch"][0]
    assert mismatch["severity"] == "error" and "570.124.06" in mismatch["message"] and "Reboot" in mismatch["fix"]
    assert "driver.too_old_for_torch" not in ids(result)


def test_torch_cuda_unavailable_with_working_driver():
    result = cuda_checks.evaluate(facts(), dict(probe(available=False), torch=dict(probe()["torch"], cuda_available=False,
                                                                                   cuda_error="CUDA_VISIBLE_DEVICES is empty")), nvcc())
    assert ids(result) == ["torch.cuda_unavailable"]
    assert "CUDA_VISIBLE_DEVICES is empty" in result["findings"][0]["message"]


def test_major_mismatch_between_nvcc_and_torch():
    result = cuda_checks.evaluate(facts(), probe(), nvcc("12.8"))
    assert ids(result, "error") == ["apex.cuda_mismatch", "nvcc.torch_major_mismatch"]


def test_required_cuda():
    assert cuda_checks.evaluate(facts(), probe(), nvcc(), required_cuda="13.0")["verdict"] == "ok"
    wrong = cuda_checks.evaluate(facts(), probe(), nvcc(), required_cuda="12.8")
    finding = [item for item in wrong["findings"] if item["id"] == "torch.required_cuda"][0]
    assert finding["severity"] == "error" and "whl/cu128" in finding["fix"]
    absent = cuda_checks.evaluate(facts(), probe(), nvcc(), required_cuda="11.8")
    assert "has no cu118 wheel" in [item for item in absent["findings"] if item["id"] == "torch.required_cuda"][0]["fix"]


def test_unconfirmed_toolkit_entry_never_errors():
    """CUDA 13.5's row is unconfirmed: a driver below its floor gives a warning, not an error."""
    result = cuda_checks.evaluate(facts("575.57.08", [gpu("NVIDIA L4", "8.9")]), probe("2.14.0+cu135", "13.5", CU130_ARCH), nvcc(None))
    too_old = [item for item in result["findings"] if item["id"] == "driver.too_old_for_torch"][0]
    assert too_old["severity"] == "warning" and "unconfirmed" in too_old["message"]
    assert result["verdict"] == "warning"


def test_unconfirmed_compute_capability_never_errors():
    h20 = gpu("NVIDIA H20", "9.0", cc_from="name table (unconfirmed)")
    result = cuda_checks.evaluate(facts(gpus=[h20]), probe(arch=["sm_80"]), nvcc())
    assert [(item["id"], item["severity"]) for item in result["findings"]] == [("arch.not_in_torch", "warning")]


def test_unknown_cuda_major():
    result = cuda_checks.evaluate(facts(), probe("3.0.0+cu140", "14.0"), nvcc(None))
    assert "driver.cuda_unknown" in ids(result, "warning")


def test_forward_compatibility_on_data_center_gpu():
    old = facts("535.104.05", [gpu("NVIDIA H100 80GB HBM3", "9.0")])
    installed = cuda_checks.evaluate(old, probe(), nvcc(), forward_compat={"path": "/usr/local/cuda-13.0/compat", "present": True},
                                     today=datetime.date(2026, 6, 30))
    assert ids(installed, "warning") == ["driver.forward_compat"]
    missing = cuda_checks.evaluate(old, probe(), nvcc(), forward_compat={"path": "/usr/local/cuda-13.0/compat", "present": False})
    fix = [item for item in missing["findings"] if item["id"] == "driver.too_old_for_torch"][0]["fix"]
    assert "cuda-compat-13-0" in fix and "/usr/local/cuda-13.0/compat" in fix
    consumer = cuda_checks.evaluate(facts("535.104.05", [gpu("NVIDIA GeForce RTX 4090", "8.9")]), probe(), nvcc())
    assert "cuda-compat" not in [item for item in consumer["findings"] if item["id"] == "driver.too_old_for_torch"][0]["fix"]


def test_cuda_10_has_no_minor_compatibility():
    result = cuda_checks.evaluate(facts("418.39", [gpu("Tesla T4", "7.5")], flavour="proprietary"),
                                  probe("1.4.0", "10.2", ["sm_75"]), nvcc(None))
    assert "driver.too_old_for_torch" in ids(result, "error")


# ---------------------------------------------------------------------------
# arch coverage
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("arch, cc, expected", [
    (["sm_80"], "8.6", ("sass", "sm_80")),
    (["sm_80"], "9.0", (None, None)),
    (["sm_80"], "8.7", (None, None)),
    (["sm_86"], "8.9", ("sass", "sm_86")),
    (["sm_90a"], "9.0", ("sass", "sm_90a")),
    (["sm_90a"], "10.0", (None, None)),
    (["sm_101"], "11.0", ("sass", "sm_101")),
    (["sm_37"], "3.7", ("sass", "sm_37")),
    (["sm_80", "compute_90"], "12.0", ("ptx", "compute_90")),
    (["compute_90a"], "12.0", (None, None)),
    (["compute_120"], "9.0", (None, None)),
])
def test_arch_coverage(arch, cc, expected):
    assert cuda_checks.arch_coverage(arch, cc) == expected


def test_sm_86_gpu_runs_sm_80_but_sm_90_does_not():
    a10 = cuda_checks.evaluate(facts(gpus=[gpu("NVIDIA A10", "8.6")]), probe(arch=["sm_80"]), nvcc())
    assert a10["verdict"] == "ok"
    h100 = cuda_checks.evaluate(facts(gpus=[gpu("NVIDIA H100", "9.0")]), probe(arch=["sm_80", "sm_86"]), nvcc())
    assert ids(h100, "error") == ["arch.not_in_torch"]


def test_ptx_only_coverage_is_info():
    result = cuda_checks.evaluate(facts(gpus=[gpu("GB10", "12.1")]), probe(arch=["sm_90", "compute_90"]), nvcc())
    assert ids(result) == ["arch.ptx_jit"]


def test_arch_list_from_wheel_table_when_torch_cannot_tell():
    result = cuda_checks.evaluate(facts(gpus=[gpu("Tesla V100-SXM2-32GB", "7.0")], flavour="proprietary"),
                                  probe("2.11.0+cu130", "13.0", [], available=False), nvcc(None))
    finding = [item for item in result["findings"] if item["id"] == "arch.not_in_torch"][0]
    assert "published wheel table" in finding["message"] and finding["severity"] == "error"
    unknown = cuda_checks.evaluate(facts(), probe("1.0.0", "13.0", [], available=False), nvcc(None))
    assert "arch.not_in_torch" not in ids(unknown)


def test_wheel_arch_list_and_ptx_status():
    codes, status, ptx_status = cuda_checks.wheel_arch_list("2.9.1+cu130", "13.0")
    assert codes[-1] == "compute_120" and status == "primary" and ptx_status == "unconfirmed"
    assert cuda_checks.wheel_arch_list("2.11.0", "13.7") is None
    assert cuda_checks.parse_arch_list_setting("8.0;9.0+PTX") == ["sm_80", "sm_90", "compute_90"]


@pytest.mark.parametrize("release, cc, expected", [
    ("13.0", "7.0", (False, "primary")),
    ("13.0", "9.0", (True, "primary")),
    ("12.4", "10.0", (False, "secondary")),
    ("12.8", "10.0", (True, "secondary")),
    ("11.8", "9.0", (True, "secondary")),
    ("14.0", "9.0", (None, "unconfirmed")),
])
def test_toolkit_can_target(release, cc, expected):
    assert cuda_checks.toolkit_can_target(release, cc) == expected


def test_unknown_toolkit_is_info():
    result = cuda_checks.evaluate(facts(), probe(), {"present": True, "release": "14.0"})
    assert "arch.toolkit_unknown" in ids(result, "info")


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def test_torch_cuda_arch_list():
    assert cuda_checks.torch_cuda_arch_list(["9.0", "8.0", "9.0"]) == "8.0;9.0"
    assert cuda_checks.torch_cuda_arch_list(["9.0", "8.6"], ptx=True) == "8.6;9.0+PTX"
    assert cuda_checks.torch_cuda_arch_list([gpu(cc="10.0"), gpu(cc="9.0"), gpu(cc=None)]) == "9.0;10.0"
    assert cuda_checks.torch_cuda_arch_list([], ptx=True) == ""
    assert cuda_checks.torch_cuda_arch_list(None) == ""


def recorded_arch_list(torch_info):
    return ast.literal_eval(torch_info[torch_info.index("["):].splitlines()[0])


def test_every_published_variant_has_an_arch_list():
    for series in cuda_checks.torch_series_known():
        for variant in cuda_checks.torch_series_variants(series):
            assert cuda_checks.wheel_arch_list(series, cuda_checks._variant_cuda(variant)), (series, variant)


def test_the_recorded_torch_2_11_cu130_arch_lists_are_the_tables_kernels():
    # Both hosts ran 2.11.0+cu130; its SASS in the table is what torch reported (no sm_70).
    codes = cuda_checks.wheel_arch_list("2.11", "13.0")[0]
    for torch_info in (read_h100("torch-info.txt"), read_h200("torch-info.txt")):
        assert recorded_arch_list(torch_info) == [code for code in codes if code.startswith("sm_")]


def test_wheel_kernel_gaps_count_sass_and_ptx_the_driver_can_jit():
    v100, h100 = gpu("Tesla V100-SXM2-32GB", "7.0"), gpu("NVIDIA H100 80GB HBM3", "9.0", index=1)
    assert cuda_checks.wheel_kernel_gaps("2.11", "cu130", [v100, h100], "580.95.05") == ([v100], [])
    assert cuda_checks.wheel_kernel_gaps("2.11", "cu126", [v100, h100], "580.95.05") == ([], [])
    assert cuda_checks.wheel_kernel_gaps("2.11", "cu130", [], "580.95.05") == ([], [])
    # A GPU newer than every SASS (a future compute capability 13.0) runs 2.7 cu128's measured compute_120 PTX only where
    # the driver fully supports CUDA 12.8; 2.11 cu130's PTX is unconfirmed, so it is not counted, and not refused.
    future = gpu("future GPU", "13.0")
    assert cuda_checks.wheel_kernel_gaps("2.7", "cu128", [future], "580.95.05") == ([], [])
    assert cuda_checks.wheel_kernel_gaps("2.7", "cu128", [future], "535.309.01") == ([future], [])
    assert cuda_checks.wheel_kernel_gaps("2.11", "cu130", [future], "580.95.05") == ([], [future])
    # A compute capability looked up in the name table as unconfirmed never refuses.
    guessed = gpu("Quadro GV100", "7.0", cc_from="name table (unconfirmed)")
    assert cuda_checks.wheel_kernel_gaps("2.11", "cu130", [guessed], "580.95.05") == ([], [guessed])


def test_variant_and_best_wheel_for_the_node_skip_builds_without_kernels_for_a_gpu():
    v100, b200 = [gpu("Tesla V100-SXM2-32GB", "7.0")], [gpu("NVIDIA B200", "10.0")]
    fit = cuda_checks.torch_variant_for_node("2.11", "580.95.05", v100)
    assert (fit["variant"], fit["support"], fit["without_kernels"]) == ("cu126", "full", [("cu130", v100), ("cu128", v100)])
    assert cuda_checks.torch_variant_for_node("2.6", "570.86.15", b200)["variant"] is None
    assert cuda_checks.best_wheel_for_node("580.95.05", v100) == ("2.14", "cu126")
    assert cuda_checks.best_wheel_for_node("570.86.15", b200) == ("2.11", "cu128")
    assert cuda_checks.best_wheel_for_node("470.182.03", [gpu("Tesla K40m", "3.5")]) is None


def test_the_driver_fix_names_a_build_for_the_gpus():
    # R570 runs torch 2.14's cu126 build, which has no sm_100: the fix names one with B200 kernels.
    result = cuda_checks.evaluate(facts("570.86.15", [gpu("NVIDIA B200", "10.0")]), probe("2.11.0+cu130", "13.0"), nvcc())
    fix = [item["fix"] for item in result["findings"] if item["id"] == "driver.too_old_for_torch"][0]
    assert fix.endswith("install a torch build this driver runs (torch 2.11 cu128: --index-url https://download.pytorch.org/whl/cu128).")


def test_toolkit_requirement_and_wheels():
    assert cuda_checks.toolkit_requirement("12.4") == {
        "label": "CUDA 12.4 GA", "full": "550.54.14", "full_status": "primary", "floor": "525.60.13", "floor_status": "primary"}
    assert cuda_checks.toolkit_requirement("13.4")["full"] is None
    assert cuda_checks.best_wheel_for_node("470.182.03") == ("2.7", "cu118")
    assert cuda_checks.best_wheel_for_node("580.65.06")[1] == "cu132"
    assert cuda_checks.best_wheel_for_node("440.33") is None


def test_gpu_generation_and_verdict():
    assert cuda_checks.gpu_generation(gpu("Tesla T4", "7.5")) == "Turing"
    assert cuda_checks.gpu_generation(gpu("Tesla V100", "7.0")) == "Volta"
    assert cuda_checks.gpu_generation(gpu("NVIDIA GH200 480GB", "9.0")) == "Grace Hopper"
    assert cuda_checks.gpu_generation(gpu(None, None)) is None
    assert cuda_checks.verdict_of([]) == "ok"
    assert cuda_checks.verdict_of([{"severity": "info"}, {"severity": "warning"}]) == "warning"


def test_an_end_of_life_driver_branch_is_a_warning_naming_its_successor():
    old = facts("535.309.01", [gpu("NVIDIA A100-SXM4-80GB", "8.0")], flavour="proprietary")
    after = cuda_checks.evaluate(old, probe("2.5.1+cu124", "12.4", CU124_ARCH), nvcc("12.4"), today=datetime.date(2026, 7, 1))
    (eol,) = [item for item in after["findings"] if item["id"] == "driver.branch_end_of_life"]
    assert eol["severity"] == "warning" and after["verdict"] == "warning"
    assert eol["message"] == ("Driver 535.309.01 is on branch R535 (LTSB): end of life since 2026-06; supported successor "
                              "R580 (LTSB, until 2028-06)")
    assert eol["fix"] == "Move to the R580 branch."
    # The H200 host's R580 is supported; a branch without an end of life in the tables is unknown, not a finding.
    assert "driver.branch_end_of_life" not in ids(cuda_checks.evaluate(facts(), probe(), nvcc(), today=datetime.date(2026, 12, 4)))
    assert cuda_checks.branch_lifecycle(470, datetime.date(2026, 12, 4))["status"] == "unknown"
    assert cuda_checks.lifecycle_text(cuda_checks.branch_lifecycle(470)) == (
        "R470: lifecycle unknown (the driver tables hold no end of life for it)")
    assert cuda_checks.branch_lifecycle(620, datetime.date(2030, 1, 1))["successor"] is None
    assert "no newer supported branch" in cuda_checks.lifecycle_text(cuda_checks.branch_lifecycle(620, datetime.date(2030, 1, 1)))
