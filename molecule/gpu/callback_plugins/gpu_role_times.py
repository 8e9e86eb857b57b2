# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test harness of the GPU scenario: the wall time and changed tasks of each role in one run."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: gpu_role_times
type: aggregate
short_description: Per-role times of one GPU scenario step
description:
  - Writes C(roles-<GPU_STEP>.json) into C(GPU_RESULTS_DIR) at the end of the run, a list of
    C({name, seconds, changed, failed}) in the order the roles first ran (C(failed) counts task failures,
    rescued ones included; the PLAY RECAP judges the run); tasks outside a role count under their
    play's name. Only for molecule/gpu (tests/gpu/run-gpu-scenario).
  - Writes C(tasks-<GPU_STEP>.json) beside it, where a no-op run's time goes - the number of tasks
    started and the slowest tasks, C({part, task, seconds}), slowest first.
"""

import json
import os
import time

from ansible.plugins.callback import CallbackBase

# How many of the slowest tasks tasks-<step>.json lists.
SLOWEST = 40


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpu_role_times"
    CALLBACK_NEEDS_ENABLED = False

    def __init__(self):
        super().__init__()
        self._parts = {}
        self._current = None
        self._started = None
        self._play = ""
        self._task = None
        self._tasks = {}
        self._started_tasks = 0

    def _close(self):
        if self._current is not None:
            seconds = time.monotonic() - self._started
            self._parts[self._current]["seconds"] += seconds
            self._tasks[self._task] = self._tasks.get(self._task, 0.0) + seconds
            self._current = None

    def _part(self, task):
        role = getattr(task, "_role", None)
        name = role.get_name() if role is not None else self._play
        return name.replace("aistack.gpu_node.", "")

    def v2_playbook_on_play_start(self, play):
        self._close()
        self._play = play.get_name()

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._close()
        self._current = self._part(task)
        # Keyed by part and name: a task file included twice (gpu facts) sums under one line.
        self._task = (self._current, task.get_name().rpartition(" : ")[2])
        self._started_tasks += 1
        self._parts.setdefault(self._current, {"name": self._current, "seconds": 0.0, "changed": 0, "failed": 0})
        self._started = time.monotonic()

    v2_playbook_on_handler_task_start = v2_playbook_on_task_start

    def _result(self, result, failed=False):
        part = self._parts.get(self._part(result._task))
        if part is None:
            return
        if result._result.get("changed"):
            part["changed"] += 1
        if failed:
            part["failed"] += 1

    def v2_runner_on_ok(self, result):
        self._result(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._result(result, failed=not ignore_errors)

    def v2_playbook_on_stats(self, stats):
        self._close()
        folder, step = os.environ.get("GPU_RESULTS_DIR"), os.environ.get("GPU_STEP")
        # A step's create/destroy playbooks run no task: they keep the step's converge record.
        if not folder or not step or not self._parts:
            return
        parts = [dict(part, seconds=round(part["seconds"], 1)) for part in self._parts.values()]
        with open(os.path.join(folder, "roles-%s.json" % step), "w") as handle:
            json.dump(parts, handle, indent=2)
            handle.write("\n")
        slowest = sorted(self._tasks.items(), key=lambda item: -item[1])[:SLOWEST]
        tasks = {"started": self._started_tasks,
                 "slowest": [{"part": part, "task": name, "seconds": round(seconds, 2)} for (part, name), seconds in slowest]}
        with open(os.path.join(folder, "tasks-%s.json" % step), "w") as handle:
            json.dump(tasks, handle, indent=2)
            handle.write("\n")
