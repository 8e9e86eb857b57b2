# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The jupyter_kernel_plan module runs here, on the controller: its decisions need only the role's
variables, so the node is not asked anything."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.aistack.gpu_node.plugins.module_utils import kernelspec
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import PlanAction

ARGUMENT_SPEC = dict(
    env_prefix=dict(type='str', required=True),
    target=dict(type='dict'),
    name=dict(type='str', default=''),
    display_name=dict(type='str', default=''),
    ipykernel_spec=dict(type='str', default='ipykernel'),
    conda_channels=dict(type='list', elements='str', default=[]),
    conda_executable=dict(type='str', default='conda'),
)


class ActionModule(PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def decide(self, args, task_vars):
        name = args['name'] or kernelspec.default_name(args['env_prefix'], args['target'])
        try:
            argv = kernelspec.conda_install_argv([args['ipykernel_spec']], args['env_prefix'], args['conda_channels'],
                                                 args['conda_executable'])
        except kernelspec.KernelspecError as error:
            return dict(failed=True, msg='jupyter_kernel: %s' % error)
        return dict(name=name, display_name=args['display_name'] or kernelspec.display_name_for(name, args['env_prefix']),
                    conda_install_argv=argv)
