"""The env_image module refuses what cannot be built before podman runs, and in check mode builds nothing."""

import hashlib
import json
import os
import shutil

import pytest

from conftest import run_module
from ansible_collections.aistack.gpu_node.plugins.modules import env_image

pytestmark = pytest.mark.skipif(shutil.which("podman") is None, reason="the module needs podman on PATH")

LOCK = "@EXPLICIT\nhttp://127.0.0.1:1/conda-forge/noarch/pip-26.3-pyh_0.conda#fedcba9876543210fedcba9876543210\n"


def args(tmp_path, **changes):
    installer = tmp_path / "Miniforge3.sh"
    installer.write_text("#!/bin/sh\n")
    lock = tmp_path / "demo.explicit.txt"
    lock.write_text(LOCK)
    found = {"work_dir": str(tmp_path / "work"), "explicit_lock": str(lock), "pip_lock": str(tmp_path / "demo.pip.txt"),
             "installer": str(installer), "installer_sha256": hashlib.sha256(b"#!/bin/sh\n").hexdigest(),
             "base_image": "localhost/aistack-h30-no-such-image:latest", "env_name": "demo",
             "name": "localhost/aistack-env-h30-unit", "tag": "t", "cuda_variant": "cpu", "collection_version": "0.2.0"}
    found.update(changes)
    return found


def test_check_mode_reports_a_build_and_lays_out_nothing(capsys, tmp_path):
    code, result = run_module(env_image, dict(args(tmp_path), _ansible_check_mode=True), capsys)
    assert code == 0 and result["changed"] is True and result["built"] is False, result
    assert "conda create -y -p /opt/conda/envs/demo --file /tmp/aistack-image/explicit.txt" in result["containerfile"]
    assert result["labels"]["org.aistack.gpu_node.explicit-lock.sha256"] == hashlib.sha256(LOCK.encode()).hexdigest()
    assert not (tmp_path / "work").exists()


def test_a_lock_conda_would_solve_is_refused(capsys, tmp_path):
    (tmp_path / "specs.txt").write_text("python=3.11\npip\n")
    code, result = run_module(env_image, args(tmp_path, explicit_lock=str(tmp_path / "specs.txt")), capsys)
    assert code == 1 and result["msg"].startswith("env_image_explicit_lock: %s is no explicit conda lock: it has no @EXPLICIT"
                                                  % (tmp_path / "specs.txt")), result


def test_an_installer_with_another_sha256_is_refused(capsys, tmp_path):
    code, result = run_module(env_image, args(tmp_path, installer_sha256="ab" * 32), capsys)
    assert code == 1 and result["msg"] == "env_image_installer_sha256: %s does not have that sha256" % (tmp_path / "Miniforge3.sh")


def test_an_apex_wheel_its_marker_does_not_vouch_for_is_refused(capsys, tmp_path):
    entry = tmp_path / "apex" / "key"
    entry.mkdir(parents=True)
    (entry / "apex-0.1-py3-none-any.whl").write_bytes(b"changed since")
    (entry / "aistack-apex.json").write_text(json.dumps({"wheel": "apex-0.1-py3-none-any.whl", "wheel_sha256": "cd" * 32}))
    code, result = run_module(env_image, args(tmp_path, apex_cache_entry=str(entry)), capsys)
    assert code == 1 and result["msg"] == ("env_image_apex_cache_entry: %s: its wheel %s does not have the sha256 its marker names"
                                           % (entry, os.path.join(str(entry), "apex-0.1-py3-none-any.whl"))), result
