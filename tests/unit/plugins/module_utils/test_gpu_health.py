"""GPU health from the kernel log, fed with real public Xid/SXid lines (tests/unit/fixtures/public/kernel-log-*.txt,
each naming its source) and the H200 host's recorded GPU list (a clean node: its recordings hold no Xid)."""

import copy
import os

import pytest
import yaml
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import gpu_health
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.nvidia_parsers import normalize_pci_bus_id, parse_query_gpu_csv
from conftest import REPO_ROOT, read_h200, read_public

CATALOGUE_FILE = os.path.join(REPO_ROOT, "roles", "gpu_validate", "vars", "health_catalogue.yml")


@pytest.fixture(scope="module")
def catalogue():
    with open(CATALOGUE_FILE) as handle:
        return yaml.safe_load(handle)["__gpu_validate_health_catalogue"]


def journal(name):
    return {"source": "journalctl", "text": read_public(name), "reason": ""}


def gpu(bus, name, index=0):
    """A GPU as gpu_facts reports it: the name picks the model's thresholds."""
    return {"index": index, "name": name, "pci_bus_id": bus}


def h200_gpus():
    """The GPU list gpu_facts builds from the H200 host's recorded nvidia-smi query."""
    rows = parse_query_gpu_csv(read_h200("nvidia-smi-query-gpu.csv"))
    return [{"index": int(row["index"]), "name": row["name"], "pci_bus_id": normalize_pci_bus_id(row["pci.bus_id"])}
            for row in rows]


# The catalogue (data file) itself.

def test_catalogue_file_is_well_formed_and_every_entry_cites_a_source(catalogue):
    assert gpu_health.catalogue_problems(catalogue) == []
    assert [item["name"] for item in catalogue["classes"]] == list(gpu_health.CLASSES)
    for code, entry in catalogue["xid"].items():
        assert entry["source"].startswith("https://docs.nvidia.com/"), code
    for model in catalogue["models"] + [catalogue["default_model"]]:
        for rule in model["escalations"]:
            assert rule["basis"] in ("NVIDIA", "project choice") and rule["source"].startswith("https://")
    assert [model["name"] for model in catalogue["models"]] == ["A100", "H100", "H200", "B200", "L40S"]


def test_catalogue_problems_name_each_bad_entry(catalogue):
    bad = copy.deepcopy(catalogue)
    bad["xid"][79]["class"] = "PANIC"
    del bad["xid"][48]["source"]
    bad["xid"][94]["source"] = "http://example.com/xid"
    bad["models"][0]["escalations"][0]["at_least"] = 0
    bad["classes"] = bad["classes"][::-1]
    problems = gpu_health.catalogue_problems(bad)
    assert "xid.79.class must be one of OK, MONITOR, RESET, REBOOT, ISOLATE, got 'PANIC'" in problems
    assert "xid.48 has no source" in problems
    assert "xid.94.source must be an https URL, got 'http://example.com/xid'" in problems
    assert "models[A100].escalations[0].at_least must be a whole number of at least 1, got 0" in problems
    assert problems[0].startswith("classes must list OK, MONITOR, RESET, REBOOT, ISOLATE in that order")
    assert gpu_health.catalogue_problems(["not", "a", "mapping"]) == ["the health catalogue must be a mapping, got ['not', 'a', 'mapping']"]


def test_catalogue_keys_arrive_as_strings_through_module_arguments(catalogue):
    """Ansible passes the YAML's integer keys to the module as strings: classification must not care."""
    as_arguments = yaml.safe_load(yaml.safe_dump(catalogue).replace("\n  79:", "\n  '79':"))
    event = gpu_health.parse_kernel_log(read_public("kernel-log-xid79-journal.txt"))[0]
    assert gpu_health.classify_event(event, as_arguments)[0] == "REBOOT"
    assert gpu_health.catalogue_problems(as_arguments) == []


# Parsing real lines.

@pytest.mark.parametrize("name, expected", [
    ("kernel-log-xid48-xid64-syslog.txt", [("xid", 48, "0000:07:00"), ("xid", 64, "0000:07:00")]),
    ("kernel-log-xid79-journal.txt", [("xid", 79, "0000:2b:00")]),
    ("kernel-log-xid13-xid109-dmesg-ctime.txt", [("xid", 13, "0000:cb:00")] * 3 + [("xid", 109, "0000:cb:00")]),
    ("kernel-log-xid45-dmesg-ctime.txt", [("xid", 45, "0000:61:00")] * 6),
    ("kernel-log-sxid12028-dmesg-iso.txt", [("sxid", 12028, "0000:84:00")]),
    ("kernel-log-xid31-xid32-dmesg.txt", [("xid", 32, "0000:01:00")] * 2 + [("xid", 31, "0000:01:00")]),
    ("kernel-log-xid38-xid109-journal-pl.txt", [("xid", 38, "0000:07:00")] + [("xid", 109, "0000:07:00")] * 5),
    ("kernel-log-xid43-dmesg.txt", [("xid", 43, "0009:01:00")]),
    ("kernel-log-xid63-guide.txt", [("xid", 63, "0000:10:1c")]),
    ("kernel-log-xid94-mig-nvidia-doc.txt", [("xid", 94, "0000:01:00")]),
])
def test_parse_finds_every_xid_and_sxid_line_whatever_the_prefix(name, expected):
    events = gpu_health.parse_kernel_log(read_public(name))
    assert [(e["kind"], e["code"], e["device"]) for e in events] == expected


def test_parse_keeps_the_detail_and_the_line():
    event = gpu_health.parse_kernel_log(read_public("kernel-log-xid79-journal.txt"))[0]
    assert event["detail"] == "GPU has fallen off the bus."
    assert event["line"] == "May 18 19:02:39 kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus."


def test_nvrm_lines_that_are_not_xid_are_not_events():
    text = read_public("kernel-log-xid48-xid64-syslog.txt")
    assert "RmInitAdapter failed" in text
    assert {e["device"] for e in gpu_health.parse_kernel_log(text)} == {"0000:07:00"}


@pytest.mark.parametrize("raw, key", [("0000:2b:00", "0000:2b:00"), ("00000000:2B:00.0", "0000:2b:00"),
                                      ("0000:00:06.0", "0000:00:06"), ("0000:84:00.0", "0000:84:00"),
                                      (None, None), ("weird", "weird")])
def test_device_key_matches_xid_and_gpu_facts_bus_ids(raw, key):
    assert gpu_health.device_key(raw) == key


# Verdicts.

def test_clean_h200_node_is_ok(catalogue):
    """The H200 host's recordings hold no Xid (no kernel log captured there): an empty journal is a clean node."""
    gpus = h200_gpus()
    assert gpus[0]["name"] == "NVIDIA H200" and gpus[0]["pci_bus_id"] == "0000:00:06.0"
    health = gpu_health.assess({"source": "journalctl", "text": "", "reason": ""}, gpus, catalogue)
    assert health["verdict"] == "OK" and not health["fails"]
    assert health["devices"] == [] and health["events"] == [] and health["messages"] == []
    assert health["action"] == "No action."
    assert health["summary"] == "health OK: 0 Xid/SXid events in the kernel log since boot (journalctl) on 0 devices"


def test_non_gpu_lines_alone_are_ok(catalogue):
    text = read_public("kernel-log-xid13-xid109-dmesg-ctime.txt").splitlines()[0]
    assert "nvidia-peermem" in text
    assert gpu_health.assess({"source": "dmesg", "text": text}, h200_gpus(), catalogue)["verdict"] == "OK"


def test_fallen_off_the_bus_needs_a_reboot_and_fails_the_node(catalogue):
    health = gpu_health.assess(journal("kernel-log-xid79-journal.txt"), [gpu("0000:2b:00.0", "NVIDIA GeForce RTX 5080")],
                               catalogue)
    assert health["verdict"] == "REBOOT" and health["fails"]
    assert health["action"].startswith("Drain the node, reboot it")
    device = health["devices"][0]
    assert device["label"] == "GPU 0 NVIDIA GeForce RTX 5080 (0000:2b:00)" and device["model"] == "other"
    assert health["messages"] == ["GPU 0 NVIDIA GeForce RTX 5080 (0000:2b:00): REBOOT: Xid 79 x1: REBOOT (bucket RESTART_BM)"]
    assert health["events"][0]["first_line"].endswith("79, GPU has fallen off the bus.")


@pytest.mark.parametrize("fail_class, fails", [("REBOOT", True), ("RESET", True), ("ISOLATE", False), ("never", False)])
def test_fail_class_decides_whether_the_verdict_fails(catalogue, fail_class, fails):
    health = gpu_health.assess(journal("kernel-log-xid79-journal.txt"), [], catalogue, fail_class=fail_class)
    assert health["verdict"] == "REBOOT" and health["fails"] is fails and health["fail_class"] == fail_class


def test_row_remapping_failure_isolates_the_gpu_on_any_model(catalogue):
    """Xid 48 then 64 on one GPU: the catalogue says RESET, the RMA policy escalates a remapping failure."""
    for name, model in (("NVIDIA A100-SXM4-80GB", "A100"), ("NVIDIA H200", "H200"), ("Tesla T4", "other")):
        health = gpu_health.assess(journal("kernel-log-xid48-xid64-syslog.txt"), [gpu("0000:07:00.0", name)], catalogue)
        device = health["devices"][0]
        assert (health["verdict"], device["model"]) == ("ISOLATE", model)
        assert [rule["xids"] for rule in device["escalations"]] == [[64]]
        assert device["counts"] == {48: 1, 64: 1}
        assert "ISOLATE: Xid 64 x1 reaches 1 for %s: a row-remapping failure meets NVIDIA's RMA policy (NVIDIA)" % model \
            in device["message"]


def test_row_remap_event_needs_a_reset_on_hbm_models_only(catalogue):
    log = journal("kernel-log-xid63-guide.txt")
    assert gpu_health.assess(log, [gpu("0000:10:1c.0", "NVIDIA H100 80GB HBM3")], catalogue)["verdict"] == "RESET"
    assert gpu_health.assess(log, [gpu("0000:10:1c.0", "NVIDIA L40S")], catalogue)["verdict"] == "RESET"
    unknown = gpu_health.assess(log, [], catalogue)
    assert unknown["verdict"] == "MONITOR" and unknown["devices"][0]["label"] == "GPU 0000:10:1c (not in the GPU list)"


def test_contained_errors_escalate_at_the_model_threshold(catalogue):
    """NVIDIA's documented Xid 94 line, once and three times (the threshold of the HBM models)."""
    line = read_public("kernel-log-xid94-mig-nvidia-doc.txt")
    gpus = [gpu("0000:01:00.0", "NVIDIA H200")]
    once = gpu_health.assess({"source": "dmesg", "text": line}, gpus, catalogue)
    assert once["verdict"] == "MONITOR" and not once["fails"]
    thrice = gpu_health.assess({"source": "dmesg", "text": line * 3}, gpus, catalogue)
    assert thrice["verdict"] == "RESET" and thrice["devices"][0]["escalations"][0]["basis"] == "project choice"
    assert thrice["events"][0]["count"] == 3


def test_uncorrectable_error_on_a_gpu_without_containment_needs_a_reboot(catalogue):
    log = journal("kernel-log-xid48-xid64-syslog.txt")
    log["text"] = "\n".join(line for line in log["text"].splitlines() if ": 48," in line)
    assert gpu_health.assess(log, [gpu("0000:07:00.0", "NVIDIA L40S")], catalogue)["verdict"] == "REBOOT"
    assert gpu_health.assess(log, [gpu("0000:07:00.0", "NVIDIA H100 PCIe")], catalogue)["verdict"] == "RESET"


@pytest.mark.parametrize("name, verdict, counts", [
    ("kernel-log-xid13-xid109-dmesg-ctime.txt", "RESET", {13: 3, 109: 1}),
    ("kernel-log-xid45-dmesg-ctime.txt", "MONITOR", {45: 6}),
    ("kernel-log-xid31-xid32-dmesg.txt", "MONITOR", {31: 1, 32: 2}),
    ("kernel-log-xid38-xid109-journal-pl.txt", "RESET", {38: 1, 109: 5}),
    ("kernel-log-xid43-dmesg.txt", "MONITOR", {43: 1}),
])
def test_real_logs_get_the_catalogue_class(catalogue, name, verdict, counts):
    health = gpu_health.assess(journal(name), [], catalogue)
    assert health["verdict"] == verdict
    assert health["devices"][0]["counts"] == counts
    assert health["fails"] is False


def test_xid45_after_nvlink5_errors_is_reported_per_gpu(catalogue):
    gpus = [gpu("0000:%s:00.0" % bus, "NVIDIA B200", index) for index, bus in enumerate(("97", "ba", "dc", "ed"))]
    health = gpu_health.assess(journal("kernel-log-xid45-nvlink5-journal.txt"), gpus, catalogue)
    assert health["verdict"] == "MONITOR"
    assert [(d["gpu_index"], d["counts"]) for d in health["devices"]] == [(0, {45: 1}), (1, {45: 2}), (2, {45: 2}), (3, {45: 2})]
    assert health["summary"] == "health MONITOR: 7 Xid/SXid events in the kernel log since boot (journalctl) on 4 devices"


def test_nvswitch_sxid_is_its_own_device(catalogue):
    health = gpu_health.assess(journal("kernel-log-sxid12028-dmesg-iso.txt"), h200_gpus(), catalogue)
    device = health["devices"][0]
    assert (device["kind"], device["label"], device["class"]) == ("nvswitch", "NVSwitch 0000:84:00", "REBOOT")
    assert health["events"][0]["name"] == "egress non-posted PRIV error"


def test_unlisted_sxid_follows_its_fatal_word(catalogue):
    event = {"kind": "sxid", "code": 11004, "detail": "Non-fatal, Link 44", "device": "0000:84:00", "line": ""}
    assert gpu_health.classify_event(event, catalogue)[0] == "MONITOR"
    event["detail"] = "Fatal, Link 44"
    assert gpu_health.classify_event(event, catalogue)[0] == "REBOOT"


def test_nvlink5_xids_follow_the_drivers_fatal_word(catalogue):
    """Details as quoted from kmsg in leptonai/gpud#1160 (no bus id there to parse a whole line from)."""
    event = {"kind": "xid", "code": 144, "device": "0000:01:00", "line": "",
             "detail": "SAW_MVB Nonfatal XC0 i0 Link 0 (0x00000001 0x00000008 0x00000000 0x00000000 0x00000000 0x00000000)"}
    assert gpu_health.classify_event(event, catalogue)[0] == "MONITOR"
    event.update(code=149, detail="NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x025001c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)")
    assert gpu_health.classify_event(event, catalogue)[:2] == ("RESET", "the driver reports it fatal")


def test_xid154_follows_the_recovery_action_it_names(catalogue):
    """No public Xid 154 line was found; the action names are NVML's recovery actions, "Node Reboot Required"
    as an issue title quotes it (NVIDIA/open-gpu-kernel-modules#1134)."""
    event = {"kind": "xid", "code": 154, "device": "0000:01:00", "line": "", "detail": "(Node Reboot Required)"}
    assert gpu_health.classify_event(event, catalogue)[:2] == ("REBOOT", 'recovery action "node reboot"')
    event["detail"] = "from 0x0 (None) to 0x1 (GPU Reset Required)"
    assert gpu_health.classify_event(event, catalogue)[0] == "RESET"
    event["detail"] = "something else"
    assert gpu_health.classify_event(event, catalogue)[0] == "MONITOR"


def test_unknown_xid_is_monitored_with_a_pointer_to_the_catalogue(catalogue):
    event = {"kind": "xid", "code": 999, "device": "0000:01:00", "line": "", "detail": ""}
    found, why, source, _name = gpu_health.classify_event(event, catalogue)
    assert (found, source) == ("MONITOR", "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html")
    assert "not in this catalogue" in why


def test_unreadable_kernel_log_is_unknown_not_ok(catalogue):
    health = gpu_health.assess({"source": "none", "reason": "journalctl: not installed; dmesg: exit 1 dmesg: read kernel buffer "
                                "failed: Operation not permitted"}, h200_gpus(), catalogue)
    assert health["verdict"] == "UNKNOWN" and not health["fails"]
    assert health["summary"].startswith("health UNKNOWN: kernel log unreadable (journalctl: not installed; dmesg: exit 1")
    assert "journalctl -k -b" in health["action"]


# DCGM.

def dcgm3(*results):
    """``dcgmi diag -j`` of DCGM 3.x, shaped as NVIDIA/DCGM#139 shows it; the results are each test's."""
    return {"DCGM GPU Diagnostic": {"test_categories": [
        {"category": "Hardware", "tests": [{"name": name, "results": [result]} for name, result in results]}]}}


def test_dcgm_pass_and_skip_are_ok(catalogue):
    data = dcgm3(("GPU Memory", {"gpu_id": "0", "status": "Skip"}), ("Diagnostic", {"gpu_id": "0", "status": "Pass"}))
    assert gpu_health.assess_dcgm(data, 2, catalogue) == {
        "level": 2, "version": None, "status": "passed", "class": "OK", "findings": [], "waived": 0,
        "source": "https://docs.nvidia.com/datacenter/dcgm/latest/reference/diagnostics/errors.html"}


def test_dcgm_failures_take_their_severity_else_isolate(catalogue):
    data = dcgm3(("GPU Memory", {"gpu_id": "0", "status": "Fail",
                                 "warnings": [{"warning": "pending page retirements", "error_severity": 6}]}),
                 ("PCIe", {"gpu_id": "1", "status": "Fail", "warnings": [{"warning": "link down"}]}),
                 ("Targeted Power", {"gpu_id": "1", "status": "Warn", "warnings": ["power capped"]}))
    result = gpu_health.assess_dcgm(data, 3, catalogue)
    assert result["status"] == "failed" and result["class"] == "ISOLATE"
    assert [(f["test"], f["class"]) for f in result["findings"]] == [("GPU Memory", "RESET"), ("PCIe", "ISOLATE"),
                                                                     ("Targeted Power", "MONITOR")]
    assert result["findings"][0]["messages"] == ["pending page retirements"]


def test_dcgm4_layout_and_unparsable_input(catalogue):
    data = {"DCGM Diagnostic": {"tests": [{"name": "memory", "results": [{"entity_id": 0, "status": "Fail"}]}]}}
    assert gpu_health.assess_dcgm(data, 1, catalogue)["findings"][0]["gpu_id"] == 0
    assert gpu_health.assess_dcgm("not json", 1, catalogue)["status"] == "passed"


def dcgm4_level3(nvbandwidth_message, with_diagnostic=True):
    """``dcgmi diag -r 3 -j`` of DCGM 4.x: the diagnostic (GpuBurn) test passed, nvbandwidth failed with
    the message NVIDIA/DCGM#272 quotes (its GPU index filled in)."""
    tests = [{"name": "diagnostic", "results": [{"entity_id": 2, "status": "Pass"}]}] if with_diagnostic else []
    tests.append({"name": "nvbandwidth", "results": [{"entity_id": 2, "status": "Fail", "warnings": [
        {"warning": nvbandwidth_message, "error_severity": 1}]}]})
    return {"DCGM Diagnostic": {"tests": tests}}


MCUTIL_272 = ("The memory copy utilization for the GPU: 2 is greater than 10%. This may affect the results of the "
              "nvbandwidth test.")


def test_dcgm_waiver_covers_the_known_false_nvbandwidth_failure_of_4_5_0(catalogue):
    result = gpu_health.assess_dcgm(dcgm4_level3(MCUTIL_272), 3, catalogue, version="4.5.0")
    assert result["status"] == "passed" and result["class"] == "OK" and result["waived"] == 1
    waived = result["findings"][0]
    assert waived["test"] == "nvbandwidth" and waived["class"] == "OK"
    assert waived["waived"]["class"] == "MONITOR" and waived["waived"]["source"] == "https://github.com/NVIDIA/DCGM/issues/272"
    health = gpu_health.assess({"source": "journalctl", "text": ""}, h200_gpus(), catalogue, dcgm=result)
    assert health["verdict"] == "OK" and not health["fails"]
    assert "waived, a known false diagnostic of DCGM 4.5.0" in health["messages"][0]


@pytest.mark.parametrize("version, data", [
    # Another version: 4.4.2 passes, 4.5.2 waits for idle copy engines; a failure there is real.
    ("4.5.2", dcgm4_level3(MCUTIL_272)),
    (None, dcgm4_level3(MCUTIL_272)),
    # nvbandwidth alone (no GpuBurn before it in the run), or another message: not the known case.
    ("4.5.0", dcgm4_level3(MCUTIL_272, with_diagnostic=False)),
    ("4.5.0", dcgm4_level3("nvbandwidth measured 12 GB/s, below the expected 300 GB/s")),
])
def test_dcgm_waiver_is_kept_to_its_version_test_order_and_message(catalogue, version, data):
    result = gpu_health.assess_dcgm(data, 3, catalogue, version=version)
    assert result["status"] == "failed" and result["class"] == "MONITOR" and result["waived"] == 0
    assert "waived" not in result["findings"][0]


def test_dcgm_waivers_are_checked_like_the_rest_of_the_catalogue(catalogue):
    broken = copy.deepcopy(catalogue)
    broken["dcgm"]["waivers"] = [{"versions": ["4.5"], "test": "nvbandwidth", "message": "(", "why": "x",
                                  "source": "http://example.org"}, "not a mapping"]
    assert gpu_health.catalogue_problems(broken) == [
        "dcgm.waivers[0].source must be an https URL, got 'http://example.org'",
        "dcgm.waivers[0].versions must list exact DCGM versions such as \"4.5.0\", got ['4.5']",
        "dcgm.waivers[0].message must be a regular expression: missing ), unterminated subpattern at position 0",
        "dcgm.waivers[1] must be a mapping, got 'not a mapping'"]


def test_dcgm_folds_into_the_node_verdict(catalogue):
    dcgm = gpu_health.assess_dcgm(dcgm3(("GPU Memory", {"gpu_id": "0", "status": "Fail"})), 2, catalogue)
    health = gpu_health.assess({"source": "journalctl", "text": ""}, h200_gpus(), catalogue, dcgm=dcgm)
    assert health["verdict"] == "ISOLATE" and health["fails"]
    assert health["messages"] == ["dcgmi diag -r 2 GPU Memory on GPU 0: ISOLATE (Fail)"]
    assert health["summary"].endswith("; dcgmi diag -r 2 failed")
    passed = gpu_health.assess({"source": "none", "reason": "x"}, [], catalogue, dcgm={"level": 1, "status": "passed", "class": "OK"})
    assert passed["verdict"] == "OK"


# Inputs.

@pytest.mark.parametrize("level, fail_class, problems", [
    (0, "REBOOT", []),
    (3, "never", []),
    (4, "REBOOT", ["gpu_validate_dcgm_diag_level must be 0 (off), 1, 2 or 3, got 4"]),
    (True, "REBOOT", ["gpu_validate_dcgm_diag_level must be 0 (off), 1, 2 or 3, got True"]),
    (0, "OK", ["gpu_validate_health_fail_class must be one of MONITOR, RESET, REBOOT, ISOLATE or never, got 'OK'"]),
])
def test_input_problems_name_the_variable(level, fail_class, problems):
    assert gpu_health.input_problems(level, fail_class) == problems


def test_dcgmi_missing_names_the_variable():
    assert gpu_health.dcgmi_missing_problem(2) == (
        "gpu_validate_dcgm_diag_level is 2 but dcgmi is not installed on the node: install DCGM (datacenter-gpu-manager) "
        "or set gpu_validate_dcgm_diag_level: 0")


def test_journal_has_entries():
    assert not gpu_health.journal_has_entries("-- No entries --\n")
    assert not gpu_health.journal_has_entries("")
    assert gpu_health.journal_has_entries(read_public("kernel-log-xid79-journal.txt"))


def test_a_group_of_one_code_keeps_its_worst_occurrence(catalogue):
    """Xid 154 lines of one GPU naming different actions (event details constructed from NVML's action names)."""
    events = [{"kind": "xid", "code": 154, "device": "0000:01:00", "line": "first", "detail": "(GPU Reset Required)"},
              {"kind": "xid", "code": 154, "device": "0000:01:00", "line": "second", "detail": "(Node Reboot Required)"},
              {"kind": "xid", "code": 154, "device": "0000:01:00", "line": "third", "detail": "(None)"}]
    group, = gpu_health._group(events, catalogue)  # pylint: disable=protected-access
    assert (group["class"], group["count"], group["first_line"], group["last_line"]) == ("REBOOT", 3, "first", "third")
