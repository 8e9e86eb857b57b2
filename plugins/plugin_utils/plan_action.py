# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The shape every planning action plugin of the collection shares: its arguments checked against
its spec, one decision taken on the controller, never a change."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase


class PlanAction(ActionBase):
    """Subclasses set ARGUMENT_SPEC (and VALIDATION_RULES such as required_if), and implement
    decide(args, task_vars), which returns the result's keys; an exception of a type in ERRORS
    becomes a failed result with its text."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    ARGUMENT_SPEC = {}
    VALIDATION_RULES = {}
    ERRORS = ()

    def run(self, tmp=None, task_vars=None):
        result = super(PlanAction, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC, **self.VALIDATION_RULES)
        try:
            result.update(self.decide(args, task_vars))
        except self.ERRORS as error:
            result.update(failed=True, msg=to_text(error))
        result['changed'] = False
        return result

    def decide(self, args, task_vars):
        raise NotImplementedError('%s must implement decide()' % type(self).__name__)

    def decide_stage(self, args):
        """For plugins whose ``stage`` argument names the method (``_<stage>``) that decides."""
        return getattr(self, '_' + args['stage'])(args)
