# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The unknown_variables action: every play host's variables (hostvars, the inventory and extra vars,
never role defaults) against the options of the collection's roles. The rules are tested on
module_utils.known_variables."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from conftest import run_action
from ansible_collections.aistack.gpu_node.plugins.action.unknown_variables import ActionModule


class HostVars(dict):
    """The part of Ansible's HostVars the action uses: raw_get(host), the host's variables untemplated."""

    def raw_get(self, host):
        return self[host]


def run(hostvars, **args):
    return run_action(ActionModule, dict(hosts=sorted(hostvars), **args), ".", check_mode=True,
                      task_vars={"hostvars": HostVars(hostvars)})


def test_a_group_variable_typo_fails_once_for_the_fleet():
    result = run({"node1": {"miniconda_prefx": "/opt/conda", "inventory_hostname": "node1"},
                  "node2": {"miniconda_prefx": "/opt/conda", "conda_env_target": {}}})
    assert result["failed"] and not result["changed"]
    assert result["msg"].endswith("miniconda_prefx: not a variable of the miniconda role; did you mean miniconda_prefix?")
    assert result["unknown"] == [{"name": "miniconda_prefx", "role": "miniconda", "suggestions": ["miniconda_prefix"],
                                  "hosts": ["node1", "node2"]}]


def test_warn_mode_returns_warnings():
    result = run({"node1": {"jupyter_kernal_lab": True}}, mode="warn")
    assert not result.get("failed")
    assert result["warnings"] == [
        "jupyter_kernal_lab: not a variable of the jupyter_kernel role; did you mean jupyter_kernel_lab?"]


def test_known_options_pass():
    result = run({"node1": {"conda_env_envs": [], "nvidia_driver_mode": "auto", "preflight_report": {}}})
    assert not result.get("failed") and "warnings" not in result and result["unknown"] == []


def test_an_unknown_mode_is_refused():
    result = run({"node1": {}}, mode="loud")
    assert result["failed"] and 'aistack_unknown_variables must be fail or warn, got "loud"' in result["msg"]
