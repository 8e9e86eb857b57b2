# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Records, for dev/deprecation_lane.py, what each task result says about deprecations.

One JSON line per task result (loop items included) in the file named by AISTACK_DEPRECATION_RECORD:
the action, the file that defines the task and the deprecations attached to the result. And one line
for each result whose failure ansible-core inferred from a non-zero rc because the module or action
plugin set no `failed`: ansible-core 2.22 deprecates that inference, 2.21 only says so in its
changelog, so this stands in for the warning. By the time a result reaches a callback, `failed` has
been filled in (a module's result gets it inside ActionBase._execute_module), so that line is written
in the worker: the workers are forked from this process, and the wrappers put around ansible-core
2.21's methods here (HOOKS) run in them and read the unified result where `failed` is still unset. On
a line without them the callback refuses to load (ansible-core says so in a warning, which fails the
lane), rather than let the check pass unseen.
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: deprecation_record
type: aggregate
short_description: deprecations and rc-inferred failures per task result (dev/deprecation_lane.py only)
description: Appends one JSON line per task result to the file named by AISTACK_DEPRECATION_RECORD.
requirements: [enabled in callbacks_enabled]
"""

import dataclasses
import functools
import json
import os

from ansible.errors import AnsibleError
from ansible.executor import task_executor
from ansible.plugins.action import ActionBase
from ansible.plugins.callback import CallbackBase


def _write(line):
    with open(os.environ["AISTACK_DEPRECATION_RECORD"], "a") as handle:
        handle.write(json.dumps(line, sort_keys=True) + "\n")


def _task_fields(task):
    return dict(action=getattr(task, "resolved_action", None) or task.action, task=task.get_name(), task_path=task.get_path() or "")


def _inferred(result):
    """Whether ansible-core infers this unified result's failure from its rc: no `failed` set, no failed_when."""
    # pylint: disable-next=protected-access
    return result.rc not in (None, 0, "0") and result._failed is None and result.failed_when_result is None


def _check_action_results(execute_internal):
    """An action plugin's result, as TaskExecutor._execute_internal returns it."""
    @functools.wraps(execute_internal)
    def wrapper(self, *args, **kwargs):
        result = execute_internal(self, *args, **kwargs)
        if _inferred(result):
            _write(dict(_task_fields(self._task), kind="rc_inferred", rc=result.rc))  # pylint: disable=protected-access
        return result
    return wrapper


def _name_the_module(execute_module):
    @functools.wraps(execute_module)
    def wrapper(self, module_name=None, *args, **kwargs):
        self._aistack_module_name = module_name or getattr(self._task, "resolved_action", None) or self._task.action  # pylint: disable=protected-access
        return execute_module(self, module_name, *args, **kwargs)
    return wrapper


def _check_module_results(parse_returned_data):
    """A module's result, as ActionBase._parse_returned_data reads it (before _execute_module turns the
    inferred failure into `failed` of the dict it gives the action plugin)."""
    @functools.wraps(parse_returned_data)
    def wrapper(self, *args, **kwargs):
        result = parse_returned_data(self, *args, **kwargs)
        if _inferred(result):
            module = getattr(self, "_aistack_module_name", None) or self._task.action  # pylint: disable=protected-access
            _write(dict(_task_fields(self._task), kind="rc_inferred", rc=result.rc, action=module))  # pylint: disable=protected-access
        return result
    return wrapper


def _keeps_failed_unset():
    try:
        from ansible._internal._task import UnifiedTaskResult  # pylint: disable=import-outside-toplevel
    except ImportError:
        return False
    return "_failed" in set(field.name for field in dataclasses.fields(UnifiedTaskResult))


# Where ansible-core 2.21 keeps each result as a unified result whose `failed` is still unset when the
# module or action plugin set none, and what reads it there.
HOOKS = ((task_executor.TaskExecutor, "_execute_internal", _check_action_results),
         (ActionBase, "_execute_module", _name_the_module),
         (ActionBase, "_parse_returned_data", _check_module_results))


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "deprecation_record"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not _keeps_failed_unset() or any(getattr(owner, name, None) is None for owner, name, _wrap in HOOKS):
            raise AnsibleError("deprecation_record: this ansible-core keeps no result with `failed` unset where 2.21 does "
                               "(UnifiedTaskResult._failed, %s); dev/deprecation_lane/callback_plugins/deprecation_record.py "
                               "must learn where to read it" % ", ".join("%s.%s" % (owner.__name__, name) for owner, name, _wrap in HOOKS))
        for owner, name, wrap in HOOKS:
            method = getattr(owner, name)
            if not getattr(method, "__wrapped__", None):
                setattr(owner, name, wrap(method))

    def _record(self, result, *args, **kwargs):
        deprecations = [dict(msg=deprecation.event.msg, deprecator=deprecation.deprecator.resolved_name if deprecation.deprecator else None)
                        for deprecation in result.deprecations]
        _write(dict(_task_fields(result.task), kind="result", deprecations=deprecations))

    v2_runner_on_ok = v2_runner_on_failed = v2_runner_on_skipped = _record
    v2_runner_item_on_ok = v2_runner_item_on_failed = v2_runner_item_on_skipped = _record
