# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The preflight_plan module runs here, on the controller: it checks its input, then reads the node in one
module run (node_facts: setup's min and virtual facts, the GPUs unless this run read them already, the
container runtimes, the free space at the paths), decides on that reading and publishes its facts."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.vars.clean import namespace_facts

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import node_preflight
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import PlanAction

NODE_FACTS = 'aistack.gpu_node.node_facts'
ARGUMENT_SPEC = dict(
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
    # node_facts runs on the node.
    _requires_connection = True

    def decide(self, args, task_vars):
        bad_input = node_preflight.input_problems(args['min_python'], args['paths'])
        if bad_input:
            return dict(failed=True, msg='preflight: %s' % '; '.join(bad_input))
        known = task_vars.get('ansible_facts') or {}
        # One GPU reading per host per run (node_probe's gpu entry point reuses it too).
        node = self._execute_module(module_name=NODE_FACTS, task_vars=task_vars, module_args=dict(
            paths=[entry['path'] for entry in args['paths']], gpu='aistack_gpu' not in known))
        if node.get('failed'):
            return dict(failed=True, msg='preflight: reading the node (facts, GPUs, free space at preflight_paths) failed: %s'
                        % node.get('msg'))
        # ansible_facts as the later tasks will see it: the new reading over what the host had.
        facts = dict(known, **namespace_facts(node['ansible_facts'])['ansible_facts'])
        report = node_preflight.build_report(facts, facts['aistack_gpu'], node['paths'], args['supported_platforms'],
                                             args['min_python'], args['paths'], args['require_systemd'])
        return dict(report=report, ansible_facts=node['ansible_facts'])
