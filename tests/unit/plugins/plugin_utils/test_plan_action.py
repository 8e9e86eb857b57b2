# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of the planning action plugins: spec checked, one decision, never a change."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from conftest import run_action
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import KeyedDecision, KeyedModuleAction, PlanAction


class Halver(PlanAction):
    ARGUMENT_SPEC = dict(number=dict(type='int', required=True))
    ERRORS = (ValueError,)

    def decide(self, args, task_vars):
        if args['number'] % 2:
            raise ValueError('halver: %d is odd' % args['number'])
        return dict(half=args['number'] // 2, changed=True)


def test_a_decision_is_returned_and_never_a_change(tmp_path):
    assert run_action(Halver, dict(number='8'), tmp_path) == {'half': 4, 'changed': False}


def test_a_listed_error_becomes_a_failed_result(tmp_path):
    result = run_action(Halver, dict(number=3), tmp_path)
    assert result == {'failed': True, 'msg': 'halver: 3 is odd', 'changed': False}


def test_a_plugin_without_a_decision_says_so(tmp_path):
    with pytest.raises(NotImplementedError, match='Undecided must implement decide'):
        run_action(type('Undecided', (PlanAction,), {}), {}, tmp_path)


class KeyedHalver(KeyedDecision, Halver):
    RESTS_ON = 'halver_result'
    decisions = 0

    def decide(self, args, task_vars):
        KeyedHalver.decisions += 1
        return super(KeyedHalver, self).decide(args, task_vars)


def test_a_keyed_decision_is_reused_while_what_it_rests_on_is_unchanged(tmp_path):
    first = run_action(KeyedHalver, dict(number=8), tmp_path, register='__halver_plan')
    assert first['half'] == 4 and first['reused'] is False and len(first['inputs_key']) == 64
    made = KeyedHalver.decisions
    registered = dict(first, invocation={'module_args': {}})
    again = run_action(KeyedHalver, dict(number='8'), tmp_path, register='__halver_plan',
                       task_vars={'__halver_plan': registered})
    assert again == dict(first, reused=True) and KeyedHalver.decisions == made
    # Anything it rests on that differs decides afresh: an input, check mode, the role's new result.
    for changed in (dict(args=dict(number=10)), dict(check_mode=True),
                    dict(task_vars={'halver_result': {'half': 4}})):
        task_vars = dict(changed.get('task_vars', {}), __halver_plan=registered,
                         ansible_check_mode=changed.get('check_mode', False))
        fresh = run_action(KeyedHalver, changed.get('args', dict(number=8)), tmp_path, register='__halver_plan',
                           task_vars=task_vars, check_mode=changed.get('check_mode', False))
        assert fresh['reused'] is False and fresh['inputs_key'] != first['inputs_key'], changed
    assert KeyedHalver.decisions == made + 3


def test_a_failed_unkeyed_or_handed_back_registered_result_is_never_reused(tmp_path):
    first = run_action(KeyedHalver, dict(number=8), tmp_path, register='__halver_plan')
    # Handed back once (the role's run after the preflight play), it is not handed back again: that
    # run may have changed the node, or failed midway without publishing its result.
    handed_back = run_action(KeyedHalver, dict(number=8), tmp_path, register='__halver_plan',
                             task_vars={'__halver_plan': first})
    assert handed_back['reused'] is True
    for registered in (dict(first, failed=True), dict(first, inputs_key=None), {'skipped': True}, handed_back):
        result = run_action(KeyedHalver, dict(number=8), tmp_path, register='__halver_plan',
                            task_vars={'__halver_plan': registered})
        assert result['reused'] is False and 'failed' not in result, registered


def test_a_keyed_module_runs_on_the_node_only_without_its_decision(tmp_path):
    from unittest import mock
    calls = []

    def node(*args, **kwargs):
        calls.append(kwargs)
        return {'changed': False, 'action': 'none'}

    with mock.patch.object(KeyedModuleAction, '_execute_module', side_effect=node):
        first = run_action(KeyedModuleAction, dict(prefix='/opt/conda'), tmp_path, register='__plan')
        again = run_action(KeyedModuleAction, dict(prefix='/opt/conda'), tmp_path, register='__plan',
                           task_vars={'__plan': first})
        other = run_action(KeyedModuleAction, dict(prefix='/srv/conda'), tmp_path, register='__plan',
                           task_vars={'__plan': first})
    assert len(calls) == 2 and first['reused'] is False and again == dict(first, reused=True)
    assert other['reused'] is False and other['inputs_key'] != first['inputs_key']


class StagedHalver(KeyedHalver):
    """Keyed on a setting it reads from the task's variables, and only in one stage."""
    ARGUMENT_SPEC = dict(number=dict(type='int', required=True), stage=dict(type='str', default='plan'))
    ERRORS = (KeyError, ValueError)

    def keyed_inputs(self, args, task_vars):
        return dict(divisor=task_vars['divisor']) if args['stage'] == 'plan' else None


def test_a_planner_says_what_its_decision_rests_on_and_which_stages_are_keyed(tmp_path):
    first = run_action(StagedHalver, dict(number=8), tmp_path, register='__plan', task_vars={'divisor': 2})
    made = KeyedHalver.decisions
    # The key is its own inputs': another number with the same divisor gets the decision back.
    again = run_action(StagedHalver, dict(number=10), tmp_path, register='__plan', task_vars={'divisor': 2, '__plan': first})
    assert again['reused'] is True and again['half'] == 4 and KeyedHalver.decisions == made
    other = run_action(StagedHalver, dict(number=8), tmp_path, register='__plan', task_vars={'divisor': 3, '__plan': first})
    assert other['reused'] is False and KeyedHalver.decisions == made + 1
    unkeyed = run_action(StagedHalver, dict(number=8, stage='check'), tmp_path, register='__plan',
                         task_vars={'divisor': 2, '__plan': first})
    assert 'inputs_key' not in unkeyed and 'reused' not in unkeyed and KeyedHalver.decisions == made + 2
    # Reading what it rests on may fail like the decision itself.
    failed = run_action(StagedHalver, dict(number=8), tmp_path, register='__plan', task_vars={})
    assert failed == {'failed': True, 'msg': "'divisor'", 'changed': False}


def test_a_register_kept_as_a_mapping_is_read_by_its_name(tmp_path):
    # ansible-core 2.21 turns ``register: __halver_plan`` into ``{"__halver_plan": <the whole result>}``.
    first = run_action(KeyedHalver, dict(number=8), tmp_path, register={'__halver_plan': '{{ result }}'})
    again = run_action(KeyedHalver, dict(number=8), tmp_path, register={'__halver_plan': '{{ result }}'},
                       task_vars={'__halver_plan': first})
    assert again == dict(first, reused=True)
