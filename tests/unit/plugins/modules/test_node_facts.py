# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_facts: in one module run, setup's min and virtual facts (the same keys and values as setup's on this
machine), the GPUs as gpu_facts publishes them (fed the H200 host's recorded outputs), the container runtimes
on the PATH and the free space at the paths."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import sys

import pytest
from ansible.module_utils import basic
from ansible.module_utils.common.process import get_bin_path
from ansible.modules import setup

from conftest import read_h200, run_module
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import container_toolkit
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import container_runtimes, gpu_collection
from ansible_collections.aistack.gpu_node.plugins.modules import gpu_facts, node_facts

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "module_utils"))
from test_node_probes import h200_runner, make_gpu_tree  # noqa: E402  pylint: disable=wrong-import-position

# The clock's facts move between two runs; their names and the time zone do not.
MOVING_DATE_TIME = ("date", "day", "epoch", "epoch_int", "hour", "iso8601", "iso8601_basic", "iso8601_basic_short", "iso8601_micro",
                    "minute", "month", "second", "time", "weekday", "weekday_number", "weeknumber", "year")


def on_path(program):
    """AnsibleModule.get_bin_path's answer: the program's path, None where there is none."""
    try:
        return get_bin_path(program)
    except ValueError:
        return None


def comparable(facts):
    """The facts without the clock's moving values, and the virtualization technologies sorted: ansible-core lists
    them from a set, in an order that may change from one Python process to the next."""
    facts = dict(facts)
    facts["ansible_date_time"] = dict((name, value) for name, value in facts["ansible_date_time"].items() if name not in MOVING_DATE_TIME)
    for name in ("ansible_virtualization_tech_guest", "ansible_virtualization_tech_host"):
        if name in facts:
            facts[name] = sorted(facts[name])
    return facts


def test_the_facts_are_setups_own_for_min_and_virtual(capsys):
    rc, by_setup = run_module(setup, {"gather_subset": ["min", "virtual"]}, capsys)
    assert rc == 0
    rc, read = run_module(node_facts, {"gpu": False}, capsys)
    assert rc == 0 and read["changed"] is False
    facts = dict(read["ansible_facts"])
    assert sorted(facts.pop("aistack_container_runtimes")) == sorted(container_runtimes.present(on_path))
    assert "aistack_gpu" not in facts
    assert sorted(facts) == sorted(by_setup["ansible_facts"])
    assert sorted(facts["ansible_date_time"]) == sorted(by_setup["ansible_facts"]["ansible_date_time"])
    assert comparable(facts) == comparable(by_setup["ansible_facts"])
    assert facts["gather_subset"] == ["min", "virtual"] and "ansible_virtualization_role" in facts


@pytest.fixture
def recorded_h200(tmp_path, monkeypatch):
    """Both modules read the GPUs from a tree and nvidia-smi outputs recorded on the H200 host."""
    make_gpu_tree(tmp_path, read_h200("proc-driver-nvidia-version.txt"))
    for module in (gpu_facts, node_facts):
        monkeypatch.setattr(module, "module_runner", lambda _module: h200_runner())
        monkeypatch.setattr(module, "collect_gpu_facts", lambda runner, root, nvml: gpu_collection.collect_gpu_facts(
            runner, root=str(tmp_path), nvml=nvml))
        monkeypatch.setattr(module, "import_nvml", lambda: None)


def test_the_gpus_are_gpu_facts_own(recorded_h200, capsys):
    _rc, by_gpu_facts = run_module(gpu_facts, {}, capsys)
    rc, read = run_module(node_facts, {"_ansible_check_mode": True}, capsys)
    assert rc == 0 and read["ansible_facts"]["aistack_gpu"] == by_gpu_facts["ansible_facts"]["aistack_gpu"]
    assert read["ansible_facts"]["aistack_gpu"]["gpus"][0]["name"] == "NVIDIA H200"


def test_the_runtimes_are_the_programs_on_the_path(monkeypatch, capsys):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: (
        "/usr/bin/" + name if name in ("dockerd", "podman") else None))
    rc, read = run_module(node_facts, {"gpu": False}, capsys)
    assert rc == 0 and read["ansible_facts"]["aistack_container_runtimes"] == ["docker", "podman"]


def test_the_runtimes_are_those_the_toolkit_decides_on():
    assert tuple(name for name, _program in container_runtimes.PROGRAMS) == container_toolkit.RUNTIMES


def test_the_free_space_is_measured_at_each_path(tmp_path, capsys):
    rc, read = run_module(node_facts, {"gpu": False, "paths": [str(tmp_path), str(tmp_path / "conda")]}, capsys)
    assert rc == 0
    assert [(entry["path"], entry["measured_at"], entry["exists"]) for entry in read["paths"]] == [
        (str(tmp_path), str(tmp_path), True), (str(tmp_path / "conda"), str(tmp_path), False)]
    assert read["paths"][0]["free_mib"] > 0


def test_a_relative_path_is_refused(capsys):
    rc, read = run_module(node_facts, {"gpu": False, "paths": ["/opt", "opt/conda"]}, capsys)
    assert rc == 1 and read["failed"] and read["msg"] == "paths must be absolute: opt/conda"
