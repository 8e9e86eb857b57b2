# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The jupyter_kernel_plan module runs here, on the controller: its decisions need only the role's
variables, so the node is not asked anything."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.plugins.action import ActionBase
from ansible_collections.aistack.gpu_node.plugins.module_utils import kernelspec

ARGUMENT_SPEC = dict(
    env_prefix=dict(type='str', required=True),
    target=dict(type='dict'),
    name=dict(type='str', default=''),
    display_name=dict(type='str', default=''),
    ipykernel_spec=dict(type='str', default='ipykernel'),
    conda_channels=dict(type='list', elements='str', default=[]),
    conda_executable=dict(type='str', default='conda'),
)


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        name = args['name'] or kernelspec.default_name(args['env_prefix'], args['target'])
        try:
            argv = kernelspec.conda_install_argv([args['ipykernel_spec']], args['env_prefix'], args['conda_channels'],
                                                 args['conda_executable'])
        except kernelspec.KernelspecError as error:
            return dict(result, failed=True, changed=False, msg='jupyter_kernel: %s' % error)
        result.update(changed=False, name=name, display_name=args['display_name'] or kernelspec.display_name_for(name, args['env_prefix']),
                      conda_install_argv=argv)
        return result
