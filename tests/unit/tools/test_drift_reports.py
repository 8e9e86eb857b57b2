"""The drift tool's event collection and report writers, fed by recorded ansible-runner runs."""

import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest
from aistack_drift import events, reports
from conftest import recorded

RUN = {"playbook": "/c/site.yml", "inventory": "/c/inventories/local/hosts.yml", "tags": [], "skip_tags": [],
       "limit": None, "forks": 20, "started": "2026-12-02T16:18:00+00:00", "seconds": 9.7}


def report_of(name):
    run = recorded(name)
    return reports.build(events.collect(run["events"]), run["rc"], RUN)


def schema():
    with open(reports.SCHEMA_PATH) as handle:
        return json.load(handle)


@pytest.mark.parametrize("name, status, exit_code", [
    ("localhost-fresh-check.json", "drift", 2),
    ("localhost-preflight-only.json", "clean", 0),
    ("localhost-unknown-tag.json", "error", 1),
    ("unreachable-node.json", "error", 1),
])
def test_verdict_and_json_schema(name, status, exit_code):
    document = report_of(name)
    assert (document["status"], document["exit_code"]) == (status, exit_code)
    parsed = json.loads(reports.to_json(document))
    jsonschema.validate(parsed, schema())
    assert parsed == document


def test_fresh_node_lists_each_task_that_would_change_with_its_diff():
    host = report_of("localhost-fresh-check.json")["hosts"]["localhost"]
    assert host["status"] == "drift"
    tasks = [(r["role"], r["task"]) for r in host["changed"]]
    assert ("node_manifest", "Write the node manifest section provision") in tasks
    assert ("gpu_validate", "Install the validation script") in tasks
    provision = [r for r in host["changed"] if r["task"] == "Write the node manifest section provision"][0]
    assert provision["action"] == "ansible.builtin.copy"
    assert '+    "provision": {' in provision["diff"][0]
    assert host["roles"][:2] == [events.NO_ROLE, "preflight"]
    assert host["stats"]["changed"] == len(host["changed"])


def test_junit_has_one_case_per_host_and_role_and_parses_back():
    document = report_of("localhost-fresh-check.json")
    root = ET.fromstring(reports.to_junit(document))
    (suite,) = root.findall("testsuite")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert sorted(cases) == sorted(document["hosts"]["localhost"]["roles"])
    assert cases["preflight"].find("failure") is None
    failure = cases["node_manifest"].find("failure")
    assert failure.get("type") == "drift"
    assert "Write the node manifest section provision" in failure.text
    assert int(suite.get("tests")) == len(cases)
    assert int(suite.get("failures")) == len([c for c in cases.values() if c.find("failure") is not None]) == 2


def test_junit_reports_unreachable_and_failed_hosts_as_errors():
    document = report_of("unreachable-node.json")
    root = ET.fromstring(reports.to_junit(document))
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    bad = suites["unreachable-node.invalid"]
    assert bad.get("errors") == bad.get("tests") != "0"
    assert "192.0.2.1" in bad.find("testcase/error").text
    refused = ET.fromstring(reports.to_junit(report_of("localhost-unknown-tag.json")))
    error = refused.find("testsuite/testcase/error")
    assert error.get("type") == "failed" and "Unknown tag(s) drivr" in error.text


def test_summary_names_hosts_tasks_and_errors():
    text = report_of("localhost-fresh-check.json")["summary"]
    assert text.splitlines()[0] == "aistack-drift: drift: 1 host(s), 1 with drift, 0 failed or unreachable"
    assert "    node_manifest : Write the node manifest section provision (ansible.builtin.copy)" in text
    text = report_of("unreachable-node.json")["summary"]
    assert "  unreachable-node.invalid: unreachable" in text
    assert "Unknown tag(s) drivr" in report_of("localhost-unknown-tag.json")["summary"]


def test_no_host_at_all_is_an_error():
    document = reports.build({}, 4, RUN)
    assert (document["status"], document["exit_code"]) == ("error", 1)
    assert "no host ran" in document["summary"]
    jsonschema.validate(document, schema())


def test_a_clean_recap_with_a_failed_playbook_rc_is_an_error():
    run = recorded("localhost-preflight-only.json")
    assert reports.build(events.collect(run["events"]), 250, RUN)["exit_code"] == 1


@pytest.mark.parametrize("diff, expected", [
    ({"prepared": "changed: x\n"}, "changed: x\n"),
    ({"before": "a\n", "after": "b\n", "before_header": "f", "after_header": "f"}, "--- f\n+++ f\n@@ -1 +1 @@\n-a\n+b\n"),
    ({"before": {"state": "absent"}, "after": {"state": "directory"}}, '-  "state": "absent"\n+  "state": "directory"\n }\n'),
    ({"before": "same\n", "after": "same\n"}, ""),
])
def test_render_diff(diff, expected):
    assert events.render_diff(diff).endswith(expected)


def test_loop_items_contribute_their_own_diffs():
    record = events.collect([{"event": "runner_on_ok", "event_data": {
        "host": "n1", "role": "r", "task": "t", "task_action": "ansible.builtin.copy",
        "res": {"changed": True, "results": [
            {"changed": True, "diff": [{"before": "1\n", "after": "2\n"}]},
            {"changed": False, "diff": [{"before": "3\n", "after": "4\n"}]}]}}}])["n1"]["changed"][0]
    assert len(record["diff"]) == 1 and "+2" in record["diff"][0]


def test_a_no_log_task_that_would_change_is_named_without_what_it_holds():
    # Its result is censored down to a note without "changed"; the line the callback printed says it.
    host = report_of("no-log-tasks.json")["hosts"]["localhost"]
    assert [(r["task"], r["diff"]) for r in host["changed"]] == [("A file that holds a secret, drifted", [])]
    assert host["status"] == "drift" and host["stats"]["changed"] == 1
    assert "secret-value" not in reports.to_json(report_of("no-log-tasks.json"))
