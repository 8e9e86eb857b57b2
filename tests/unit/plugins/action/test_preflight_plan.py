# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight_plan action: input checked before the node is asked, then the node read in one module run
(node_facts: facts, GPUs unless known, runtimes, free space), its facts published and the report built. The
report's rules are tested on module_utils.decide.node_preflight."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
from unittest import mock

from conftest import FIXTURES, run_action
from ansible_collections.aistack.gpu_node.plugins.action.preflight_plan import ActionModule

SUPPORTED = {"Debian": ["12"], "Ubuntu": ["22.04", "24.04"]}
NO_GPU = {"state": "no_gpu", "pci_devices": []}


def podman_reading(space, gpus_read=True):
    """node_facts' result on the recorded podman node: its facts keyed as setup returns them."""
    with open(os.path.join(FIXTURES, "nodes", "debian12-podman-facts.json")) as handle:
        facts = dict(("ansible_" + name, value) for name, value in json.load(handle)["facts"].items())
    facts.update(aistack_container_runtimes=[], **({"aistack_gpu": NO_GPU} if gpus_read else {}))
    return dict(space, ansible_facts=facts, changed=False)


def plan(tmp_path, reading, task_vars=None, **args):
    options = dict(supported_platforms=SUPPORTED, min_python="3.8",
                   paths=[{"path": "/opt/conda", "min_free_mib": 100, "purpose": "conda"}])
    options.update(args)
    with mock.patch.object(ActionModule, "_execute_module", return_value=reading) as node:
        return run_action(ActionModule, options, tmp_path, task_vars=task_vars), node


def test_a_recorded_node_with_room_passes_and_the_node_is_read_once(tmp_path):
    reading = podman_reading({"paths": [{"path": "/opt/conda", "measured_at": "/opt", "exists": False, "mount": "/",
                                         "free_mib": 5000, "total_mib": 9000}]})
    result, node = plan(tmp_path, reading)
    assert node.call_count == 1
    assert node.call_args.kwargs["module_name"] == "aistack.gpu_node.node_facts"
    assert node.call_args.kwargs["module_args"] == {"paths": ["/opt/conda"], "gpu": True}
    assert not result.get("failed") and not result["changed"]
    # The reading is published as the facts it is.
    assert result["ansible_facts"] == reading["ansible_facts"]
    report = result["report"]
    assert report["problems"] == []
    assert report["container"] == {"is_container": True, "type": "podman"}
    assert report["os"]["distribution"] == "Debian" and report["gpu"]["state"] == "no_gpu"
    assert report["paths"][0]["ok"] and report["paths"][0]["required_mib"] == 100


def test_gpus_this_run_read_already_are_not_read_again(tmp_path):
    known = {"state": "ok", "pci_devices": [{"pci_bus_id": "0000:00:06.0"}], "driver": {"loaded_version": "580.159.04"}}
    reading = podman_reading({"paths": [{"path": "/opt/conda", "mount": "/", "free_mib": 5000}]}, gpus_read=False)
    result, node = plan(tmp_path, reading, task_vars={"ansible_facts": {"aistack_gpu": known}})
    assert node.call_args.kwargs["module_args"]["gpu"] is False
    assert "aistack_gpu" not in result["ansible_facts"]
    assert result["report"]["gpu"] == {"present": True, "count": 1, "driver_loaded": True, "state": "ok"}


def test_a_full_prefix_is_a_problem_naming_the_variable(tmp_path):
    result, _node = plan(tmp_path, podman_reading({"paths": [{"path": "/opt/conda", "mount": "/", "free_mib": 10}]}))
    assert result["report"]["problems"] == ["/opt/conda has 10 MiB free on /, needs 100 MiB for conda (preflight_paths)"]


def test_bad_input_is_refused_before_the_node_is_asked(tmp_path):
    result, node = plan(tmp_path, podman_reading({"paths": []}), min_python="3", paths=[{"path": "opt/conda", "min_free_mib": 1}])
    assert result["failed"]
    assert result["msg"].startswith('preflight: bad input: preflight_min_python must be a version like "3.8"')
    assert "preflight_paths must be a list of {path: <absolute path>" in result["msg"]
    node.assert_not_called()


def test_a_failed_reading_is_named(tmp_path):
    result, _node = plan(tmp_path, {"failed": True, "msg": "statvfs: permission denied"})
    assert result["failed"]
    assert result["msg"] == ("preflight: reading the node (facts, GPUs, free space at preflight_paths) failed: "
                             "statvfs: permission denied")
