# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import fnmatch
import json
import os
import re

import pytest

from conftest import FIXTURES, read_h200, read_public
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import nvidia_driver
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import nvidia_parsers
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.nvidia_driver import (
    adopt_report,
    check_install,
    decide,
    dkms_checked,
    dkms_problems,
    hold_plan,
    lifecycle_check,
    missing_packages,
    owner_query_argv,
    package_driver_version,
    parse_dkms_status,
    parse_owners,
    parse_secure_boot,
    plan_install,
    PLATFORMS,
    reboot_needed,
    resolve_mode,
    secure_boot_problems,
)

# One GPU of each generation, as gpu_facts reports them.
V100 = {"name": "Tesla V100-SXM2-16GB", "compute_capability": "7.0"}
P100 = {"name": "Tesla P100-PCIE-16GB", "compute_capability": "6.0"}
T4 = {"name": "Tesla T4", "compute_capability": "7.5"}
A100 = {"name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}
H200 = {"name": "NVIDIA H200", "compute_capability": "9.0"}
GH200 = {"name": "NVIDIA GH200 480GB", "compute_capability": "9.0"}
B200 = {"name": "NVIDIA B200", "compute_capability": "10.0"}
RTX5090 = {"name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0"}

UBUNTU = ("Ubuntu", "24.04", "x86_64")
DEBIAN = ("Debian", "12.11", "x86_64")
ROCKY = ("Rocky", "9.6", "x86_64")


# The day the tests judge branch lifecycles on: R535 is past its end of life (2026-06), R580 supported.
TODAY = datetime.date(2026, 12, 4)


def plan(os_=UBUNTU, **kwargs):
    kwargs.setdefault("today", TODAY)
    return plan_install(*os_, **kwargs)


@pytest.fixture
def h200():
    """aistack_gpu as gpu_facts reports the H200 host, assembled from its recorded outputs."""
    (row,) = nvidia_parsers.parse_query_gpu_csv(read_h200("nvidia-smi-query-gpu.csv"))
    module = nvidia_parsers.parse_proc_driver_version(read_h200("proc-driver-nvidia-version.txt"))
    banner = nvidia_parsers.parse_smi_banner(read_h200("nvidia-smi.txt"))
    return {
        "state": "ok", "source": "nvidia-smi", "gpu_count": 1,
        "gpus": [{"index": 0, "name": row["name"], "compute_capability": row["compute_cap"], "pci_bus_id": row["pci.bus_id"]}],
        "driver": {"version": module["version"], "kernel_module_flavour": module["flavour"], "cuda_version": banner["cuda_version"],
                   "loaded_version": module["version"], "userspace_version": banner["driver_version"], "mismatch": False},
        "messages": [],
    }


# --- package selection across families, branches, flavours and GPU generations ----------------

@pytest.mark.parametrize("gpus, branch, expected", [
    ([H200], "580", "nvidia-headless-580-server-open"),        # Hopper on >=560: open by default
    ([H200], "535", "nvidia-headless-535-server"),             # Hopper before 560: proprietary default
    ([T4], "570", "nvidia-headless-570-server-open"),          # Turing is Turing+
    ([A100], "580", "nvidia-headless-580-server-open"),
    ([V100], "580", "nvidia-headless-580-server"),             # Volta: proprietary required
    ([P100], "535", "nvidia-headless-535-server"),
    ([B200], "580", "nvidia-headless-580-server-open"),        # Blackwell: open required
    ([GH200], "535", "nvidia-headless-535-server-open"),       # Grace Hopper: open even before 560
    ([], "580", "nvidia-headless-580-server-open"),            # no GPU seen: the branch's default
    ([], "535", "nvidia-headless-535-server"),
])
def test_ubuntu_canonical_flavour_by_generation(gpus, branch, expected):
    result = plan(branch=branch, gpus=gpus)
    assert result["problems"] == []
    assert result["packages"] == [expected, "nvidia-utils-%s-server" % branch]
    assert result["pin_version"] == "%s.*" % branch and result["build"] == "dkms" and result["dkms_module"] == "nvidia"


def test_ubuntu_desktop_packages_and_precompiled_signed_modules():
    assert plan(branch="580", gpus=[RTX5090], ubuntu_server=False)["packages"] == ["nvidia-headless-580-open", "nvidia-utils-580"]
    result = plan(("Ubuntu", "22.04", "x86_64"), branch="580", gpus=[H200], precompiled=True, kernels=["6.8.0-85-generic"])
    assert result["packages"] == ["nvidia-headless-no-dkms-580-server-open", "linux-modules-nvidia-580-server-open-generic",
                                  "nvidia-utils-580-server"]
    assert result["signed_modules"] is True and result["headers"] == [] and result["dkms_module"] is None


def test_ubuntu_nvidia_repository_and_exact_version():
    result = plan(source="nvidia", version="580.95.05", gpus=[H200], kernels=["6.8.0-85-generic", "6.8.0-90-generic"])
    assert result["branch"] == 580 and result["packages"] == ["nvidia-open-580"]
    assert result["install_names"] == ["nvidia-open-580=580.95.05*"] and result["pin_version"] == "580.95.05*"
    assert result["nvidia_repo"] == "ubuntu2404/x86_64"
    assert result["headers"] == ["linux-headers-6.8.0-85-generic", "linux-headers-6.8.0-90-generic"]
    proprietary = plan(source="nvidia", branch="580", gpus=[V100])
    assert proprietary["packages"] == ["cuda-drivers-580"] and proprietary["flavour"] == "proprietary"


def test_debian_archive_packages_with_exact_version():
    result = plan(DEBIAN, source="distro", version="535.309.01", kernels=["6.1.0-37-amd64"])
    assert result["problems"] == [] and result["source"] == "distro" and result["branch"] == 535
    assert result["flavour"] == "proprietary" and result["dkms_module"] == "nvidia-current"
    assert result["install_names"] == ["nvidia-kernel-dkms=535.309.01*", "nvidia-smi=535.309.01*", "libcuda1=535.309.01*",
                                       "nvidia-persistenced"]
    assert result["headers"] == ["linux-headers-6.1.0-37-amd64"]
    assert plan(DEBIAN, source="distro", flavour="open")["packages"][0] == "nvidia-open-kernel-dkms"
    assert plan(DEBIAN, source="distro", flavour="open")["dkms_module"] == "nvidia-current-open"
    assert plan(DEBIAN, source="nvidia", gpus=[H200])["packages"] == ["nvidia-open-580"]
    assert plan(DEBIAN, source="nvidia")["nvidia_repo"] == "debian12/x86_64"


@pytest.mark.parametrize("os_, kwargs, stream", [
    (ROCKY, {"branch": "580", "gpus": [H200]}, "580-open"),
    (ROCKY, {"branch": "580", "gpus": [V100]}, "580-dkms"),
    (ROCKY, {"branch": "580", "gpus": [V100], "precompiled": True}, "580"),
    (ROCKY, {"branch": "580", "gpus": [A100], "precompiled": True}, "580"),   # auto picks what precompiled offers
    (("RedHat", "8.10", "aarch64"), {"branch": "535", "gpus": [H200]}, "535-dkms"),
])
def test_el_module_streams(os_, kwargs, stream):
    result = plan(os_, kernels=["5.14.0-570.el9.x86_64"], **kwargs)
    assert result["problems"] == [] and result["package_manager"] == "dnf"
    assert result["dnf_module"] == "nvidia-driver:" + stream and result["packages"] == ["@nvidia-driver:" + stream]
    assert result["headers"] == ([] if kwargs.get("precompiled") else ["kernel-devel-5.14.0-570.el9.x86_64"])


def test_el_exact_version_and_arm_repository():
    result = plan(("RedHat", "9.4", "aarch64"), version="580.95.05", gpus=[GH200])
    assert result["install_names"] == ["nvidia-driver-580.95.05", "@nvidia-driver:580-open"]
    assert result["nvidia_repo"] == "rhel9/sbsa" and result["signed_modules"] is False
    assert result["version_package"] == "nvidia-driver" and result["hold_pattern"].startswith("^(nvidia-|kmod-nvidia")


def test_versions_compare_as_integers_not_strings():
    # A peer's string compare put "10" before "8"; here a branch 1000 > 580 > 99.
    assert plan(version="580.159.04")["branch"] == 580
    assert "not a known driver branch" in plan(branch="1000")["problems"][0]
    assert "not a known driver branch" in plan(branch="99")["problems"][0]
    # 580.9 is older than 580.10 for the adopt policy
    facts = {"state": "ok", "driver": {"version": "580.10.01", "kernel_module_flavour": "open"}, "gpus": [H200]}
    assert adopt_report(facts, min_version="580.9")["problems"] == []
    assert "older than 580.100" in adopt_report(facts, min_version="580.100")["problems"][0]
    assert plan(("RedHat", "11", "x86_64"))["problems"][0].startswith("unsupported OS RedHat 11")


@pytest.mark.parametrize("kwargs, names", [
    ({"gpus": [B200], "flavour": "proprietary"}, ["nvidia_driver_flavour: proprietary is impossible", "Blackwell"]),
    ({"gpus": [GH200], "flavour": "proprietary"}, ["nvidia_driver_flavour", "Grace Hopper"]),
    ({"gpus": [V100], "flavour": "open"}, ["nvidia_driver_flavour: open is impossible", "compute capability 7.5+"]),
    ({"gpus": [V100, B200]}, ["no kernel module flavour drives all these GPUs", "Volta", "Blackwell"]),
    ({"gpus": [V100], "branch": "595"}, ["no kernel module flavour", "Volta"]),   # R580 is the last branch for Volta
    ({"branch": "58O"}, ["nvidia_driver_branch: '58O' is not a driver branch"]),
    ({"branch": "565"}, ["nvidia_driver_branch: 565 is not a known driver branch"]),
    ({"version": "580"}, ["nvidia_driver_version: '580' is not an exact version"]),
    ({"version": "580.x"}, ["nvidia_driver_version: '580.x' is not a driver version"]),
    ({"version": "570.195.03", "branch": "580"}, ["nvidia_driver_version: 570.195.03 is not on nvidia_driver_branch 580"]),
    ({"source": "ppa"}, ["nvidia_driver_source: 'ppa'"]),
    ({"flavour": "closed"}, ["nvidia_driver_flavour: 'closed'"]),
])
def test_impossible_requests_are_named(kwargs, names):
    problems = plan(**kwargs)["problems"]
    assert len(problems) == 1 and all(name in problems[0] for name in names), problems


def test_platform_bound_refusals():
    assert "carries only branch 535" in plan(DEBIAN, source="distro", branch="580")["problems"][0]
    assert "nvidia_driver_source: distro is not available on Rocky 9" in plan(ROCKY, source="distro")["problems"][0]
    assert "nvidia_driver_precompiled" in plan(DEBIAN, precompiled=True)["problems"][0]
    assert "proprietary module" in plan(ROCKY, gpus=[B200], precompiled=True)["problems"][0]
    assert "unsupported architecture ppc64le" in plan(("Ubuntu", "24.04", "ppc64le"))["problems"][0]
    # Debian's archive branch predates Blackwell; the table's R570 minimum is unconfirmed, so a warning.
    debian_blackwell = plan(DEBIAN, source="distro", gpus=[B200])
    assert debian_blackwell["problems"] == [] and debian_blackwell["flavour"] == "open"
    assert "Driver branch R535 predates Blackwell support" in debian_blackwell["warnings"][1]
    assert plan(gpus=[B200])["warnings"] == []


# --- mode: install, adopt, refuse -------------------------------------------------------------

def test_h200_host_is_adopted_and_reports_the_recorded_facts(h200):
    assert resolve_mode("auto", h200, None, [])["mode"] == "adopt"
    result = adopt_report(h200, branch="580", min_version="580.95.05", flavour="open")
    assert result["problems"] == []
    report = result["report"]
    recorded = read_h200("nvidia-smi-query-gpu.csv").splitlines()[1].split(", ")
    assert report["version"] == recorded[3] == "580.159.04"
    assert report["gpus"] == [{"name": recorded[1], "compute_capability": recorded[4], "generation": "Hopper"}]
    assert report["flavour"] == "open" and "Open Kernel Module" in read_h200("proc-driver-nvidia-version.txt")
    assert report["cuda_version"] == "13.0" and report["branch"] == 580
    assert (report["managed"], report["owners"], report["reboot_needed"]) == (False, [], False)


def test_h200_host_refuses_install(h200):
    refused = resolve_mode("install", h200, None, [])
    assert "install refuses to touch the driver 580.159.04, which no package owns" in refused["problems"][0]
    # Even with takeover allowed: nothing can replace files no package owns.
    assert resolve_mode("install", h200, None, [], takeover=True)["problems"]


def test_adopt_policy_violations_on_h200(h200):
    problems = adopt_report(h200, branch="595", min_version="590", flavour="proprietary")["problems"]
    assert [problem.split(":")[0] for problem in problems] == ["nvidia_driver_branch", "nvidia_driver_min_version", "nvidia_driver_flavour"]


def test_mode_resolution_matrix():
    working = {"state": "ok", "driver": {"version": "580.95.05"}}
    none = {"state": "no_gpu", "driver": {"version": None}}
    broken = {"state": "gpu_no_driver", "driver": {"version": None}, "messages": ["nvidia-smi not found"]}
    record = {"branch": 580, "version": None}
    assert resolve_mode("auto", none, None, [], install_without_gpu=True)["mode"] == "install"
    assert resolve_mode("auto", working, record, ["nvidia-open-580"]) == {"mode": "install", "reason": "installed by this role (None)", "problems": []}
    assert resolve_mode("auto", working, None, ["nvidia-open-580"])["mode"] == "adopt"
    assert "use nvidia_driver_mode: adopt" in resolve_mode("install", working, None, ["libnvidia-compute-580"])["problems"][0]
    assert resolve_mode("install", working, None, ["libnvidia-compute-580"], takeover=True)["problems"] == []
    assert "adopt needs a working driver, and the GPU state is gpu_no_driver (nvidia-smi not found)" in \
        resolve_mode("adopt", broken, None, [])["problems"][0]
    assert "refuses" in resolve_mode("auto", broken, None, ["nvidia-kernel-dkms"])["problems"][0]
    assert "nvidia_driver_mode: 'verify'" in resolve_mode("verify", working, None, [])["problems"][0]


@pytest.mark.parametrize("requested", ["auto", "install", "adopt"])
def test_a_node_without_gpu_is_left_alone_in_every_mode(requested):
    none = {"state": "no_gpu", "gpus": [], "pci_devices": [], "driver": {"version": None}}
    decision = resolve_mode(requested, none, None, [])
    assert decision["mode"] == "skip" and decision["problems"] == []
    assert "\n" not in decision["reason"]
    assert decision["reason"].startswith("no NVIDIA GPU on this node")
    assert "nothing to install. Set nvidia_driver_install_without_gpu: true" in decision["reason"]
    # Driver packages without a GPU (an image built with the variable, booted on a CPU node) change nothing either.
    installed = resolve_mode(requested, dict(none, driver={"version": "535.309.01"}), {"branch": 535}, ["nvidia-smi"])
    assert installed["mode"] == "skip" and "the driver this role installed earlier is left as it is" in installed["reason"]


def test_a_node_without_gpu_gets_the_driver_when_told_to_install_anyway():
    none = {"state": "no_gpu", "gpus": [], "pci_devices": [], "driver": {"version": None}}
    assert resolve_mode("auto", none, None, [], install_without_gpu=True) == {
        "mode": "install", "reason": "no driver on the node", "problems": []}
    # Told to install, the rules of a GPU node hold: adopt still needs a working driver.
    assert "adopt needs a working driver, and the GPU state is no_gpu" in \
        resolve_mode("adopt", none, None, [], install_without_gpu=True)["problems"][0]


@pytest.mark.parametrize("state", ["ok", "gpu_no_driver", "mismatch", "driver_error"])
def test_only_a_node_without_gpu_is_skipped(state):
    assert resolve_mode("auto", {"state": state, "driver": {"version": None}}, None, [])["mode"] != "skip"


def test_reboot_needed():
    fresh = {"state": "no_gpu", "driver": {"mismatch": False}}
    assert reboot_needed(fresh, True, None, "b1") is True
    assert reboot_needed(fresh, False, {"module_changed_boot": "b1"}, "b1") is True     # same boot: still pending
    assert reboot_needed(fresh, False, {"module_changed_boot": "b1"}, "b2") is False    # rebooted since
    assert reboot_needed({"driver": {"mismatch": True}}, False, None, "b2") is True
    loaded = {"driver": {"loaded_version": "580.95.05", "mismatch": False}}
    assert reboot_needed(loaded, False, None, "b2", installed_version="580.105.08") is True
    assert reboot_needed(loaded, False, None, "b2", installed_version="580.95.05") is False


@pytest.mark.parametrize("package_version, driver", [
    ("535.309.01-0+deb12u1", "535.309.01"), ("3:580.95.05-1.el9", "580.95.05"),
    ("580.95.05-0ubuntu0.24.04.2", "580.95.05"), ("", None), (None, None),
])
def test_package_driver_version(package_version, driver):
    assert package_driver_version(package_version) == driver


# --- parsers -------------------------------------------------------------------------------------

def test_secure_boot_states():
    assert parse_secure_boot("SecureBoot enabled\n") == "enabled"
    assert parse_secure_boot("SecureBoot disabled\nPlatform is in Setup Mode\n") == "disabled"
    assert parse_secure_boot("EFI variables are not supported on this system\n") == "unsupported"
    assert parse_secure_boot(None, b"\x06\x00\x00\x00\x01") == "enabled"
    assert parse_secure_boot(None, b"\x06\x00\x00\x00\x00") == "disabled"
    assert parse_secure_boot(None, None) == "unsupported"


def test_dkms_status_registered_only_in_a_container():
    entries = parse_dkms_status(read_public("dkms-status-debian12-container.txt"))
    assert entries == [{"module": "nvidia-current", "version": "535.309.01", "kernel": None, "arch": None, "state": "added"}]
    assert dkms_problems(entries, "nvidia-current", []) == []
    assert dkms_problems(entries, "nvidia-current", ["6.1.0-37-amd64"]) == [
        "dkms: module nvidia-current is not installed for kernel 6.1.0-37-amd64; install linux-headers/kernel-devel for it "
        "and run dkms autoinstall -k 6.1.0-37-amd64"]
    assert "not registered" in dkms_problems(entries, "nvidia", [])[0]


def test_dkms_status_installed_for_each_kernel():
    entries = parse_dkms_status(read_public("dkms-status-installed.txt"))
    assert [(entry["module"], entry["version"], entry["kernel"], entry["state"]) for entry in entries] == [
        ("nvidia", "570.172.08", "6.12.10-76061203-generic", "installed"),
        ("nvidia", "570.172.08", "6.16.3-76061603-generic", "installed")]
    assert dkms_problems(entries, "nvidia", ["6.12.10-76061203-generic", "6.16.3-76061603-generic"]) == []
    assert "not installed for kernel 6.17.0-5-generic" in dkms_problems(entries, "nvidia", ["6.16.3-76061603-generic", "6.17.0-5-generic"])[0]


def test_dkms_status_2x_format():
    assert parse_dkms_status(read_public("dkms-status-2x.txt")) == [
        {"module": "nvidia", "version": "460.91.03", "kernel": "5.11.0-36-generic", "arch": "x86_64", "state": "installed"}]


def test_adopt_requested_and_bad_policy_input():
    working = {"state": "ok", "gpus": [B200], "driver": {"version": "580.95.05", "kernel_module_flavour": "proprietary"}}
    assert resolve_mode("adopt", working, None, []) == {"mode": "adopt", "reason": "requested (nvidia_driver_mode)", "problems": []}
    problems = adopt_report(working, min_version="580.x", flavour="closed")["problems"]
    assert problems[0] == "nvidia_driver_min_version: '580.x' is not a driver version; expected dotted digits"
    assert problems[1].startswith("nvidia_driver_flavour: 'closed'")
    # A running driver can break the GPU rules too: the proprietary module cannot drive Blackwell.
    assert "needs the open kernel module" in problems[2] and "Install the open kernel module flavour" in problems[2]


# --- the nvidia_driver_plan module's two answers (moved from the retired nvidia_driver_* filters) ---

SETTINGS = dict(mode="auto", source="auto", branch=None, version=None, flavour="auto", precompiled=False, ubuntu_server=True,
                min_version=None, takeover=False, install_without_gpu=False)
NO_GPU = {"state": "no_gpu", "gpus": [], "driver": {"version": None, "loaded_version": None, "mismatch": False}}
DEBIAN_FACTS = {"distribution": "Debian", "distribution_version": "12.11", "architecture": "x86_64"}


def settings(**overrides):
    return dict(SETTINGS, **overrides)


def test_decide_skips_a_node_without_gpu_and_plans_an_image_build():
    skipped = decide(settings(), NO_GPU, DEBIAN_FACTS, None, [], [])
    assert (skipped["mode"], skipped["plan"], skipped["problems"], skipped["secure_boot_check"]) == ("skip", None, [], False)
    built = decide(settings(install_without_gpu=True, source="distro", version="535.309.01"), NO_GPU, DEBIAN_FACTS, None, [],
                   ["6.1.0-41-amd64"], today=TODAY)
    assert built["mode"] == "install" and built["problems"] == [] and built["secure_boot_check"] is True
    assert built["plan"]["packages"][0] == "nvidia-kernel-dkms" and built["plan"]["version_package"] == "nvidia-kernel-dkms"
    assert built["plan"]["hold_pattern"].startswith("^(nvidia-|libnvidia-|libcuda1")
    assert built["plan"]["headers"] == ["linux-headers-6.1.0-41-amd64"]


def test_decide_stops_at_the_first_failing_step():
    ubuntu = {"distribution": "Ubuntu", "distribution_version": "24.04", "architecture": "x86_64"}
    blackwell = {"state": "no_gpu", "gpus": [B200], "driver": {"version": None}}
    refused = decide(settings(install_without_gpu=True, flavour="proprietary"), blackwell, ubuntu, None, [], [])
    assert "Blackwell" in refused["problems"][0] and refused["secure_boot_check"] is False
    # Canonical's signed prebuilt modules load under Secure Boot: nothing to read.
    assert decide(settings(install_without_gpu=True, precompiled=True), NO_GPU, ubuntu, None, [], [])["secure_boot_check"] is False
    bad_mode = decide(settings(mode="verify"), NO_GPU, DEBIAN_FACTS, None, [], [])
    assert bad_mode["mode"] is None and "nvidia_driver_mode: 'verify'" in bad_mode["problems"][0]


def test_decide_adopts_with_the_policy_check():
    working = {"state": "ok", "gpus": [], "driver": {"version": "580.95.05", "kernel_module_flavour": "open"}}
    adopted = decide(settings(branch="580"), working, DEBIAN_FACTS, None, ["libnvidia-ml1"], [])
    assert adopted["mode"] == "adopt" and adopted["problems"] == [] and adopted["plan"] is None
    assert adopted["adopt"]["branch"] == 580 and adopted["adopt"]["owners"] == ["libnvidia-ml1"]
    assert decide(settings(min_version="590"), working, DEBIAN_FACTS, None, [], [])["problems"] == [
        "nvidia_driver_min_version: the node runs driver 580.95.05, older than 590"]


def test_secure_boot_refuses_unsigned_modules_without_an_enrolled_mok():
    assert secure_boot_problems("disabled", "dkms", False) == []
    assert secure_boot_problems("unsupported", "dkms", False) == []
    assert secure_boot_problems("enabled", "dkms", True) == []
    refused = secure_boot_problems("enabled", "precompiled", False)
    assert refused[0].startswith("Secure Boot is enabled and the precompiled kernel modules would be unsigned")
    assert "mokutil --import /var/lib/dkms/mok.pub" in refused[0] and "nvidia_driver_precompiled: true" in refused[0]


def test_owners_of_the_driver_files():
    assert owner_query_argv("apt")[:2] == ["dpkg-query", "-S"] and "*/nvidia-smi" in owner_query_argv("apt")
    assert owner_query_argv("dnf")[:4] == ["rpm", "-q", "--qf", "%{NAME}\n"]
    assert parse_owners("libnvidia-ml1:amd64: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n"
                        "nvidia-smi: /usr/bin/nvidia-smi\n"
                        "dpkg-query: no path found matching pattern /lib/*/libnvidia-ml.so.1\n") == ["libnvidia-ml1", "nvidia-smi"]
    assert parse_owners("nvidia-driver-cuda\nno package provides nvidia-driver-cuda\nnvidia-driver-cuda\n") == ["nvidia-driver-cuda"]
    assert parse_owners("") == []


def test_check_install_in_a_container():
    decision = {"plan": {"dkms_module": "nvidia-current"}, "kernels": [], "container": True, "record": None}
    checked = check_install(decision, NO_GPU, "535.309.01-0+deb12u1", True, True,
                            dkms_status=read_public("dkms-status-debian12-container.txt"), boot_id="b1")
    assert checked["installed_version"] == "535.309.01" and checked["dkms"]["problems"] == []
    assert [entry["state"] for entry in checked["dkms"]["entries"]] == ["added"]
    assert (checked["reboot_needed"], checked["reboot_now"], checked["reboot_pending"]) == (True, False, True)
    rebooting = check_install(dict(decision, container=False), NO_GPU, None, True, True, boot_id="b1")
    assert (rebooting["reboot_now"], rebooting["reboot_pending"], rebooting["dkms"]["checked"]) == (True, False, False)
    settled = check_install(dict(decision, record={"module_changed_boot": "b0"}), NO_GPU, None, False, False, boot_id="b1")
    assert (settled["reboot_needed"], settled["reboot_pending"]) == (False, False)


def test_dkms_is_checked_unless_check_mode_has_no_packages_yet():
    assert dkms_checked({"dkms_module": "nvidia"}, False, True, False)
    assert not dkms_checked({"dkms_module": None}, False, False, False)
    assert not dkms_checked({"dkms_module": "nvidia"}, True, True, False)
    assert not dkms_checked({"dkms_module": "nvidia"}, True, False, True)
    assert dkms_checked({"dkms_module": "nvidia"}, True, False, False)
    # Every package was there before the run (apt skipped): the registration is there to read.
    assert dkms_checked({"dkms_module": "nvidia", "missing": []}, True, False, True)
    assert not dkms_checked({"dkms_module": "nvidia", "missing": ["nvidia-kernel-dkms"]}, True, False, True)
    assert not dkms_checked({"dkms_module": "nvidia", "missing": None}, True, False, True)


def test_a_package_is_missing_unless_installed_at_the_pinned_version():
    installed = {"nvidia-kernel-dkms": "535.309.01-0+deb12u1", "nvidia-persistenced": "535.171.04-1",
                 "linux-headers-6.1.0-41-amd64": "6.1.158-1"}
    # A bare name takes any installed version (apt's state: present); a pin matches the version pattern.
    assert missing_packages(["linux-headers-6.1.0-41-amd64", "nvidia-kernel-dkms=535.309.01*", "nvidia-persistenced"],
                            installed) == []
    assert missing_packages(["nvidia-kernel-dkms=535.309.02*", "linux-headers-6.1.0-42-amd64", "libcuda1=535.309.01*"],
                            installed) == ["nvidia-kernel-dkms=535.309.02*", "linux-headers-6.1.0-42-amd64",
                                           "libcuda1=535.309.01*"]
    # 535.309.01 must not pass for 535.309.1*.
    assert missing_packages(["nvidia-kernel-dkms=535.309.1*"], installed) == ["nvidia-kernel-dkms=535.309.1*"]


@pytest.mark.parametrize("os_", sorted(PLATFORMS))
def test_the_probes_package_list_covers_every_package_a_plan_installs(os_):
    # What the probe does not list would read as missing on every run, and apt would run on every no-op.
    planned = 0
    for source in ("distro", "nvidia"):
        result = plan((os_[0], os_[1], "x86_64"), source=source, gpus=[H200], kernels=["6.1.0-41-amd64"])
        if result["problems"]:
            continue
        planned += 1
        names = [spec.split("=", 1)[0] for spec in result["install_names"] + result["headers"] if not spec.startswith("@")]
        names += [result["pinning_package"]] if result["pinning_package"] else []
        globs = nvidia_driver.PACKAGE_GLOBS[result["package_manager"]]
        assert [name for name in names if not any(fnmatch.fnmatchcase(name, glob) for glob in globs)] == []
    # Every platform has at least one source that plans an install: the check above is never skipped whole.
    assert planned >= 1


def test_decide_names_what_apt_must_install_and_leaves_dnf_to_dnf():
    wanted = settings(install_without_gpu=True, source="distro", version="535.309.01")
    fresh = decide(wanted, NO_GPU, DEBIAN_FACTS, None, [], ["6.1.0-41-amd64"])["plan"]
    assert fresh["missing"] == ["linux-headers-6.1.0-41-amd64"] + fresh["install_names"]
    installed = dict((spec.split("=")[0], "535.309.01-0+deb12u1") for spec in fresh["install_names"])
    installed["linux-headers-6.1.0-41-amd64"] = "6.1.158-1"
    assert decide(wanted, NO_GPU, DEBIAN_FACTS, None, [], ["6.1.0-41-amd64"], packages=installed)["plan"]["missing"] == []
    rocky = {"distribution": "Rocky", "distribution_version": "9.6", "architecture": "x86_64"}
    assert decide(settings(install_without_gpu=True), NO_GPU, rocky, None, [], [])["plan"]["missing"] is None


def test_hold_covers_installed_driver_packages_and_names_those_not_held():
    apt = plan(DEBIAN)
    selections = "libcuda1:amd64\t\t\t\t\thold\nnvidia-smi\t\t\t\t\tinstall\nbash\t\t\t\t\thold\n"
    installed = ["bash", "nvidia-smi", "libcuda1", "nvidia-kernel-dkms", "firmware-nvidia-gsp", "cuda-compat-12-8"]
    assert hold_plan(apt, installed, selections) == {
        "names": ["firmware-nvidia-gsp", "libcuda1", "nvidia-kernel-dkms", "nvidia-smi"],
        "missing": ["firmware-nvidia-gsp", "nvidia-kernel-dkms", "nvidia-smi"]}
    el = plan(ROCKY)
    locks = "Last metadata expiration check: 0:01:02 ago.\n3:nvidia-driver-580.95.05-1.el9.*\nkmod-nvidia-latest-dkms-3:580.95.05-1.el9.*\n"
    assert hold_plan(el, ["nvidia-driver", "kmod-nvidia-latest-dkms", "nvidia-driver-cuda", "kernel"], locks) == {
        "names": ["kmod-nvidia-latest-dkms", "nvidia-driver", "nvidia-driver-cuda"], "missing": ["nvidia-driver-cuda"]}
    assert hold_plan(el, [], "")["names"] == []


# ---------------------------------------------------------------------------
# Branch lifecycle (issue 20, item 2)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("os_", sorted(PLATFORMS))
def test_every_platforms_default_branch_is_supported(os_):
    result = plan((os_[0], os_[1], "x86_64"), gpus=[H200])
    # Only a table entry marked unconfirmed may warn (Debian 13: NVIDIA's repository folder).
    unconfirmed = PLATFORMS[os_].get("nvidia_repo_status") == "unconfirmed" and result["source"] == "nvidia"
    assert result["problems"] == [] and len(result["warnings"]) == int(unconfirmed)
    assert result["branch"] == 580 and result["lifecycle"]["status"] == "supported"
    assert result["lifecycle"]["eol"] == "2028-06" and result["lifecycle"]["designation"] == "LTSB"


def test_debian_defaults_to_nvidias_repository_because_its_archive_branch_is_end_of_life():
    result = plan(DEBIAN)
    assert (result["source"], result["branch"], result["nvidia_repo"]) == ("nvidia", 580, "debian12/x86_64")
    archive = plan(DEBIAN, source="distro")
    assert archive["problems"] == [] and archive["branch"] == 535 and archive["lifecycle"]["status"] == "end_of_life"
    assert archive["lifecycle"]["successor"] == {"branch": "R580", "designation": "LTSB", "eol": "2028-06"}
    assert archive["warnings"] == [
        "driver branch R535 (LTSB): end of life since 2026-06; supported successor R580 (LTSB, until 2028-06): set "
        "nvidia_driver_branch: \"580\" with nvidia_driver_source: nvidia (the distribution's archive carries no other branch) "
        "(nvidia_driver_refuse_eol: true refuses end-of-life branches)"]


def test_an_end_of_life_branch_is_refused_with_refuse_eol():
    problems = plan(DEBIAN, source="distro", refuse_eol=True)["problems"]
    assert len(problems) == 1 and problems[0].startswith("nvidia_driver_refuse_eol: refusing driver branch R535 (LTSB)")
    assert "supported successor R580" in problems[0]
    # A New Feature Branch past its end of life names the next supported one; a supported branch passes.
    assert "supported successor R620 (LTSB, until 2029-09)" in plan(branch="610", refuse_eol=True)["problems"][0]
    assert plan(branch="580", refuse_eol=True)["problems"] == []
    # The lifecycle is judged on the day: R535 was supported through June 2026.
    assert plan(DEBIAN, source="distro", refuse_eol=True, today=datetime.date(2026, 6, 30))["problems"] == []


def test_lifecycle_statuses_from_the_table():
    assert lifecycle_check(535, today=datetime.date(2026, 7, 1))["lifecycle"]["status"] == "end_of_life"
    assert lifecycle_check(595, today=TODAY)["lifecycle"]["status"] == "supported"
    unknown = lifecycle_check(470, refuse_eol=True, today=TODAY)
    assert unknown["lifecycle"]["status"] == "unknown" and unknown["problems"] == unknown["warnings"] == []


def test_adopt_reports_the_lifecycle_and_refuses_an_end_of_life_branch(h200):
    supported = adopt_report(h200, refuse_eol=True, today=TODAY)
    assert supported["problems"] == supported["warnings"] == []
    assert supported["report"]["lifecycle"]["branch"] == "R580" and supported["report"]["lifecycle"]["status"] == "supported"
    old = {"state": "ok", "driver": {"version": "535.309.01", "kernel_module_flavour": "proprietary"}, "gpus": [A100]}
    warned = adopt_report(old, today=TODAY)
    assert warned["problems"] == [] and "supported successor R580" in warned["warnings"][0]
    assert "with nvidia_driver_source" not in warned["warnings"][0]
    refused = adopt_report(old, refuse_eol=True, today=TODAY)
    assert refused["warnings"] == [] and refused["problems"][0].startswith("nvidia_driver_refuse_eol: refusing driver branch R535")


def test_decide_names_the_branch_a_node_left_alone_would_get_and_warns_of_end_of_life():
    skipped = decide(settings(), NO_GPU, DEBIAN_FACTS, None, [], [], today=TODAY)
    assert skipped["mode"] == "skip" and skipped["plan"] is None
    assert skipped["reason"].endswith("; a GPU would get driver branch 580 from the NVIDIA CUDA repository (R580 (LTSB): supported "
                                      "until 2028-06)")
    # A plan with problems adds nothing to the line.
    refused = decide(settings(source="distro", refuse_eol=True), NO_GPU, DEBIAN_FACTS, None, [], [], today=TODAY)
    assert refused["problems"] == [] and refused["reason"].endswith("image builds)")
    built = decide(settings(install_without_gpu=True, source="distro"), NO_GPU, DEBIAN_FACTS, None, [], [], today=TODAY)
    assert built["warnings"][0].startswith("driver branch R535 (LTSB): end of life since 2026-06")
    assert decide(settings(install_without_gpu=True, source="distro", refuse_eol=True), NO_GPU, DEBIAN_FACTS, None, [], [],
                  today=TODAY)["problems"][0].startswith("nvidia_driver_refuse_eol")


@pytest.mark.parametrize("os_, kwargs, expected", [
    # NVIDIA's repository on Debian and Ubuntu, R580 and later: the branch's or the release's package.
    (DEBIAN, {"source": "nvidia"}, "nvidia-driver-pinning-580"),
    (("Ubuntu", "24.04", "x86_64"), {"source": "nvidia", "version": "580.159.04"}, "nvidia-driver-pinning-580.159.04"),
    (("Ubuntu", "22.04", "aarch64"), {"source": "nvidia", "branch": "580", "gpus": [GH200]}, "nvidia-driver-pinning-580"),
    # None before R580, from a distribution's archive, or with dnf (the module stream pins there).
    (("Ubuntu", "24.04", "x86_64"), {"source": "nvidia", "branch": "535"}, None),
    (("Ubuntu", "24.04", "x86_64"), {"source": "distro", "branch": "580"}, None),
    (DEBIAN, {"source": "distro"}, None),
    (ROCKY, {"branch": "580", "gpus": [H200]}, None),
])
def test_pinning_package_per_branch_source_and_distribution(os_, kwargs, expected):
    result = plan(os_, **kwargs)
    assert result["problems"] == [] and result["pinning_package"] == expected


def test_pinning_package_is_held_with_the_driver():
    name = plan(DEBIAN, source="nvidia", version="580.95.05")["pinning_package"]
    assert re.match(plan(DEBIAN, source="nvidia")["hold_pattern"], name)


def test_upgrader_exclusions_cover_what_the_hold_covers():
    apt = nvidia_driver.upgrader_exclusions("apt")
    assert apt == ["^(nvidia-|libnvidia-|libcuda1|libnvcuvid1|libnvoptix1|firmware-nvidia-gsp|cuda-drivers|"
                   "xserver-xorg-video-nvidia|linux-modules-nvidia-)"]
    dnf = nvidia_driver.upgrader_exclusions("dnf")
    assert dnf == ["nvidia-*", "kmod-nvidia*", "libnvidia-*", "cuda-drivers*", "xorg-x11-drv-nvidia*"]
    for manager, entries in (("apt", apt), ("dnf", dnf)):
        hold = nvidia_driver.DRIVER_PACKAGE_PATTERN[manager]
        for name in ("nvidia-driver-pinning-580", "libnvidia-ml1", "nvidia-fabricmanager-580", "kmod-nvidia-open-dkms"):
            covered = any(re.match(entry, name) for entry in entries) if manager == "apt" else any(
                fnmatch.fnmatchcase(name, entry) for entry in entries)
            assert covered == bool(re.match(hold, name)), (manager, name)
        assert not any(re.match(entry, "nvme-cli") if manager == "apt" else fnmatch.fnmatchcase("nvme-cli", entry)
                       for entry in entries)


def test_plan_carries_the_upgrader_exclusions_of_its_package_manager():
    assert plan(DEBIAN, source="distro")["upgrader_exclusions"] == nvidia_driver.upgrader_exclusions("apt")
    assert plan(ROCKY, branch="580", gpus=[H200])["upgrader_exclusions"] == nvidia_driver.upgrader_exclusions("dnf")


@pytest.fixture
def h200_gpu_facts():
    """gpu_facts as the GPU scenario recorded it on the H200 (tests/gpu/results/h200/host.json at 3b59847)."""
    with open(os.path.join(FIXTURES, "gpu", "gpu_facts-h200.json")) as handle:
        return json.load(handle)


def test_the_driver_works_at_the_installed_version(h200_gpu_facts):
    h200 = h200_gpu_facts
    installed = {"installed_version": "580.159.04", "reboot_pending": False}
    assert nvidia_driver.works_problems(h200, installed) == []
    # The package moved on, the node runs the old module: named with both versions and the way out.
    newer = dict(installed, installed_version="580.200.01")
    problem, = nvidia_driver.works_problems(h200, newer)
    assert "running 580.159.04, installed 580.200.01" in problem and "Fix: read the kernel log" in problem
    broken = dict(h200, state="driver_error", messages=["NVML: Driver Not Loaded"])
    problem, = nvidia_driver.works_problems(broken, installed)
    assert "GPU state driver_error" in problem and "NVML: Driver Not Loaded" in problem


def test_nothing_to_judge_without_gpu_install_or_while_a_reboot_is_pending(h200_gpu_facts):
    h200 = h200_gpu_facts
    installed = {"installed_version": "580.200.01", "reboot_pending": False}
    assert nvidia_driver.works_problems(NO_GPU, installed) == []
    assert nvidia_driver.works_problems(h200, dict(installed, reboot_pending=True)) == []
    assert nvidia_driver.works_problems(h200, dict(installed, installed_version=None)) == []


# The role's settings as role_settings types them: the defaults of what bad_input reads.
CHECKED = dict(branch=None, version=None, min_version=None, reboot_timeout=1800,
               debian_components=["contrib", "non-free", "non-free-firmware"],
               nvidia_repo_base="https://developer.download.nvidia.com/compute/cuda/repos")


@pytest.mark.parametrize("name, value", [
    ("branch", "580"), ("version", "580.95.05"), ("version", "580.95"), ("min_version", "570"),
    ("min_version", "570.1.2"), ("nvidia_repo_base", "file:///srv/mirror"), ("nvidia_repo_base", "http://mirror/cuda"),
])
def test_bad_input_lets_good_values_through(name, value):
    assert nvidia_driver.bad_input(dict(CHECKED, **{name: value})) is None
    assert nvidia_driver.bad_input(CHECKED) is None


@pytest.mark.parametrize("name, value, shown", [
    # Each seen failing against a bad_input that accepted everything.
    ("branch", "58O", "branch=58O"), ("branch", "r580", "branch=r580"), ("version", "latest", "version=latest"),
    ("version", "580", "version=580"), ("min_version", "570.", "min_version=570."), ("reboot_timeout", 0, "reboot_timeout=0"),
    ("debian_components", [], "components=[]"),
    ("nvidia_repo_base", "developer.download.nvidia.com/compute/cuda/repos",
     "repo_base=developer.download.nvidia.com/compute/cuda/repos."),
])
def test_bad_input_names_every_rule_and_the_values_given(name, value, shown):
    refusal = nvidia_driver.bad_input(dict(CHECKED, **{name: value}))
    assert refusal.startswith('nvidia_driver: bad input. nvidia_driver_branch must be digits ("580"), nvidia_driver_version '
                              'an exact version ("580.95.05"), nvidia_driver_min_version dotted digits, '
                              'nvidia_driver_reboot_timeout a number of seconds above 0, nvidia_driver_debian_components '
                              'not empty, nvidia_driver_nvidia_repo_base an http(s):// or file:// URL. Got branch=')
    assert shown in refusal
    assert 'components=["contrib", "non-free", "non-free-firmware"]' in refusal or name == "debian_components"
