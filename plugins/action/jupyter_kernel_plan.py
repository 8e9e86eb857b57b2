# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The jupyter_kernel_plan module runs here, on the controller: its decisions need only the role's
variables, so the node is not asked anything."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import jupyter_lab, kernelspec
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import PlanAction

ARGUMENT_SPEC = dict(
    stage=dict(type='str', choices=['kernel', 'lab'], default='kernel'),
    env_prefix=dict(type='str'),
    target=dict(type='dict'),
    name=dict(type='str', default=''),
    display_name=dict(type='str', default=''),
    ipykernel_spec=dict(type='str', default='ipykernel'),
    conda_channels=dict(type='list', elements='str', default=[]),
    conda_executable=dict(type='str', default='conda'),
    lab_password_hash=dict(type='str', default='', no_log=True),
    lab_token=dict(type='str', default='', no_log=True),
    lab_verify_password=dict(type='str', default='', no_log=True),
    lab_ip=dict(type='str', default='127.0.0.1'),
    lab_port=dict(type='int', default=8888),
    lab_certfile=dict(type='str', default=''),
    lab_keyfile=dict(type='str', default=''),
    lab_allow_plain_http=dict(type='bool', default=False),
)


class ActionModule(PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    VALIDATION_RULES = dict(required_if=[('stage', 'kernel', ('env_prefix',))])

    def decide(self, args, task_vars):
        return self.decide_stage(args)

    @staticmethod
    def _lab(args):
        # Only the problems come back: none of them repeats the password hash, the password or the token.
        return dict(lab_problems=jupyter_lab.lab_problems(
            password_hash=args['lab_password_hash'], token=args['lab_token'], ip=args['lab_ip'], port=args['lab_port'],
            certfile=args['lab_certfile'], keyfile=args['lab_keyfile'], allow_plain_http=args['lab_allow_plain_http'],
            verify_password=args['lab_verify_password']))

    @staticmethod
    def _kernel(args):
        name = args['name'] or kernelspec.default_name(args['env_prefix'], args['target'])
        try:
            argv = kernelspec.conda_install_argv([args['ipykernel_spec']], args['env_prefix'], args['conda_channels'],
                                                 args['conda_executable'])
        except kernelspec.KernelspecError as error:
            return dict(failed=True, msg='jupyter_kernel: %s' % error)
        return dict(name=name, display_name=args['display_name'] or kernelspec.display_name_for(name, args['env_prefix']),
                    conda_install_argv=argv)
