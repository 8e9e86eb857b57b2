# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""numa_tuning's refusals and decisions (decide/numa_tuning.py), fed the numa_facts the H100 host
returned (tests/gpu/results); the messages are the role's, word for word (tests/bad_inputs.yml and
the molecule scenarios look for them). The check's script runs in bash in tests/unit/roles/test_numa_check_script.py."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import json
import os

import pytest

from conftest import REPO_ROOT
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import numa_tuning as nt

with open(os.path.join(REPO_ROOT, "tests", "gpu", "results", "h100-80gb-hbm3", "numa.json")) as _handle:
    H100 = json.load(_handle)["plan"]
BAD_INPUT = ("numa_tuning: bad input. numa_tuning_env_prefix and numa_tuning_launcher_path must be absolute paths, "
             "numa_tuning_threads_per_gpu an integer >= 0 (0 derives it), numa_tuning_env_extra a mapping of shell "
             "variable names.")
GOOD = dict(env_prefix="/opt/conda/envs/torch", threads_per_gpu=0, env_extra={"HF_HOME": "/data/hf"},
            launcher_path="/opt/conda/envs/torch/bin/aistack-numa-launch")


def facts(**changes):
    value = copy.deepcopy(H100)
    value.update(changes)
    return value


def test_good_input_and_an_empty_prefix_pass():
    assert nt.input_problem(GOOD) is None
    assert nt.input_problem(dict(GOOD, env_prefix="", launcher_path="/bin/aistack-numa-launch")) is None


@pytest.mark.parametrize("change", [
    dict(env_prefix="opt/torch/.venv"),
    dict(launcher_path="bin/aistack-numa-launch"),
    dict(threads_per_gpu=-2),
    dict(env_extra={"OMP-NUM-THREADS": "4"}),
    dict(env_extra={"1ST": "4"}),
])
def test_bad_input_is_refused_with_the_roles_message(change):
    assert nt.input_problem(dict(GOOD, **change)) == BAD_INPUT


def test_a_prefix_numa_facts_refused_is_named_under_the_roles_variable():
    assert nt.unread_refusal("/opt/nothing-here", {"failed": True, "msg": "env_prefix /opt/nothing-here is not a directory"}) == (
        "numa_tuning: numa_tuning_env_prefix /opt/nothing-here: env_prefix /opt/nothing-here is not a directory")
    assert nt.unread_refusal("/opt/env", {"ansible_facts": {"aistack_numa": H100}}) is None


def test_threads_up_to_the_nodes_cpus_pass_and_beyond_are_refused():
    assert nt.threads_refusal(16, H100, "gpu1") is None
    assert nt.threads_refusal(0, H100, "gpu1") is None
    assert nt.threads_refusal(100000, H100, "gpu1") == (
        "numa_tuning: numa_tuning_threads_per_gpu is 100000, more than the 16 CPUs of gpu1; give at most that, or 0 to "
        "derive it from the GPU's NUMA node.")


def test_the_env_type_is_the_one_asked_else_the_one_found():
    assert nt.env_type("auto", H100) == "conda"
    assert nt.env_type("venv", H100) == "venv"
    assert nt.env_type("auto", facts(env={"type": None, "python": True})) == "unknown"


@pytest.mark.parametrize("requested, env", [
    ("auto", {"type": None, "python": True, "activate": False}),
    ("venv", {"type": "conda", "python": True, "activate": False}),
    ("auto", {"type": "conda", "python": False, "activate": False}),
])
def test_a_prefix_that_is_no_python_env_of_that_type_is_refused(requested, env):
    found = facts(env=dict(env, prefix="/opt/x"))
    assert nt.env_refusal("/opt/x", requested, nt.env_type(requested, found), found) == (
        "numa_tuning: numa_tuning_env_prefix /opt/x is not a %s Python env: expected bin/python and conda-meta/ (conda) "
        "or pyvenv.cfg and bin/activate (venv). Create the env first, or set numa_tuning_env_type." % requested)


def test_conda_and_a_venv_with_bin_activate_are_envs():
    assert nt.env_refusal("/opt/conda/envs/torch", "auto", "conda", H100) is None
    venv = facts(env={"type": "venv", "python": True, "activate": True})
    assert nt.env_refusal("/opt/torch/.venv", "auto", "venv", venv) is None


def test_the_extra_variables_override_the_thread_variables():
    assert nt.session_env(H100, {"OMP_NUM_THREADS": "8", "HF_HOME": "/data"}) == {
        "OMP_NUM_THREADS": "8", "MKL_NUM_THREADS": "16", "HF_HOME": "/data"}


def test_the_plan_is_shown_as_the_role_showed_it():
    assert nt.plan_lines(H100, {"OMP_NUM_THREADS": "16"}) == [
        "NUMA nodes: ['0-15'] (SMT False)",
        "GPUs: [{'cpus': '0-15', 'index': 0, 'numa_node': 0, 'threads': 16}]",
        "OpenMP in the env: gnu",
        "Activation env: {'OMP_NUM_THREADS': '16'}",
        "sysfs and nvidia-smi topo -m agree",
    ]
    bare = facts(openmp={"runtimes": [], "libraries": []}, messages=["GPU0: sysfs says 0, topo -m 1"])
    assert nt.plan_lines(bare, {})[2:] == ["OpenMP in the env: none found", "Activation env: {}", "GPU0: sysfs says 0, topo -m 1"]


def test_the_knobs_are_written_where_the_kernel_lets_or_the_setting_says():
    assert nt.host_writable(None, H100["host"]) is True
    read_only = {"numa_balancing": {"writable": False}, "thp": {"writable": False}}
    assert nt.host_writable(None, read_only) is False
    assert nt.host_writable(True, read_only) is True and nt.host_writable(False, H100["host"]) is False


def test_the_kernel_must_hold_each_value_the_module_reported():
    assert nt.host_failures({"numa_balancing": "1", "thp": "never", "governor": None}, H100["host"], "present") is None
    assert nt.host_failures({}, H100["host"], "present") is None
    assert nt.host_failures({"numa_balancing": "0", "thp": "madvise"}, H100["host"], "absent") == (
        "numa_tuning: numa_balancing is 1 after numa_tuning_host_state=absent, expected 0; "
        "numa_tuning: thp is never after numa_tuning_host_state=absent, expected madvise")


# -- the check ---------------------------------------------------------------------------------------

PREFIX = "/opt/conda/envs/torch"
LAUNCHER = PREFIX + "/bin/aistack-numa-launch"
ENV = {"OMP_NUM_THREADS": "16", "MKL_NUM_THREADS": "16", "hf_home": "/data/hf"}


def check(launcher=LAUNCHER, found=H100, env=None):
    return nt.check_plan(env or ENV, found, PREFIX, "conda", "aistack-numa.sh", PREFIX + "/bin/aistack-numa-env.sh", launcher)


def printed(env=None, launched=("16", "Cpus_allowed_list:\t0-15")):
    names = ["hf_home", "MKL_NUM_THREADS", "OMP_NUM_THREADS"]  # Jinja's case-blind order
    env = env or ENV
    return (["active %s=%s" % (name, env[name]) for name in names]
            + ["restored %s=aistack-sentinel" % name for name in names]
            + ["launched %s" % line for line in launched])


def test_the_check_sources_the_scripts_and_runs_the_launcher_in_one_bash():
    script = check()["script"]
    assert script.startswith("set -eo pipefail\n")
    assert ". %s/etc/conda/activate.d/aistack-numa.sh\n" % PREFIX in script
    assert ". %s/etc/conda/deactivate.d/aistack-numa.sh\n" % PREFIX in script
    assert "%s --gpu 0 sh -c" % LAUNCHER in script and "unset hf_home MKL_NUM_THREADS OMP_NUM_THREADS\n" in script
    assert "launch" not in check(launcher=None)["script"]
    assert nt.check_files(PREFIX, "venv", "aistack-numa.sh", PREFIX + "/bin/hook.sh", None) == [
        PREFIX + "/bin/hook.sh", PREFIX + "/bin/activate"]


def test_paths_are_quoted_for_the_shell():
    plan = nt.check_plan({"A": "1"}, H100, "/opt/my env", "venv", "x.sh", "/opt/my env/bin/hook's.sh", None)
    assert ". '/opt/my env/bin/activate'\n" in plan["script"]
    assert "sha256sum -- '/opt/my env/bin/hook'\"'\"'s.sh' '/opt/my env/bin/activate' | sed" in plan["script"]


def test_what_the_plan_asks_passes():
    assert nt.check_failure(check(), printed(), "") is None
    # unbound (no numactl): the threads alone count
    assert nt.check_failure(check(), printed(launched=("16", "Cpus_allowed_list:\t0-63")),
                            "aistack-numa-launch: numactl not found; running unbound (GPU 0, NUMA node 0)") is None
    assert nt.check_failure(check(launcher=None), printed()[:6], "") is None


def test_a_value_not_set_or_not_restored_is_refused_with_the_roles_message():
    lines = printed(env=dict(ENV, OMP_NUM_THREADS="64"))
    assert nt.check_failure(check(), lines, "") == (
        "numa_tuning: activation of %s did not set/restore %s: %s" % (PREFIX, ENV, lines))
    lines = printed()
    lines[3] = "restored hf_home="
    assert nt.check_failure(check(), lines, "").startswith("numa_tuning: activation of %s did not set/restore" % PREFIX)


@pytest.mark.parametrize("launched, stderr", [
    (("8", "Cpus_allowed_list:\t0-15"), ""),           # wrong thread count
    (("16", "Cpus_allowed_list:\t0-7"), ""),           # bound to another slice
    (("16",), ""),                                     # the CPU line is missing
    (("sixteen", "Cpus_allowed_list:\t0-15"), ""),
])
def test_a_launcher_that_strays_from_the_plan_is_refused_with_the_roles_message(launched, stderr):
    gpu0 = H100["plan"][0]
    assert nt.check_failure(check(), printed(launched=launched), stderr) == (
        "numa_tuning: the launcher ran %s / %s; plan %s" % (list(launched), stderr, gpu0))


def test_a_bound_launcher_needs_a_known_numa_node():
    unknown = facts(plan=[dict(H100["plan"][0], numa_node=-1)])
    assert nt.check_failure(check(found=unknown), printed(), "").startswith("numa_tuning: the launcher ran")
    gpu_less = facts(plan=[])
    assert nt.check_failure(check(found=gpu_less), printed(), "").endswith("plan None")
    assert nt.check_failure(check(found=gpu_less), printed(), "x: no NUMA node known for GPU '0'; running unbound") is None


def test_the_key_changes_with_the_script_and_with_what_it_is_judged_by():
    keys = {check()["key"], check(launcher=None)["key"], check(env=dict(ENV, OMP_NUM_THREADS="8"))["key"],
            check(found=facts(session_threads=8))["key"]}
    assert len(keys) == 4 and check()["key"] == check()["key"]


def test_the_state_the_check_printed():
    digest = "a" * 64
    lines = ["allowed Cpus_allowed_list:\t0-15", "allowed Mems_allowed_list:\t0", "numactl /usr/bin/numactl",
             "digest %s  %s" % (digest, LAUNCHER), "digest \\%s  /odd\\\\path" % digest] + printed()
    assert nt.check_state(lines, True) == {
        "files": {LAUNCHER: digest, "/odd\\\\path": digest}, "numactl": "/usr/bin/numactl",
        "allowed": {"Cpus_allowed_list": "0-15", "Mems_allowed_list": "0"}}
    assert nt.check_state(["numactl "], True)["numactl"] == ""
    assert "numactl" not in nt.check_state(lines, False)


def test_allowed_lists_of_a_status_file():
    status = "Name:\tbash\nCpus_allowed:\tffff\nCpus_allowed_list:\t0-15\nMems_allowed_list:\t0\n"
    assert nt.allowed_lists(status.splitlines()) == {"Cpus_allowed_list": "0-15", "Mems_allowed_list": "0"}


def test_a_record_proves_the_run_only_for_this_check_on_the_node_as_it_is():
    plan = check()
    state = {"files": {LAUNCHER: "a" * 64}, "numactl": "/usr/bin/numactl", "allowed": {"Cpus_allowed_list": "0-15"}}
    record = {"key": plan["key"], "state": state, "launcher": "launched 16"}
    assert nt.proof_holds(plan, record, copy.deepcopy(state))
    assert not nt.proof_holds(check(launcher=None), record, state)
    assert not nt.proof_holds(plan, record, dict(state, files={LAUNCHER: "b" * 64}))
    assert not nt.proof_holds(plan, record, dict(state, numactl=""))
    assert not nt.proof_holds(plan, record, dict(state, allowed={"Cpus_allowed_list": "0-7"}))
    assert not nt.proof_holds(plan, None, None)
    assert not nt.proof_holds(plan, {"key": plan["key"], "state": "x"}, "x")
