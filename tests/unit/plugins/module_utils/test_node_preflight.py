import json
import os
from collections import namedtuple

import pytest

from conftest import FIXTURES
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import node_preflight
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_preflight import measure_paths

SUPPORTED = {"Ubuntu": ["22.04", "24.04"], "Debian": ["12"], "RedHat": ["8", "9"], "Rocky": ["8", "9"]}
StatVFS = namedtuple("StatVFS", "f_bavail f_frsize f_blocks")


@pytest.fixture
def podman_facts():
    with open(os.path.join(FIXTURES, "nodes", "debian12-podman-facts.json")) as handle:
        return json.load(handle)["facts"]


def report(facts, space=None, paths=None, **kwargs):
    options = dict(supported_platforms=SUPPORTED, min_python="3.8", require_systemd=False)
    options.update(kwargs)
    paths = paths if paths is not None else [{"path": "/opt", "min_free_mib": 100}]
    if space is None:
        space = [{"path": p["path"], "mount": "/", "free_mib": 5000} for p in paths]
    return node_preflight.build_report(facts, {}, space, paths=paths, **options)


def test_recorded_podman_node_passes(podman_facts):
    result = report(podman_facts)
    assert result["problems"] == []
    assert result["os"] == {"distribution": "Debian", "version": "12", "family": "Debian", "supported": True}
    assert result["container"] == {"is_container": True, "type": "podman"}
    assert result["systemd"] is True
    assert result["gpu"]["present"] is False


def test_ubuntu_is_matched_on_full_version(podman_facts):
    facts = dict(podman_facts, distribution="Ubuntu", distribution_version="24.04", distribution_major_version="24")
    assert report(facts)["os"]["supported"]
    facts.update(distribution_version="23.10", distribution_major_version="23")
    problems = report(facts)["problems"]
    assert problems and "unsupported OS Ubuntu 23.10" in problems[0] and "(preflight_supported_platforms)" in problems[0]


def test_unsupported_os_names_the_supported_list(podman_facts):
    problems = report(dict(podman_facts, distribution_major_version="11"))["problems"]
    assert problems == ["unsupported OS Debian 11; supported: Debian 12, RedHat 8/9, Rocky 8/9, Ubuntu 22.04/24.04 "
                        "(preflight_supported_platforms)"]


def test_old_python_and_missing_systemd(podman_facts):
    facts = dict(podman_facts, python_version="3.6.8", service_mgr="tini")
    problems = report(facts, require_systemd=True)["problems"]
    assert "Python 3.6.8 on the node is older than 3.8 (preflight_min_python)" in problems
    assert "the service manager is tini, not systemd (preflight_require_systemd)" in problems
    assert report(facts, min_python="3.6")["problems"] == []  # systemd not required by default


def test_too_little_space_is_named(podman_facts):
    paths = [{"path": "/opt/conda", "min_free_mib": 20480, "purpose": "conda"}, {"path": "/tmp", "min_free_mib": 10}]
    space = [{"path": "/opt/conda", "mount": "/", "free_mib": 812}, {"path": "/tmp", "mount": "/tmp", "free_mib": 11}]
    result = report(podman_facts, space=space, paths=paths)
    assert result["problems"] == ["/opt/conda has 812 MiB free on /, needs 20480 MiB for conda (preflight_paths)"]
    assert [p["ok"] for p in result["paths"]] == [False, True]


def test_unmeasured_path_is_a_problem(podman_facts):
    result = report(podman_facts, space=[], paths=[{"path": "/srv", "min_free_mib": 1}])
    assert result["problems"] == ["/srv has None MiB free on None, needs 1 MiB for the install (preflight_paths)"]


def test_gpu_summary_from_gpu_facts(podman_facts):
    gpu = {"pci_devices": [{"bus_id": "0000:00:05.0"}], "driver": {"loaded_version": None}, "state": "gpu_no_driver"}
    result = node_preflight.build_report(podman_facts, gpu, [], SUPPORTED, "3.8", [], False)
    assert result["gpu"] == {"present": True, "count": 1, "driver_loaded": False, "state": "gpu_no_driver"}


def test_a_vm_is_not_a_container(podman_facts):
    facts = dict(podman_facts, virtualization_type="kvm", virtualization_role="guest")
    assert report(facts)["container"] == {"is_container": False, "type": None}


def test_measure_paths_walks_up_to_the_existing_parent():
    existing = {"/", "/opt"}
    mounts = {"/"}
    calls = []

    def statvfs(path):
        calls.append(path)
        return StatVFS(f_bavail=2560, f_frsize=4096, f_blocks=25600)

    measured = measure_paths(["/opt/conda/envs", "/opt"], statvfs=statvfs,
                             exists=existing.__contains__, ismount=mounts.__contains__)
    assert calls == ["/opt", "/opt"]
    assert measured[0] == {"path": "/opt/conda/envs", "measured_at": "/opt", "exists": False, "mount": "/",
                           "free_mib": 10, "total_mib": 100}
    assert measured[1]["exists"] is True


def test_measure_paths_on_this_machine(tmp_path):
    (measured,) = measure_paths([str(tmp_path / "not" / "yet")])
    assert measured["measured_at"] == str(tmp_path)
    stats = os.statvfs(str(tmp_path))
    assert abs(measured["free_mib"] - stats.f_bavail * stats.f_frsize // 2**20) < 256
    assert os.path.ismount(measured["mount"])


@pytest.mark.parametrize("virtualization_type", sorted(node_preflight.CONTAINER_TYPES))
def test_every_container_type_is_a_container(virtualization_type):
    assert node_preflight.is_container("guest", virtualization_type)
    assert not node_preflight.is_container("host", virtualization_type)


def test_a_virtual_machine_or_unknown_node_is_not_a_container():
    assert not node_preflight.is_container("guest", "kvm")
    assert not node_preflight.is_container(None, None)


def test_an_unquoted_version_and_a_negative_free_space_are_named():
    assert node_preflight.input_problems(3.1, []) == [
        'bad input: preflight_min_python is the number 3.1: YAML reads an unquoted version as a number (3.10 becomes '
        '3.1); quote it, such as "3.10"']
    assert node_preflight.input_problems("3.10", [{"path": "/opt", "min_free_mib": -1}]) == [
        "bad input: preflight_paths min_free_mib must be 0 or more (MiB); below 0 at: '/opt'"]


def test_input_problems_name_the_variable():
    assert node_preflight.input_problems("3.8", [{"path": "/opt"}]) == []
    assert node_preflight.input_problems("3", [])[0].startswith('bad input: preflight_min_python must be a version like "3.8"')
    problems = node_preflight.input_problems("3.8", [{"path": "opt/conda"}, {"path": ""}, {"path": "/var"}])
    assert problems == ["bad input: preflight_paths must be a list of {path: <absolute path>, min_free_mib: <int>}; "
                        "not absolute: 'opt/conda', ''"]
