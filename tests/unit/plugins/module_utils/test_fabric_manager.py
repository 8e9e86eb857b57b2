# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from conftest import read_h200, read_public
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.fabric_manager import (
    NO_NVSWITCH,
    fabric_manager_plan,
    fabric_problems,
    nvswitches,
    parse_fabric_state,
    parse_lspci,
    sysfs_device,
    version_problems,
)


def test_hgx_h100_shows_four_third_generation_nvswitches():
    devices = parse_lspci(read_public("lspci-hgx-h100-nvswitch.txt"))
    assert len(devices) == 12
    switches = nvswitches(devices)
    assert [item["slot"] for item in switches] == ["07:00.0", "08:00.0", "09:00.0", "0a:00.0"]
    assert set((item["device"], item["generation"]) for item in switches) == {("22a3", 3)}


def test_lspci_nn_a100_switch_counts_and_a_gb200_pci_bridge_does_not():
    devices = parse_lspci(read_public("lspci-nn-nvswitch-a100-gb200.txt"))
    assert [(item["class"], item["device"]) for item in devices] == [("0680", "1af1"), ("0604", "22b1")]
    assert [(item["slot"], item["generation"]) for item in nvswitches(devices)] == [("0005:00:00.0", 2)]


def test_nforce_chipset_ethernet_of_bridge_class_is_no_nvswitch():
    devices = parse_lspci(read_public("lspci-nn-nforce-mcp55.txt"))
    assert [item["class"] for item in devices] == ["0604", "0680", "0680", "0680"]
    assert nvswitches(devices) == []


def test_lspci_n_numeric_lines():
    devices = parse_lspci("0000:05:00.0 0680: 10de:22a3 (rev a1)\n0000:1b:00.0 0302: 10de:2330 (rev a1)\n")
    assert [item["device"] for item in nvswitches(devices)] == ["22a3"]


def test_the_h200_host_has_no_nvswitch():
    # The recorded sysfs listing of the host's NVIDIA PCI devices (path and class): one 3D controller, no bridge.
    devices = []
    for line in read_h200("sysfs-gpu-numa.txt").splitlines():
        path, pci_class = line.split()[:2]
        devices.append(sysfs_device(path.rsplit("/", 1)[1], "0x10de", "", pci_class))
    assert [item["class"] for item in devices] == ["0302"]
    assert nvswitches(devices) == []
    plan = fabric_manager_plan("apt", "distro", 580, "580.159.04", [])
    assert plan["needed"] is False and plan["packages"] == [] and plan["reason"] == NO_NVSWITCH
    assert plan["reason"].startswith("no NVSwitch")


def test_fabric_manager_is_pinned_to_the_exact_driver_version():
    switches = nvswitches(parse_lspci(read_public("lspci-hgx-h100-nvswitch.txt")))
    plan = fabric_manager_plan("apt", "nvidia", 580, "580.95.05", switches)
    assert plan["needed"] and plan["switches"] == 4 and plan["service"] == "nvidia-fabricmanager" and plan["problems"] == []
    assert plan["install_names"] == ["nvidia-fabricmanager-580=580.95.05*", "libnvidia-nscq-580=580.95.05*"]
    assert plan["warnings"] == []
    a100 = fabric_manager_plan("dnf", "nvidia", 580, "580.95.05", [dict(switches[0], device="1af1", generation=2)])
    assert a100["install_names"] == ["nvidia-fabric-manager-580.95.05"] and "unconfirmed" in a100["warnings"][0]


def test_fabric_manager_needs_an_exact_version_and_a_source_that_carries_it():
    switches = nvswitches(parse_lspci(read_public("lspci-hgx-h100-nvswitch.txt")))
    assert "nvidia_driver_version: a node with NVSwitches needs the exact driver version" in fabric_manager_plan(
        "apt", "nvidia", 580, None, switches)["problems"][0]
    assert "nvidia_driver_source: distro has no Fabric Manager package" in fabric_manager_plan(
        "dnf", "distro", 580, "580.95.05", switches)["problems"][0]
    unknown = fabric_manager_plan("apt", "nvidia", 580, "580.95.05", [dict(switches[0], device="2901", generation=None)])
    assert unknown["packages"] == ["nvidia-fabricmanager-580", "libnvidia-nscq-580"] and "2901" in unknown["warnings"][0]


def test_a_fabric_manager_off_by_a_patch_level_is_refused_naming_both():
    assert version_problems("580.95.05", "580.95.05") == []
    (problem,) = version_problems("580.95.05", "580.95.04")
    assert problem.startswith("Fabric Manager 580.95.04 differs from the driver 580.95.05")
    # NVIDIA/gpu-driver-container#735: an image with FM 590 and driver 580.
    assert "Fabric Manager 590.44.01 differs from the driver 580.95.05" in version_problems("580.95.05", "590.44.01")[0]
    assert "Fabric Manager is not installed" in version_problems("580.95.05", None)[0]


def test_fabric_state_completed_is_healthy_and_anything_else_is_named():
    states = parse_fabric_state(read_public("nvidia-smi-q-fabric-completed.txt"))
    assert states == [{"state": "Completed", "status": "Success"}]
    assert fabric_problems(states) == []
    # A100 boards report no fabric state (N/A), H100 boards in training "In Progress".
    assert fabric_problems([{"state": "N/A", "status": "N/A"}]) == []
    (problem,) = fabric_problems([{"state": "Completed", "status": "Success"}, {"state": "In Progress", "status": "N/A"}])
    assert problem.startswith("GPU 1: fabric state In Progress, status N/A (expected Completed, Success)")
    # The H200 host (no NVSwitch) reports no Fabric section in its recorded head of nvidia-smi -q.
    assert parse_fabric_state(read_h200("nvidia-smi-q-head.txt")) == []
