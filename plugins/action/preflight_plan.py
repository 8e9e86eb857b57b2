# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The preflight_plan module runs here, on the controller: it checks its input, measures the free
space on the node (the free_space module, the one node round trip) and decides on that and on the
facts the node already gave (setup, gpu_facts)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.plugins.action import ActionBase
from ansible_collections.aistack.gpu_node.plugins.module_utils import node_preflight

ARGUMENT_SPEC = dict(
    facts=dict(type='dict', required=True),
    gpu=dict(type='dict'),
    supported_platforms=dict(type='dict', required=True),
    min_python=dict(type='str', required=True),
    paths=dict(type='list', elements='dict', default=[], options=dict(
        path=dict(type='str', required=True),
        min_free_mib=dict(type='int', required=True),
        purpose=dict(type='str', default=''),
    )),
    require_systemd=dict(type='bool', default=False),
)


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        bad_input = node_preflight.input_problems(args['min_python'], args['paths'])
        if bad_input:
            return dict(result, failed=True, changed=False, msg='preflight: %s' % '; '.join(bad_input))
        space = self._execute_module(module_name='aistack.gpu_node.free_space', task_vars=task_vars,
                                     module_args=dict(paths=[entry['path'] for entry in args['paths']]))
        if space.get('failed'):
            return dict(result, failed=True, changed=False,
                        msg='preflight: measuring the free space at preflight_paths failed: %s' % space.get('msg'))
        report = node_preflight.build_report(args['facts'], args['gpu'], space['paths'], args['supported_platforms'],
                                             args['min_python'], args['paths'], args['require_systemd'])
        result.update(changed=False, report=report)
        return result
