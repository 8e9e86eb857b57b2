# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""numa_tuning's activation and launcher check as the role builds it (decide/numa_tuning.py), run in a
real bash on the role's own rendered activation scripts and launcher, fed the H100 host's recorded
numa_facts: a good env passes, a tampered one is refused with the role's message, and the node state
the check records is what numa_facts reads again (probe/numa_proof.py), so a record proves the next run."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import json
import os
import subprocess
import sys

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from conftest import REPO_ROOT
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import numa_tuning as nt
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.numa_proof import read_proof

TEMPLATES = os.path.join(REPO_ROOT, "roles", "numa_tuning", "templates")
with open(os.path.join(REPO_ROOT, "tests", "gpu", "results", "h100-80gb-hbm3", "numa.json")) as _handle:
    H100 = json.load(_handle)["plan"]
CONDA_SCRIPT = "aistack-numa.sh"


def _allowed_cpus():
    with open("/proc/self/status") as handle:
        return nt.allowed_lists(handle.read().splitlines())["Cpus_allowed_list"]


def render(name, **variables):
    with open(os.path.join(TEMPLATES, name)) as handle:
        text = handle.read()
    variables.setdefault("ansible_managed", "Ansible managed")
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(text))


def write(path, text, mode=0o644):
    if not os.path.isdir(os.path.dirname(path)):
        os.makedirs(os.path.dirname(path))
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, mode)


@pytest.fixture
def node(tmp_path, monkeypatch):
    """A conda env with the role's scripts and launcher for the H100's plan (its CPU slice set to the CPUs this
    test may use, so that the binding checks), and a numactl on PATH that only runs the command."""
    facts = copy.deepcopy(H100)
    facts["plan"][0]["cpus"] = _allowed_cpus()
    prefix = str(tmp_path / "env")
    env = nt.session_env(facts, {"AISTACK_EXTRA": "x y"})
    variables = dict(numa_tuning_env=env, numa_tuning_env_prefix=prefix, __numa_tuning_marker="marker",
                     numa_tuning_launcher_path=prefix + "/bin/aistack-numa-launch", numa_tuning_disable_nvls=True,
                     ansible_facts={"aistack_numa": facts})
    for script in ("activate", "deactivate"):
        write("%s/etc/conda/%s.d/%s" % (prefix, script, CONDA_SCRIPT),
              render("numa-env.sh.j2", __numa_tuning_script=script, **variables))
    write(prefix + "/bin/aistack-numa-launch", render("aistack-numa-launch.j2", **variables), 0o755)
    tools = tmp_path / "tools"
    write(str(tools / "numactl"), '#!/bin/sh\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n', 0o755)
    monkeypatch.setenv("PATH", "%s%s%s" % (tools, os.pathsep, os.environ["PATH"]))
    check = nt.check_plan(env, facts, prefix, "conda", CONDA_SCRIPT, prefix + "/bin/aistack-numa-env.sh",
                          prefix + "/bin/aistack-numa-launch")
    return dict(prefix=prefix, check=check, env=env, numactl=str(tools / "numactl"))


def run(check):
    done = subprocess.run(["bash", "-c", check["script"]], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    return done.returncode, done.stdout.splitlines(), done.stderr


def test_a_converged_env_passes_and_its_record_is_what_numa_facts_reads_again(node, tmp_path):
    rc, lines, stderr = run(node["check"])
    assert rc == 0, stderr
    assert nt.check_failure(node["check"], lines, stderr) is None
    assert nt.launcher_shown(lines, stderr.splitlines()).startswith("launched 16 | launched Cpus_allowed_list:")
    state = nt.check_state(lines, True)
    assert state["numactl"] == node["numactl"]
    assert sorted(state["files"]) == sorted(["%s/etc/conda/activate.d/%s" % (node["prefix"], CONDA_SCRIPT),
                                             "%s/etc/conda/deactivate.d/%s" % (node["prefix"], CONDA_SCRIPT),
                                             node["prefix"] + "/bin/aistack-numa-launch", node["numactl"]])
    record = tmp_path / "proof.json"
    record.write_text(json.dumps(dict(key=node["check"]["key"], state=state)))
    found = read_proof(str(record))
    assert nt.proof_holds(node["check"], found["recorded"], found["state"])


def test_a_script_changed_by_hand_is_refused_and_no_longer_matches_the_record(node, tmp_path):
    state = nt.check_state(run(node["check"])[1], True)
    activate = "%s/etc/conda/activate.d/%s" % (node["prefix"], CONDA_SCRIPT)
    with open(activate) as handle:
        text = handle.read()
    write(activate, text.replace("OMP_NUM_THREADS=16", "OMP_NUM_THREADS=64"))
    rc, lines, stderr = run(node["check"])
    assert rc == 0, stderr
    assert nt.check_failure(node["check"], lines, stderr) == (
        "numa_tuning: activation of %s did not set/restore %s: %s" % (node["prefix"], node["env"], lines))
    record = tmp_path / "proof.json"
    record.write_text(json.dumps(dict(key=node["check"]["key"], state=state)))
    found = read_proof(str(record))
    assert not nt.proof_holds(node["check"], found["recorded"], found["state"])


def test_a_launcher_that_binds_elsewhere_is_refused(node):
    launcher = node["prefix"] + "/bin/aistack-numa-launch"
    with open(launcher) as handle:
        text = handle.read()
    write(launcher, text.replace("exec numactl", "exec taskset -c 0 numactl"), 0o755)
    if subprocess.call(["sh", "-c", "command -v taskset"], stdout=subprocess.DEVNULL) != 0 or _allowed_cpus() == "0":
        pytest.skip("no taskset here, or CPU 0 is all this test may use")
    rc, lines, stderr = run(node["check"])
    assert rc == 0, stderr
    assert nt.check_failure(node["check"], lines, stderr).startswith("numa_tuning: the launcher ran ['16', 'Cpus_allowed_list:")


def test_a_missing_script_fails_the_shell(node):
    os.remove("%s/etc/conda/deactivate.d/%s" % (node["prefix"], CONDA_SCRIPT))
    rc, _lines, stderr = run(node["check"])
    assert rc != 0 and "deactivate.d" in stderr


def test_a_venv_whose_activate_wraps_deactivate(tmp_path):
    prefix = str(tmp_path / "venv")
    subprocess.check_call([sys.executable, "-m", "venv", "--without-pip", prefix])
    env = {"OMP_NUM_THREADS": "4", "MKL_NUM_THREADS": "4"}
    hook = prefix + "/bin/aistack-numa-env.sh"
    write(hook, render("numa-env.sh.j2", __numa_tuning_script="venv", numa_tuning_env=env, numa_tuning_env_prefix=prefix,
                       __numa_tuning_marker="marker"))
    with open(prefix + "/bin/activate", "a") as handle:
        handle.write('. "%s"\n' % hook)
    check = nt.check_plan(env, H100, prefix, "venv", CONDA_SCRIPT, hook, None)
    rc, lines, stderr = run(check)
    assert rc == 0, stderr
    assert nt.check_failure(check, lines, stderr) is None
    state = nt.check_state(lines, False)
    assert sorted(state["files"]) == sorted([hook, prefix + "/bin/activate"]) and "numactl" not in state
