# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The preflight_plan module runs here, on the controller: it checks its input, measures the free
space on the node (the free_space module, the one node round trip) and decides on that and on the
facts the node already gave (setup, gpu_facts)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import node_preflight
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import PlanAction

ARGUMENT_SPEC = dict(
    facts=dict(type='dict', required=True),
    gpu=dict(type='dict'),
    supported_platforms=dict(type='dict', required=True),
    # raw: an unquoted 3.10 arrives as the number 3.1, which input_problems names.
    min_python=dict(type='raw', required=True),
    paths=dict(type='list', elements='dict', default=[], options=dict(
        path=dict(type='str', required=True),
        min_free_mib=dict(type='int', required=True),
        purpose=dict(type='str', default=''),
    )),
    require_systemd=dict(type='bool', default=False),
)


class ActionModule(PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    # free_space runs on the node.
    _requires_connection = True

    def decide(self, args, task_vars):
        bad_input = node_preflight.input_problems(args['min_python'], args['paths'])
        if bad_input:
            return dict(failed=True, msg='preflight: %s' % '; '.join(bad_input))
        space = self._execute_module(module_name='aistack.gpu_node.free_space', task_vars=task_vars,
                                     module_args=dict(paths=[entry['path'] for entry in args['paths']]))
        if space.get('failed'):
            return dict(failed=True, msg='preflight: measuring the free space at preflight_paths failed: %s' % space.get('msg'))
        report = node_preflight.build_report(args['facts'], args['gpu'], space['paths'], args['supported_platforms'],
                                             args['min_python'], args['paths'], args['require_systemd'])
        return dict(report=report)
