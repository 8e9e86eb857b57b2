# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_validation action: the gpu_validate role's thresholds check and gate, over module_utils.decide.gpu_validation,
on the controller (the verdicts on recorded H200 figures are tested on module_utils.decide.gpu_validation itself)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml

from ansible.errors import AnsibleActionFail
from conftest import REPO_ROOT, run_action
from ansible_collections.aistack.gpu_node.plugins.action.gpu_validation import ActionModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.multi_gpu_env import MULTICAST_OFF_ENV

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
