# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""apex_build's decisions stage by stage (what aistack.gpu_node.apex_build_plan returns), fed by the
cuda_compat report and the APEX report recorded on the H200 (tests/gpu/results/h200)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

import pytest

from conftest import FIXTURES, REPO_ROOT

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import apex_build

H200_RESULTS = os.path.join(REPO_ROOT, "tests", "gpu", "results", "h200")
TESTED_COMMIT = "6424da3b4faa6c8f062da4a48c424fff3f02d42d"


def _recorded(name):
    with open(os.path.join(H200_RESULTS, name)) as handle:
        return json.load(handle)


H200_COMPAT = _recorded("host.json")["cuda_compat"]
H200_APEX = _recorded("apex.json")["built"]
H200_PROBE = {"python_tag": "cp312", "platform": "linux_x86_64", "cpus": 16, "memory_available_mib": 126000,
              "build_tools": {"setuptools": "80.9.0", "ninja": "1.13.0"}, "installed": None}
WHEEL_SHA = "a" * 64


def _marker(key, sha=WHEEL_SHA):
    return json.dumps({"key": key, "wheel": "apex-0.1-cp312-cp312-linux_x86_64.whl", "wheel_sha256": sha,
                       "required_modules": ["apex_C"]})


# ---------------------------------------------------------------------------
# gate
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("contrib, flags", [
    ([], ["--cpp_ext", "--cuda_ext"]),
    (["APEX_XENTROPY", "--fast_layer_norm", "xentropy", "apex_cpp_ext"], ["--cpp_ext", "--cuda_ext", "--fast_layer_norm", "--xentropy"]),
    (["Group_Norm"], ["--cpp_ext", "--cuda_ext", "--group_norm"]),
])
def test_requested_flags_are_core_then_sorted_unique_contrib(contrib, flags):
    assert apex_build.requested_flags(True, True, contrib) == flags


def test_requested_flags_without_core_extensions():
    assert apex_build.requested_flags(False, False, ["xentropy"]) == ["--xentropy"]


@pytest.mark.parametrize("version, legacy, resolved, ref", [
    ("", False, TESTED_COMMIT, None),
    ("", True, "25.05", True),
    ("25.07", True, "25.07", False),
    ("24.04.01", False, "24.04.01", True),
])
def test_gate_resolves_the_version_and_its_legacy_apis(version, legacy, resolved, ref):
    decision = apex_build.gate_decision(version, legacy, TESTED_COMMIT, True, True, [], "ok", False, "")
    assert (decision["version"], decision["legacy_apis_ref"]) == (resolved, ref)
    assert decision["legacy_tag"] == "25.05"
    assert decision["gate"] == {"run": True, "reason": None}


def test_gate_of_a_gpu_less_node_says_why_it_is_skipped():
    decision = apex_build.gate_decision("", False, TESTED_COMMIT, True, True, [], "no_gpu", False, "")
    assert decision["gate"]["run"] is False and "apex_build_cuda_ext: false" in decision["gate"]["reason"]
    assert apex_build.gate_decision("", False, TESTED_COMMIT, True, True, [], "no_gpu", True, "9.0")["gate"]["run"]


# ---------------------------------------------------------------------------
# key
# ---------------------------------------------------------------------------

def _h200_key(**overrides):
    args = dict(probe=H200_PROBE, compat=H200_COMPAT, source_type="archive", version=TESTED_COMMIT,
                archive_sha256=H200_APEX["source"].rsplit(":", 1)[1], arch_list="", cuda=True,
                flags=["--cpp_ext", "--cuda_ext"], cache_dir="/var/cache/aistack/apex-wheels",
                work_dir="/var/tmp/aistack-apex-build", cache_url="")
    args.update(overrides)
    return apex_build.key_decision(**args)


def test_key_of_the_recorded_h200_build():
    decision = _h200_key()
    inputs = decision["key_inputs"]
    assert inputs["apex_source"] == H200_APEX["source"]
    assert inputs == {"apex_source": H200_APEX["source"], "torch_version": "2.11.0+cu130", "torch_cuda": "13.0",
                      "torch_cuda_version": "13.0", "python_tag": "cp312", "platform": "linux_x86_64", "arch_list": "9.0",
                      "flags": ["--cpp_ext", "--cuda_ext"]}
    # The key the role computed on the H200 for the same inputs.
    assert decision["key"] == H200_APEX["key"] == apex_build.cache_key(decision["key_inputs"])
    assert decision["entry"] == "/var/cache/aistack/apex-wheels/" + decision["key"]
    assert decision["tree_root"] == "/var/tmp/aistack-apex-build/" + decision["key"]
    assert decision["url_entry"] == "" and decision["arch_list"] == "9.0"


def test_key_of_a_git_cpp_only_build_leaves_torch_cuda_and_arch_out():
    decision = _h200_key(source_type="git", cuda=False, flags=["--cpp_ext"], cache_url="https://cache.example/apex//")
    inputs = decision["key_inputs"]
    assert inputs["apex_source"] == TESTED_COMMIT
    assert (inputs["torch_cuda"], inputs["torch_cuda_version"], inputs["arch_list"]) == ("13.0", None, None)
    assert decision["url_entry"] == "https://cache.example/apex/" + decision["key"]


def test_key_takes_the_users_arch_list_with_spaces_as_separators():
    decision = _h200_key(arch_list="8.0 9.0+PTX")
    assert decision["arch_list"] == "8.0;9.0+PTX" and decision["key_inputs"]["arch_list"] == "8.0;9.0+PTX"
    assert decision["key"] != _h200_key()["key"]


# ---------------------------------------------------------------------------
# markers and action
# ---------------------------------------------------------------------------

def _markers(key, node="", controller="", url=""):
    return apex_build.marker_states(key, {"node": node, "controller": controller, "url": url})


def test_marker_states_read_each_place():
    markers = _markers("k1", node=_marker("k1"), controller="{", url=_marker("other"))
    assert markers["node"]["entry"]["wheel_sha256"] == WHEEL_SHA and markers["node"]["problem"] is None
    assert markers["controller"]["problem"].startswith("the marker is not JSON")
    assert markers["url"]["problem"] == "the marker is for key 'other', not k1"


@pytest.mark.parametrize("node, node_sha, installed, builder, force, controller, url, action", [
    ("", "", None, True, False, "", "", "build"),                       # nothing anywhere: the builder builds
    ("", "", None, False, False, "", "", "install"),                    # others wait for its entry
    ("m", WHEEL_SHA, WHEEL_SHA, True, False, "", "", "none"),           # the verified wheel is installed
    ("m", WHEEL_SHA, "b" * 64, True, False, "", "", "install"),         # another wheel is installed
    ("m", "c" * 64, WHEEL_SHA, True, False, "", "", "build"),           # the cached wheel changed: not an entry
    ("m", WHEEL_SHA, WHEEL_SHA, True, True, "", "", "build"),           # forced
    ("m", WHEEL_SHA, WHEEL_SHA, False, True, "", "", "install"),        # forced: reinstall the builder's new wheel
    ("", "", None, True, False, "m", "", "install"),                    # the controller has it
    ("", "", None, True, False, "", "m", "install"),                    # the URL has it
])
def test_action(node, node_sha, installed, builder, force, controller, url, action):
    markers = _markers("k1", *[_marker("k1") if text else "" for text in (node, controller, url)])
    decision = apex_build.action_decision(markers, node_sha, installed, builder, force, False, False)
    assert decision["action"] == action
    assert (decision["node_entry"] is not None) == (node_sha == WHEEL_SHA and bool(node))
    assert decision["entry_source"] == ("node" if decision["node_entry"] else None)


def test_a_builder_with_its_entry_hands_it_on_where_it_is_missing():
    markers = _markers("k1", node=_marker("k1"), url=_marker("k1"))
    decision = apex_build.action_decision(markers, WHEEL_SHA, WHEEL_SHA, True, False, True, True)
    assert (decision["share_pending"], decision["publish_pending"]) == (True, False)
    assert (decision["controller_has_entry"], decision["url_has_entry"]) == (False, True)
    other = apex_build.action_decision(markers, WHEEL_SHA, WHEEL_SHA, False, False, True, True)
    assert (other["share_pending"], other["publish_pending"]) == (False, False)


def test_preflight_blockers_only_for_a_build():
    cpu_compat = dict(H200_COMPAT, torch=dict(H200_COMPAT["torch"], cuda=None), nvcc={"present": False, "error": "not found"})
    assert apex_build.preflight_blockers("install", cpu_compat, True, "", H200_PROBE, {}, 3686) == {
        "blockers": [], "overrides_problem": None}
    found = apex_build.preflight_blockers("build", cpu_compat, True, "", H200_PROBE, {"max_jobs": 100000}, 3686)
    assert [item["message"].split(" ")[0] for item in found["blockers"]] == ["CUDA", "CUDA", "No"]
    assert found["overrides_problem"].startswith("MAX_JOBS 100000 x APEX_PARALLEL_BUILD 1 x nvcc threads 1")


def test_the_recorded_h200_chain_has_no_preflight_blockers():
    assert apex_build.preflight_blockers("build", H200_COMPAT, True, "9.0", H200_PROBE, {"max_jobs": 0}, 3686) == {
        "blockers": [], "overrides_problem": None}


# ---------------------------------------------------------------------------
# source and entry
# ---------------------------------------------------------------------------

def _apex_head():
    with open(os.path.join(FIXTURES, "apex_setup", "current-layout.py.txt")) as handle:
        return handle.read()


def test_source_of_current_apex_on_the_recorded_h200():
    decision = apex_build.source_decision(_apex_head(), True, True, [], H200_PROBE, H200_COMPAT, "/usr/local/cuda", "9.0",
                                          3686, {"max_jobs": 0, "parallel_build": 0, "nvcc_threads": 0})
    assert decision["plan"]["flags"] == ["--cpp_ext", "--cuda_ext"] and decision["blockers"] == []
    env = decision["settings"]["env"]
    assert (env["CUDA_HOME"], env["TORCH_CUDA_ARCH_LIST"], env["APEX_CUDA_EXT"]) == ("/usr/local/cuda", "9.0", "1")


def test_source_without_nvcc_gets_no_cuda_home_and_names_the_blocker():
    compat = dict(H200_COMPAT, nvcc={"present": False, "error": "not found"})
    decision = apex_build.source_decision(_apex_head(), True, False, [], H200_PROBE, compat, "/usr/local/cuda", "", 3686, {})
    assert "CUDA_HOME" not in decision["settings"]["env"] and decision["blockers"] == []


@pytest.mark.parametrize("contrib, overrides, prefix", [
    (["no_such_extension"], {}, "apex_build_plan: apex_build_contrib_extensions: this APEX source has no --no_such_extension"),
    ([], {"max_jobs": 100000}, "apex_build_settings: MAX_JOBS 100000"),
])
def test_source_refusals_name_what_is_wrong(contrib, overrides, prefix):
    with pytest.raises(ValueError) as error:
        apex_build.source_decision(_apex_head(), True, True, contrib, H200_PROBE, H200_COMPAT, "/usr/local/cuda", "9.0", 3686,
                                   overrides)
    assert str(error.value).startswith(prefix)


@pytest.mark.parametrize("shared, node_entry, force, controller, url, source", [
    (None, {"wheel": "x"}, False, "", "", "node"),
    (None, {"wheel": "x"}, True, "", "", None),            # a forced rebuild makes the node's entry stale
    (None, {"wheel": "x"}, True, "m", "m", "controller"),
    (None, None, False, "", "m", "url"),
    ("m", None, False, "m", "m", "node"),                  # the builder wrote the shared folder since preflight
    ("", {"wheel": "x"}, False, "", "", None),             # a shared folder without a marker
])
def test_entry(shared, node_entry, force, controller, url, source):
    texts = [_marker("k1") if text else text for text in (shared, controller, url)]
    decision = apex_build.entry_decision("k1", texts[0], node_entry, force, texts[1], texts[2])
    assert decision["entry_source"] == source
    assert (decision["entry_meta"] is None) == (source is None)


def test_a_recorded_cuda_report_stands_only_for_the_same_chain_inputs():
    gpu = {"state": H200_COMPAT["gpu_state"], "gpus": H200_COMPAT["gpus"], "driver": H200_COMPAT["driver"]}
    toolkit = {"homes": [["/usr/local/cuda", "/usr/local/cuda-13.0", ["/usr/local/cuda-13.0/bin/nvcc", 1, 2]]], "forward_compat": []}
    inputs = ["/opt/env/bin/python", "/usr/local/cuda", gpu, toolkit, "c" * 64, "2026-12"]
    key = apex_build.cuda_chain_key(*inputs)
    proof = {"cuda_report": H200_COMPAT, "cuda_chain_key": key}
    assert apex_build.recorded_cuda_report(proof, key) == H200_COMPAT
    for index, other in enumerate(["/opt/other/bin/python", "", dict(gpu, driver={"version": "595.45.04"}),
                                   dict(toolkit, forward_compat=["/usr/local/cuda-13.0/compat/libcuda.so.1"]), "d" * 64, "2027-01"]):
        changed = list(inputs)
        changed[index] = other
        assert apex_build.recorded_cuda_report(proof, apex_build.cuda_chain_key(*changed)) is None, index
    assert apex_build.recorded_cuda_report(None, key) is None
    assert apex_build.recorded_cuda_report({"cuda_report": H200_COMPAT}, key) is None
    # Without GPU facts cuda_compat reads the GPUs itself: nothing keys its report.
    assert apex_build.cuda_chain_key(inputs[0], inputs[1], {}, toolkit, "c" * 64, "2026-12") is None
    assert apex_build.recorded_cuda_report(dict(proof, cuda_chain_key=None), None) is None


def test_a_recorded_proof_stands_only_with_nothing_to_install_for_its_key_and_without_problems():
    proof = {"proof_key": "k1", "verify": {"problems": []}}
    assert apex_build.proof_holds("none", proof, "k1") is True
    assert apex_build.proof_holds("install", proof, "k1") is False
    assert apex_build.proof_holds("none", proof, "k2") is False
    assert apex_build.proof_holds("none", None, "k1") is False
    assert apex_build.proof_holds("none", dict(proof, verify={"problems": ["amp_C does not match torch"]}), "k1") is False
    assert apex_build.proof_holds("none", dict(proof, verify=None), "k1") is False
