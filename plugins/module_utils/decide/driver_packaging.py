# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""How each supported OS packages the NVIDIA driver, by branch era, as data with a source per entry.

``nvidia_driver.plan_install()`` reads these tables; nothing here decides anything. Every entry
names where it comes from (``SOURCES``) and a ``status`` (primary: read in the vendor's own
document or index; secondary: a maintainer's statement or another project's reading;
unconfirmed: inferred, reported as a warning by the plan, never an error).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

SOURCES = {
    "nvidia_590_renames": (
        "NVIDIA Driver Installation Guide r590, section 4.1.1 'Ubuntu 590 and later packages', Table 4 'Ubuntu 590 package "
        "renames' (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/, 'Recent Updates'): from branch 590 the "
        "branch is dropped from the package names, cuda-drivers-<branch> is removed, cuda-drivers stays; a branch or version is "
        "kept by installing nvidia-driver-pinning-<branch|version> first; the default from 590 is to follow the newest driver"),
    "nvidia_pinning_packages": (
        "NVIDIA Driver Installation Guide, 'Recent Updates', 'Version locking packages for Ubuntu / Debian' (install the pinning "
        "package prior to the driver) and 'Version locking' (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/"
        "version-locking.html)"),
    "nvidia_branch_suffixed_apt": (
        "NVIDIA/ansible-role-nvidia-driver pull request #89 (2026-07-27): the Ubuntu CUDA repositories' branch-suffixed "
        "cuda-drivers-<branch> packages top out at 580; NVIDIA's repository names nvidia-open-<branch>/cuda-drivers-<branch> "
        "through R580 (Driver Installation Guide r580, 'Kernel Modules')"),
    "nvidia_kernel_modules": (
        "NVIDIA Driver Installation Guide, 'Kernel Modules', Table 5 'Open GPU kernel module installation' "
        "(https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/620/kernel-modules.html): RHEL/Rocky 8/9 "
        "'dnf module enable nvidia-driver:<branch>-open' then 'dnf install nvidia-open'; RHEL/Rocky 10 have no module "
        "streams: 'dnf install nvidia-open' with 'dnf versionlock *nvidia*<branch>*'"),
    "ubuntu_2604_archive_580": (
        "packages.ubuntu.com resolute (26.04): source nvidia-graphics-drivers-580-server 580.159.03-0ubuntu0.26.04.1 "
        "(https://packages.ubuntu.com/source/resolute/nvidia-graphics-drivers-580-server) builds the -580-server packages and "
        "the -535-server/-570-server ones only as transitional packages"),
    "ubuntu_2604_archive_595": (
        "packages.ubuntu.com resolute-updates (26.04): source nvidia-graphics-drivers-595-server 595.71.05-0ubuntu0.26.04.1 "
        "(https://packages.ubuntu.com/source/resolute-updates/libs/nvidia-graphics-drivers-595-server) builds the -595-server "
        "packages and the -590-server ones only as transitional packages"),
    "nvidia_ubuntu2604_repo": (
        "issue 39 (this project): NVIDIA's ubuntu2604 CUDA repository starts at R595; NVIDIA/cuda-samples#417 (2026-04-09): "
        "no ubuntu2604 folder at Ubuntu 26.04's release, whose archive carries the 595 driver"),
    "ubuntu_archive_names": (
        "packages.ubuntu.com jammy/noble/resolute 'nvidia-headless' virtual package: nvidia-headless-<branch>[-server][-open] "
        "and nvidia-utils-<branch>[-server] name the branch in Ubuntu's own archive for every branch"),
    "debian_12_archive": "Debian 12 (bookworm) non-free: nvidia-driver 535.x (packages.debian.org/bookworm/nvidia-driver)",
    "debian_13_archive": (
        "Debian 13 (trixie) Packages index read with apt on 2026-12-06 (deb.debian.org trixie non-free/contrib, "
        "trixie-updates, trixie-security): nvidia-driver, nvidia-kernel-dkms, nvidia-smi, libcuda1 550.163.01-2, "
        "nvidia-open-kernel-dkms 550.163.01-2 (contrib), nvidia-persistenced 550.163.01-1; "
        "tests/integration/test_debian13_archive.py resolves the plan against the live index"),
    "nvidia_debian13_repo": (
        "inferred: NVIDIA's CUDA repository folder for Debian 13 named as its debian12 one; no index of it was read"),
    "rhel_10_signed_kmod": (
        "NVIDIA/yum-packaging-precompiled-kmod#59, NVIDIA maintainer comment 2026-02-04: for RHEL 10.1+ (x86_64) Red Hat "
        "provides signed .ko modules that need no MOK key: 'subscription-manager repos --enable="
        "rhel-10-for-x86_64-extensions-rpms' then 'dnf install kmod-nvidia nvidia-open' (Red Hat blog 'Introducing a new and "
        "simplified AI accelerator driver experience on RHEL')"),
}

# NVIDIA's CUDA repository for Debian and Ubuntu, by branch era: the package the role installs per
# kernel module flavour and the Fabric Manager packages. ``last_branch`` None: every later branch.
NVIDIA_APT_ERAS = (
    {"first_branch": 0, "last_branch": 589,
     "entry": {"open": "nvidia-open-{branch}", "proprietary": "cuda-drivers-{branch}"},
     "fabricmanager": "nvidia-fabricmanager-{branch}", "nscq": "libnvidia-nscq-{branch}",
     "status": "primary", "source": SOURCES["nvidia_branch_suffixed_apt"]},
    {"first_branch": 590, "last_branch": None,
     "entry": {"open": "nvidia-open", "proprietary": "cuda-drivers"},
     # Table 4 lists libnvidia-nscq unchanged; nvidia-fabricmanager follows the rule of dropping the branch.
     "fabricmanager": "nvidia-fabricmanager", "nscq": "libnvidia-nscq",
     "status": "primary", "source": SOURCES["nvidia_590_renames"]},
)

# NVIDIA's version-locking package, installed before the driver; published from branch 580 on.
PINNING_PACKAGE = {"first_branch": 580, "name": "nvidia-driver-pinning-{target}", "status": "primary",
                   "source": SOURCES["nvidia_pinning_packages"]}

# EL: how NVIDIA's repository pins a branch, by OS major. "module_stream": dnf module streams
# nvidia-driver:<branch>-open/-dkms; "versionlock": no streams, the packages and dnf versionlock.
EL_BRANCH_PINNING = {
    "8": {"kind": "module_stream", "status": "primary", "source": SOURCES["nvidia_kernel_modules"]},
    "9": {"kind": "module_stream", "status": "primary", "source": SOURCES["nvidia_kernel_modules"]},
    "10": {"kind": "versionlock", "entry": {"open": "nvidia-open", "proprietary": "cuda-drivers"},
           # The proprietary entry on EL10 follows the apt era's cuda-drivers; the table shows only the open one.
           "status": {"open": "primary", "proprietary": "unconfirmed"}, "source": SOURCES["nvidia_kernel_modules"]},
}

# Red Hat's own signed kernel modules: where the distribution ships them, the "distro" source of EL.
EL_SIGNED_KMOD = {
    ("RedHat", "10"): {"architectures": ("x86_64",), "minimum_minor": 1, "repository": "rhel-10-for-x86_64-extensions-rpms",
                       "kmod_package": "kmod-nvidia", "driver_package": "nvidia-open", "flavour": "open",
                       # Which branches Red Hat's repository carries is not in the source: dnf answers.
                       "branches": None, "status": "secondary", "source": SOURCES["rhel_10_signed_kmod"]},
}

# Ubuntu's archive: branches whose packages exist only as transitional ones pulling another branch in.
UBUNTU_ARCHIVE_TRANSITIONAL = {
    "26.04": {570: {"to": 580, "source": SOURCES["ubuntu_2604_archive_580"]},
              590: {"to": 595, "source": SOURCES["ubuntu_2604_archive_595"]}},
}

# Operating systems: the family, the source used when none is asked for (by branch where it
# depends on it), NVIDIA's repository folder (https://developer.download.nvidia.com/compute/cuda/
# repos/<folder>/<arch>/) and the first branch it carries where known, and for Debian the one
# branch its archive carries. Every default gives DEFAULT_BRANCH (R580) from a source that has it.
PLATFORMS = {
    ("Ubuntu", "22.04"): {"family": "ubuntu", "default_source": "distro", "nvidia_repo": "ubuntu2204", "status": "primary",
                          "source": SOURCES["ubuntu_archive_names"]},
    ("Ubuntu", "24.04"): {"family": "ubuntu", "default_source": "distro", "nvidia_repo": "ubuntu2404", "status": "primary",
                          "source": SOURCES["ubuntu_archive_names"]},
    # R580 only from Ubuntu's archive; R595 and later from NVIDIA's repository by default.
    ("Ubuntu", "26.04"): {"family": "ubuntu", "default_source": "distro", "nvidia_from_branch": 595, "nvidia_repo": "ubuntu2604",
                          "nvidia_repo_first_branch": 595, "status": "primary",
                          "source": "%s; %s" % (SOURCES["nvidia_ubuntu2604_repo"], SOURCES["ubuntu_2604_archive_580"])},
    # Debian's archives carry one end-of-life branch each: NVIDIA's repository by default.
    ("Debian", "12"): {"family": "debian", "default_source": "nvidia", "nvidia_repo": "debian12", "archive_branch": 535,
                       "status": "primary", "source": SOURCES["debian_12_archive"]},
    ("Debian", "13"): {"family": "debian", "default_source": "nvidia", "nvidia_repo": "debian13", "archive_branch": 550,
                       "status": "primary", "source": SOURCES["debian_13_archive"],
                       "nvidia_repo_status": "unconfirmed", "nvidia_repo_source": SOURCES["nvidia_debian13_repo"]},
    ("RedHat", "8"): {"family": "el", "default_source": "nvidia", "nvidia_repo": "rhel8", "status": "primary",
                      "source": SOURCES["nvidia_kernel_modules"]},
    ("RedHat", "9"): {"family": "el", "default_source": "nvidia", "nvidia_repo": "rhel9", "status": "primary",
                      "source": SOURCES["nvidia_kernel_modules"]},
    # RHEL 10 x86_64: Red Hat's signed modules by default (EL_SIGNED_KMOD); elsewhere NVIDIA's repository.
    ("RedHat", "10"): {"family": "el", "default_source": "distro", "nvidia_repo": "rhel10", "status": "primary",
                       "source": "%s; %s" % (SOURCES["rhel_10_signed_kmod"], SOURCES["nvidia_kernel_modules"])},
    ("Rocky", "8"): {"family": "el", "default_source": "nvidia", "nvidia_repo": "rhel8", "status": "primary",
                     "source": SOURCES["nvidia_kernel_modules"]},
    ("Rocky", "9"): {"family": "el", "default_source": "nvidia", "nvidia_repo": "rhel9", "status": "primary",
                     "source": SOURCES["nvidia_kernel_modules"]},
    ("Rocky", "10"): {"family": "el", "default_source": "nvidia", "nvidia_repo": "rhel10", "status": "primary",
                      "source": SOURCES["nvidia_kernel_modules"]},
}


def nvidia_apt_era(branch):
    """The ``NVIDIA_APT_ERAS`` entry of driver branch ``branch`` (an int)."""
    for era in NVIDIA_APT_ERAS:
        if branch >= era["first_branch"] and (era["last_branch"] is None or branch <= era["last_branch"]):
            return era
    raise ValueError("no packaging era for branch %r" % (branch,))
