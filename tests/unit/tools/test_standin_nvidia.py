"""The stand-in driver and nvidia-ctk of the container_toolkit scenario (tests/support/standin_nvidia.py): the
spec it makes is the shape the CDI judge's tests use, judged by the judge; its runtime configuration is what the
role's probe recognises; the stand-in package that carries it installs it as an executable."""

import io
import json
import os
import subprocess
import sys
import tarfile
import gzip

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..", "support")))
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "plugins", "module_utils")))
import standin_apt_repo  # noqa: E402  pylint: disable=wrong-import-position
import standin_nvidia  # noqa: E402  pylint: disable=wrong-import-position
from test_cdi_spec import GPUS, SPEC, UUID  # noqa: E402  pylint: disable=wrong-import-position
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import cdi_spec  # noqa: E402
from ansible_collections.aistack.gpu_node.plugins.modules import container_toolkit_probe  # noqa: E402

SCRIPT = os.path.join(HERE, "..", "..", "support", "standin_nvidia.py")


def standin(tmp_path, name, *args, version="580.159.04"):
    (tmp_path / "driver_version").write_text(version + "\n")
    (tmp_path / "gpus.json").write_text(json.dumps(GPUS))
    link = tmp_path / name
    if not link.exists():
        link.symlink_to(os.path.abspath(SCRIPT))
    return subprocess.run([sys.executable, str(link)] + list(args), check=True, stdout=subprocess.PIPE, universal_newlines=True,
                          env=dict(os.environ, AISTACK_STANDIN_DIR=str(tmp_path))).stdout


def test_the_spec_is_the_shape_of_nvidia_ctk_s_in_yaml_and_json(tmp_path):
    standin(tmp_path, "nvidia-ctk", "cdi", "generate", "--output=%s" % (tmp_path / "nvidia.yaml"))
    assert yaml.safe_load((tmp_path / "nvidia.yaml").read_text()) == SPEC
    standin(tmp_path, "nvidia-ctk", "cdi", "generate", "--output=%s" % (tmp_path / "nvidia.json"))
    assert json.loads((tmp_path / "nvidia.json").read_text()) == SPEC


def test_a_spec_made_for_another_driver_is_judged_stale():
    spec = yaml.safe_load(standin_nvidia.to_yaml(standin_nvidia.cdi_spec("580.200.01", GPUS)))
    assert cdi_spec.staleness(cdi_spec.summary(spec), "580.159.04", GPUS) == [
        "the CDI spec was made for driver 580.200.01, the node runs 580.159.04"]


def test_nvidia_smi_answers_what_gpu_facts_asks(tmp_path):
    row = standin(tmp_path, "nvidia-smi", "--query-gpu=index,name,uuid,driver_version", "--format=csv,noheader,nounits")
    assert row == "0, NVIDIA H200, %s, 580.159.04\n" % UUID
    assert "Driver Version: 580.159.04" in standin(tmp_path, "nvidia-smi")


def test_runtime_configure_adds_the_nvidia_runtime_and_keeps_the_rest(tmp_path):
    daemon = tmp_path / "daemon.json"
    daemon.write_text('{"log-driver": "journald"}')
    standin(tmp_path, "nvidia-ctk", "runtime", "configure", "--runtime=docker", "--config=%s" % daemon)
    config = json.loads(daemon.read_text())
    assert config["log-driver"] == "journald" and container_toolkit_probe.docker_configured(daemon.read_text())
    standin(tmp_path, "nvidia-ctk", "runtime", "configure", "--runtime=containerd", "--config=%s" % (tmp_path / "config.toml"))
    assert container_toolkit_probe.containerd_configured([(tmp_path / "config.toml").read_text()])


def test_a_stand_in_package_installs_its_files_as_executables():
    deb = standin_apt_repo.build_deb({"Package": "nvidia-container-toolkit-base", "Version": "1.18.0-1"},
                                     {"/usr/bin/nvidia-ctk": b"#!/bin/sh\n"})
    data = deb[deb.index(b"data.tar.gz"):]
    archive = tarfile.open(fileobj=io.BytesIO(gzip.decompress(data[60:])), mode="r")
    member = archive.getmember("./usr/bin/nvidia-ctk")
    assert member.mode == 0o755 and archive.extractfile(member).read() == b"#!/bin/sh\n"


def test_a_python_source_is_packaged_as_a_python3_script(tmp_path):
    source = tmp_path / "tool.py"
    source.write_text("print('hi')\n")
    assert standin_apt_repo._read_executable(str(source)) == b"#!/usr/bin/python3\nprint('hi')\n"
    shell = tmp_path / "tool"
    shell.write_text("#!/bin/sh\n")
    assert standin_apt_repo._read_executable(str(shell)) == b"#!/bin/sh\n"
