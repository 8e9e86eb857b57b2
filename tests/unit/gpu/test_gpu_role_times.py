"""The GPU scenario's role-times callback: per-role times, and where a run's time goes by task."""

import importlib.util
import json
import os

import pytest

from conftest import REPO_ROOT

SPEC = importlib.util.spec_from_file_location(
    "gpu_role_times", os.path.join(REPO_ROOT, "molecule", "gpu", "callback_plugins", "gpu_role_times.py"))
gpu_role_times = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(gpu_role_times)


class Role:
    def __init__(self, name):
        self._name = name

    def get_name(self):
        return self._name


class Task:
    def __init__(self, name, role=None):
        self._name, self._role = name, Role(role) if role else None

    def get_name(self):
        return "%s : %s" % (self._role.get_name(), self._name) if self._role else self._name


class Play:
    def get_name(self):
        return "Record what this run proved"


@pytest.fixture
def clock(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(gpu_role_times.time, "monotonic", lambda: now[0])
    return now


def test_tasks_are_summed_by_part_and_name_slowest_first(tmp_path, monkeypatch, clock):
    monkeypatch.setenv("GPU_RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("GPU_STEP", "idempotence")
    callback = gpu_role_times.CallbackModule()
    callback.v2_playbook_on_play_start(Play())
    # The GPU facts task runs twice (two roles include it): one line, the two times summed.
    for task, seconds in [(Task("Look for NVIDIA GPUs", "aistack.gpu_node.node_probe"), 0.5),
                          (Task("Verify the installed APEX", "aistack.gpu_node.apex_build"), 5.0),
                          (Task("Look for NVIDIA GPUs", "aistack.gpu_node.node_probe"), 0.25),
                          (Task("Check the CUDA chain"), 3.5)]:
        callback.v2_playbook_on_task_start(task, False)
        clock[0] += seconds
    callback.v2_playbook_on_stats(None)
    tasks = json.loads((tmp_path / "tasks-idempotence.json").read_text())
    assert tasks["started"] == 4
    assert tasks["slowest"] == [
        {"part": "apex_build", "task": "Verify the installed APEX", "seconds": 5.0},
        {"part": "Record what this run proved", "task": "Check the CUDA chain", "seconds": 3.5},
        {"part": "node_probe", "task": "Look for NVIDIA GPUs", "seconds": 0.75}]
    roles = json.loads((tmp_path / "roles-idempotence.json").read_text())
    # In the order the parts first ran; a task outside a role counts under its play.
    assert [(part["name"], part["seconds"]) for part in roles] == [
        ("node_probe", 0.8), ("apex_build", 5.0), ("Record what this run proved", 3.5)]


def test_a_run_without_tasks_writes_nothing(tmp_path, monkeypatch, clock):
    monkeypatch.setenv("GPU_RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("GPU_STEP", "converge")
    gpu_role_times.CallbackModule().v2_playbook_on_stats(None)
    assert os.listdir(str(tmp_path)) == []
