"""What the container_toolkit role left on a fresh Debian 12 node: the pinned, held packages, docker's
configuration, the CDI spec for the (updated) stand-in driver."""

import json

import pytest
import yaml

PACKAGES = ("nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools", "libnvidia-container1")


@pytest.mark.parametrize("name", PACKAGES)
def test_packages_at_the_pinned_version_and_held(host, name):
    # The repository also offers 1.18.1: the pin keeps 1.18.0.
    assert host.package(name).version == "1.18.0-1"
    assert host.run("dpkg-query -W -f '${db:Status-Want}' %s" % name).stdout == "hold"


def test_the_pin_and_the_repository(host):
    pin = host.file("/etc/apt/preferences.d/aistack-nvidia-container-toolkit.pref").content_string
    assert "Pin: version 1.18.0-*\n" in pin and "Pin-Priority: 990" in pin and "libnvidia-container1" in pin
    sources = host.file("/etc/apt/sources.list.d/aistack-nvidia-container-toolkit.sources").content_string
    assert "URIs: file:///srv/container-toolkit-repo/deb/amd64\n" in sources and "Suites: /\n" in sources
    assert "Candidate: 1.18.0-1" in host.run("apt-cache policy nvidia-container-toolkit").stdout


def test_docker_has_the_nvidia_runtime_and_keeps_its_own_settings(host):
    config = json.loads(host.file("/etc/docker/daemon.json").content_string)
    assert config["runtimes"]["nvidia"]["path"] == "nvidia-container-runtime"
    assert config["log-driver"] == "journald"


def test_the_cdi_spec_names_the_updated_driver_and_the_gpu(host):
    spec = yaml.safe_load(host.file("/etc/cdi/nvidia.yaml").content_string)
    mounts = [mount["hostPath"] for mount in spec["containerEdits"]["mounts"]]
    assert "/usr/lib/x86_64-linux-gnu/libcuda.so.580.200.01" in mounts
    assert not any("580.159.04" in path for path in mounts)
    assert [device["name"] for device in spec["devices"]] == ["0", "GPU-d657d2a4-7b62-379a-9a7e-116a1d5aa7ee", "all"]


def test_nvidia_cdi_refresh_writes_the_roles_spec(host):
    # Toolkit 1.18 and later's nvidia-cdi-refresh reads this file; the role wrote it before the packages.
    settings = host.file("/etc/nvidia-container-toolkit/nvidia-cdi-refresh.env")
    assert settings.user == "root" and settings.mode == 0o644
    assert "NVIDIA_CTK_CDI_OUTPUT_FILE_PATH=/etc/cdi/nvidia.yaml\n" in settings.content_string
