"""The gpu_health module: where it reads the kernel log, the DCGM option, and its refusals (over module_utils.decide.gpu_health)."""

import json
import os

import pytest
import yaml
from ansible.module_utils import basic
from ansible_collections.aistack.gpu_node.plugins.modules import gpu_health
from conftest import REPO_ROOT, read_public, run_module

with open(os.path.join(REPO_ROOT, "roles", "gpu_validate", "vars", "health_catalogue.yml")) as _handle:
    CATALOGUE = yaml.safe_load(_handle)["__gpu_validate_health_catalogue"]
H200 = [{"index": 0, "name": "NVIDIA H200", "pci_bus_id": "0000:00:06.0"}]


def args(**overrides):
    base = dict(catalogue=CATALOGUE, gpus=H200)
    base.update(overrides)
    return base


@pytest.fixture
def node(monkeypatch):
    """A node with the programs in ``node.programs`` answering from ``node.outputs`` (argv[0] -> (rc, out, err))."""

    class Node(object):
        programs = {"journalctl", "dmesg"}
        outputs = {}
        calls = []

    def get_bin_path(self, name, required=False, opt_dirs=None):
        return "/usr/bin/" + name if name in Node.programs else None

    def run_command(self, argv, **kwargs):
        Node.calls.append(argv)
        return Node.outputs.get(os.path.basename(argv[0]), (127, "", "not found"))

    Node.outputs = {}
    Node.calls = []
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", get_bin_path)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    return Node


def test_journal_is_read_first(node, capsys):
    node.outputs["journalctl"] = (0, read_public("kernel-log-xid79-journal.txt"), "")
    code, result = run_module(gpu_health, args(), capsys)
    assert code == 0 and result["changed"] is False and result["problems"] == []
    assert node.calls == [["/usr/bin/journalctl", "-k", "-b", "-o", "short-monotonic", "--no-pager"]]
    health = result["health"]
    assert health["kernel_log"] == {"source": "journalctl", "reason": "", "events": 1}
    assert health["verdict"] == "REBOOT" and health["fails"]


def test_empty_journal_falls_back_to_dmesg(node, capsys):
    node.outputs["journalctl"] = (0, "-- No entries --\n", "")
    node.outputs["dmesg"] = (0, read_public("kernel-log-xid31-xid32-dmesg.txt"), "")
    code, result = run_module(gpu_health, args(), capsys)
    assert code == 0
    assert result["health"]["kernel_log"] == {"source": "dmesg", "reason": "journalctl: -- No entries --", "events": 3}
    assert result["health"]["verdict"] == "MONITOR" and not result["health"]["fails"]


def test_no_journald_reads_dmesg(node, capsys):
    node.programs = {"dmesg"}
    node.outputs["dmesg"] = (0, read_public("kernel-log-xid45-dmesg-ctime.txt"), "")
    code, result = run_module(gpu_health, args(), capsys)
    assert code == 0
    assert result["health"]["kernel_log"]["reason"] == "journalctl: not installed"
    assert result["health"]["kernel_log"]["source"] == "dmesg"


def test_unreadable_log_is_unknown(node, capsys):
    """A podman node: no journald, and dmesg refused."""
    node.programs = {"dmesg"}
    node.outputs["dmesg"] = (1, "", "dmesg: read kernel buffer failed: Operation not permitted\n")
    code, result = run_module(gpu_health, args(), capsys)
    assert code == 0
    health = result["health"]
    assert health["verdict"] == "UNKNOWN" and not health["fails"]
    assert health["kernel_log"]["reason"] == ("journalctl: not installed; dmesg: exit 1 dmesg: read kernel buffer failed: "
                                              "Operation not permitted")


def test_journalctl_failure_and_no_dmesg(node, capsys):
    node.programs = {"journalctl"}
    node.outputs["journalctl"] = (1, "", "Failed to get boot ID")
    code, result = run_module(gpu_health, args(), capsys)
    assert code == 0
    assert result["health"]["kernel_log"]["reason"] == "journalctl: exit 1 Failed to get boot ID; dmesg: not installed"


def test_dcgm_level_without_dcgmi_is_refused_naming_the_variable(node, capsys):
    code, result = run_module(gpu_health, args(dcgm_diag_level=2), capsys)
    assert code == 1
    assert result["msg"] == ("gpu_validate: bad input: gpu_validate_dcgm_diag_level is 2 but dcgmi is not installed on the node: "
                             "install DCGM (datacenter-gpu-manager) or set gpu_validate_dcgm_diag_level: 0")
    assert node.calls == []


def test_input_check_only_lists_the_problems(node, capsys):
    code, result = run_module(gpu_health, args(scan=False, dcgm_diag_level=1, fail_class="sometimes"), capsys)
    assert code == 0 and "health" not in result
    assert result["problems"] == [
        "gpu_validate_health_fail_class must be one of MONITOR, RESET, REBOOT, ISOLATE or never, got 'sometimes'",
        "gpu_validate_dcgm_diag_level is 1 but dcgmi is not installed on the node: install DCGM (datacenter-gpu-manager) "
        "or set gpu_validate_dcgm_diag_level: 0"]
    assert node.calls == []


def test_bad_catalogue_is_refused(node, capsys):
    catalogue = dict(CATALOGUE, unknown_xid={"class": "FINE"})
    code, result = run_module(gpu_health, args(catalogue=catalogue), capsys)
    assert code == 1
    assert "unknown_xid has no why" in result["msg"] and "unknown_xid.class must be one of" in result["msg"]


def test_dcgm_runs_and_folds_in(node, capsys):
    node.programs = {"journalctl", "dcgmi"}
    node.outputs["journalctl"] = (0, read_public("kernel-log-xid45-dmesg-ctime.txt"), "")
    diag = {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [
        {"name": "GPU Memory", "results": [{"gpu_id": "0", "status": "Fail", "warnings": [{"warning": "x", "error_severity": 6}]}]}]}]}}
    node.outputs["dcgmi"] = (226, json.dumps(diag), "")
    code, result = run_module(gpu_health, args(dcgm_diag_level=1), capsys)
    assert code == 0
    assert ["/usr/bin/dcgmi", "diag", "-r", "1", "-j"] in node.calls
    assert result["health"]["dcgm"]["class"] == "RESET" and result["health"]["verdict"] == "RESET"


def test_dcgm_version_from_dcgmi_v_decides_the_waivers(node, capsys, monkeypatch):
    """DCGM 4.5.0's nvbandwidth failure right after the diagnostic test (NVIDIA/DCGM#272) is waived there."""
    node.programs = {"journalctl", "dcgmi"}
    node.outputs["journalctl"] = (0, "", "")
    version_4_5_0 = read_public("dcgmi-v-4.7.0.txt").replace("4.7.0", "4.5.0")
    diag = {"DCGM Diagnostic": {"tests": [
        {"name": "diagnostic", "results": [{"entity_id": 0, "status": "Pass"}]},
        {"name": "nvbandwidth", "results": [{"entity_id": 0, "status": "Fail", "warnings": [{"warning": (
            "The memory copy utilization for the GPU: 0 is greater than 10%. This may affect the results of the "
            "nvbandwidth test."), "error_severity": 1}]}]}]}}
    answers = {"-v": (0, version_4_5_0, ""), "diag": (226, json.dumps(diag), "")}

    def run_command(self, argv, **kwargs):
        node.calls.append(argv)
        return answers[argv[1]] if argv[0] == "/usr/bin/dcgmi" else node.outputs[os.path.basename(argv[0])]

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    code, result = run_module(gpu_health, args(catalogue=CATALOGUE, dcgm_diag_level=3), capsys)
    dcgm = result["health"]["dcgm"]
    assert code == 0 and dcgm["version"] == "4.5.0" and dcgm["status"] == "passed" and dcgm["waived"] == 1
    assert ["/usr/bin/dcgmi", "-v"] in node.calls


def test_dcgm_level_accepted_in_the_input_check_when_the_dcgm_role_installs_it(node, capsys):
    code, result = run_module(gpu_health, args(scan=False, dcgm_diag_level=1, dcgm_install_planned=True), capsys)
    assert code == 0 and result["problems"] == []
    code, result = run_module(gpu_health, args(dcgm_diag_level=1, dcgm_install_planned=True), capsys)
    assert code == 1 and "dcgmi is not installed on the node" in result["msg"]


def test_dcgm_is_skipped_in_check_mode(node, capsys):
    node.programs = {"journalctl", "dcgmi"}
    node.outputs["journalctl"] = (0, "", "")
    code, result = run_module(gpu_health, args(dcgm_diag_level=3, _ansible_check_mode=True), capsys)
    assert code == 0
    assert result["health"]["dcgm"] == {"level": 3, "status": "skipped", "reason": "check mode"}
    assert result["health"]["verdict"] == "UNKNOWN"
    assert all(call[0] != "/usr/bin/dcgmi" for call in node.calls)


def test_dcgm_without_json_fails(node, capsys):
    node.programs = {"journalctl", "dcgmi"}
    node.outputs["dcgmi"] = (255, "", "Error: unable to establish a connection to the host engine")
    code, result = run_module(gpu_health, args(dcgm_diag_level=1), capsys)
    assert code == 1
    assert result["msg"] == ("gpu_validate: dcgmi diag -r 1 -j gave no JSON (exit 255): Error: unable to establish a connection "
                             "to the host engine")


def test_without_the_action_plugin_a_missing_catalogue_is_named(capsys):
    rc, result = run_module(gpu_health, {"scan": False}, capsys)
    assert rc == 1 and result["msg"] == "gpu_health: no catalogue given, and none is read without the action plugin"
