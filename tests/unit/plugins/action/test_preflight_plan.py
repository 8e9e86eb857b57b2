# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight_plan action: input checked before the node is asked, then the free space measured
on the node and the report built. The report's rules are tested on module_utils.decide.node_preflight."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
from unittest import mock

from conftest import FIXTURES, run_action
from ansible_collections.aistack.gpu_node.plugins.action.preflight_plan import ActionModule

SUPPORTED = {"Debian": ["12"], "Ubuntu": ["22.04", "24.04"]}


def podman_facts():
    with open(os.path.join(FIXTURES, "nodes", "debian12-podman-facts.json")) as handle:
        return json.load(handle)["facts"]


def plan(tmp_path, free_space_result, **args):
    options = dict(facts=podman_facts(), gpu={"state": "no_gpu", "pci_devices": []}, supported_platforms=SUPPORTED,
                   min_python="3.8", paths=[{"path": "/opt/conda", "min_free_mib": 100, "purpose": "conda"}])
    options.update(args)
    with mock.patch.object(ActionModule, "_execute_module", return_value=free_space_result) as free_space:
        return run_action(ActionModule, options, tmp_path), free_space


def test_a_recorded_node_with_room_passes_and_the_space_is_measured_on_the_node(tmp_path):
    measured = {"paths": [{"path": "/opt/conda", "measured_at": "/opt", "exists": False, "mount": "/", "free_mib": 5000,
                           "total_mib": 9000}]}
    result, free_space = plan(tmp_path, measured)
    assert free_space.call_args.kwargs["module_name"] == "aistack.gpu_node.free_space"
    assert free_space.call_args.kwargs["module_args"] == {"paths": ["/opt/conda"]}
    assert not result.get("failed") and not result["changed"]
    report = result["report"]
    assert report["problems"] == []
    assert report["container"] == {"is_container": True, "type": "podman"}
    assert report["paths"][0]["ok"] and report["paths"][0]["required_mib"] == 100


def test_a_full_prefix_is_a_problem_naming_the_variable(tmp_path):
    measured = {"paths": [{"path": "/opt/conda", "mount": "/", "free_mib": 10}]}
    result, _free_space = plan(tmp_path, measured)
    assert result["report"]["problems"] == ["/opt/conda has 10 MiB free on /, needs 100 MiB for conda (preflight_paths)"]


def test_bad_input_is_refused_before_the_node_is_asked(tmp_path):
    result, free_space = plan(tmp_path, {"paths": []}, min_python="3", paths=[{"path": "opt/conda", "min_free_mib": 1}])
    assert result["failed"]
    assert result["msg"].startswith('preflight: bad input: preflight_min_python must be a version like "3.8"')
    assert "preflight_paths must be a list of {path: <absolute path>" in result["msg"]
    free_space.assert_not_called()


def test_a_failed_measurement_is_named(tmp_path):
    result, _free_space = plan(tmp_path, {"failed": True, "msg": "statvfs: permission denied"})
    assert result["failed"]
    assert result["msg"] == "preflight: measuring the free space at preflight_paths failed: statvfs: permission denied"
