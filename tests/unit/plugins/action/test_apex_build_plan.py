# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The apex_build_plan action: what it reads from the registered results the role hands it, and the
controller cache's marker. The decisions are tested on module_utils.apex_build."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import json
import os

from conftest import REPO_ROOT, run_action
from ansible_collections.aistack.gpu_node.plugins.action.apex_build_plan import ActionModule

with open(os.path.join(REPO_ROOT, "tests", "gpu", "results", "h200", "host.json")) as _handle:
    H200_COMPAT = json.load(_handle)["cuda_compat"]
PROBE = {"python_tag": "cp312", "platform": "linux_x86_64", "cpus": 2, "memory_available_mib": 20000,
         "build_tools": {"setuptools": "80.9.0", "ninja": None}, "installed": {"wheel_sha256": "a" * 64}}


def _slurped(text):
    return {"content": base64.b64encode(text.encode("utf-8")).decode("ascii"), "encoding": "base64"}


def _marker(key):
    return json.dumps({"key": key, "wheel": "apex-0.1-cp312-cp312-linux_x86_64.whl", "wheel_sha256": "a" * 64,
                       "required_modules": ["apex_C"]})


def test_gate(tmp_path):
    result = run_action(ActionModule, dict(stage="gate", tested_commit="6424da3", gpu_state="ok"), tmp_path)
    assert not result["changed"] and result["version"] == "6424da3" and result["gate"]["run"]
    assert result["flags"] == ["--cpp_ext", "--cuda_ext"] and result["legacy_apis_ref"] is None


def test_key_reads_the_probe_output(tmp_path):
    result = run_action(ActionModule, dict(stage="key", probe_output=json.dumps(PROBE), compat=H200_COMPAT, version="6424da3",
                                           flags=["--cpp_ext", "--cuda_ext"], cache_dir="/c", work_dir="/w"), tmp_path)
    assert result["probe"] == PROBE and result["entry"] == "/c/" + result["key"] and result["arch_list"] == "9.0"


def test_key_refuses_a_probe_that_printed_no_json(tmp_path):
    result = run_action(ActionModule, dict(stage="key", probe_output="Traceback", compat=H200_COMPAT), tmp_path)
    assert result["failed"] and result["msg"].startswith("apex_build: the environment probe printed no JSON")


def test_markers_from_the_node_the_controller_and_the_url(tmp_path):
    (tmp_path / "k1").mkdir()
    (tmp_path / "k1" / "aistack-apex.json").write_text(_marker("k1"))
    result = run_action(ActionModule, dict(stage="markers", key="k1", node_marker=_slurped("not json"),
                                           controller_cache_dir=str(tmp_path),
                                           url_marker={"status": 200, "content": _marker("k1")}), tmp_path)
    markers = result["markers"]
    assert markers["node"]["problem"].startswith("the marker is not JSON")
    assert markers["controller"]["entry"]["key"] == "k1" and markers["url"]["entry"]["key"] == "k1"


def test_missing_markers_are_no_entries(tmp_path):
    result = run_action(ActionModule, dict(stage="markers", key="k1", node_marker={"failed": True, "msg": "file not found"},
                                           controller_cache_dir=str(tmp_path), url_marker={"status": 404, "content": "gone"}),
                        tmp_path)
    assert all(state == {"entry": None, "problem": None} for state in result["markers"].values())


def test_action_of_a_builder_with_its_verified_entry_installed(tmp_path):
    markers = {"node": {"entry": json.loads(_marker("k1")), "problem": None}, "controller": {"entry": None, "problem": None},
               "url": {"entry": None, "problem": None}}
    result = run_action(ActionModule, dict(stage="action", markers=markers, node_wheel={"stat": {"checksum": "a" * 64}},
                                           probe=PROBE, is_builder=True, controller_cache_dir="/ctl", compat=H200_COMPAT),
                        tmp_path)
    assert (result["action"], result["entry_source"], result["share_pending"]) == ("none", "node", True)
    assert result["blockers"] == [] and result["overrides_problem"] is None


def test_action_of_a_builder_that_cannot_fit_its_overrides(tmp_path):
    empty = {"entry": None, "problem": None}
    result = run_action(ActionModule, dict(stage="action", markers={"node": empty, "controller": empty, "url": empty},
                                           node_wheel={"skipped": True}, probe=PROBE, is_builder=True, compat=H200_COMPAT,
                                           arch_list="9.0", overrides={"max_jobs": 100000}), tmp_path)
    assert result["action"] == "build" and result["overrides_problem"].startswith("MAX_JOBS 100000")


def test_source_of_the_stand_in_tree(tmp_path):
    with open(os.path.join(REPO_ROOT, "tests", "support", "apex_stub", "setup.py")) as handle:
        setup_py = _slurped(handle.read())
    result = run_action(ActionModule, dict(stage="source", setup_py=setup_py, cuda_ext=False, contrib_extensions=["demo_contrib"],
                                           probe=PROBE, compat={"torch": {"present": True, "cuda": None}},
                                           overrides={"max_jobs": 0}), tmp_path)
    assert result["settings"]["env"] == {"APEX_CPP_EXT": "1", "APEX_DEMO_CONTRIB": "1", "MAX_JOBS": "2", "APEX_PARALLEL_BUILD": "1"}
    assert result["blockers"] == []
    refused = run_action(ActionModule, dict(stage="source", setup_py=setup_py, contrib_extensions=["xentropy"], probe=PROBE,
                                            compat={"torch": {"present": True, "cuda": None}}), tmp_path)
    assert refused["failed"] and refused["msg"].startswith("apex_build_plan: apex_build_contrib_extensions: this APEX source has no")


def test_entry_prefers_the_shared_marker_then_the_controller_then_the_url(tmp_path):
    (tmp_path / "k1").mkdir()
    (tmp_path / "k1" / "aistack-apex.json").write_text(_marker("k1"))
    url = {"status": 200, "content": _marker("k1")}
    shared = run_action(ActionModule, dict(stage="entry", key="k1", shared_marker=_slurped(_marker("k1")), url_marker=url),
                        tmp_path)
    assert shared["entry_source"] == "node" and shared["entry_meta"]["key"] == "k1"
    skipped = dict(stage="entry", key="k1", shared_marker={"skipped": True}, node_entry=None, url_marker=url)
    assert run_action(ActionModule, dict(skipped, controller_cache_dir=str(tmp_path)), tmp_path)["entry_source"] == "controller"
    assert run_action(ActionModule, skipped, tmp_path)["entry_source"] == "url"
    none = run_action(ActionModule, dict(stage="entry", key="k1"), tmp_path)
    assert (none["entry_meta"], none["entry_source"]) == (None, None)


def test_gate_names_bad_inputs(tmp_path):
    result = run_action(ActionModule, dict(stage="gate", version="main", gpu_state="ok",
                                           inputs=dict(source_type="git", cache_dir="cache")), tmp_path)
    assert not result.get("failed") and result["problems"] == [
        'apex_build_cache_dir must be an absolute path (got "cache").',
        'apex_build_version must be a commit id or a tag like 25.05, never a branch (got "main").']


def test_the_probes_reading_of_the_node_entry_stands_for_the_marker_and_wheel_reads(tmp_path):
    """A probe that read the key's entry (its marker names the installed wheel) makes the slurp and the
    stat unneeded: skipped, they are not taken as a missing entry."""
    probe = dict(PROBE, cache_entries={"k1": {"marker": _marker("k1"), "wheel_sha256": "a" * 64}})
    markers = run_action(ActionModule, dict(stage="markers", key="k1", node_marker={"skipped": True}, probe=probe),
                         tmp_path)["markers"]
    assert markers["node"]["entry"]["key"] == "k1"
    result = run_action(ActionModule, dict(stage="action", key="k1", markers=markers, node_wheel={"skipped": True},
                                           probe=probe, compat=H200_COMPAT), tmp_path)
    assert (result["action"], result["entry_source"]) == ("none", "node")
    # The wheel as the probe hashed it now, not as the marker says, decides: a changed wheel is no entry.
    changed = dict(PROBE, cache_entries={"k1": {"marker": _marker("k1"), "wheel_sha256": "b" * 64}})
    result = run_action(ActionModule, dict(stage="action", key="k1", markers=markers, node_wheel={"skipped": True},
                                           probe=changed, compat=H200_COMPAT), tmp_path)
    assert (result["action"], result["entry_source"]) == ("install", None)
    # Another key's entry is not this key's.
    result = run_action(ActionModule, dict(stage="markers", key="k2", node_marker={"skipped": True}, probe=probe), tmp_path)
    assert result["markers"]["node"] == {"entry": None, "problem": None}


def test_key_hashes_the_controller_archive_here(tmp_path):
    import hashlib
    archive = tmp_path / "apex.tar.gz"
    archive.write_bytes(b"an archive")
    args = dict(stage="key", probe_output=json.dumps(PROBE), compat=H200_COMPAT, version="6424da3", source_type="archive",
                archive=str(archive), flags=["--cpp_ext"], cache_dir="/c", work_dir="/w")
    result = run_action(ActionModule, args, tmp_path)
    assert result["key_inputs"]["apex_source"] == "6424da3 archive sha256:" + hashlib.sha256(b"an archive").hexdigest()
    archive.write_bytes(b"another archive")
    assert run_action(ActionModule, args, tmp_path)["key"] != result["key"]
    archive.unlink()
    missing = run_action(ActionModule, args, tmp_path)
    assert missing["failed"] and missing["msg"].startswith("apex_build_archive: %s cannot be read on the controller" % archive)
