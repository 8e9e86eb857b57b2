# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The gpu_validation module runs here, on the controller: the thresholds and the figures it judges are
given to it, so the node is not asked anything. Without a catalogue it reads the gpu_validate role's own
(vars/gpu_catalogue.yml). With ``health`` it is the role's whole input check, one task where the role ran
two include_vars, two checks and an assert: the health catalogue and options too (the gpu_health module
on the node only where a DCGM level asks for dcgmi), the interpreter and the DataLoader, and bad input
fails the task with the role's message. Its decisions are keyed (plan_action): the role's run right after
site.yml's preflight play gets the input check made there back."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import gpu_health, gpu_validation
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.multi_gpu_env import multicast_off_env
from ansible_collections.aistack.gpu_node.plugins.plugin_utils import gpu_validate_catalogues
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import KeyedDecision, PlanAction

ARGUMENT_SPEC = dict(
    reference=dict(type='raw', required=True),
    catalogue=dict(type='raw'),
    unknown_gpu=dict(type='raw', default='warn'),
    min_fraction=dict(type='raw', required=True),
    min_amp_samples_per_s=dict(type='raw', required=True),
    min_allreduce_busbw_gbps=dict(type='raw', required=True),
    expect=dict(type='raw', default={}),
    gpus=dict(type='list', elements='dict'),
    recorded_gpus=dict(type='list', elements='dict', default=[]),
    results=dict(type='dict'),
    python=dict(type='raw'),
    dataloader=dict(type='raw'),
    health=dict(type='dict', options=dict(
        catalogue=dict(type='dict'),
        dcgm_diag_level=dict(type='int', default=0),
        dcgm_install_planned=dict(type='bool', default=False),
        fail_class=dict(type='str', default='REBOOT'),
    )),
)


class ActionModule(KeyedDecision, PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    # A DCGM level in the health check asks the node whether dcgmi is there.
    _requires_connection = True

    @staticmethod
    def _with_catalogues(args):
        """``args`` with the role's catalogues where the task gives none (the key then rests on them too)."""
        if args['catalogue'] is None:
            args['catalogue'] = gpu_validate_catalogues.load('gpu')
        if args['health'] is not None and args['health']['catalogue'] is None:
            args['health']['catalogue'] = gpu_validate_catalogues.load('health')
        return args

    def keyed_inputs(self, args, task_vars):
        # Not the interpreter: it defaults to conda_env's result, published after site.yml's preflight play
        # made this check, so run() checks it on every call instead.
        inputs = dict(self._with_catalogues(args))
        inputs.pop('python')
        return inputs

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        if result.get('reused') and self._task.args.get('python') is not None:
            refusal = gpu_validation.refusal(gpu_validation.interpreter_problems(self._task.args['python']))
            if refusal:
                result.update(failed=True, msg=refusal)
        return result

    def decide(self, args, task_vars):
        args = self._with_catalogues(args)
        thresholds = (args['min_fraction'], args['min_amp_samples_per_s'], args['min_allreduce_busbw_gbps'])
        problems = gpu_validation.input_problems(*(thresholds + (args['reference'], args['catalogue'], args['unknown_gpu'],
                                                                 args['expect'])))
        decision = dict(problems=problems, multicast_off_env=multicast_off_env())
        if args['health'] is not None or args['python'] is not None or args['dataloader'] is not None:
            return self._input_check(args, decision, task_vars)
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

    def _input_check(self, args, decision, task_vars):
        """The role's input check: the thresholds' problems, the health input's, then the measurement's; any
        fails the task with the role's refusal, each named."""
        problems = list(decision['problems'])
        if args['health'] is not None:
            health = self._health_problems(args['health'], task_vars)
            if health.get('failed'):
                return dict(decision, **health)
            problems.extend(health['problems'])
        if args['python'] is not None or args['dataloader'] is not None:
            problems.extend(gpu_validation.measurement_problems(args['python'], args['dataloader']))
        decision['problems'] = problems
        refusal = gpu_validation.refusal(problems)
        return dict(decision, failed=True, msg=refusal) if refusal else decision

    def _health_problems(self, health, task_vars):
        """The health catalogue and options checked as the gpu_health module checks them: here without a DCGM
        level, by the module on the node with one (it looks for dcgmi there)."""
        if not health['dcgm_diag_level']:
            return dict(problems=gpu_health.catalogue_problems(health['catalogue'])
                        + gpu_health.input_problems(0, health['fail_class']))
        outcome = self._execute_module(module_name='aistack.gpu_node.gpu_health', task_vars=task_vars,
                                       module_args=dict(health, scan=False))
        if outcome.get('failed'):
            return dict(failed=True, msg=outcome.get('msg', 'gpu_health failed'))
        return dict(problems=outcome.get('problems') or [])
