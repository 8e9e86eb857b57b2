# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""A role's settings as its tasks see them, read by a planning action plugin the way ansible-core's
validate_argument_spec action reads them: each option of the role's entry point that the task's
variables hold, templated, and typed by the role's meta/argument_specs.yml, which stays the one
place a setting is declared. The task then passes only what YAML alone knows."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import yaml

from ansible.errors import AnsibleError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.text.converters import to_text

ROLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'roles')
_SPECS = {}


def entry_point_options(role, entry_point='main', roles=ROLES):
    """The options of ``role``'s ``entry_point`` as a module argument spec. A node path (type path)
    is typed str: the controller must not expand a ~ or $VAR that belongs to the node. Defaults
    that are templates are left to the role's defaults/main.yml, which the task's variables hold."""
    cache_key = (roles, role, entry_point)
    if cache_key not in _SPECS:
        with open(os.path.join(roles, role, 'meta', 'argument_specs.yml'), encoding='utf-8') as handle:
            options = yaml.safe_load(handle)['argument_specs'][entry_point]['options']
        spec = {}
        for name, option in options.items():
            option = dict(option)
            if option.get('type') == 'path':
                option['type'] = 'str'
            if '{{' in str(option.get('default', '')):
                del option['default']
            spec[name] = option
        _SPECS[cache_key] = spec
    return _SPECS[cache_key]


def template(templar, task_vars, name):
    """One variable of the task, templated; ValueError naming it when it cannot be."""
    try:
        return templar.template(task_vars[name])
    except AnsibleError as error:
        raise ValueError('%s: %s' % (name, to_text(error)))


def read(templar, task_vars, role, entry_point='main'):
    """The settings of ``role`` by name without the ``<role>_`` prefix, typed and with the spec's defaults."""
    spec = entry_point_options(role, entry_point)
    values = dict((name, template(templar, task_vars, name)) for name in spec if name in task_vars)
    validated = ArgumentSpecValidator(spec).validate(values, validate_role_argument_spec=True)
    if validated.error_messages:
        raise ValueError('%s: %s' % (role, ' '.join(validated.error_messages)))
    prefix = role + '_'
    return dict((name[len(prefix):], value) for name, value in validated.validated_parameters.items())
