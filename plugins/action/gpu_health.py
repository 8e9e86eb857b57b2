# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""gpu_health: the input check without a DCGM level needs nothing from the node, so it is made here on the
controller; the scan, and any check that must find dcgmi, run the module on the node. An input check is a
keyed decision (plan_action): the role's run right after site.yml's preflight play gets it back without
asking the node again. A scan reads the kernel log of the moment and is never handed back. A task that gives
no catalogue gets the gpu_validate role's own (vars/health_catalogue.yml), read here, so the role needs no
include_vars task before it."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.plugins.action import ActionBase
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import gpu_health
from ansible_collections.aistack.gpu_node.plugins.plugin_utils import gpu_validate_catalogues
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import KeyedDecision


class ActionModule(KeyedDecision, ActionBase):

    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=gpu_health.ARGUMENT_SPEC)
        if args['catalogue'] is None:
            args['catalogue'] = gpu_validate_catalogues.load('health')
        module_args = dict(self._task.args, catalogue=args['catalogue'])
        if args['scan']:
            result.update(self._execute_module(module_args=module_args, task_vars=task_vars))
            return result
        key, previous = self.keyed(args, task_vars)
        if previous is not None:
            result.update(previous, reused=True, changed=False)
            return result
        if args['dcgm_diag_level']:
            result.update(self._execute_module(module_args=module_args, task_vars=task_vars))
        else:
            result.update(changed=False, problems=gpu_health.catalogue_problems(args['catalogue'])
                          + gpu_health.input_problems(0, args['fail_class']))
        if not result.get('failed'):
            result.update(inputs_key=key, reused=False)
        return result
