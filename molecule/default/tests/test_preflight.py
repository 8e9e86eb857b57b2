"""What preflight reported about the node must be what the node really is."""

import json
import os

import pytest


@pytest.fixture
def report(host):
    name = host.backend.get_hostname()
    path = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "preflight_report-%s.json" % name)
    with open(path) as handle:
        return json.load(handle)


def test_os_matches_os_release(host, report):
    assert host.system_info.distribution == report["os"]["distribution"].lower()
    assert host.system_info.release.split(".")[0] == report["os"]["version"]


def test_systemd_reported_when_it_is_pid_1(host, report):
    pid1_is_systemd = host.file("/proc/1/comm").content_string.strip() == "systemd"
    assert report["systemd"] is pid1_is_systemd
    assert pid1_is_systemd is (host.backend.get_hostname() != "aistack-default-nosystemd")
    if pid1_is_systemd:
        assert host.run("systemctl is-system-running").stdout.strip() in ("running", "degraded")


def test_container_detected(host, report):
    assert host.file("/run/.containerenv").exists
    assert report["container"] == {"is_container": True, "type": "podman"}


def test_no_nvidia_pci_device(host, report):
    vendors = host.run("cat /sys/bus/pci/devices/*/vendor 2>/dev/null").stdout.split()
    assert "0x10de" not in vendors
    assert report["gpu"]["present"] is False


def test_free_space_matches_df(host, report):
    for entry in report["paths"]:
        free_mib = int(host.run("df --output=avail -BM %s | tail -1" % entry["path"]).stdout.strip().rstrip("M"))
        # The filesystem is shared with the CI host, whose use moves between the two readings.
        assert abs(free_mib - entry["free_mib"]) <= max(512, free_mib // 50), entry
        assert entry["ok"] is (entry["free_mib"] >= entry["required_mib"])
