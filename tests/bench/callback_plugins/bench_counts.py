# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Counts, per host, the tasks run and the round-trips to the node, for tests/bench/run_bench.py.

A task is a result of any kind but skipped. A module round-trip is one module executed through
the host's own connection (an action plugin's helper modules included, the controller's own work
and tasks delegated to the controller not). The workers are forked from this process, so the
counter wrapped around ActionBase._execute_module here runs in them; each one appends a line to
the file named by AISTACK_BENCH_COUNTS, which this callback sums at the end of the run.
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: bench_counts
type: aggregate
short_description: tasks and module round-trips per host, for the benchmark
description: Writes the counts as JSON to the file named by AISTACK_BENCH_COUNTS, with the suffix .json.
requirements: [enabled in callbacks_enabled]
"""

import collections
import functools
import json
import os

from ansible.plugins.action import ActionBase
from ansible.plugins.callback import CallbackBase

_LOCAL = ("local", "ansible.builtin.local")


def _count_round_trips(execute_module):
    @functools.wraps(execute_module)
    def wrapper(self, *args, **kwargs):
        task_vars = kwargs.get("task_vars") or (args[3] if len(args) > 3 else None) or {}
        if self._connection.transport not in _LOCAL:
            with open(os.environ["AISTACK_BENCH_COUNTS"], "a") as handle:
                handle.write("%s\n" % task_vars.get("inventory_hostname", self._play_context.remote_addr))
        return execute_module(self, *args, **kwargs)
    return wrapper


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "bench_counts"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._path = os.environ["AISTACK_BENCH_COUNTS"]
        open(self._path, "w").close()
        self._tasks = collections.Counter()
        if not getattr(ActionBase._execute_module, "__wrapped__", None):
            ActionBase._execute_module = _count_round_trips(ActionBase._execute_module)

    def _task_ran(self, result, *args, **kwargs):
        self._tasks[result._host.get_name()] += 1

    v2_runner_on_ok = v2_runner_on_failed = v2_runner_on_unreachable = _task_ran

    def v2_playbook_on_stats(self, stats):
        with open(self._path) as handle:
            round_trips = collections.Counter(line.strip() for line in handle if line.strip())
        with open(self._path + ".json", "w") as handle:
            json.dump({"tasks": dict(self._tasks), "round_trips": dict(round_trips)}, handle)
