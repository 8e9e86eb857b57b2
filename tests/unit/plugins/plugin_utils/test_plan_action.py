# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of the planning action plugins: spec checked, one decision, never a change."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from conftest import run_action
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import PlanAction


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
