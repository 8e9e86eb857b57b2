# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The gpu_validation module runs here, on the controller: the thresholds and the figures it judges are
given to it, so the node is not asked anything. Its decisions are keyed (plan_action): the role's run
right after site.yml's preflight play gets the input check made there back."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import gpu_validation
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.multi_gpu_env import multicast_off_env
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import KeyedDecision, PlanAction

ARGUMENT_SPEC = dict(
    reference=dict(type='raw', required=True),
    catalogue=dict(type='raw', required=True),
    unknown_gpu=dict(type='raw', default='warn'),
    min_fraction=dict(type='raw', required=True),
    min_amp_samples_per_s=dict(type='raw', required=True),
    min_allreduce_busbw_gbps=dict(type='raw', required=True),
    expect=dict(type='raw', default={}),
    gpus=dict(type='list', elements='dict'),
    recorded_gpus=dict(type='list', elements='dict', default=[]),
    results=dict(type='dict'),
)


class ActionModule(KeyedDecision, PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def decide(self, args, task_vars):
        thresholds = (args['min_fraction'], args['min_amp_samples_per_s'], args['min_allreduce_busbw_gbps'])
        problems = gpu_validation.input_problems(*(thresholds + (args['reference'], args['catalogue'], args['unknown_gpu'],
                                                                 args['expect'])))
        decision = dict(problems=problems, multicast_off_env=multicast_off_env())
        if args['results'] is None and args['gpus'] is None:
            return decision
        if problems:
            return dict(decision, failed=True, msg='gpu_validate: bad input: %s' % '; '.join(problems))
        if args['gpus'] is not None:
            decision['expectation'] = gpu_validation.expectation_checks(args['expect'], args['gpus'], args['recorded_gpus'])
        if args['results'] is not None:
            decision['gate'] = gpu_validation.gate(args['results'], args['reference'], *thresholds,
                                                   catalogue=args['catalogue'], unknown_gpu=args['unknown_gpu'])
        return decision
