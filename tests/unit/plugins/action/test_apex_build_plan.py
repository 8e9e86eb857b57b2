# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The apex_build_plan action: the role's settings read from the task's variables, the node read
through read-only modules (counted: one round-trip each, only where one is needed), the refusals
it words, and the plan each stage hands on. The decisions are tested on module_utils.decide.apex_build."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import hashlib
import json
import os
from unittest import mock

import pytest
import yaml

from conftest import REPO_ROOT
from ansible.errors import AnsibleActionFail
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.template import Templar
from ansible_collections.aistack.gpu_node.plugins.action.apex_build_plan import ActionModule
from ansible_collections.aistack.gpu_node.plugins.plugin_utils import role_settings

with open(os.path.join(REPO_ROOT, "tests", "gpu", "results", "h200", "host.json")) as _handle:
    H200_COMPAT = json.load(_handle)["cuda_compat"]
with open(os.path.join(REPO_ROOT, "roles", "apex_build", "defaults", "main.yml")) as _handle:
    DEFAULTS = yaml.safe_load(_handle)
with open(os.path.join(REPO_ROOT, "tests", "support", "apex_stub", "setup.py")) as _handle:
    STUB_SETUP_PY = _handle.read()
CPU_COMPAT = {"torch": {"present": True, "version": "2.13.0+cpu", "cuda": None}, "nvcc": {"present": False, "error": "no nvcc"}}
# The toolkit as apex_env.py's probe reads it on a node with CUDA 13.0 at /usr/local/cuda.
TOOLKIT = {"homes": [["/usr/local/cuda", "/usr/local/cuda-13.0", ["/usr/local/cuda-13.0/bin/nvcc", 21504, 1767225600000000000]],
                     ["", None, None], ["", None, None], ["", None, None],
                     ["/usr/local/cuda", "/usr/local/cuda-13.0", ["/usr/local/cuda-13.0/bin/nvcc", 21504, 1767225600000000000]]],
           "forward_compat": []}
PROBE = {"python_tag": "cp312", "platform": "linux_x86_64", "cpus": 2, "memory_available_mib": 20000, "build_path": "/usr/bin",
         "build_tools": {"setuptools": "80.9.0", "ninja": None}, "installed": {"wheel_sha256": "a" * 64}, "proof": None,
         "toolkit": TOOLKIT}
WHEEL = "apex-0.1-cp312-cp312-linux_x86_64.whl"
HOST = "node1"


def _slurped(text):
    return {"content": base64.b64encode(text.encode("utf-8")).decode("ascii"), "encoding": "base64"}


def _marker(key, sha="a" * 64):
    return json.dumps({"key": key, "wheel": WHEEL, "wheel_sha256": sha, "required_modules": ["apex_C"]})


class Node(object):
    """The node as the action's modules see it: each module name answers from a function of its
    arguments; every call is kept, in order (the round-trips)."""

    def __init__(self, **answers):
        self.answers = dict({
            "ansible.legacy.command": lambda args: {"rc": 0, "stdout": json.dumps(PROBE)},
            "aistack.gpu_node.cuda_compat": lambda args: {"report": H200_COMPAT},
            "ansible.legacy.slurp": lambda args: {"failed": True, "msg": "file not found"},
            "ansible.legacy.uri": lambda args: {"status": 404},
            "ansible.legacy.stat": lambda args: {"stat": {"exists": False}},
            "ansible.legacy.find": lambda args: {"files": []},
        }, **dict((name.replace("__", "."), answer) for name, answer in answers.items()))
        self.calls = []

    def __call__(self, module_name=None, module_args=None, task_vars=None):
        self.calls.append((module_name, module_args))
        return self.answers[module_name](module_args)

    @property
    def modules(self):
        return [name for name, _args in self.calls]


def task_vars(**settings):
    values = dict(DEFAULTS, apex_build_env_prefix="/opt/env", inventory_hostname=HOST,
                  ansible_facts={"aistack_gpu": {"state": "ok"}},
                  __apex_build_tested_commit="6424da3b4faa6c8f062da4a48c424fff3f02d42d",
                  __apex_build_marker_name="aistack-apex.json", __apex_build_env_script="print('probe')",
                  __apex_build_proof_path="/opt/env/etc/aistack/apex_build-proof.json",
                  __apex_build_verify_options={"numerics": True, "tolerance": 0.0001, "legacy_apis": False})
    values.update(("apex_build_" + name, value) for name, value in settings.items())
    return values


def plan(args, node=None, variables=None):
    """Run the action as a task with ``args`` on a host with ``variables``; (result, node)."""
    node = node or Node()
    variables = variables if variables is not None else task_vars()
    task = mock.MagicMock(args=args, async_val=0, check_mode=False, action="aistack.gpu_node.apex_build_plan")
    action = ActionModule(task, mock.MagicMock(), PlayContext(), DataLoader(), Templar(loader=DataLoader(), variables=variables),
                          mock.MagicMock())
    with mock.patch.object(ActionModule, "_execute_module", side_effect=node):
        return action.run(task_vars=variables), node


def before(node=None, **settings):
    return plan(dict(stage="before", probe=True), node, task_vars(**settings))


# ---------------------------------------------------------------------------
# before
# ---------------------------------------------------------------------------

def test_before_without_probe_checks_the_inputs_and_the_gate_and_reads_nothing():
    result, node = plan(dict(stage="before", probe=False))
    assert not result["changed"] and not result.get("failed") and node.calls == []
    assert (result["version"], result["run"], result["probed"], result["key"]) == (
        "6424da3b4faa6c8f062da4a48c424fff3f02d42d", True, False, None)
    assert result["flags"] == ["--cpp_ext", "--cuda_ext"]


def test_bad_input_fails_naming_every_variable_before_the_node_is_read():
    result, node = before(version="main", cache_dir="cache")
    assert result["failed"] and node.calls == []
    assert result["msg"] == ('apex_build: bad input on node1: apex_build_cache_dir must be an absolute path (got "cache"). '
                             'apex_build_version must be a commit id or a tag like 25.05, never a branch (got "main").')


def test_a_gpu_less_node_that_is_no_build_host_is_left_alone_unread():
    variables = task_vars()
    variables["ansible_facts"] = {"aistack_gpu": {"state": "no_gpu"}}
    result, node = plan(dict(stage="before", probe=True), None, variables)
    assert (result["run"], result["probed"]) == (False, False) and node.calls == []
    assert result["reason"].startswith("no NVIDIA GPU on this node")


def test_legacy_apis_warn_and_name_the_tag():
    result, _node = plan(dict(stage="before", probe=False), None, task_vars(legacy_apis=True))
    assert result["version"] == "25.05"
    assert result["warnings"] == ["apex_build_legacy_apis pins APEX 25.05 for apex.amp / apex.parallel, which upstream removed "
                                  "in May 2025 and no longer fixes. Port to torch.amp (autocast, GradScaler) and "
                                  "torch.nn.parallel.DistributedDataParallel."]


def test_the_probing_pass_continues_the_gate_pass_without_deciding_or_warning_again():
    variables = task_vars(legacy_apis=True)
    gate, _node = plan(dict(stage="before", probe=False), None, variables)
    assert len(gate["warnings"]) == 1
    result, node = plan(dict(stage="before", probe=True, plan=gate), None, variables)
    assert "warnings" not in result and result["version"] == "25.05" and result["probed"]
    assert result["key_inputs"]["apex_source"] == "25.05" and len(node.calls) == 3


def test_a_first_run_reads_the_environment_the_chain_and_the_markers():
    result, node = before(cache_url="http://cache.example/apex")
    # probe, cuda_compat, the node's marker, the URL's marker: what the role's four tasks read.
    assert node.modules == ["ansible.legacy.command", "aistack.gpu_node.cuda_compat", "ansible.legacy.slurp", "ansible.legacy.uri"]
    command = node.calls[0][1]
    assert command["argv"][:4] == ["/opt/env/bin/python", "-c", "print('probe')", "probe"]
    assert command["argv"][4:] == ["/opt/env/etc/aistack/apex_build-proof.json", "/opt/env/bin/python",
                                   "/var/cache/aistack/apex-wheels", "aistack-apex.json", "/usr/local/cuda"]
    assert node.calls[1][1] == {"python": "/opt/env/bin/python", "cuda_home": "/usr/local/cuda", "apex": True, "fail_on": "never",
                                "gpu_facts": {"state": "ok"}}
    assert node.calls[3][1]["url"] == "http://cache.example/apex/%s/aistack-apex.json" % result["key"]
    assert "url_password" not in node.calls[3][1] and node.calls[3][1]["force_basic_auth"] is False
    assert result["probed"] and result["entry"] == "/var/cache/aistack/apex-wheels/" + result["key"]
    assert result["arch_list"] == "9.0" and len(result["proof_key"]) == 24
    assert all(state == {"entry": None, "problem": None} for state in result["markers"].values())


def _no_op_probe(first, **proof):
    """The probe of a node where the verified wheel of ``first``'s key is installed and a verify recorded its proof."""
    return dict(PROBE, cache_entries={first["key"]: {"marker": _marker(first["key"]), "wheel_sha256": "a" * 64}},
                proof=dict({"cuda_report": H200_COMPAT, "cuda_chain_key": first["cuda_chain_key"]}, **proof))


def _probing(probe):
    return Node(ansible__legacy__command=lambda args: {"rc": 0, "stdout": json.dumps(probe)})


def test_a_no_op_run_reads_the_node_once_and_the_url_once():
    """The probe read the entry whose marker names the installed wheel (no slurp, no stat), and the proof
    with the cuda_compat report it recorded, whose inputs read the same (no cuda_compat): the round-trips of
    a run that changes nothing are the probe's, and the URL's."""
    first, _node = before(cache_url="http://cache.example/apex")
    assert len(first["cuda_chain_key"]) == 24
    result, node = before(_probing(_no_op_probe(first)), cache_url="http://cache.example/apex")
    assert node.modules == ["ansible.legacy.command", "ansible.legacy.uri"]
    assert result["compat"] == H200_COMPAT and result["cuda_chain_key"] == first["cuda_chain_key"]
    assert result["key"] == first["key"] and result["markers"]["node"]["entry"]["key"] == first["key"]
    assert result["node_wheel_sha256"] == "a" * 64
    result, node = before(_probing(_no_op_probe(first)))
    assert node.modules == ["ansible.legacy.command"]


def _toolkit_replaced():
    homes = [list(home) for home in TOOLKIT["homes"]]
    homes[0][2] = ["/usr/local/cuda-13.0/bin/nvcc", 21512, 1767312000000000000]
    return dict(TOOLKIT, homes=homes)


def _gpu_facts(**driver):
    return {"aistack_gpu": {"state": "ok", "driver": dict({"version": "580.95.05"}, **driver)}}


@pytest.mark.parametrize("change", [
    pytest.param(lambda variables, probe: probe.update(toolkit=_toolkit_replaced()), id="nvcc replaced in place"),
    pytest.param(lambda variables, probe: probe["toolkit"]["homes"].__setitem__(1, ["/opt/cuda-12.8", "/opt/cuda-12.8", None]),
                 id="CUDA_HOME set"),
    pytest.param(lambda variables, probe: probe.update(toolkit=dict(TOOLKIT, forward_compat=[
        "/usr/local/cuda-13.0/compat/libcuda.so.1"])), id="forward-compat libraries installed"),
    pytest.param(lambda variables, probe: variables.update(ansible_facts=_gpu_facts(version="595.45.04")), id="driver"),
    pytest.param(lambda variables, probe: variables.update(ansible_facts={"aistack_gpu": {"state": "ok", "gpus": [
        {"name": "NVIDIA H200", "compute_capability": "9.0"}]}}), id="GPUs"),
    pytest.param(lambda variables, probe: variables.update(apex_build_cuda_home="/usr/local/cuda-12.8"), id="cuda_home"),
])
def test_the_cuda_chain_is_checked_again_when_an_input_it_rests_on_changed(change):
    variables = task_vars()
    variables["ansible_facts"] = _gpu_facts()
    first, _node = plan(dict(stage="before", probe=True), None, variables)
    probe = _no_op_probe(first)
    result, node = plan(dict(stage="before", probe=True), _probing(probe), variables)
    assert node.modules == ["ansible.legacy.command"] and result["cuda_chain_key"] == first["cuda_chain_key"]
    probe = json.loads(json.dumps(probe))
    change(variables, probe)
    result, node = plan(dict(stage="before", probe=True), _probing(probe), variables)
    assert node.modules == ["ansible.legacy.command", "aistack.gpu_node.cuda_compat"]
    # The environment is as the proof found it: its report still spares cuda_compat the torch import.
    assert node.calls[1][1]["reading"] == H200_COMPAT and node.calls[1][1]["gpu_facts"] == variables["ansible_facts"]["aistack_gpu"]
    assert result["cuda_chain_key"] != first["cuda_chain_key"]


def test_the_cuda_chain_is_checked_again_in_a_new_month_and_with_other_checks():
    first, _node = before()
    with mock.patch("ansible_collections.aistack.gpu_node.plugins.action.apex_build_plan.datetime") as clock:
        clock.date.today.return_value.strftime.return_value = "2099-01"
        _result, node = before(_probing(_no_op_probe(first)))
    assert node.modules == ["ansible.legacy.command", "aistack.gpu_node.cuda_compat"]
    with mock.patch("ansible_collections.aistack.gpu_node.plugins.action.apex_build_plan._cuda_checks_sha256",
                    return_value="0" * 64):
        _result, node = before(_probing(_no_op_probe(first)))
    assert node.modules == ["ansible.legacy.command", "aistack.gpu_node.cuda_compat"]


def test_a_proof_without_the_chain_key_has_the_chain_checked():
    """A proof an older release recorded names no chain key: cuda_compat runs, with its report as the reading."""
    first, _node = before()
    probe = _no_op_probe(first)
    del probe["proof"]["cuda_chain_key"]
    _result, node = before(_probing(probe))
    assert node.modules == ["ansible.legacy.command", "aistack.gpu_node.cuda_compat"]
    assert node.calls[1][1]["reading"] == H200_COMPAT


def test_a_node_entry_the_probe_did_not_read_is_read_and_its_wheel_hashed():
    first, _node = before()
    node = Node(ansible__legacy__slurp=lambda args: _slurped(_marker(first["key"])),
                ansible__legacy__stat=lambda args: {"stat": {"exists": True, "checksum": "b" * 64}})
    result, node = before(node)
    assert node.modules[2:] == ["ansible.legacy.slurp", "ansible.legacy.stat"]
    assert node.calls[3][1]["path"] == "%s/%s" % (first["entry"], WHEEL)
    assert result["node_wheel_sha256"] == "b" * 64


def test_an_unusable_marker_is_a_warning():
    node = Node(ansible__legacy__slurp=lambda args: _slurped("not json"))
    result, _node = before(node)
    assert result["markers"]["node"]["problem"].startswith("the marker is not JSON")
    assert result["warnings"][0].startswith("the node cache entry for key %s is ignored: the marker is not JSON" % result["key"])


def test_an_environment_whose_python_does_not_run_is_refused_by_name():
    node = Node(ansible__legacy__command=lambda args: {"rc": 2, "failed": True, "msg": "[Errno 2] No such file or directory"})
    result, node = before(node)
    assert result["failed"] and node.modules == ["ansible.legacy.command"]
    assert result["msg"] == ("apex_build_env_prefix: /opt/env/bin/python did not run ([Errno 2] No such file or directory); "
                             "point apex_build_env_prefix at a venv or conda env that has torch.")


def test_a_probe_that_printed_no_json_is_named():
    result, _node = before(Node(ansible__legacy__command=lambda args: {"rc": 0, "stdout": "Traceback"}))
    assert result["failed"] and result["msg"].startswith("apex_build: the environment probe printed no JSON")


def test_an_environment_without_torch_is_refused_by_name():
    node = Node(aistack__gpu_node__cuda_compat=lambda args: {"report": {"torch": {"present": False, "error": "No module named 'torch'"}}})
    result, _node = before(node)
    assert result["failed"] and result["msg"].startswith(
        "apex_build_env_prefix: torch is not importable with /opt/env/bin/python (No module named 'torch').")


def test_an_unreachable_cache_url_is_refused_naming_it_and_the_credentials_go_to_the_node_only():
    key = _probed()["key"]
    node = Node(ansible__legacy__uri=lambda args: {"status": -1, "msg": "Connection refused"})
    result, node = before(node, cache_url="http://127.0.0.1:9/apex", cache_url_username="builder",
                          cache_url_password="test-only-secret")
    assert result["failed"] and result["msg"].startswith(
        "apex_build_cache_url: http://127.0.0.1:9/apex/%s/aistack-apex.json answered nothing from node1 (Connection refused). "
        "Every node must reach" % key)
    assert node.calls[-1][1]["url_password"] == "test-only-secret" and node.calls[-1][1]["force_basic_auth"] is True
    assert "test-only-secret" not in json.dumps(result)


def test_a_source_archive_is_hashed_where_it_is(tmp_path):
    archive = tmp_path / "apex.tar.gz"
    archive.write_bytes(b"an archive")
    result, node = before(source_type="archive", archive=str(archive), version="0.1")
    assert result["key_inputs"]["apex_source"] == "0.1 archive sha256:" + hashlib.sha256(b"an archive").hexdigest()
    assert "ansible.legacy.stat" not in node.modules
    archive.unlink()
    result, _node = before(source_type="archive", archive=str(archive), version="0.1")
    assert result["failed"] and result["msg"].startswith("apex_build_archive: %s cannot be read on the controller" % archive)
    result, node = before(source_type="archive", archive="/srv/apex.tar.gz", archive_on_node=True, version="0.1")
    assert result["failed"] and result["msg"] == "apex_build_archive: /srv/apex.tar.gz does not exist on the node."
    on_node = Node(ansible__legacy__stat=lambda args: {"stat": {"exists": True, "checksum": "c" * 64}})
    result, node = before(on_node, source_type="archive", archive="/srv/apex.tar.gz", archive_on_node=True, version="0.1")
    assert result["key_inputs"]["apex_source"] == "0.1 archive sha256:" + "c" * 64
    assert node.calls[2] == ("ansible.legacy.stat", {"path": "/srv/apex.tar.gz", "checksum_algorithm": "sha256"})


# ---------------------------------------------------------------------------
# decide
# ---------------------------------------------------------------------------

def _probed(node=None, **settings):
    result, _node = before(node, **settings)
    return result


def test_decide_needs_the_plan_and_the_builder():
    with pytest.raises(AnsibleActionFail, match="stage is decide but all of the following are missing: builder"):
        plan(dict(stage="decide", plan={"key": "k"}))


def test_the_elected_builder_builds_only_where_its_wheel_travels():
    probed = _probed(arch_list="9.0")
    result, node = plan(dict(stage="decide", plan=probed, builder="node2"), None,
                        task_vars(arch_list="9.0", controller_cache_dir="/ctl"))
    assert (result["builder"], result["action"]) == ("node2", "install") and node.calls == []
    assert result["key"] == probed["key"] and result["markers"] == probed["markers"]
    # Without a cache a wheel can travel through, every host builds its own.
    result, _node = plan(dict(stage="decide", plan=probed, builder="node2"), None, task_vars(arch_list="9.0"))
    assert (result["builder"], result["action"]) == ("node1", "build")
    assert result["warnings"] == ["no ninja in /opt/env/bin nor on PATH; torch's extension builder then compiles one file at a "
                                  "time and ignores MAX_JOBS. Install ninja into the environment for a parallel build."]


def test_a_build_the_chain_stops_is_refused_with_each_fix():
    node = Node(aistack__gpu_node__cuda_compat=lambda args: {"report": CPU_COMPAT})
    probed = _probed(node, arch_list="9.0")
    result, _node = plan(dict(stage="decide", plan=probed, builder=HOST), None, task_vars(arch_list="9.0"))
    assert result["failed"] and result["msg"].startswith(
        "apex_build cannot build APEX 6424da3b4faa6c8f062da4a48c424fff3f02d42d in /opt/env on node1 (torch 2.13.0+cpu, "
        "torch.version.cuda none, nvcc none at /usr/local/cuda): CUDA extensions were requested but torch 2.13.0+cpu is a "
        "CPU-only build.")
    assert " Fix: Install a CUDA build of torch" in result["msg"]


def test_parallelism_set_by_hand_that_cannot_fit_is_refused_before_the_source_is_read():
    probed = _probed(cuda_ext=False, max_jobs=1024)
    result, _node = plan(dict(stage="decide", plan=probed, builder=HOST), None, task_vars(cuda_ext=False, max_jobs=1024))
    assert result["failed"] and result["msg"].startswith("apex_build on node1: MAX_JOBS 1024 x APEX_PARALLEL_BUILD 1 x nvcc threads 1")


def test_a_recorded_proof_stands_unless_verify_always():
    first = _probed()
    proof = {"proof_key": first["proof_key"], "verify": {"problems": []}, "cuda_report": H200_COMPAT}
    probe = dict(PROBE, proof=proof, cache_entries={first["key"]: {"marker": _marker(first["key"]), "wheel_sha256": "a" * 64}})
    with mock.patch("ansible_collections.aistack.gpu_node.plugins.module_utils.decide.env_proof.proof_holds", return_value=True):
        probed = _probed(Node(ansible__legacy__command=lambda args: {"rc": 0, "stdout": json.dumps(probe)}))
        result, _node = plan(dict(stage="decide", plan=probed, builder=HOST))
        assert (result["action"], result["entry_source"], result["proven"]) == ("none", "node", True)
        assert result["entry_meta"]["key"] == first["key"]
        result, _node = plan(dict(stage="decide", plan=probed, builder=HOST), None, task_vars(verify_always=True))
        assert result["proven"] is False


# ---------------------------------------------------------------------------
# source
# ---------------------------------------------------------------------------

def _decided(**settings):
    probed = _probed(**settings)
    result, _node = plan(dict(stage="decide", plan=probed, builder=HOST), None, task_vars(**settings))
    return result


STAND_IN = dict(cuda_ext=False, contrib_extensions=["demo_contrib"], source_type="archive", archive="/srv/apex.tar.gz",
                archive_on_node=True, version="0.1")


def _stand_in_node(**answers):
    return Node(aistack__gpu_node__cuda_compat=lambda args: {"report": CPU_COMPAT},
                ansible__legacy__stat=lambda args: {"stat": {"exists": True, "checksum": "c" * 64, "size": 3 * 1048576}}, **answers)


def test_source_reads_the_top_setup_py_and_sizes_the_build():
    probed = _probed(_stand_in_node(), **STAND_IN)
    decided, _node = plan(dict(stage="decide", plan=probed, builder=HOST), None, task_vars(**STAND_IN))
    assert decided["action"] == "build"
    tree = decided["tree_root"]
    node = Node(ansible__legacy__find=lambda args: {"files": [{"path": tree + "/src/apex/setup.py"}, {"path": tree + "/src/setup.py"}]},
                ansible__legacy__slurp=lambda args: _slurped(STUB_SETUP_PY))
    result, node = plan(dict(stage="source", plan=decided), node, task_vars(**STAND_IN))
    assert node.calls[0][1] == {"paths": tree + "/src", "patterns": "setup.py", "recurse": True, "depth": 2}
    assert node.calls[1][1] == {"src": tree + "/src/setup.py"} and result["setup_py"] == tree + "/src/setup.py"
    assert result["build_settings"]["env"] == {"APEX_CPP_EXT": "1", "APEX_DEMO_CONTRIB": "1", "MAX_JOBS": "2",
                                               "APEX_PARALLEL_BUILD": "1"}
    assert result["build_plan"]["required_modules"] and result["action"] == "build"


def test_source_refusals():
    decided = _decided(cuda_ext=False)
    result, _node = plan(dict(stage="source", plan=decided), None, task_vars(cuda_ext=False))
    assert result["failed"] and result["msg"] == (
        "apex_build: no setup.py in the top two levels of the APEX source (git https://github.com/NVIDIA/apex.git).")
    node = Node(ansible__legacy__find=lambda args: {"files": [{"path": "/w/src/setup.py"}]},
                ansible__legacy__slurp=lambda args: _slurped(STUB_SETUP_PY))
    result, _node = plan(dict(stage="source", plan=decided), node, task_vars(cuda_ext=False, contrib_extensions=["xentropy"]))
    assert result["failed"] and result["msg"].startswith("apex_build_plan: apex_build_contrib_extensions: this APEX source has no")


# ---------------------------------------------------------------------------
# entry
# ---------------------------------------------------------------------------

def test_entry_of_the_wheel_this_host_built():
    probed = _probed(_stand_in_node(), **STAND_IN)
    decided, _node = plan(dict(stage="decide", plan=probed, builder=HOST), None, task_vars(**STAND_IN))
    node = Node(ansible__legacy__find=lambda args: {"files": [{"path": "/w/src/setup.py"}]},
                ansible__legacy__slurp=lambda args: _slurped(STUB_SETUP_PY))
    sourced, _node = plan(dict(stage="source", plan=decided), node, task_vars(**STAND_IN))
    build = {"finished": 1, "rc": 0, "start": "2026-12-06 10:00:00.000000", "end": "2026-12-06 10:01:30.250000"}
    dist = sourced["tree_root"] + "/dist"
    node = _stand_in_node(ansible__legacy__find=lambda args: {"files": [{"path": dist + "/" + WHEEL}]})
    result, node = plan(dict(stage="entry", plan=sourced, build=build), node, task_vars(**STAND_IN))
    assert node.modules == ["ansible.legacy.find", "ansible.legacy.stat"]
    assert (result["entry_source"], result["wheel_path"]) == ("build", dist + "/" + WHEEL)
    meta = result["entry_meta"]
    assert (meta["key"], meta["wheel"], meta["wheel_sha256"], meta["wheel_mib"], meta["built_on"], meta["build_seconds"]) == (
        sourced["key"], WHEEL, "c" * 64, 3.0, HOST, 90.2)
    assert meta["build_env"] == sourced["build_settings"]["env"] and meta["inputs"] == sourced["key_inputs"]
    two = _stand_in_node(ansible__legacy__find=lambda args: {"files": [{"path": dist + "/a.whl"}, {"path": dist + "/b.whl"}]})
    result, _node = plan(dict(stage="entry", plan=sourced, build=build), two, task_vars(**STAND_IN))
    assert result["failed"] and result["msg"] == "apex_build: expected one apex-*.whl in %s, found ['%s/a.whl', '%s/b.whl']." % (
        dist, dist, dist)
    failed = dict(build, rc=1, stderr="error: command 'g++' failed")
    result, node = plan(dict(stage="entry", plan=sourced, build=failed), None, task_vars(**STAND_IN))
    assert result["failed"] and node.calls == []
    assert result["msg"] == ("pip wheel of APEX failed on node1 (rc 1); full log %s/build.log. Last lines: error: command 'g++' failed"
                             % sourced["tree_root"])


def test_entry_of_an_installer_rereads_what_the_builder_may_have_filled(tmp_path):
    decided = _decided(cache_shared=True, cache_url="http://cache.example/apex", cache_url_upload=True)
    assert decided["action"] == "build"
    key = decided["key"]
    settings = dict(cache_shared=True, cache_url="http://cache.example/apex", cache_url_upload=True)
    node = Node(ansible__legacy__slurp=lambda args: _slurped(_marker(key)))
    result, node = plan(dict(stage="entry", plan=decided), node, task_vars(**settings))
    assert node.modules == ["ansible.legacy.slurp", "ansible.legacy.uri"]
    assert (result["entry_source"], result["entry_meta"]["key"]) == ("node", key)
    # The URL's entry, re-read; then the controller's, which comes before the URL's.
    node = Node(ansible__legacy__uri=lambda args: {"status": 200, "content": _marker(key)})
    result, node = plan(dict(stage="entry", plan=decided), node, task_vars(**settings))
    assert result["entry_source"] == "url"
    (tmp_path / key).mkdir()
    (tmp_path / key / "aistack-apex.json").write_text(_marker(key))
    result, _node = plan(dict(stage="entry", plan=decided), None, task_vars(controller_cache_dir=str(tmp_path)))
    assert result["entry_source"] == "controller"
    result, node = plan(dict(stage="entry", plan=decided), None, task_vars())
    assert result["failed"] and node.calls == []
    assert result["msg"] == ("No verified APEX wheel for cache key %s on node1, on a shared apex_build_cache_dir, in "
                             "apex_build_controller_cache_dir or at apex_build_cache_url; its builder node1 did not make one "
                             "(see its errors above)." % key)


def test_entry_keeps_the_url_entry_the_markers_read_without_asking_again():
    key = _probed()["key"]
    node = Node(ansible__legacy__uri=lambda args: {"status": 200, "content": _marker(key)})
    probed = _probed(node, cache_url="http://cache.example/apex")
    decided, _node = plan(dict(stage="decide", plan=probed, builder="node0"), None,
                          task_vars(cache_url="http://cache.example/apex", controller_cache_dir="/nowhere"))
    assert (decided["action"], decided["url_has_entry"]) == ("install", True)
    result, node = plan(dict(stage="entry", plan=decided), None, task_vars(cache_url="http://cache.example/apex"))
    assert node.calls == [] and result["entry_source"] == "url"


# ---------------------------------------------------------------------------
# the role's settings
# ---------------------------------------------------------------------------

def test_settings_are_templated_typed_and_keep_node_paths_unexpanded():
    from ansible.template import trust_as_template

    variables = task_vars(max_jobs="4", work_dir="~/build")
    variables["apex_build_env_prefix"] = trust_as_template("{{ env_root }}/torch")
    variables["env_root"] = "/opt"
    settings = role_settings.read(Templar(loader=DataLoader(), variables=variables), variables, "apex_build")
    assert (settings["max_jobs"], settings["work_dir"], settings["env_prefix"]) == (4, "~/build", "/opt/torch")
    assert settings["tolerance"] == 0.0001 and settings["build_hosts"] == []


def test_settings_of_the_wrong_type_are_refused_naming_the_variable():
    variables = task_vars(max_jobs="many")
    result, node = plan(dict(stage="before", probe=True), None, variables)
    assert result["failed"] and "apex_build_max_jobs" in result["msg"] and node.calls == []


def test_a_setting_that_cannot_be_templated_is_named():
    from ansible.template import trust_as_template

    variables = task_vars()
    variables["apex_build_cache_dir"] = trust_as_template("{{ nowhere_defined }}")
    result, _node = plan(dict(stage="before", probe=False), None, variables)
    assert result["failed"] and result["msg"].startswith("apex_build_cache_dir: ")


@pytest.mark.parametrize("stage, missing", [("before", "probe"), ("decide", "plan, builder"), ("source", "plan"), ("entry", "plan")])
def test_every_stage_requires_its_options(stage, missing):
    with pytest.raises(AnsibleActionFail, match="stage is %s but all of the following are missing: %s$" % (stage, missing)):
        plan(dict(stage=stage))
