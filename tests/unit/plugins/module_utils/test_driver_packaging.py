# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Issue 39 item 1: the driver's package set by branch era on every supported OS, each with its source."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import re

import pytest

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import driver_packaging, fabric_manager
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.driver_packaging import SOURCES
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.nvidia_driver import KNOWN_BRANCHES, plan_install

TODAY = datetime.date(2026, 12, 4)
H200 = {"name": "NVIDIA H200", "compute_capability": "9.0"}
T4 = {"name": "Tesla T4", "compute_capability": "7.5"}

UBUNTU_2204 = ("Ubuntu", "22.04", "x86_64")
UBUNTU_2404 = ("Ubuntu", "24.04", "x86_64")
UBUNTU_2604 = ("Ubuntu", "26.04", "x86_64")
DEBIAN_12 = ("Debian", "12.11", "x86_64")
DEBIAN_13 = ("Debian", "13.2", "x86_64")
EL9 = ("Rocky", "9.6", "x86_64")
RHEL_101 = ("RedHat", "10.1", "x86_64")
ROCKY_10 = ("Rocky", "10.0", "x86_64")


def plan(os_, **kwargs):
    kwargs.setdefault("today", TODAY)
    kwargs.setdefault("gpus", [H200])
    return plan_install(*os_, **kwargs)


def ubuntu_archive(branch):
    return ["nvidia-headless-%d-server-open" % branch, "nvidia-utils-%d-server" % branch]


# (OS, branch) -> (source, packages, NVIDIA's pinning package, the source that says so), with the
# default source (nvidia_driver_source: auto) and an H200 (the open kernel module).
MATRIX = {}
for _os in (UBUNTU_2204, UBUNTU_2404):
    for _branch in (570, 580, 590, 595):
        MATRIX[(_os, _branch)] = ("distro", ubuntu_archive(_branch), None, SOURCES["ubuntu_archive_names"])
MATRIX[(UBUNTU_2604, 580)] = ("distro", ubuntu_archive(580), None, SOURCES["ubuntu_2604_archive_580"])
MATRIX[(UBUNTU_2604, 595)] = ("nvidia", ["nvidia-open"], "nvidia-driver-pinning-595", SOURCES["nvidia_590_renames"])
for _os in (DEBIAN_12, DEBIAN_13):
    MATRIX[(_os, 570)] = ("nvidia", ["nvidia-open-570"], None, SOURCES["nvidia_branch_suffixed_apt"])
    MATRIX[(_os, 580)] = ("nvidia", ["nvidia-open-580"], "nvidia-driver-pinning-580", SOURCES["nvidia_branch_suffixed_apt"])
    MATRIX[(_os, 590)] = ("nvidia", ["nvidia-open"], "nvidia-driver-pinning-590", SOURCES["nvidia_590_renames"])
    MATRIX[(_os, 595)] = ("nvidia", ["nvidia-open"], "nvidia-driver-pinning-595", SOURCES["nvidia_590_renames"])
for _branch in (570, 580, 590, 595):
    MATRIX[(EL9, _branch)] = ("nvidia", ["@nvidia-driver:%d-open" % _branch], None, SOURCES["nvidia_kernel_modules"])
    MATRIX[(RHEL_101, _branch)] = ("distro", ["kmod-nvidia", "nvidia-open"], None, SOURCES["rhel_10_signed_kmod"])
    MATRIX[(ROCKY_10, _branch)] = ("nvidia", ["nvidia-open"], None, SOURCES["nvidia_kernel_modules"])

# Ubuntu 26.04: R570 and R590 are only transitional packages in Ubuntu's archive, and NVIDIA's
# ubuntu2604 repository starts at R595.
REFUSED = {
    (UBUNTU_2604, 570): "570 exists in Ubuntu 26.04's archive only as transitional packages that install branch 580",
    (UBUNTU_2604, 590): "590 exists in Ubuntu 26.04's archive only as transitional packages that install branch 595",
}


def test_the_matrix_covers_every_branch_on_every_os_of_the_acceptance():
    cells = set(MATRIX) | set(REFUSED)
    for os_ in (UBUNTU_2204, UBUNTU_2404, UBUNTU_2604, DEBIAN_12, DEBIAN_13, EL9, RHEL_101, ROCKY_10):
        assert set(branch for (cell_os, branch) in cells if cell_os == os_) == {570, 580, 590, 595}, os_
    assert set(MATRIX).isdisjoint(REFUSED)


@pytest.mark.parametrize("os_, branch", sorted(MATRIX))
def test_package_set_by_branch_era_with_its_source(os_, branch):
    source, packages, pinning, cited = MATRIX[(os_, branch)]
    result = plan(os_, branch=str(branch))
    assert result["problems"] == []
    assert (result["source"], result["branch"], result["packages"], result["pinning_package"]) == (source, branch, packages, pinning)
    # Every plan names where its package names and pinning rules come from.
    assert any(cited in item for item in result["packaging_sources"])
    assert all(result["packaging_sources"])
    if pinning:
        assert SOURCES["nvidia_pinning_packages"] in result["packaging_sources"]


@pytest.mark.parametrize("os_, branch", sorted(REFUSED))
def test_a_branch_the_source_does_not_carry_is_refused_before_any_change(os_, branch):
    problems = plan(os_, branch=str(branch))["problems"]
    assert len(problems) == 1 and problems[0].startswith("nvidia_driver_branch: ") and REFUSED[(os_, branch)] in problems[0]


def test_r590_and_later_never_name_the_branch_in_nvidias_apt_packages():
    # The names NVIDIA's repository removed from R590 on (Driver Installation Guide r590, Table 4).
    for os_, branches in ((DEBIAN_12, (590, 595)), (DEBIAN_13, (590, 595)), (UBUNTU_2404, (590, 595)), (UBUNTU_2604, (595,))):
        for branch in branches:
            for flavour, gpus in (("open", [H200]), ("proprietary", [T4])):
                result = plan(os_, source="nvidia", branch=str(branch), flavour=flavour, gpus=gpus)
                assert result["problems"] == [], (os_, branch, flavour)
                assert result["packages"] == ["nvidia-open" if flavour == "open" else "cuda-drivers"]
                assert not any(str(branch) in name for name in result["packages"])


def test_r580_and_earlier_keep_the_branch_in_the_names():
    assert plan(UBUNTU_2404, source="nvidia", branch="580")["packages"] == ["nvidia-open-580"]
    assert plan(UBUNTU_2404, source="nvidia", branch="580", flavour="proprietary", gpus=[T4])["packages"] == ["cuda-drivers-580"]
    assert plan(UBUNTU_2204, source="nvidia", branch="570")["packages"] == ["nvidia-open-570"]


def test_r595_exact_version_pins_and_holds_the_unversioned_names_to_the_release():
    result = plan(UBUNTU_2604, version="595.71.05")
    assert result["source"] == "nvidia" and result["install_names"] == ["nvidia-open=595.71.05*"]
    assert result["pinning_package"] == "nvidia-driver-pinning-595.71.05" and result["pin_version"] == "595.71.05*"
    # The hold and the pin cover every unversioned name of the branch, the pinning package included.
    for name in ("nvidia-open", "cuda-drivers", "nvidia-dkms-open", "libnvidia-compute", "nvidia-fabricmanager",
                 "libnvidia-nscq", "nvidia-driver-pinning-595.71.05"):
        assert re.match(result["hold_pattern"], name), name


def test_a_branch_without_version_pins_the_branch_so_apt_never_moves_to_another():
    result = plan(DEBIAN_12, branch="595")
    assert result["pin_version"] == "595.*" and result["install_names"] == ["nvidia-open"]
    pin = re.compile(result["pin_version"].replace(".", r"\.").replace("*", ".*") + "$")
    assert pin.match("595.99.01-1") and not pin.match("610.43.02-1") and not pin.match("5950.1-1")


def test_ubuntu_2604_sources_by_branch():
    # NVIDIA's repository has no R580 for 26.04; Ubuntu's archive has R595 too (asked for by name).
    problem = plan(UBUNTU_2604, source="nvidia", branch="580")["problems"][0]
    assert problem == ("nvidia_driver_branch: 580 is not in NVIDIA's ubuntu2604 repository, which starts at branch 595; use "
                       "nvidia_driver_source: distro (Ubuntu 26.04's archive) for earlier branches")
    assert plan(UBUNTU_2604, source="distro", branch="595")["packages"] == ubuntu_archive(595)
    # The default branch comes from Ubuntu's archive, with no warning.
    default = plan(UBUNTU_2604)
    assert (default["source"], default["branch"], default["warnings"]) == ("distro", 580, [])


def test_debian_13_archive_carries_r550_only():
    archive = plan(DEBIAN_13, source="distro")
    # R550 predates the open module's default (R560): the proprietary one, as Debian names it.
    assert (archive["branch"], archive["packages"]) == (550, ["nvidia-kernel-dkms", "nvidia-smi", "libcuda1", "nvidia-persistenced"])
    assert plan(DEBIAN_13, source="distro", flavour="open")["packages"][0] == "nvidia-open-kernel-dkms"
    assert SOURCES["debian_13_archive"] in archive["packaging_sources"]
    assert "only branch 550" in plan(DEBIAN_13, source="distro", branch="580")["problems"][0]
    # NVIDIA's debian13 folder is inferred: the plan says so, never fails on it.
    assert any("debian13 is unconfirmed" in item for item in plan(DEBIAN_13)["warnings"])


def test_rhel_10_plans_red_hats_signed_kmod_where_it_ships():
    signed = plan(RHEL_101, branch="580")
    assert signed["install_names"] == ["kmod-nvidia", "nvidia-open-580.*"]
    assert (signed["signed_modules"], signed["build"], signed["dkms_module"], signed["headers"]) == (True, "precompiled", None, [])
    assert signed["el_repositories"] == ["rhel-10-for-x86_64-extensions-rpms"] and signed["dnf_module"] is None
    exact = plan(RHEL_101, version="595.71.05", kernels=["6.12.0-55.el10.x86_64"])
    assert exact["install_names"] == ["kmod-nvidia", "nvidia-open-595.71.05"] and exact["headers"] == []
    # Not on 10.0, not on aarch64, not for the proprietary module: NVIDIA's repository, no module streams.
    for os_ in (("RedHat", "10.0", "x86_64"), ("RedHat", "10.1", "aarch64"), ROCKY_10):
        result = plan(os_, branch="595", kernels=["6.12.0-55.el10.x86_64"])
        assert (result["source"], result["install_names"], result["dnf_module"], result["signed_modules"]) == (
            "nvidia", ["nvidia-open-595.*"], None, False)
        assert result["headers"] == ["kernel-devel-6.12.0-55.el10.x86_64"] and result["dkms_module"] == "nvidia"
    assert "Red Hat ships signed kmod-nvidia only from RedHat 10.1 on x86_64" in plan(
        ("RedHat", "10.0", "x86_64"), source="distro")["problems"][0]
    assert "is the open kernel module" in plan(RHEL_101, flavour="proprietary", gpus=[T4])["problems"][0]
    assert "no module streams" in plan(ROCKY_10, precompiled=True)["problems"][0]


def test_branch_table_gains_r590_and_r595_with_their_lifecycle():
    assert {550, 570, 580, 590, 595} <= set(KNOWN_BRANCHES)
    r595 = plan(DEBIAN_12, branch="595")["lifecycle"]
    assert (r595["designation"], r595["eol"], r595["status"]) == ("Production Branch", "2027-03", "supported")
    r590 = plan(DEBIAN_12, branch="590")["lifecycle"]
    assert (r590["designation"], r590["status"]) == ("New Feature Branch", "unknown")
    assert "620/supported-drivers" in r590["source"]


def test_fabric_manager_follows_the_era():
    switches = [{"device": "22a3", "generation": 3}]
    old = fabric_manager.fabric_manager_plan("apt", "nvidia", 580, "580.95.05", switches)
    assert old["install_names"] == ["nvidia-fabricmanager-580=580.95.05*", "libnvidia-nscq-580=580.95.05*"]
    new = fabric_manager.fabric_manager_plan("apt", "nvidia", 595, "595.71.05", switches)
    assert new["install_names"] == ["nvidia-fabricmanager=595.71.05*", "libnvidia-nscq=595.71.05*"]


def test_every_table_entry_names_its_source():
    for era in driver_packaging.NVIDIA_APT_ERAS:
        assert era["source"] and era["status"] in ("primary", "secondary", "unconfirmed")
    for key, entry in driver_packaging.PLATFORMS.items():
        assert entry["source"] and entry["status"], key
    for entry in list(driver_packaging.EL_BRANCH_PINNING.values()) + list(driver_packaging.EL_SIGNED_KMOD.values()):
        assert entry["source"]
    for release in driver_packaging.UBUNTU_ARCHIVE_TRANSITIONAL.values():
        assert all(item["source"] for item in release.values())
    with pytest.raises(ValueError):
        driver_packaging.nvidia_apt_era(-1)
