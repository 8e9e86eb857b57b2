# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The unknown_variables module runs here, on the controller: it reads every role's
meta/argument_specs.yml from the collection and the variables each host has from the inventory and
the extra vars, and lists the ones that look like a role's variable and are none."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import yaml

from ansible_collections.aistack.gpu_node.plugins.module_utils import known_variables
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import PlanAction

ARGUMENT_SPEC = dict(
    hosts=dict(type='list', elements='str', required=True),
    mode=dict(type='str', default='fail'),
)

ROLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'roles')


def role_options(roles=ROLES):
    """Each role's options, from every entry point of its meta/argument_specs.yml."""
    options = {}
    for role in sorted(os.listdir(roles)):
        path = os.path.join(roles, role, 'meta', 'argument_specs.yml')
        if not os.path.isfile(path):
            continue
        with open(path, encoding='utf-8') as handle:
            specs = (yaml.safe_load(handle) or {}).get('argument_specs') or {}
        options[role] = sorted({name for entry in specs.values() for name in (entry or {}).get('options') or {}})
    return options


def host_variable_names(hostvars, host):
    """The names of the variables a host has outside any play: the inventory's (its groups' and its
    own, files beside the inventory or the playbook included), the extra vars, its facts and the
    facts set earlier in the run; never a role's defaults or a play's vars."""
    raw_get = getattr(hostvars, 'raw_get', None)
    names = raw_get(host) if raw_get else hostvars[host]
    return sorted(str(name) for name in names)


class ActionModule(PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def decide(self, args, task_vars):
        hostvars = task_vars['hostvars']
        names = {host: host_variable_names(hostvars, host) for host in args['hosts']}
        decision = known_variables.check(names, role_options(), args['mode'])
        result = dict(unknown=decision['unknown'], msg=decision['msg'])
        if decision['failed']:
            result['failed'] = True
        if decision['warnings']:
            result['warnings'] = decision['warnings']
        return result
