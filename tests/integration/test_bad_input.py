"""The bad-input catalogue (tests/bad_inputs.yml): its shape, and its site.yml cases.

The cases that run on a node are the molecule scenario bad_inputs. The site.yml cases run here,
in check mode on this machine, so that a refusal that came too late would show as predicted
changes (and still change nothing here): each must stop site.yml in the preflight play with an
error naming its variable or file and every expected string, and no provisioning play may start.
Each case is its own ansible-playbook run; the runs are started side by side (at most one per CPU), as
check-mode runs with their own inventory folders share nothing they could change.
"""

import json
import os

import pytest
import yaml
from conftest import REPO_ROOT, recap, run, run_all

CATALOGUE = os.path.join(REPO_ROOT, "tests", "bad_inputs.yml")
with open(CATALOGUE, encoding="utf-8") as handle:
    CASES = yaml.safe_load(handle)["cases"]
ROLES = sorted(os.listdir(os.path.join(REPO_ROOT, "roles")))
SITE_CASES = [case for case in CASES if case["runs_on"] == "controller"]


def test_catalogue_shape():
    """At least 40 cases across every role and site.yml, each naming what it feeds and expects."""
    ids = [case["id"] for case in CASES]
    assert len(ids) >= 40 and len(set(ids)) == len(ids)
    assert {case["target"] for case in CASES} == set(ROLES) | {"site.yml"}
    for case in CASES:
        assert set(case) <= {"id", "target", "runs_on", "names", "vars", "args", "inventory_groups", "tasks_from",
                             "expect"}, case["id"]
        assert case["names"] and case["expect"], case["id"]
        assert case["runs_on"] == ("controller" if case["target"] == "site.yml" else "node"), case["id"]
        assert "vars" in case or "args" in case or "inventory_groups" in case, case["id"]


def site_command(case, folder):
    inventory = "inventories/local/hosts.yml"
    if "inventory_groups" in case:
        inventory = str(folder / "hosts.yml")
        localhost = {"localhost": {"ansible_connection": "local",
                                   "ansible_python_interpreter": "{{ ansible_playbook_python }}"}}
        with open(inventory, "w", encoding="utf-8") as handle:
            yaml.safe_dump({"all": {"children": {group: {"hosts": localhost} for group in case["inventory_groups"]}}},
                           handle)
    args = ["ansible-playbook", "site.yml", "--check", "-i", inventory] + case.get("args", [])
    if "vars" in case:
        args += ["-e", json.dumps(case["vars"])]
    return args


@pytest.fixture(scope="module", name="site_runs")
def fixture_site_runs(tmp_path_factory):
    """Every site.yml case's run, each its own ansible-playbook process in check mode with its own inventory
    folder, started side by side (they share nothing they could change): {case id: CompletedProcess}."""
    return run_all({case["id"]: (site_command(case, tmp_path_factory.mktemp(case["id"])), None) for case in SITE_CASES})


@pytest.mark.parametrize("case", SITE_CASES, ids=[case["id"] for case in SITE_CASES])
def test_site_refuses(case, site_runs):
    proc = site_runs[case["id"]]
    counts = recap(proc.stdout)
    assert proc.returncode != 0, "accepted: site.yml passed with %s\n%s" % (case, proc.stdout)
    assert proc.returncode == 2, "not a refusal by a task (rc %d):\n%s" % (proc.returncode, proc.stdout + proc.stderr)
    assert sum(host["changed"] for host in counts.values()) == 0, proc.stdout
    assert "PLAY [Provision GPU nodes]" not in proc.stdout
    missing = [text for text in [case["names"]] + case["expect"] if text not in proc.stdout]
    assert not missing, "refused without %s in its message:\n%s" % (missing, proc.stdout + proc.stderr)


def test_declared_extra_group_is_accepted(tmp_path):
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        "all:\n  children:\n    gpu_nodes:\n      children:\n        rack_a:\n          hosts:\n            localhost:\n"
        "              ansible_connection: local\n              ansible_python_interpreter: '{{ ansible_playbook_python }}'\n")
    out = run(["ansible-playbook", "playbooks/preflight.yml", "-i", str(inventory), "--skip-tags", "conda",
               "-e", '{"aistack_extra_groups": ["rack_a"]}'], check=False).stdout
    assert recap(out)["localhost"]["failed"] == 0, out
