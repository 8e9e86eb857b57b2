# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test callback: count the module calls that ran on each host, written as JSON at the end.

Enabled by the integration tests (ANSIBLE_CALLBACKS_ENABLED=module_calls) with the output path in
AISTACK_MODULE_CALLS; skipped tasks are not calls, failed and unreachable ones are, and so is a
decision handed back (``reused``: a keyed decision, no module ran).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: module_calls
type: aggregate
short_description: Count module calls per host and action (tests only)
description:
  - "Writes C({host: {action: count}}) as JSON to the file named by the AISTACK_MODULE_CALLS environment variable."
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "module_calls"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self.calls = {}

    def _count(self, result):
        per_host = self.calls.setdefault(result._host.get_name(), {})
        action = result._task.action
        per_host[action] = per_host.get(action, 0) + 1

    def v2_runner_on_ok(self, result):
        if result._result.get("reused") is not True:
            self._count(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._count(result)

    def v2_runner_on_unreachable(self, result):
        self._count(result)

    def v2_playbook_on_stats(self, stats):
        with open(os.environ["AISTACK_MODULE_CALLS"], "w") as handle:
            json.dump(self.calls, handle, indent=1, sort_keys=True)
