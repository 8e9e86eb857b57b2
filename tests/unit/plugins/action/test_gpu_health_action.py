# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_health action: the input check without a DCGM level is made on the controller, without the node;
the scan and a check that must find dcgmi go to the module (tested in tests/unit/plugins/modules)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
from unittest import mock

import yaml

from conftest import REPO_ROOT, run_action
from ansible_collections.aistack.gpu_node.plugins.action.gpu_health import ActionModule

with open(os.path.join(REPO_ROOT, "roles", "gpu_validate", "vars", "health_catalogue.yml")) as _handle:
    CATALOGUE = yaml.safe_load(_handle)["__gpu_validate_health_catalogue"]


def run(tmp_path, **args):
    with mock.patch.object(ActionModule, "_execute_module", return_value={"problems": [], "from": "node"}) as node:
        return run_action(ActionModule, dict(dict(catalogue=CATALOGUE), **args), tmp_path), node


def test_input_check_without_dcgm_never_asks_the_node(tmp_path):
    result, node = run(tmp_path, scan=False)
    assert result["problems"] == [] and result["changed"] is False and "from" not in result
    node.assert_not_called()


def test_input_check_on_the_controller_names_each_bad_input(tmp_path):
    result, node = run(tmp_path, scan=False, fail_class="SOMETIMES", catalogue=dict(CATALOGUE, unknown_xid={"class": "FINE"}))
    assert any("gpu_validate_health_fail_class" in problem for problem in result["problems"])
    assert len(result["problems"]) >= 2
    node.assert_not_called()


def test_a_dcgm_level_or_a_scan_asks_the_node(tmp_path):
    for args in (dict(scan=False, dcgm_diag_level=1), dict(scan=True)):
        result, node = run(tmp_path, **args)
        assert result["from"] == "node"
        node.assert_called_once()


def test_a_dcgm_input_check_is_handed_back_and_a_scan_never(tmp_path):
    args = dict(catalogue=CATALOGUE, scan=False, dcgm_diag_level=1)
    with mock.patch.object(ActionModule, "_execute_module", return_value={"problems": [], "from": "node"}) as node:
        first = run_action(ActionModule, args, tmp_path, register="__health_input")
        again = run_action(ActionModule, args, tmp_path, register="__health_input", task_vars={"__health_input": first})
        assert node.call_count == 1 and first["reused"] is False and again == dict(first, reused=True, changed=False)
        scan = dict(args, scan=True)
        run_action(ActionModule, scan, tmp_path, register="__health_input", task_vars={"__health_input": first})
        run_action(ActionModule, scan, tmp_path, register="__health_input", task_vars={"__health_input": first})
        assert node.call_count == 3


def test_without_a_catalogue_the_role_catalogue_is_read_and_passed_to_the_module(tmp_path):
    # The role's scan task gives no catalogue (no include_vars task before it, issue 37 item 7).
    args = dict(gpus=[], dcgm_diag_level=0, fail_class="REBOOT")
    with mock.patch.object(ActionModule, "_execute_module", return_value={"problems": [], "health": {}}) as node:
        run_action(ActionModule, args, tmp_path)
    assert node.call_args.kwargs["module_args"] == dict(args, catalogue=CATALOGUE)
    with mock.patch.object(ActionModule, "_execute_module") as node:
        checked = run_action(ActionModule, dict(scan=False), tmp_path)
    node.assert_not_called()
    assert checked["problems"] == [] and checked["inputs_key"] == run(tmp_path, scan=False)[0]["inputs_key"]


def test_a_given_catalogue_goes_to_the_module_as_given(tmp_path):
    mine = dict(CATALOGUE, unknown_xid={"class": "MONITOR", "why": "site rule", "source": "site"})
    _result, node = run(tmp_path, catalogue=mine)
    assert node.call_args.kwargs["module_args"]["catalogue"] == mine
