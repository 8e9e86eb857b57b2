# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The shape every planning action plugin of the collection shares: its arguments checked against
its spec, one decision taken on the controller, never a change; and keyed decisions.

A keyed decision carries ``inputs_key``, the sha256 of what it rests on: the planner's inputs, check
mode, and the result fact its role publishes after each run. site.yml's preflight play decides on
every host before any change; the role's own run right after asks again with the same inputs and
gets that decision back (``reused``: no node read, no round-trip). A decision is handed back once: a
later run decides afresh (the first may have changed the node, or failed midway without publishing
its result), and so does one where anything it rests on differs (another setting, a new result)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import hashlib
import json

from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase


def inputs_key(*inputs):
    """The sha256 of ``inputs`` as JSON with sorted keys."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=to_text).encode('utf-8')).hexdigest()


class KeyedDecision(object):
    """For an action plugin whose task registers its decision. RESTS_ON names the result fact of the
    role that the decision also rests on; None when its inputs alone decide (input checks)."""

    RESTS_ON = None
    # Keys of a registered result that are no part of the decision handed back.
    _NOT_DECISION = ('invocation', 'warnings', 'deprecations')

    def keyed_inputs(self, args, task_vars):
        """What the decision rests on besides check mode and RESTS_ON: the task's arguments unless a
        planner that reads its settings itself says otherwise; None leaves this decision unkeyed."""
        return args

    def _registered_as(self):
        """The variable the task registers its result as: ansible-core 2.21 keeps ``register: name`` as the
        one-name mapping ``{name: <the whole result>}``; earlier lines keep the name."""
        register = self._task.register
        if isinstance(register, dict):
            return next(iter(register)) if len(register) == 1 else None
        return register

    def keyed(self, inputs, task_vars):
        """``(key, previous)``: this decision's key, and the registered decision with that key (None when there
        is none: the first time, when anything it rests on differs, or when it was itself handed back)."""
        key = inputs_key(inputs, bool(task_vars.get('ansible_check_mode')),
                         task_vars.get(self.RESTS_ON) if self.RESTS_ON else None)
        registered_as = self._registered_as()
        previous = task_vars.get(registered_as) if registered_as else None
        if (not isinstance(previous, dict) or previous.get('inputs_key') != key or previous.get('failed')
                or previous.get('reused')):
            return key, None
        return key, dict((name, value) for name, value in previous.items()
                         if name not in self._NOT_DECISION and not name.startswith('_ansible'))


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
        key = previous = None
        try:
            inputs = self.keyed_inputs(args, task_vars) if isinstance(self, KeyedDecision) else None
            if inputs is not None:
                key, previous = self.keyed(inputs, task_vars)
            if previous is not None:
                result.update(previous, reused=True)
            else:
                result.update(self.decide(args, task_vars))
        except self.ERRORS as error:
            result.update(failed=True, msg=to_text(error))
        if key is not None and previous is None:
            result.update(inputs_key=key, reused=False)
        result['changed'] = False
        return result

    def decide(self, args, task_vars):
        raise NotImplementedError('%s must implement decide()' % type(self).__name__)

    def decide_stage(self, args):
        """For plugins whose ``stage`` argument names the method (``_<stage>``) that decides."""
        return getattr(self, '_' + args['stage'])(args)


class KeyedModuleAction(KeyedDecision, ActionBase):
    """The module of the task's name, run on the node only when the task has no registered decision
    with this key (its arguments as the task gives them are its inputs)."""

    TRANSFERS_FILES = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(KeyedModuleAction, self).run(tmp, task_vars)
        del tmp
        key, previous = self.keyed(self._task.args, task_vars)
        if previous is not None:
            result.update(previous, reused=True, changed=False)
            return result
        result.update(self._execute_module(task_vars=task_vars))
        if not result.get('failed'):
            result.update(inputs_key=key, reused=False)
        return result
