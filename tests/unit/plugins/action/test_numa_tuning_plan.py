# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The numa_tuning_plan action: which node reads and runs each stage makes, and how it hands the
refusals and decisions of decide/numa_tuning.py (tested there) to the role."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import json
import os
from unittest import mock

import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.template import Templar

from conftest import REPO_ROOT
from ansible_collections.aistack.gpu_node.plugins.action.numa_tuning_plan import ActionModule

with open(os.path.join(REPO_ROOT, "tests", "gpu", "results", "h100-80gb-hbm3", "numa.json")) as _handle:
    H100 = json.load(_handle)["plan"]
with open(os.path.join(REPO_ROOT, "roles", "numa_tuning", "defaults", "main.yml")) as _handle:
    DEFAULTS = yaml.safe_load(_handle)
PREFIX = "/opt/conda/envs/torch"
PROOF = PREFIX + "/etc/aistack/numa_tuning-proof.json"


class Node(object):
    """The modules the action runs, answering from functions of their arguments; every call kept."""

    def __init__(self, **answers):
        fresh = {"aistack.gpu_node.numa_facts": lambda args: {
            "ansible_facts": {"aistack_numa": copy.deepcopy(H100)}, "proof": {"recorded": None, "state": None}}}
        self.answers = dict(fresh, **dict((name.replace("__", "."), answer) for name, answer in answers.items()))
        self.calls = []

    def __call__(self, module_name=None, module_args=None, task_vars=None):
        self.calls.append((module_name, module_args))
        return self.answers[module_name](module_args)


def variables(**settings):
    values = dict(DEFAULTS, numa_tuning_env_prefix=PREFIX, numa_tuning_launcher_path=PREFIX + "/bin/aistack-numa-launch",
                  inventory_hostname="gpu1", __numa_tuning_conda_script="aistack-numa.sh",
                  __numa_tuning_hook=PREFIX + "/bin/aistack-numa-env.sh", __numa_tuning_proof_path=PROOF)
    values.update(("numa_tuning_" + name, value) for name, value in settings.items())
    return values


def run(args, node=None, task_vars=None, check_mode=False):
    node = node or Node()
    task_vars = task_vars if task_vars is not None else variables()
    task = mock.MagicMock(args=args, async_val=0, check_mode=check_mode, action="aistack.gpu_node.numa_tuning_plan")
    action = ActionModule(task, mock.MagicMock(), PlayContext(), DataLoader(), Templar(loader=DataLoader(), variables=task_vars),
                          mock.MagicMock())
    with mock.patch.object(ActionModule, "_execute_module", side_effect=node):
        return action.run(task_vars=task_vars), node


def test_bad_input_is_refused_before_the_node_is_read():
    result, node = run(dict(env_ready=True), task_vars=variables(threads_per_gpu=-2))
    assert result["failed"] and result["msg"].startswith("numa_tuning: bad input.") and node.calls == []
    result, node = run(dict(env_ready=False), task_vars=variables(env_prefix="", env_extra={"A-B": "1"}))
    assert result["failed"] and node.calls == []


def test_no_env_and_no_host_knobs_read_nothing():
    result, node = run(dict(env_ready=False), task_vars=variables(env_prefix=""))
    assert not result.get("failed") and node.calls == [] and "ansible_facts" not in result


def test_host_knobs_without_an_env_read_the_node_without_a_prefix():
    result, node = run(dict(env_ready=False), task_vars=variables(env_prefix="", host=True))
    assert node.calls == [("aistack.gpu_node.numa_facts", {"threads_per_gpu": 0, "session_affinity": False})]
    assert result["host"] == {"writable": True, "facts_args": {"threads_per_gpu": 0, "session_affinity": False}}
    assert "env" not in result and result["ansible_facts"]["aistack_numa"] == H100


def test_an_env_is_read_with_its_record_and_decided():
    result, node = run(dict(env_ready=True))
    assert node.calls == [("aistack.gpu_node.numa_facts", {"threads_per_gpu": 0, "session_affinity": False,
                                                           "env_prefix": PREFIX, "proof_path": PROOF})]
    assert result["type"] == "conda" and result["env"] == {"OMP_NUM_THREADS": "16", "MKL_NUM_THREADS": "16"}
    assert result["lines"][0] == "NUMA nodes: ['0-15'] (SMT False)"
    assert result["check"]["launcher"] and result["check"]["gpu0"] == H100["plan"][0]
    assert result["proven"] is False and result["proven_launcher"] is None and "host" not in result
    assert not result["changed"]


def test_a_record_of_this_check_on_the_node_as_it_is_proves_the_run():
    check = run(dict(env_ready=True))[0]["check"]
    state = {"files": {PREFIX + "/bin/aistack-numa-launch": "a" * 64}, "allowed": {"Cpus_allowed_list": "0-15"}, "numactl": ""}
    recorded = {"key": check["key"], "state": state, "launcher": "launched 16"}
    node = Node(aistack__gpu_node__numa_facts=lambda args: {
        "ansible_facts": {"aistack_numa": H100}, "proof": {"recorded": recorded, "state": state}})
    result = run(dict(env_ready=True), node)[0]
    assert result["proven"] is True and result["proven_launcher"] == "launched 16"


def test_the_node_refusals_carry_the_roles_messages():
    node = Node(aistack__gpu_node__numa_facts=lambda args: {"failed": True, "msg": "env_prefix /opt/x is not a directory"})
    result = run(dict(env_ready=True), node, variables(env_prefix="/opt/x"))[0]
    assert result["msg"] == "numa_tuning: numa_tuning_env_prefix /opt/x: env_prefix /opt/x is not a directory"
    result = run(dict(env_ready=True), task_vars=variables(threads_per_gpu=100000))[0]
    assert result["failed"] and result["msg"].startswith("numa_tuning: numa_tuning_threads_per_gpu is 100000, more than the 16 CPUs of gpu1")
    result = run(dict(env_ready=True), task_vars=variables(env_type="venv"))[0]
    assert result["failed"] and result["msg"].startswith("numa_tuning: numa_tuning_env_prefix %s is not a venv Python env" % PREFIX)
    assert "ansible_facts" not in result


def test_the_check_stage_runs_the_check_once_and_hands_back_what_to_record():
    check = run(dict(env_ready=True))[0]["check"]
    stdout = "\n".join(["allowed Cpus_allowed_list:\t0-15", "numactl /usr/bin/numactl", "digest %s  /usr/bin/numactl" % ("c" * 64),
                        "active MKL_NUM_THREADS=16", "active OMP_NUM_THREADS=16",
                        "restored MKL_NUM_THREADS=aistack-sentinel", "restored OMP_NUM_THREADS=aistack-sentinel",
                        "launched 16", "launched Cpus_allowed_list:\t0-15"])
    node = Node(ansible__legacy__command=lambda args: {"rc": 0, "stdout": stdout, "stderr": ""})
    result, node = run(dict(stage="check", check=check), node)
    assert node.calls == [("ansible.legacy.command", {"argv": ["bash", "-c", check["script"]]})]
    assert result["launcher"] == "launched 16 | launched Cpus_allowed_list:\t0-15"
    assert result["proof"] == {"key": check["key"], "launcher": result["launcher"], "state": {
        "files": {"/usr/bin/numactl": "c" * 64}, "numactl": "/usr/bin/numactl", "allowed": {"Cpus_allowed_list": "0-15"}}}


def test_the_check_stage_fails_on_what_disagrees_or_on_the_shell():
    check = run(dict(env_ready=True))[0]["check"]
    node = Node(ansible__legacy__command=lambda args: {"rc": 0, "stdout": "active OMP_NUM_THREADS=64", "stderr": ""})
    result = run(dict(stage="check", check=check), node)[0]
    assert result["failed"] and result["msg"].startswith("numa_tuning: activation of %s did not set/restore" % PREFIX)
    node = Node(ansible__legacy__command=lambda args: {"rc": 1, "failed": True, "msg": "non-zero return code", "stdout": "",
                                                       "stderr": "no such file", "_ansible_no_log": False})
    result = run(dict(stage="check", check=check), node)[0]
    assert result["failed"] and result["msg"] == "non-zero return code" and result["stderr"] == "no such file"


HOST = {"writable": True, "facts_args": {"threads_per_gpu": 0, "session_affinity": False}}
KNOBS = {"numa_balancing": "1", "thp": "never", "governor": None}


def host_stage(result, host=None, check_mode=False, node=None, **settings):
    task_vars = dict(variables(host=True, **settings), ansible_facts={"aistack_numa": H100})
    return run(dict(stage="host", host=host or HOST, result=result), node, task_vars, check_mode)


def test_no_write_is_judged_on_the_knobs_preflight_read():
    result, node = host_stage({"changed": False, "knobs": KNOBS, "left_alone": {"governor": "no cpufreq"}})
    assert node.calls == [] and not result.get("failed")
    assert result["published"] == {"applied": True, "state": "present", "reason": None, "changed": False, "knobs": KNOBS,
                                   "left_alone": {"governor": "no cpufreq"}}


def test_a_write_is_read_back_and_a_knob_the_kernel_does_not_hold_fails():
    result, node = host_stage({"changed": True, "knobs": dict(KNOBS, numa_balancing="0")})
    assert [name for name, _args in node.calls] == ["aistack.gpu_node.numa_facts"] and node.calls[0][1] == HOST["facts_args"]
    assert result["failed"] and result["msg"] == "numa_tuning: numa_balancing is 1 after numa_tuning_host_state=present, expected 0"
    # a knob changed by hand under an active tuned profile: the module changed nothing, the kernel disagrees
    result, node = host_stage({"changed": False, "knobs": dict(KNOBS, thp="madvise")}, host_state="present")
    assert node.calls == [] and result["msg"] == "numa_tuning: thp is never after numa_tuning_host_state=present, expected madvise"


def test_read_only_knobs_and_check_mode_only_publish():
    result, node = host_stage({"changed": False, "skipped": True}, host=dict(HOST, writable=False))
    assert node.calls == [] and result["published"] == {
        "applied": False, "state": "present", "reason": "the kernel knobs are read-only here (a container)", "changed": False,
        "knobs": {}, "left_alone": {}}
    result, node = host_stage({"changed": True, "knobs": dict(KNOBS, numa_balancing="0")}, check_mode=True)
    assert node.calls == [] and result["published"]["changed"] is True and not result.get("failed")
