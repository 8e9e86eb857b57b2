"""plugins/module_utils/probe/env_proof.py: the environment's state digest on fake site folders, the
proof hand-over and the way the roles run it (python -c, ahead of their script); and
decide/env_proof.py: the controller's key."""

import json
import os
import subprocess
import sys

import pytest
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.env_proof import proof_holds, proof_key
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import env_proof

PYTHON = "/opt/conda/envs/torch/bin/python"


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A site folder on sys.path; ``add(name, text)`` writes a file in it."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def add(name, text=""):
        path = tmp_path.joinpath(*name.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    add("apex-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: apex\nVersion: 0.1\n")
    add("apex-0.1.dist-info/RECORD",
        "amp_C.so,,\napex/__init__.py,,\napex/__pycache__/__init__.cpython-312.pyc,,\napex-0.1.dist-info/RECORD,,\n")
    add("amp_C.so", "kernel")
    add("apex/__init__.py")
    add("apex/__pycache__/__init__.cpython-312.pyc", "bytecode")
    return add


def test_state_follows_watched_files_and_packages_not_bytecode(site, tmp_path):
    before = env_proof.env_state(("apex",))
    assert before == env_proof.env_state(("apex",))
    os.utime(str(tmp_path / "apex" / "__pycache__" / "__init__.cpython-312.pyc"), ns=(1, 1))
    assert env_proof.env_state(("apex",)) == before  # imports rewrite bytecode: no change of the install
    unwatched = env_proof.env_state()
    os.utime(str(tmp_path / "amp_C.so"), ns=(2, 2))
    touched = env_proof.env_state(("apex",))
    assert touched != before  # a kernel replaced by hand
    assert env_proof.env_state() == unwatched  # ... counts only where it is watched
    site("numpy-2.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: numpy\nVersion: 2.0\n")
    assert env_proof.env_state(("apex",)) not in (before, touched)  # a package added by pip
    assert env_proof.env_state(("not-installed",)) == env_proof.env_state()


def test_the_state_follows_the_nvidia_driver_and_gpus(site, tmp_path):
    nvidia = tmp_path / "nvidia"
    assert env_proof.nvidia_state(str(nvidia)) == {"version": None, "gpus": {}}  # no driver
    no_driver = env_proof.env_state(nvidia_root=str(nvidia))
    (nvidia / "gpus" / "0000:00:06.0").mkdir(parents=True)
    (nvidia / "version").write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04\n")
    (nvidia / "gpus" / "0000:00:06.0" / "information").write_text(
        "Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-93364d77-88d0-e9b2-1d5f-716ee4ba0597\n")
    loaded = env_proof.env_state(nvidia_root=str(nvidia))
    assert loaded != no_driver
    (nvidia / "version").write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.200.01\n")
    assert env_proof.env_state(nvidia_root=str(nvidia)) not in (no_driver, loaded)  # another driver


def test_a_proof_is_handed_over_only_for_the_same_python_and_state(site, tmp_path):
    state = env_proof.env_state(("apex",))
    proof = {"python": PYTHON, "env_state": state, "proof_key": "k"}
    path = tmp_path / "proof.json"
    path.write_text(json.dumps(proof))
    assert env_proof.recorded_proof(str(path), PYTHON, state) == proof
    assert env_proof.recorded_proof(str(path), "/usr/bin/python3", state) is None
    assert env_proof.recorded_proof(str(path), PYTHON, "0" * 64) is None
    assert env_proof.recorded_proof(str(tmp_path / "missing.json"), PYTHON, state) is None
    path.write_text("{not json")
    assert env_proof.recorded_proof(str(path), PYTHON, state) is None
    path.write_text("[]")
    assert env_proof.recorded_proof(str(path), PYTHON, state) is None


def test_the_key_is_the_inputs_in_any_order_and_a_proof_holds_only_for_it():
    key = proof_key({"verify": {"numerics": True, "tolerance": 0.0001}, "script_sha256": "s"})
    assert key == proof_key({"script_sha256": "s", "verify": {"tolerance": 0.0001, "numerics": True}})
    assert key != proof_key({"verify": {"numerics": False, "tolerance": 0.0001}, "script_sha256": "s"})
    assert len(key) == 24
    assert proof_holds({"proof_key": key}, key) is True
    assert proof_holds({"proof_key": "other"}, key) is False
    assert proof_holds(None, key) is False


def test_run_as_the_head_of_a_python_c_text_its_functions_import_by_name(site, tmp_path):
    with open(env_proof.__file__) as handle:
        head = handle.read()
    script = "from aistack_env_proof import env_state\nprint(env_state(('apex',)))\n"
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    ran = subprocess.run([sys.executable, "-c", head + "\n" + script], env=env, cwd="/", capture_output=True, text=True,
                         check=True)
    assert len(ran.stdout.strip()) == 64


def test_names_and_versions_read_from_the_headers_are_what_importlib_reads():
    """Read once from the headers, every installed distribution of this interpreter (real metadata: long
    descriptions, folded headers, egg-info) reads as importlib.metadata's full parse does, so the states
    recorded by earlier releases still hold."""
    from importlib import metadata
    distributions = list(metadata.distributions())
    assert len(distributions) > 20
    for dist in distributions:
        assert env_proof._name_and_version(dist) == "%s==%s" % ((dist.metadata["Name"] or "").lower(), dist.version)


@pytest.mark.parametrize("layout", ["dist-info", "crlf", "egg-info"])
def test_the_name_and_version_of_each_metadata_layout(tmp_path, layout):
    from importlib import metadata
    body = "\n\nName: not-a-header\nVersion: 9.9\n" + "A long description.\n" * 2000
    if layout == "egg-info":
        (tmp_path / "torch-2.11.0-py3.12.egg-info").write_text("Metadata-Version: 1.1\nName: Torch\nVersion: 2.11.0" + body)
    else:
        folder = tmp_path / "torch-2.11.0.dist-info"
        folder.mkdir()
        text = "Metadata-Version: 2.1\nName: Torch\nSummary: tensors\n  and more\nVersion: 2.11.0" + body
        (folder / "METADATA").write_bytes(text.replace("\n", "\r\n" if layout == "crlf" else "\n").encode())
    (dist,) = metadata.distributions(path=[str(tmp_path)])
    assert env_proof._name_and_version(dist) == "torch==2.11.0" == "%s==%s" % (dist.metadata["Name"].lower(), dist.version)
