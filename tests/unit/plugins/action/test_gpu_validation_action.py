# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_validation action: the gpu_validate role's thresholds check and gate, over module_utils.decide.gpu_validation,
on the controller (the verdicts on recorded H200 figures are tested on module_utils.decide.gpu_validation itself)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
from unittest import mock

import pytest
import yaml

from ansible.errors import AnsibleActionFail
from conftest import REPO_ROOT, run_action
from ansible_collections.aistack.gpu_node.plugins.action.gpu_validation import ActionModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.multi_gpu_env import MULTICAST_OFF_ENV
from ansible_collections.aistack.gpu_node.plugins.plugin_utils import gpu_validate_catalogues

REFERENCE = {"NVIDIA H200": {"gemm_bf16_tflops": 784, "gemm_fp16_tflops": 784, "copy_gbps": 4800, "fused_adamw_ms": 1.71}}
MIN_FRACTION = {"gemm_bf16_tflops": 0.85, "gemm_fp16_tflops": 0.85, "copy_gbps": 0.6, "fused_adamw_ms": 0.6}
with open(os.path.join(REPO_ROOT, "roles", "gpu_validate", "vars", "gpu_catalogue.yml")) as _handle:
    CATALOGUE = yaml.safe_load(_handle)["__gpu_validate_catalogue"]


def run(tmp_path, **overrides):
    args = dict(reference=REFERENCE, catalogue=CATALOGUE, min_fraction=MIN_FRACTION, min_amp_samples_per_s=1000,
                min_allreduce_busbw_gbps=40)
    args.update(overrides)
    return run_action(ActionModule, args, tmp_path, check_mode=True)


def test_thresholds_only_lists_no_problem_for_the_defaults(tmp_path):
    result = run(tmp_path)
    assert not result.get("failed") and result["changed"] is False
    assert result["problems"] == [] and "gate" not in result
    assert result["multicast_off_env"] == MULTICAST_OFF_ENV


def test_thresholds_only_names_each_bad_variable(tmp_path):
    result = run(tmp_path, min_allreduce_busbw_gbps="x")
    assert not result.get("failed")
    assert result["problems"] == ["gpu_validate_min_allreduce_busbw_gbps must be a number of at least 0, got 'x'"]


def test_gate_passes_skipped_through(tmp_path):
    result = run(tmp_path, results={"status": "skipped", "reason": "no GPU"})
    assert not result.get("failed") and result["changed"] is False
    assert result["gate"]["status"] == "skipped" and not result["gate"]["passed"]
    assert result["multicast_off_env"] == MULTICAST_OFF_ENV


def test_gate_refuses_bad_thresholds_naming_them(tmp_path):
    result = run(tmp_path, results={"status": "measured"}, min_amp_samples_per_s="fast")
    assert result["failed"]
    assert result["msg"].startswith("gpu_validate: bad input: gpu_validate_min_amp_samples_per_s must be a number")


def test_gate_refuses_figures_that_are_not_a_mapping(tmp_path):
    with pytest.raises(AnsibleActionFail, match="argument 'results' is of type str"):
        run(tmp_path, results="not json")


def test_expectations_are_judged_when_the_gpus_are_given(tmp_path):
    gpus = [{"index": 0, "name": "NVIDIA H200", "uuid": "GPU-33ea3011-d795-9321-b26f-fa72c6fe6db3", "memory_total_mib": 143771}]
    result = run(tmp_path, gpus=gpus, expect={"count": 2})
    assert not result.get("failed") and "gate" not in result
    assert result["expectation"]["failed"] == ["node count: FAILED 1 GPUs (expected 2 GPU(s) (gpu_validate_expect.count), "
                                               "found 1: missing GPU index 1)"]
    refused = run(tmp_path, gpus=gpus, expect={"count": "two"})
    assert refused["failed"] and "gpu_validate_expect.count must be a whole number" in refused["msg"]


# The role's whole input check (issue 37 item 7): one task where preflight.yml ran two include_vars, this action, the
# gpu_health input check and an assert; the role's catalogues read by the action, the assert's message word for word.
HEALTH_CATALOGUE = gpu_validate_catalogues.load("health")


def check_input(tmp_path, node=None, task_vars=None, register=None, **overrides):
    """The preflight task's arguments (no catalogue: the action reads the role's), the node's gpu_health mocked."""
    args = dict(reference={}, min_fraction=MIN_FRACTION, min_amp_samples_per_s=1000, min_allreduce_busbw_gbps=40,
                unknown_gpu="warn", expect={}, python="", dataloader={"num_workers": 4},
                health={"dcgm_diag_level": 0, "dcgm_install_planned": False, "fail_class": "REBOOT"})
    args.update(overrides)
    with mock.patch.object(ActionModule, "_execute_module", return_value=node or {"problems": []}) as execute:
        result = run_action(ActionModule, args, tmp_path, check_mode=True, task_vars=task_vars, register=register)
    return result, execute


def test_the_input_check_reads_the_role_catalogues_and_passes_the_defaults_without_the_node(tmp_path):
    result, execute = check_input(tmp_path)
    assert not result.get("failed") and result["changed"] is False
    assert result["problems"] == [] and result["multicast_off_env"] == MULTICAST_OFF_ENV
    execute.assert_not_called()
    # The key rests on the catalogues the action read: the same as given explicitly.
    given, _execute = check_input(tmp_path, catalogue=CATALOGUE,
                                  health={"catalogue": HEALTH_CATALOGUE, "dcgm_diag_level": 0, "fail_class": "REBOOT"})
    assert given["inputs_key"] == result["inputs_key"]


@pytest.mark.parametrize("overrides, message", [
    (dict(python="python3"), "gpu_validate: bad input: gpu_validate_python must be an absolute path or empty, got python3"),
    (dict(dataloader={"num_workers": 0}), "gpu_validate: bad input: gpu_validate_dataloader.num_workers must be at least 1: "
                                          "the step checks a DataLoader with workers"),
    (dict(min_amp_samples_per_s="fast"), "gpu_validate: bad input: gpu_validate_min_amp_samples_per_s must be a number of "
                                         "at least 0, got 'fast'"),
    (dict(health={"fail_class": "SOMETIMES"}), "gpu_validate: bad input: gpu_validate_health_fail_class must be one of"),
])
def test_the_input_check_refuses_bad_input_with_the_role_message(tmp_path, overrides, message):
    result, execute = check_input(tmp_path, **overrides)
    assert result["failed"] and result["msg"].startswith(message)
    execute.assert_not_called()


def test_every_problem_is_named_in_the_assert_order(tmp_path):
    result, _execute = check_input(tmp_path, min_allreduce_busbw_gbps="x", python="bin/python", dataloader={"num_workers": 0},
                                   health={"fail_class": "SOMETIMES"})
    assert result["failed"]
    problems = result["msg"][len("gpu_validate: bad input: "):].split(" | ")
    assert problems[0].startswith("gpu_validate_min_allreduce_busbw_gbps must be a number")
    assert problems[1].startswith("gpu_validate_health_fail_class must be one of")
    assert problems[2:] == ["gpu_validate_python must be an absolute path or empty, got bin/python",
                            "gpu_validate_dataloader.num_workers must be at least 1: the step checks a DataLoader with workers"]


def test_a_dcgm_level_asks_the_node_and_its_problem_is_refused(tmp_path):
    missing = ("gpu_validate_dcgm_diag_level is 1 but dcgmi is not installed on the node: install DCGM "
               "(datacenter-gpu-manager) or set gpu_validate_dcgm_diag_level: 0")
    result, execute = check_input(tmp_path, node={"changed": False, "problems": [missing]},
                                  health={"dcgm_diag_level": 1, "dcgm_install_planned": False, "fail_class": "REBOOT"})
    assert result["failed"] and result["msg"] == "gpu_validate: bad input: " + missing
    execute.assert_called_once()
    called = execute.call_args.kwargs
    assert called["module_name"] == "aistack.gpu_node.gpu_health"
    assert called["module_args"] == dict(catalogue=HEALTH_CATALOGUE, dcgm_diag_level=1, dcgm_install_planned=False,
                                         fail_class="REBOOT", scan=False)


def test_a_node_that_fails_the_health_check_fails_the_task(tmp_path):
    result, _execute = check_input(tmp_path, node={"failed": True, "msg": "no python on the node"},
                                   health={"dcgm_diag_level": 2})
    assert result["failed"] and result["msg"] == "no python on the node"


def test_the_input_check_is_handed_back_once_without_asking_the_node_again(tmp_path):
    health = {"dcgm_diag_level": 1, "dcgm_install_planned": True, "fail_class": "REBOOT"}
    first, execute = check_input(tmp_path, register="__thresholds", health=health)
    assert first["reused"] is False and execute.call_count == 1 and first["problems"] == []
    again, execute = check_input(tmp_path, register="__thresholds", health=health, task_vars={"__thresholds": first})
    assert again["reused"] is True and again["multicast_off_env"] == MULTICAST_OFF_ENV
    execute.assert_not_called()
    other, execute = check_input(tmp_path, register="__thresholds", health=dict(health, dcgm_diag_level=2),
                                 task_vars={"__thresholds": first})
    assert other["reused"] is False and execute.call_count == 1


def test_the_judgements_read_the_role_catalogue_when_given_none(tmp_path):
    results = {"status": "skipped", "reason": "no GPU"}
    args = dict(reference=REFERENCE, min_fraction=MIN_FRACTION, min_amp_samples_per_s=1000, min_allreduce_busbw_gbps=40,
                results=results)
    assert run_action(ActionModule, args, tmp_path)["gate"] == run(tmp_path, results=results)["gate"]


def test_the_interpreter_is_checked_again_when_the_decision_is_handed_back(tmp_path):
    # site.yml's preflight play checks an empty interpreter; the role's run then gets conda_env's.
    first, _execute = check_input(tmp_path, register="__thresholds", python="")
    again, _execute = check_input(tmp_path, register="__thresholds", python="/opt/conda/envs/torch/bin/python",
                                  task_vars={"__thresholds": first})
    assert again["reused"] is True and not again.get("failed")
    bad, _execute = check_input(tmp_path, register="__thresholds", python="bin/python", task_vars={"__thresholds": first})
    assert bad["reused"] is True and bad["failed"]
    assert bad["msg"] == "gpu_validate: bad input: gpu_validate_python must be an absolute path or empty, got bin/python"
