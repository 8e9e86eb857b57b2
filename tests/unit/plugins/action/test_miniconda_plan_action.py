# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The miniconda_plan action: the role's variables and Anaconda's terms checked on the controller before the
node is read (also when a plan is handed back), the module run only without a plan of the same key, and the
plan's refusals. The rules are tested on module_utils.decide.miniconda, what the node shows on the module;
here the module answers what a (fake) node would."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from unittest import mock


from conftest import read_role_vars, result_contract_problems
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.template import Templar, trust_as_template
from ansible_collections.aistack.gpu_node.plugins.action.miniconda_plan import ActionModule

ARGS = dict(flavor="miniforge", prefix="/opt/conda", marker="/opt/conda/.aistack-miniconda.json",
            started_records="/var/lib/aistack/miniconda", group="conda", members=["alice"], auto_activate_base=False)
# A converged node, as the module reads it.
CONVERGED = dict(changed=False, action="none", reason="miniforge 25.3.0-3 installed and verified", prefix_exists=True,
                 missing_members=[], group_exists=True, conda_settings={"root_prefix": "/opt/conda", "auto_activate": False},
                 conda_settings_in_place=True)


DEFAULTS, ROLE_VARS = read_role_vars("miniconda")


class Node(object):
    """The module as the action sees it: every call kept (the round-trips)."""

    def __init__(self, **reading):
        self.reading = dict(CONVERGED, **reading)
        self.calls = []

    def __call__(self, module_name=None, module_args=None, task_vars=None):
        # None: the task's own module, with the task's arguments.
        self.calls.append((module_name, module_args))
        return dict(self.reading)


def host(**settings):
    """The task's variables of a host: the role's defaults and vars, ``settings`` by their short names."""
    values = dict(DEFAULTS, **ROLE_VARS)
    values.update(inventory_hostname="node1", ansible_check_mode=False)
    values.update(("miniconda_" + name, value) for name, value in settings.items())
    return values


def plan(variables, node=None, args=None, register=None):
    """Run the action as the role's task on a host with ``variables``; (result, node)."""
    node = node or Node()
    task = mock.MagicMock(args=dict(args or ARGS), async_val=0, check_mode=False, action="aistack.gpu_node.miniconda_plan", register=register)
    action = ActionModule(task, mock.MagicMock(), PlayContext(), DataLoader(), Templar(loader=DataLoader(), variables=variables),
                          mock.MagicMock())
    with mock.patch.object(ActionModule, "_execute_module", side_effect=node):
        result = action.run(task_vars=variables)
    assert not result_contract_problems(result), result
    return result, node


def test_a_converged_node_is_read_once_and_its_plan_keyed():
    result, node = plan(host())
    assert node.calls == [(None, None)] and not result.get("failed")
    assert result["action"] == "none" and result["conda_settings_in_place"] is True
    assert result["reused"] is False and len(result["inputs_key"]) == 64


def test_a_bad_variable_fails_with_the_roles_message_before_the_node_is_read():
    result, node = plan(host(prefix="opt/conda"))
    assert result["failed"] and node.calls == [] and result["changed"] is False
    assert result["msg"].startswith("miniconda: bad input. miniconda_prefix must be an absolute path without whitespace")
    assert "not a system folder (/, /bin, " in result["msg"] and "miniconda_clean one of none, tarballs, packages, all," in result["msg"]


def test_the_variables_are_read_templated_as_the_tasks_see_them():
    variables = host(prefix=trust_as_template("{{ __site_prefix }}"))
    variables["__site_prefix"] = "/opt"
    result, node = plan(variables)
    assert result["failed"] and "not a system folder" in result["msg"] and node.calls == []
    variables["__site_prefix"] = "/srv/conda"
    assert not plan(variables)[0].get("failed")


def test_miniconda_is_refused_until_its_terms_are_accepted_before_the_node_is_read():
    result, node = plan(host(flavor="miniconda"))
    assert result["failed"] and node.calls == []
    assert "set miniconda_accept_anaconda_tos: true, or use miniconda_flavor: miniforge" in result["msg"]
    # As `| bool` reads it.
    assert not plan(host(flavor="miniconda", accept_anaconda_tos="yes"))[0].get("failed")
    assert plan(host(flavor="miniconda", accept_anaconda_tos="no"))[0]["failed"]


def test_a_plan_handed_back_is_checked_again():
    first, _node = plan(host())
    registered = dict(first)
    result, node = plan(dict(host(), __miniconda_plan=registered), register="__miniconda_plan")
    assert result["reused"] is True and node.calls == []
    result, node = plan(dict(host(clean="everything"), __miniconda_plan=registered), register="__miniconda_plan")
    assert result["failed"] and result["msg"].startswith("miniconda: bad input.") and node.calls == []


def test_group_members_that_are_no_user_are_refused_naming_the_host_and_the_group():
    result, node = plan(host(), Node(missing_members=["alcie"]))
    assert node.calls == [(None, None)] and result["failed"]
    assert result["msg"] == ("miniconda: miniconda_group_members names alcie, no user on node1. The role adds existing users "
                             "to conda; it never creates one. Create the account first or fix the name. Nothing was changed.")
    # A refusal is never handed back: the next run reads the node again.
    again, node = plan(dict(host(), __miniconda_plan=result), Node(missing_members=["alcie"]), register="__miniconda_plan")
    assert again["failed"] and again["reused"] is False and len(node.calls) == 1


def test_a_prefix_the_plan_refuses_is_refused_with_the_prefix_as_given():
    reason = "miniconda_prefix is there but is not a folder; point miniconda_prefix at a new path"
    result, _node = plan(host(), Node(action="refuse", reason=reason), args=dict(ARGS, prefix="/opt/conda-notes.txt"))
    assert result["failed"] and result["msg"] == "miniconda: /opt/conda-notes.txt: " + reason


def test_the_modules_own_failure_is_passed_on():
    result, _node = plan(host(), Node(failed=True, msg="miniconda: the completion marker /opt/conda/.aistack-miniconda.json: x"))
    assert result["failed"] and result["msg"].startswith("miniconda: the completion marker")


def test_a_variable_that_cannot_be_templated_is_named_before_the_node_is_read():
    result, node = plan(host(prefix=trust_as_template("{{ __no_such_variable }}")))
    assert result["failed"] and result["msg"].startswith("miniconda: miniconda_prefix: ") and node.calls == []
    result, node = plan(host(flavor="miniconda", accept_anaconda_tos=trust_as_template("{{ __no_such_variable }}")))
    assert result["failed"] and result["msg"].startswith("miniconda: miniconda_accept_anaconda_tos: ") and node.calls == []
