"""roles/apex_build/files/apex_env.py's verify, on fake environments: which installs it passes and
which it fails, with what it says. The real kernels are checked on the GPU host (tests/gpu)."""

import hashlib
import importlib.util
import json
import os
import sys
import types

import pytest
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import env_proof
from conftest import REPO_ROOT

SCRIPT = os.path.join(REPO_ROOT, "roles", "apex_build", "files", "apex_env.py")
REQUEST = {"required_modules": ["amp_C", "fused_layer_norm_cuda"], "optional_modules": ["fused_dense_cuda"],
           "numerics": True, "tolerance": 1e-4, "legacy_apis": False}


def load_script():
    # The role runs env_proof.py's text ahead of the script, which imports it under this name.
    sys.modules[env_proof.SCRIPT_MODULE] = env_proof
    spec = importlib.util.spec_from_file_location("apex_env", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A site folder on sys.path holding a torch without GPU; ``add(name, body)`` puts modules in it."""
    fake_torch = types.ModuleType("torch")
    fake_torch.cuda = types.SimpleNamespace(is_available=lambda: False)
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.syspath_prepend(str(tmp_path))
    added = []

    def add(name, body=""):
        path = tmp_path.joinpath(*name.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        added.append(name.split("/")[0].split(".")[0])

    def apex_package():
        add("apex/__init__.py")
        add("apex/optimizers/__init__.py")
        add("apex-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: apex\nVersion: 0.1\n")

    yield add, apex_package
    for name in added:
        sys.modules.pop(name, None)


def test_python_only_install_fails_loudly(env):
    _add, apex_package = env
    apex_package()
    report = load_script().verify(REQUEST)
    assert report["modules"] == {"amp_C": "missing", "fused_layer_norm_cuda": "missing", "fused_dense_cuda": "missing"}
    assert report["problems"] == [
        "Python-only APEX install: none of the compiled extensions (amp_C, fused_layer_norm_cuda) is there; it was built "
        "without APEX_CPP_EXT/APEX_CUDA_EXT or their flags"]


def test_optional_extension_may_be_absent_and_skipped_numerics_are_said(env):
    add, apex_package = env
    apex_package()
    add("amp_C.py")
    add("fused_layer_norm_cuda.py")
    report = load_script().verify(REQUEST)
    assert report["problems"] == [] and report["modules"]["fused_dense_cuda"] == "missing"
    assert report["checks"] == {}
    assert report["skipped"] == ["amp_C, fused_layer_norm_cuda against torch: no GPU visible to torch"]
    assert report["apis"]["apex.optimizers"] is True and report["apis"]["apex.amp"] is False


def test_an_optional_extension_that_is_there_must_load(env):
    add, apex_package = env
    apex_package()
    add("amp_C.py")
    add("fused_layer_norm_cuda.py")
    add("fused_dense_cuda.py", "raise ImportError('undefined symbol: _ZN3c1010Half')\n")
    report = load_script().verify(REQUEST)
    assert report["problems"] == [
        "compiled extensions that do not import: fused_dense_cuda (error: ImportError: undefined symbol: _ZN3c1010Half)"]


def test_one_broken_required_extension_is_named(env):
    add, apex_package = env
    apex_package()
    add("amp_C.py")
    add("fused_layer_norm_cuda.py", "raise OSError('libcudart.so.13: cannot open shared object file')\n")
    report = load_script().verify(dict(REQUEST, numerics=False))
    assert report["skipped"] == []
    assert report["problems"] == ["compiled extensions that do not import: fused_layer_norm_cuda "
                                  "(error: OSError: libcudart.so.13: cannot open shared object file)"]


def test_no_apex_and_missing_legacy_apis_are_problems(env):
    report = load_script().verify(dict(REQUEST, legacy_apis=True))
    assert report["apex"] == {"present": False}
    assert report["problems"][0].startswith("the apex package is not installed in ")
    assert report["problems"][-1] == ("apex_build_legacy_apis is set but this APEX lacks apex.amp and apex.parallel "
                                      "(removed after tag 25.05)")


def test_probe_finds_ninja_in_the_environment_bin_first(tmp_path, monkeypatch):
    env_bin = tmp_path / "env" / "bin"
    env_bin.mkdir(parents=True)
    (env_bin / "ninja").write_text("#!/bin/sh\n")
    (env_bin / "ninja").chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(env_bin / "python"))
    monkeypatch.setenv("PATH", "/nonexistent")
    probe = load_script().probe()
    assert probe["build_path"] == "%s:/nonexistent" % env_bin
    assert probe["build_tools"]["ninja"] == str(env_bin / "ninja")
    assert probe["build_tools"]["setuptools"] is None or probe["build_tools"]["setuptools"][0].isdigit()


def _apex_with_record(add, apex_package):
    apex_package()
    add("amp_C.so", "kernel")
    add("apex/__pycache__/__init__.cpython-312.pyc", "bytecode")
    add("apex-0.1.dist-info/RECORD",
        "amp_C.so,,\napex/__init__.py,,\napex/__pycache__/__init__.cpython-312.pyc,,\napex-0.1.dist-info/RECORD,,\n")


def test_probe_hands_over_the_proof_made_on_the_same_state(env, tmp_path):
    add, apex_package = env
    _apex_with_record(add, apex_package)
    script = load_script()
    python = "/opt/conda/envs/torch/bin/python"
    proof = {"python": python, "env_state": script.env_state(script.WATCHED), "proof_key": "k", "verify": {"problems": []}}
    path = tmp_path / "proof.json"
    path.write_text(json.dumps(proof))
    assert script.probe(str(path), python)["proof"] == proof
    os.utime(str(tmp_path / "amp_C.so"), ns=(3, 3))  # APEX's kernel touched: its files are watched
    assert script.probe(str(path), python)["proof"] is None
    assert script.probe()["proof"] is None


def test_probe_reads_the_cache_entries_of_the_installed_wheel(env, tmp_path):
    add, apex_package = env
    script = load_script()
    cache = tmp_path / "wheel-cache"
    assert script.probe("", "", str(cache), "aistack-apex.json")["cache_entries"] == {}  # no APEX installed
    apex_package()
    wheel = b"the wheel's bytes"
    sha = hashlib.sha256(wheel).hexdigest()
    add("apex-0.1.dist-info/direct_url.json", json.dumps({"url": "file:///c/k1/apex.whl", "archive_info": {"hashes": {"sha256": sha}}}))
    for key, marker in (("k1", {"key": "k1", "wheel": "apex-0.1-cp312-cp312-linux_x86_64.whl", "wheel_sha256": sha}),
                        ("k2", {"key": "k2", "wheel": "apex-0.1-cp312-cp312-linux_x86_64.whl", "wheel_sha256": "b" * 64}),
                        ("k3", "not json"), ("k4", {"key": "k4", "wheel": "../apex.whl", "wheel_sha256": sha})):
        (cache / key).mkdir(parents=True)
        (cache / key / "aistack-apex.json").write_text(marker if isinstance(marker, str) else json.dumps(marker))
        (cache / key / "apex-0.1-cp312-cp312-linux_x86_64.whl").write_bytes(wheel)
    entries = script.probe("", "", str(cache), "aistack-apex.json")["cache_entries"]
    assert entries == {"k1": {"marker": (cache / "k1" / "aistack-apex.json").read_text(), "wheel_sha256": sha}}
    (cache / "k1" / "apex-0.1-cp312-cp312-linux_x86_64.whl").write_bytes(b"damaged")
    damaged = script.probe("", "", str(cache), "aistack-apex.json")["cache_entries"]["k1"]["wheel_sha256"]
    assert damaged == hashlib.sha256(b"damaged").hexdigest()
    (cache / "k1" / "apex-0.1-cp312-cp312-linux_x86_64.whl").unlink()
    assert script.probe("", "", str(cache), "aistack-apex.json")["cache_entries"]["k1"]["wheel_sha256"] == ""
    assert script.probe()["cache_entries"] == {}


def _nvcc(home, text="#!/bin/sh\n"):
    (home / "bin").mkdir(parents=True, exist_ok=True)
    (home / "bin" / "nvcc").write_text(text)
    (home / "bin" / "nvcc").chmod(0o755)
    return home / "bin" / "nvcc"


def test_probe_reads_each_cuda_home_cuda_compat_may_take_with_its_nvcc(tmp_path, monkeypatch):
    """The homes in cuda_compat's order: its cuda_home option, CUDA_HOME, CUDA_PATH, nvcc's on PATH, /usr/local/cuda."""
    script = load_script()
    option, on_path = _nvcc(tmp_path / "cuda-13.0"), _nvcc(tmp_path / "cuda-12.8")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", str(on_path.parent))
    homes = script.probe(cuda_home=str(tmp_path / "cuda-13.0"))["toolkit"]["homes"]
    stat = os.stat(str(option))
    assert homes[0] == [str(tmp_path / "cuda-13.0"), str(tmp_path / "cuda-13.0"), [str(option), stat.st_size, stat.st_mtime_ns]]
    assert homes[1:3] == [["", None, None], ["", None, None]]
    assert homes[3][:2] == [str(tmp_path / "cuda-12.8")] * 2 and homes[4][0] == "/usr/local/cuda"
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "missing"))
    assert script.toolkit()["homes"][1] == [str(tmp_path / "missing"), None, None]


def test_the_toolkit_reads_otherwise_when_nvcc_is_replaced_or_a_link_moves(tmp_path, monkeypatch):
    script = load_script()
    monkeypatch.setenv("PATH", "/nonexistent")
    _nvcc(tmp_path / "cuda-13.0")
    _nvcc(tmp_path / "cuda-13.1")
    (tmp_path / "cuda").symlink_to(tmp_path / "cuda-13.0")
    before = script.toolkit(str(tmp_path / "cuda"))
    assert before == script.toolkit(str(tmp_path / "cuda"))
    _nvcc(tmp_path / "cuda-13.0", "#!/bin/sh\necho 13.0.88\n")
    replaced = script.toolkit(str(tmp_path / "cuda"))
    assert replaced["homes"][0] != before["homes"][0]
    (tmp_path / "cuda").unlink()
    (tmp_path / "cuda").symlink_to(tmp_path / "cuda-13.1")
    assert script.toolkit(str(tmp_path / "cuda"))["homes"][0][1] == str(tmp_path / "cuda-13.1")
