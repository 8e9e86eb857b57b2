# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.aistack.gpu_node.plugins.module_utils.kernelspec import default_name


def jupyter_kernel_default_name(prefix, target=None):
    if prefix is not None and not isinstance(prefix, str):
        raise AnsibleFilterError('jupyter_kernel_default_name expects an env prefix (a string), got %s' % type(prefix).__name__)
    if target is not None and not isinstance(target, dict):
        raise AnsibleFilterError('jupyter_kernel_default_name expects conda_env_target (a mapping), got %s' % type(target).__name__)
    return default_name(prefix, target)


class FilterModule(object):
    def filters(self):
        return {'jupyter_kernel_default_name': jupyter_kernel_default_name}
