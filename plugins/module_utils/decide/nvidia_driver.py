# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Decisions of the nvidia_driver role, as pure functions (no I/O): every rule is a unit test.

- ``plan_install()``: which packages, module stream, pin, holds and kernel headers a node gets
  for a requested source, branch, exact version and kernel module flavour, given its OS and
  the GPUs that ``gpu_facts`` found. The flavour rules (open module required for Blackwell and
  Grace Hopper, proprietary for Maxwell/Pascal/Volta, open by default for Turing and newer from
  R560) and branch rules come from ``cuda/checks.py`` so they are written once.
- ``resolve_mode()``: install, adopt, skip (no NVIDIA GPU), or refuse, from what is on the node.
- ``adopt_report()``: the policy check of a driver this role did not install.
- ``parse_secure_boot()`` and ``parse_dkms_status()``: the node's Secure Boot state and DKMS
  registrations, from ``mokutil --sb-state``/efivars and ``dkms status``.
- ``decide()`` and ``check_install()``: the two answers of the ``nvidia_driver_plan`` module,
  before any change (mode, plan, adopt report, Secure Boot) and after the packages (installed
  version, DKMS, reboot), from what the module read on the node.

Every problem names the variable that decides it. Versions compare as integer tuples.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import fnmatch
import json
import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.cuda.checks import (
    branch_lifecycle,
    driver_branches,
    driver_policy_findings,
    gpu_generation,
    lifecycle_text,
)
from ansible_collections.aistack.gpu_node.plugins.module_utils.cuda.tables import KERNEL_MODULE_FLAVOR
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import driver_packaging, fabric_manager
from ansible_collections.aistack.gpu_node.plugins.module_utils.versions import version_tuple

SOURCES = ("auto", "distro", "nvidia")
SOURCE_WORDS = {"distro": "the distribution archive", "nvidia": "the NVIDIA CUDA repository"}
FLAVOURS = ("auto", "open", "proprietary")
MODES = ("auto", "install", "adopt")

# Operating systems and how each packages the driver, by branch era: data with a source per
# entry in driver_packaging. Every default source gives DEFAULT_BRANCH, a supported one.
PLATFORMS = driver_packaging.PLATFORMS
NVIDIA_REPO_ARCH = {"x86_64": "x86_64", "aarch64": "sbsa"}

# The branch used when none is asked for: R580, the long-term support branch (support until
# 2028-06) and the last one that drives Maxwell, Pascal and Volta as well as Blackwell.
DEFAULT_BRANCH = 580
KNOWN_BRANCHES = sorted(int(key[1:]) for key in driver_branches())
OPEN_DEFAULT_FROM = int(KERNEL_MODULE_FLAVOR["open_default_from_branch"])

# The names of the driver's packages start with one of these, by package manager: every package
# of its userspace and kernel module, so that none can move under a loaded module. The version
# pin, the hold and the automatic upgraders' exclusions all cover them.
DRIVER_PACKAGE_PREFIXES = {
    "apt": ("nvidia-", "libnvidia-", "libcuda1", "libnvcuvid1", "libnvoptix1", "firmware-nvidia-gsp", "cuda-drivers",
            "xserver-xorg-video-nvidia", "linux-modules-nvidia-"),
    "dnf": ("nvidia-", "kmod-nvidia", "libnvidia-", "cuda-drivers", "xorg-x11-drv-nvidia"),
}
DRIVER_PACKAGE_PATTERN = dict((manager, "^(%s)" % "|".join(prefixes)) for manager, prefixes in DRIVER_PACKAGE_PREFIXES.items())
# The kernel headers the DKMS build needs, one package per installed kernel.
HEADERS_PACKAGE = {"apt": "linux-headers-%s", "dnf": "kernel-devel-%s"}
# What the probe lists of the installed packages, as dpkg-query/rpm -qa patterns: the driver's and the
# headers, all that the plan installs and the hold covers.
PACKAGE_GLOBS = dict((manager, ["%s*" % prefix for prefix in prefixes] + [HEADERS_PACKAGE[manager] % "*"])
                     for manager, prefixes in DRIVER_PACKAGE_PREFIXES.items())
# NVIDIA's CUDA repository for Debian and Ubuntu publishes version-locking packages from branch
# 580 on (driver_packaging.PINNING_PACKAGE): nvidia-driver-pinning-<branch> tracks a branch,
# nvidia-driver-pinning-<version> one release. NVIDIA documents none for dnf, where the module
# stream or versionlock pins the driver.
PINNING_PACKAGE_FROM_BRANCH = driver_packaging.PINNING_PACKAGE["first_branch"]
# Packages of the distro's driver whose version follows their own release, not the driver's
# (Debian 12: nvidia-persistenced 535.171.04 beside the 535.309.01 driver): installed, held, never pinned.
UNPINNED = ("nvidia-persistenced",)
# Files that only the driver ships, as dpkg-query -S patterns (a * spans folders): whoever owns
# them owns the driver. Under /lib and /usr/lib only, so that cuda-compat's copy under
# /usr/local/cuda-* does not count as a driver. rpm asks for what provides the library instead.
OWNED_FILES = ("/usr/lib/*/libnvidia-ml.so.1", "/lib/*/libnvidia-ml.so.1", "*/nvidia-smi")
RPM_OWNED = ("libnvidia-ml.so.1()(64bit)", "nvidia-driver-cuda")
# Where the node says what it is; module constants so the tests can point them at a fake tree.
MODULES_DIR = "/lib/modules"
BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id"
MOKUTIL = "/usr/bin/mokutil"
SECURE_BOOT_EFIVAR = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
# The module name `dkms status` shows for each package source.
DKMS_MODULE = {
    ("debian", "distro", "proprietary"): "nvidia-current",
    ("debian", "distro", "open"): "nvidia-current-open",
}


class _Request(object):
    def __init__(self, source, branch, version, flavour, precompiled, ubuntu_server):
        self.source = source
        self.branch = branch
        self.version = version
        self.flavour = flavour
        self.precompiled = precompiled
        self.ubuntu_server = ubuntu_server


def _digits(value):
    return value is not None and re.match(r"^\d+$", str(value)) is not None


def bad_input(settings):
    """What the argument spec cannot say about the role's ``settings`` (typed, by their names without the
    ``nvidia_driver_`` prefix): None when they hold, else the refusal naming every rule and the values given."""
    # re.match as Jinja's `match` test: anchored at the start, `$` before a final newline too.
    fits = ((settings['branch'] is None or re.match(r'^[0-9]+$', str(settings['branch'])))
            and (settings['version'] is None or re.match(r'^[0-9]+\.[0-9]+(\.[0-9]+)?$', str(settings['version'])))
            and (settings['min_version'] is None or re.match(r'^[0-9]+(\.[0-9]+)*$', str(settings['min_version'])))
            and settings['reboot_timeout'] > 0 and len(settings['debian_components']) > 0
            and re.match(r'^(https?|file)://', settings['nvidia_repo_base']))
    if fits:
        return None
    return ('nvidia_driver: bad input. nvidia_driver_branch must be digits ("580"), nvidia_driver_version an exact version '
            '("580.95.05"), nvidia_driver_min_version dotted digits, nvidia_driver_reboot_timeout a number of seconds above 0, '
            'nvidia_driver_debian_components not empty, nvidia_driver_nvidia_repo_base an http(s):// or file:// URL. '
            'Got branch=%s version=%s min_version=%s reboot_timeout=%s components=%s repo_base=%s.'
            # An unset value shows as nothing, as a template renders None.
            % tuple('' if value is None else value for value in (
                settings['branch'], settings['version'], settings['min_version'], settings['reboot_timeout'],
                json.dumps(settings['debian_components']), settings['nvidia_repo_base'])))


def _check_request(request, platform, problems):
    """Validate branch and version; return the branch as an int (None when unusable)."""
    branch = request.branch
    if branch not in (None, "") and not _digits(branch):
        problems.append("nvidia_driver_branch: %r is not a driver branch; expected digits such as \"580\"" % (branch,))
        return None
    if request.version not in (None, ""):
        try:
            version = version_tuple(request.version)
        except ValueError:
            problems.append("nvidia_driver_version: %r is not a driver version; expected dotted digits such as \"580.95.05\""
                            % (request.version,))
            return None
        if len(version) < 2:
            problems.append("nvidia_driver_version: %r is not an exact version; expected at least branch.minor" % (request.version,))
            return None
        if branch not in (None, "") and version[0] != int(branch):
            problems.append("nvidia_driver_version: %s is not on nvidia_driver_branch %s" % (request.version, branch))
            return None
        branch = version[0]
    if branch in (None, ""):
        branch = platform.get("archive_branch", DEFAULT_BRANCH) if request.source == "distro" else DEFAULT_BRANCH
    branch = int(branch)
    if branch not in KNOWN_BRANCHES:
        problems.append("nvidia_driver_branch: %d is not a known driver branch; known: %s"
                        % (branch, ", ".join(str(known) for known in KNOWN_BRANCHES)))
        return None
    archive = platform.get("archive_branch")
    if request.source == "distro" and archive and branch != archive:
        problems.append("nvidia_driver_branch: %d is not in the distribution's archive, which carries only branch %d; "
                        "use nvidia_driver_source: nvidia for other branches" % (branch, archive))
        return None
    return branch


def _error_findings(branch_version, flavour, gpus):
    return [item for item in driver_policy_findings(branch_version, flavour, gpus) if item["severity"] == "error"]


def choose_flavour(requested, branch, gpus):
    """``(flavour, reason, problems)`` for ``requested`` (auto, open, proprietary) on these GPUs and branch."""
    branch_version = "%d.0" % branch
    if requested != "auto":
        errors = _error_findings(branch_version, requested, gpus)
        problems = ["nvidia_driver_flavour: %s is impossible here: %s" % (requested, item["message"]) for item in errors]
        return requested, "requested (nvidia_driver_flavour)", problems
    possible = [flavour for flavour in ("open", "proprietary") if not _error_findings(branch_version, flavour, gpus)]
    if not possible:
        return None, None, ["nvidia_driver_flavour: no kernel module flavour drives all these GPUs (%s): the open module "
                            "needs compute capability %s+ and Blackwell/Grace Hopper need it; split them across nodes"
                            % (", ".join(_gpu_names(gpus)), KERNEL_MODULE_FLAVOR["open_min_cc"])]
    if len(possible) == 1:
        return possible[0], "required by the GPUs (%s)" % ", ".join(_gpu_names(gpus)), []
    if branch >= OPEN_DEFAULT_FROM:
        return "open", "default from branch %d on" % OPEN_DEFAULT_FROM, []
    return "proprietary", "default before branch %d" % OPEN_DEFAULT_FROM, []


def _gpu_names(gpus):
    return ["%s (%s)" % (gpu.get("name") or gpu.get("pci_bus_id"), gpu_generation(gpu) or "unknown generation") for gpu in gpus]


def _ubuntu_distro(request, branch, flavour):
    suffix = "%d%s%s" % (branch, "-server" if request.ubuntu_server else "", "-open" if flavour == "open" else "")
    utils = "nvidia-utils-%d%s" % (branch, "-server" if request.ubuntu_server else "")
    if request.precompiled:
        # Canonical's signed prebuilt modules for the generic kernel; no DKMS build.
        return ["nvidia-headless-no-dkms-%s" % suffix, "linux-modules-nvidia-%s-generic" % suffix, utils], None
    return ["nvidia-headless-%s" % suffix, utils], "nvidia"


def _debian_distro(request, branch, flavour):
    kernel = "nvidia-open-kernel-dkms" if flavour == "open" else "nvidia-kernel-dkms"
    return [kernel, "nvidia-smi", "libcuda1", "nvidia-persistenced"], DKMS_MODULE[("debian", "distro", flavour)]


def _nvidia_apt(request, branch, flavour):
    # R580 and earlier name the branch (nvidia-open-580); from R590 the names carry none (nvidia-open)
    # and NVIDIA's pinning package, installed first, keeps the branch.
    return [driver_packaging.nvidia_apt_era(branch)["entry"][flavour].format(branch=branch)], "nvidia"


def _el_stream(request, branch, flavour):
    if request.precompiled:
        return "%d" % branch
    return "%d-open" % branch if flavour == "open" else "%d-dkms" % branch


def pinning_package(package_manager, source, branch, version=None):
    """NVIDIA's version-locking package for a driver from its CUDA repository with apt, branch
    ``PINNING_PACKAGE_FROM_BRANCH`` or later (``nvidia-driver-pinning-580``, or with an exact
    ``version`` ``nvidia-driver-pinning-580.95.05``); None where NVIDIA publishes none."""
    if package_manager != "apt" or source != "nvidia" or branch < PINNING_PACKAGE_FROM_BRANCH:
        return None
    return driver_packaging.PINNING_PACKAGE["name"].format(target=version or branch)


def upgrader_exclusions(package_manager):
    """What keeps the automatic upgraders off the driver's packages: for apt the entry of
    unattended-upgrades' ``Unattended-Upgrade::Package-Blacklist`` (a regular expression matched
    from the start of the name: the one the pin and the hold use), for dnf the ``excludepkgs`` globs of dnf-automatic's ``[base]``
    section (which overrides dnf.conf for dnf-automatic only, so the role's own installs still
    see the packages)."""
    if package_manager == "apt":
        return [DRIVER_PACKAGE_PATTERN["apt"]]
    return ["%s*" % prefix for prefix in DRIVER_PACKAGE_PREFIXES[package_manager]]


def lifecycle_check(branch, refuse_eol=False, today=None, archive_only=False):
    """``{"lifecycle", "warnings", "problems"}`` for driver branch ``branch`` (an int) on
    ``today``: an end-of-life branch is a warning naming its supported successor, or with
    ``refuse_eol`` a problem. ``archive_only``: the branch comes from a distribution archive that
    carries no other, so the way out names NVIDIA's repository too."""
    lifecycle = branch_lifecycle(branch, today)
    if lifecycle["status"] != "end_of_life":
        return {"lifecycle": lifecycle, "warnings": [], "problems": []}
    successor = lifecycle["successor"]
    way_out = ("set nvidia_driver_branch: \"%s\"%s" % (successor["branch"][1:], " with nvidia_driver_source: nvidia (the "
               "distribution's archive carries no other branch)" if archive_only else "")) if successor else "no successor known"
    text = "driver branch %s: %s" % (lifecycle_text(lifecycle), way_out)
    if refuse_eol:
        return {"lifecycle": lifecycle, "warnings": [], "problems": [
            "nvidia_driver_refuse_eol: refusing %s" % text]}
    return {"lifecycle": lifecycle, "warnings": [text + " (nvidia_driver_refuse_eol: true refuses end-of-life branches)"],
            "problems": []}


def _os_minor(os_version):
    parts = str(os_version).split(".")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def _signed_kmod(key, os_version, architecture):
    """``(entry, why_not)``: Red Hat's signed kernel modules for this node (``EL_SIGNED_KMOD``), or
    None and the reason, where the distribution ships none for it."""
    entry = driver_packaging.EL_SIGNED_KMOD.get(key)
    if entry is None:
        return None, "whose archive has no NVIDIA driver"
    if architecture not in entry["architectures"] or _os_minor(os_version) < entry["minimum_minor"]:
        return None, "where Red Hat ships signed kmod-nvidia only from %s %s.%d on %s" % (
            key[0], key[1], entry["minimum_minor"], "/".join(entry["architectures"]))
    return entry, None


def _availability_problems(key, platform, source, number):
    """A branch that the chosen source does not carry: Ubuntu's transitional packages, a repository
    folder that starts at a later branch."""
    transitional = driver_packaging.UBUNTU_ARCHIVE_TRANSITIONAL.get(key[1], {}) if platform["family"] == "ubuntu" else {}
    first = platform.get("nvidia_repo_first_branch")
    if source == "distro" and number in transitional:
        return ["nvidia_driver_branch: %d exists in %s %s's archive only as transitional packages that install branch %d; "
                "set nvidia_driver_branch: \"%d\"%s" % (
                    number, key[0], key[1], transitional[number]["to"], transitional[number]["to"],
                    " or a branch from %d on with nvidia_driver_source: nvidia" % first if first else "")]
    if source == "nvidia" and first and number < first:
        return ["nvidia_driver_branch: %d is not in NVIDIA's %s repository, which starts at branch %d; use "
                "nvidia_driver_source: distro (%s %s's archive) for earlier branches" % (
                    number, platform["nvidia_repo"], first, key[0], key[1])]
    return []


def plan_install(distribution, os_version, architecture, source="auto", branch=None, version=None, flavour="auto",
                 gpus=None, kernels=None, precompiled=False, ubuntu_server=True, refuse_eol=False, today=None):
    """The install plan for a node, or its problems.

    ``distribution``/``os_version``: ``ansible_facts.distribution`` and ``distribution_version``
    (the major version is enough outside Ubuntu, but RHEL's minor decides Red Hat's signed
    modules). Returns a dict with ``problems`` (empty when the plan is usable) and, when usable:
    ``family``, ``package_manager``, ``source``, ``branch``, ``version``, ``flavour``,
    ``flavour_reason``, ``build`` (dkms or precompiled), ``dkms_module``, ``packages``,
    ``install_names`` (with the version pin), ``version_package`` (whose installed version is the
    driver's), ``pin_version``, ``dnf_module``, ``el_repositories`` (distribution repositories
    to enable first), ``hold_pattern``, ``pinning_package`` (NVIDIA's version-locking package,
    installed before the driver, or None), ``upgrader_exclusions`` (``upgrader_exclusions()``),
    ``headers``, ``nvidia_repo``, ``signed_modules``, ``packaging_sources`` (where the package
    names and pinning rules of this plan come from: ``driver_packaging``), ``lifecycle``
    (``branch_lifecycle()`` of cuda/checks.py, of the branch on ``today``) and ``warnings`` (an
    end-of-life branch, rules whose table entry is unconfirmed: reported, never fatal). An
    end-of-life branch is a problem with ``refuse_eol``.
    """
    gpus = list(gpus or [])
    problems = []
    key = (distribution, os_version if distribution == "Ubuntu" else str(os_version).split(".", 1)[0])
    platform = PLATFORMS.get(key)
    if platform is None:
        return {"problems": ["unsupported OS %s %s for nvidia_driver; supported: %s" % (
            key[0], key[1], ", ".join("%s %s" % item for item in sorted(PLATFORMS)))]}
    if source not in SOURCES:
        problems.append("nvidia_driver_source: %r; expected one of %s" % (source, ", ".join(SOURCES)))
    if flavour not in FLAVOURS:
        problems.append("nvidia_driver_flavour: %r; expected one of %s" % (flavour, ", ".join(FLAVOURS)))
    if architecture not in NVIDIA_REPO_ARCH:
        problems.append("unsupported architecture %s; supported: %s" % (architecture, ", ".join(sorted(NVIDIA_REPO_ARCH))))
    if problems:
        return {"problems": problems}
    family = platform["family"]
    signed, no_signed = _signed_kmod(key, os_version, architecture) if family == "el" else (None, None)
    requested_source = source
    source = platform["default_source"] if source == "auto" else source
    if family == "el" and source == "distro" and signed is None:
        if requested_source == "auto":
            source = "nvidia"
        else:
            problems.append("nvidia_driver_source: distro is not available on %s %s (%s), %s; use nvidia (NVIDIA's CUDA "
                            "repository)" % (key[0], os_version, architecture, no_signed))
    request = _Request(source, branch, version, flavour, precompiled, ubuntu_server)
    number = None if problems else _check_request(request, platform, problems)
    if problems or number is None:
        return {"problems": problems}
    # Where the default source depends on the branch (Ubuntu 26.04: R580 from Ubuntu's archive,
    # R595 and later from NVIDIA's repository).
    if requested_source == "auto" and platform.get("nvidia_from_branch") and number >= platform["nvidia_from_branch"]:
        source = request.source = "nvidia"
    if precompiled and not ((family == "ubuntu" and source == "distro") or family == "el"):
        problems.append("nvidia_driver_precompiled: no precompiled modules from %s on %s %s; they exist in Ubuntu's archive "
                        "and NVIDIA's EL repository" % (source, key[0], key[1]))
    problems.extend(_availability_problems(key, platform, source, number))
    if problems:
        return {"problems": problems}
    chosen, reason, flavour_problems = choose_flavour(flavour, number, gpus)
    if flavour_problems:
        return {"problems": flavour_problems}
    lifecycle = lifecycle_check(number, refuse_eol, today, archive_only=source == "distro" and "archive_branch" in platform)
    if lifecycle["problems"]:
        return {"problems": lifecycle["problems"]}
    el_pinning = driver_packaging.EL_BRANCH_PINNING.get(key[1]) if family == "el" else None
    streams = el_pinning is not None and el_pinning["kind"] == "module_stream"
    if precompiled and streams and flavour == "auto" and chosen == "open" and not _error_findings("%d.0" % number, "proprietary", gpus):
        chosen, reason = "proprietary", "NVIDIA's EL precompiled streams carry only the proprietary module (nvidia_driver_precompiled)"
    if precompiled and streams and chosen == "open":
        return {"problems": ["nvidia_driver_precompiled: NVIDIA's EL precompiled streams carry only the proprietary module, "
                             "and these GPUs/this request need the open one (nvidia_driver_flavour)"]}
    if precompiled and family == "el" and not streams and source == "nvidia":
        return {"problems": ["nvidia_driver_precompiled: NVIDIA's repository for %s %s has no module streams, so no precompiled "
                             "modules; Red Hat's signed kmod-nvidia is nvidia_driver_source: distro on RHEL 10.1+ x86_64" % key]}
    if source == "distro" and signed is not None and chosen != signed["flavour"]:
        return {"problems": ["nvidia_driver_flavour: Red Hat's signed kmod-nvidia is the %s kernel module, and %s is %s; use "
                             "nvidia_driver_source: nvidia for the other flavour" % (signed["flavour"], chosen, reason)]}

    exact = version or None
    dnf_module = None
    el_repositories = []
    sources = [platform["source"]]
    warnings = list(lifecycle["warnings"])
    signed_modules = bool(precompiled and family == "ubuntu")
    build = "precompiled" if precompiled else "dkms"
    if family == "el":
        package_manager = "dnf"
        release = exact or "%d.*" % number
        if source == "distro":
            # Red Hat's signed modules: no build, no MOK; the driver's userspace pinned to the branch.
            packages = [signed["kmod_package"], signed["driver_package"]]
            install_names = [signed["kmod_package"], "%s-%s" % (signed["driver_package"], release)]
            dkms_module, build, signed_modules = None, "precompiled", True
            el_repositories = [signed["repository"]]
            sources.append(signed["source"])
            if signed["branches"] is None:
                warnings.append("which driver branches Red Hat's %s repository carries is not in the tables; dnf refuses "
                                "%s-%s if it has none of branch %d" % (signed["repository"], signed["driver_package"], release, number))
        elif streams:
            dnf_module = "nvidia-driver:%s" % _el_stream(request, number, chosen)
            packages = ["@%s" % dnf_module]
            dkms_module = None if precompiled else "nvidia"
            install_names = list(packages) if not exact else ["nvidia-driver-%s" % exact, "@%s" % dnf_module]
            sources.append(el_pinning["source"])
        else:
            packages = [el_pinning["entry"][chosen]]
            install_names = ["%s-%s" % (packages[0], release)]
            dkms_module = "nvidia"
            sources.append(el_pinning["source"])
            if el_pinning["status"][chosen] == "unconfirmed":
                warnings.append("the %s package of NVIDIA's %s repository for the %s module is unconfirmed (%s)" % (
                    packages[0], platform["nvidia_repo"], chosen, el_pinning["source"]))
    else:
        package_manager = "apt"
        builder = {("ubuntu", "distro"): _ubuntu_distro, ("debian", "distro"): _debian_distro}.get((family, source), _nvidia_apt)
        packages, dkms_module = builder(request, number, chosen)
        install_names = ["%s=%s*" % (name, exact) if exact and name not in UNPINNED else name for name in packages]
        if source == "nvidia":
            sources.append(driver_packaging.nvidia_apt_era(number)["source"])
            if platform.get("nvidia_repo_status") == "unconfirmed":
                warnings.append("NVIDIA's repository folder %s is unconfirmed (%s)" % (
                    platform["nvidia_repo"], platform["nvidia_repo_source"]))
    pinning = pinning_package(package_manager, source, number, exact)
    if pinning:
        sources.append(driver_packaging.PINNING_PACKAGE["source"])
    headers = sorted(set(HEADERS_PACKAGE[package_manager] % kernel for kernel in kernels or []))
    warnings += [item["message"] for item in driver_policy_findings("%d.0" % number, chosen, gpus) if item["severity"] == "warning"]
    return {
        "problems": [],
        "warnings": warnings,
        "family": family,
        "package_manager": package_manager,
        "source": source,
        "branch": number,
        "version": exact,
        "flavour": chosen,
        "flavour_reason": reason,
        "build": build,
        "dkms_module": dkms_module,
        "packages": packages,
        "install_names": install_names,
        "version_package": "nvidia-driver" if family == "el" else packages[0],
        "pin_version": "%s*" % exact if exact else "%d.*" % number,
        "dnf_module": dnf_module,
        "el_repositories": el_repositories,
        "hold_pattern": DRIVER_PACKAGE_PATTERN[package_manager],
        "pinning_package": pinning,
        "upgrader_exclusions": upgrader_exclusions(package_manager),
        "headers": [] if build == "precompiled" else headers,
        "nvidia_repo": "%s/%s" % (platform["nvidia_repo"], NVIDIA_REPO_ARCH[architecture]),
        # Canonical's prebuilt modules and Red Hat's signed kmod are signed by a key that shim trusts out of the box.
        "signed_modules": signed_modules,
        "packaging_sources": sources,
        "lifecycle": lifecycle["lifecycle"],
    }


# ---------------------------------------------------------------------------
# What is on the node: mode, adopt policy
# ---------------------------------------------------------------------------


def resolve_mode(requested, gpu, managed, owners, takeover=False, install_without_gpu=False):
    """``{"mode", "reason", "problems"}``: what the role does with this node.

    ``gpu``: ``ansible_facts.aistack_gpu``; ``managed``: the role's record of its own install
    (a dict) or None; ``owners``: packages that own the driver's files (``libnvidia-ml.so.1``,
    ``nvidia-smi``), empty when a runfile or a mounted image brought them; ``takeover``: the
    user allows install mode to replace a package-managed driver it did not install;
    ``install_without_gpu``: the node has no NVIDIA GPU and gets the driver anyway (an image
    build). Without it a node with no GPU is ``skip``: the role leaves it as it is, whatever
    the mode, and ``reason`` is the one line that says so.
    """
    if requested not in MODES:
        return {"mode": None, "reason": None, "problems": ["nvidia_driver_mode: %r; expected one of %s" % (requested, ", ".join(MODES))]}
    if (gpu or {}).get("state") == "no_gpu" and not install_without_gpu:
        return {"mode": "skip", "reason": _no_gpu_reason(managed), "problems": []}
    driver = (gpu or {}).get("driver") or {}
    found = driver.get("version")
    working = (gpu or {}).get("state") == "ok"
    present = bool(found or owners)
    automatic = requested == "auto"
    if automatic:
        if managed:
            return {"mode": "install", "reason": "installed by this role (%s)" % managed.get("version", managed.get("branch")), "problems": []}
        if working:
            return {"mode": "adopt", "reason": "a working driver %s is present and was not installed by this role" % found, "problems": []}
        requested = "install"
    if requested == "adopt":
        if not working:
            return {"mode": "adopt", "reason": None, "problems": [
                "nvidia_driver_mode: adopt needs a working driver, and the GPU state is %s (%s)" % (
                    (gpu or {}).get("state"), "; ".join((gpu or {}).get("messages") or []) or "no message")]}
        return {"mode": "adopt", "reason": "requested (nvidia_driver_mode)", "problems": []}
    if present and not managed:
        what = "driver %s" % found if found else "driver packages"
        if not owners:
            return {"mode": "install", "reason": None, "problems": [
                "nvidia_driver_mode: install refuses to touch the %s, which no package owns (a runfile install or a "
                "mounted image) and this role did not install; use nvidia_driver_mode: adopt to verify it" % what]}
        if not takeover:
            return {"mode": "install", "reason": None, "problems": [
                "nvidia_driver_mode: install refuses to touch the %s from %s, which this role did not install; use "
                "nvidia_driver_mode: adopt to verify it, or nvidia_driver_takeover: true to let the role manage those "
                "packages" % (what, ", ".join(sorted(owners)))]}
        return {"mode": "install", "reason": "taking over %s (nvidia_driver_takeover)" % ", ".join(sorted(owners)), "problems": []}
    if managed:
        return {"mode": "install", "reason": "installed by this role", "problems": []}
    return {"mode": "install", "reason": "no driver on the node" if automatic else "requested (nvidia_driver_mode)", "problems": []}


def _no_gpu_reason(managed=None):
    """The one line a node without an NVIDIA GPU gets instead of a driver."""
    return ("no NVIDIA GPU on this node (the PCI bus shows no display or 3D controller of vendor 0x10de); %s. "
            "Set nvidia_driver_install_without_gpu: true to install the driver anyway (image builds)"
            % ("the driver this role installed earlier is left as it is" if managed else "nothing to install"))


def would_install(plan):
    """What a plan would install, in words, for the one line of a node left alone; None for an unusable plan."""
    if plan["problems"]:
        return None
    return "a GPU would get driver branch %d from %s (%s)" % (plan["branch"], SOURCE_WORDS[plan["source"]], lifecycle_text(plan["lifecycle"]))


def adopt_report(gpu, branch=None, min_version=None, flavour="auto", owners=(), refuse_eol=False, today=None):
    """Check a driver this role did not install against the policy; never changes anything.

    Returns ``{"report": {...}, "warnings": [...], "problems": [...]}``; the report holds what
    the node runs, with its branch's ``lifecycle``; an end-of-life branch is a warning, or with
    ``refuse_eol`` a problem.
    """
    driver = (gpu or {}).get("driver") or {}
    version = driver.get("version")
    loaded_flavour = driver.get("kernel_module_flavour")
    gpus = (gpu or {}).get("gpus") or []
    problems = []
    if branch not in (None, "") and (not _digits(branch) or version_tuple(version)[0] != int(branch)):
        problems.append("nvidia_driver_branch: the node runs driver %s, not branch %s" % (version, branch))
    if min_version not in (None, ""):
        try:
            if version_tuple(version) < version_tuple(min_version):
                problems.append("nvidia_driver_min_version: the node runs driver %s, older than %s" % (version, min_version))
        except ValueError:
            problems.append("nvidia_driver_min_version: %r is not a driver version; expected dotted digits" % (min_version,))
    if flavour not in FLAVOURS:
        problems.append("nvidia_driver_flavour: %r; expected one of %s" % (flavour, ", ".join(FLAVOURS)))
    elif flavour != "auto" and loaded_flavour != flavour:
        problems.append("nvidia_driver_flavour: the node runs the %s kernel module, not %s" % (loaded_flavour, flavour))
    for item in driver_policy_findings(version, loaded_flavour, gpus):
        if item["severity"] == "error":
            problems.append("%s (%s)" % (item["message"], item["fix"]))
    lifecycle = lifecycle_check(version_tuple(version)[0], refuse_eol, today) if version else {
        "lifecycle": None, "warnings": [], "problems": []}
    problems.extend(lifecycle["problems"])
    report = {
        "mode": "adopt",
        "managed": False,
        "owners": sorted(owners),
        "version": version,
        "branch": version_tuple(version)[0] if version else None,
        "flavour": loaded_flavour,
        "loaded_version": driver.get("loaded_version"),
        "userspace_version": driver.get("userspace_version"),
        "cuda_version": driver.get("cuda_version"),
        "gpus": [{"name": item.get("name"), "compute_capability": item.get("compute_capability"),
                  "generation": gpu_generation(item)} for item in gpus],
        "reboot_needed": bool(driver.get("mismatch")),
        "lifecycle": lifecycle["lifecycle"],
    }
    return {"report": report, "warnings": lifecycle["warnings"], "problems": problems}


def owner_query_argv(pkg_mgr):
    """The read-only command that names the packages owning the driver's files."""
    if pkg_mgr == "apt":
        return ["dpkg-query", "-S"] + list(OWNED_FILES)
    return ["rpm", "-q", "--qf", "%{NAME}\n", "--whatprovides"] + list(RPM_OWNED)


_OWNER_LINE = re.compile(r"^[A-Za-z0-9][^ ]*(: /|$)")


def parse_owners(text):
    """Package names from ``dpkg-query -S`` (``libnvidia-ml1:amd64: /usr/lib/...``) or ``rpm -q``
    output, sorted and unique; the lines that say nothing owns a file are dropped."""
    owners = set()
    for line in (text or "").splitlines():
        if _OWNER_LINE.match(line):
            owners.add(line.split(":", 1)[0])
    return sorted(owners)


def secure_boot_problems(state, build, mok_enrolled):
    """The refusal to build unsigned modules that Secure Boot would not load; empty when they would load."""
    if state != "enabled" or mok_enrolled:
        return []
    return ["Secure Boot is enabled and the %s kernel modules would be unsigned by any key the firmware trusts, so they "
            "would not load. Either enrol a Machine Owner Key: install dkms (it creates /var/lib/dkms/mok.key and mok.pub), "
            "run `mokutil --import /var/lib/dkms/mok.pub`, reboot and confirm the key in the MOK manager, then set "
            "nvidia_driver_secure_boot_mok_enrolled: true; or use signed modules (Ubuntu: nvidia_driver_precompiled: true "
            "installs Canonical's signed linux-modules-nvidia-*)." % build]


def missing_packages(specs, installed):
    """The apt install specs (``name`` or ``name=version*``) that ``installed`` ({name: version} of the
    installed packages) does not satisfy, as apt's ``state: present`` judges: any installed version
    satisfies a bare name, and a pinned one must match the version pattern."""
    missing = []
    for spec in specs:
        name, dummy, version = spec.partition("=")
        have = installed.get(name)
        if have is None or (version and not fnmatch.fnmatch(have, version)):
            missing.append(spec)
    return missing


def decide(settings, gpu, os_facts, record, owners, kernels, today=None, switches=(), fabric_manager_version=None,
           packages=None):
    """The decision before any change: what the role does with this node and how.

    ``settings``: the role's variables without their ``nvidia_driver_`` prefix (mode, source,
    branch, version, flavour, precompiled, ubuntu_server, min_version, takeover,
    install_without_gpu, refuse_eol); ``gpu``: ``ansible_facts.aistack_gpu``; ``os_facts``: distribution,
    distribution_version, architecture of ``ansible_facts``; ``record``: the role's install record
    or None; ``owners``: packages owning the driver's files; ``kernels``: installed kernels;
    ``today``: the date branch lifecycles are judged on (default: the current date);
    ``switches``: the NVSwitches on the PCI bus (``fabric_manager.nvswitches()``);
    ``fabric_manager_version``: the installed Fabric Manager's version (adopt mode checks it);
    ``packages``: {name: version} of the installed packages matching ``PACKAGE_GLOBS``.
    Returns ``mode``, ``reason`` (for a node left alone, with the branch it would get),
    ``plan`` (install, with ``missing``: ``missing_packages()`` of the pinning package, headers and
    packages with apt, None with dnf, whose module streams it cannot judge), ``adopt`` (the adopt report), ``warnings`` (an end-of-life branch
    first), ``problems`` (the first failing step's, each naming its variable and the way out)
    and ``secure_boot_check`` (whether unsigned modules are planned, so Secure Boot must be read).
    """
    mode = resolve_mode(settings["mode"], gpu, record, owners, takeover=settings["takeover"],
                        install_without_gpu=settings["install_without_gpu"])
    decision = {"mode": mode["mode"], "reason": mode["reason"], "plan": None, "adopt": None, "warnings": [],
                "problems": mode["problems"], "secure_boot_check": False}
    if decision["problems"]:
        return decision
    refuse_eol = settings.get("refuse_eol", False)
    if mode["mode"] == "adopt":
        adopted = adopt_report(gpu, branch=settings["branch"], min_version=settings["min_version"],
                               flavour=settings["flavour"], owners=owners, refuse_eol=refuse_eol, today=today)
        fabric = fabric_manager.adopt_check((gpu or {}).get("driver", {}).get("version"), list(switches), fabric_manager_version)
        adopted["report"]["fabric_manager"] = fabric["report"]
        decision.update(adopt=adopted["report"], warnings=adopted["warnings"], problems=adopted["problems"] + fabric["problems"])
        return decision
    plan = plan_install(os_facts.get("distribution"), os_facts.get("distribution_version"), os_facts.get("architecture"),
                        source=settings["source"], branch=settings["branch"], version=settings["version"],
                        flavour=settings["flavour"], gpus=(gpu or {}).get("gpus") or [], kernels=kernels,
                        precompiled=settings["precompiled"], ubuntu_server=settings["ubuntu_server"],
                        refuse_eol=refuse_eol, today=today)
    if mode["mode"] == "skip":
        # Left alone, but the one line says what a GPU node with these settings would get.
        words = would_install(plan)
        decision["reason"] += "; %s" % words if words else ""
        return decision
    if not plan["problems"]:
        _add_fabric_manager(plan, switches)
        plan["missing"] = missing_packages(
            ([plan["pinning_package"]] if plan["pinning_package"] else []) + plan["headers"] + plan["install_names"],
            packages or {}) if plan["package_manager"] == "apt" else None
    decision.update(plan=plan, warnings=plan.get("warnings", []), problems=plan["problems"],
                    secure_boot_check=not plan["problems"] and not plan["signed_modules"])
    return decision


def _add_fabric_manager(plan, switches):
    """Fabric Manager joins the plan's packages at the driver's exact version where NVSwitches need
    it; the pin and the hold cover it with the driver (its names match ``hold_pattern``)."""
    fabric = fabric_manager.fabric_manager_plan(plan["package_manager"], plan["source"], plan["branch"], plan["version"],
                                                list(switches))
    plan["fabric_manager"] = dict((key, fabric[key]) for key in ("needed", "reason", "switches", "packages", "service"))
    plan["packages"] = plan["packages"] + fabric["packages"]
    plan["install_names"] = plan["install_names"] + fabric["install_names"]
    plan["warnings"] = plan["warnings"] + fabric["warnings"]
    plan["problems"] = fabric["problems"]


# The command that lists what is held, by package manager, and the package name in each of its lines:
# dpkg lists multi-arch packages with their architecture (libcuda1:amd64 hold); versionlock lists
# [epoch:]name-version-release.
HOLD_LIST = {"apt": ["dpkg", "--get-selections"], "dnf": ["dnf", "versionlock", "list"]}
_HELD = {"apt": re.compile(r"(?m)^([^\s:]+)(?::\S+)?\s+hold$"), "dnf": re.compile(r"(?m)^(?:\d+:)?([A-Za-z0-9._+-]+?)-\d")}


def hold_plan(plan, installed_packages, hold_list):
    """``{"names", "missing"}``: the installed driver packages the hold covers (installed ones
    only: nothing can hold a package the node does not know, as in check mode on a fresh node),
    and those the ``HOLD_LIST`` output does not show held yet."""
    names = sorted(name for name in installed_packages if re.match(plan["hold_pattern"], name))
    held = set(_HELD[plan["package_manager"]].findall(hold_list or ""))
    return {"names": names, "missing": [name for name in names if name not in held]}


def dkms_checked(plan, check_mode, packages_changed, packages_skipped):
    """Whether DKMS can be asked about the plan's module: in check mode on a node without the
    packages nothing is registered yet; one that had every package (the plan's ``missing`` empty)
    has its registration to read."""
    if plan.get("dkms_module") is None:
        return False
    return not check_mode or plan.get("missing") == [] or not (packages_skipped or packages_changed)


def check_install(decision, gpu, installed_package_version, packages_changed, reboot_ok, dkms_status=None, boot_id=None,
                  hold=None):
    """The answer after the packages: ``installed_version``, ``dkms`` (``checked``, ``entries``,
    ``problems``), ``hold`` (``names``, ``missing``), ``reboot_needed`` (the node needs one),
    ``reboot_now`` (the role may and will reboot) and ``reboot_pending`` (needed and not done:
    what the role reports).

    ``decision``: what ``decide()`` returned, with the ``kernels``, ``container`` and ``record``
    the module read; ``dkms_status``: ``dkms status`` output, None when not checked; ``hold``:
    what ``hold_plan()`` returned, None when the role holds nothing."""
    installed = package_driver_version(installed_package_version)
    needed = reboot_needed(gpu, packages_changed, decision.get("record"), boot_id, installed_version=installed)
    now = needed and reboot_ok and not decision.get("container")
    dkms = {"checked": dkms_status is not None, "entries": [], "problems": []}
    if dkms_status is not None:
        dkms["entries"] = parse_dkms_status(dkms_status)
        dkms["problems"] = dkms_problems(dkms["entries"], decision["plan"]["dkms_module"], decision.get("kernels") or [])
    return {"installed_version": installed, "dkms": dkms, "hold": hold or {"names": [], "missing": []},
            "reboot_needed": needed, "reboot_now": now,
            "reboot_pending": needed and not now}


def works_problems(gpu, installed):
    """Whether the installed driver works, read after the install (and the reboot, if any): one
    problem naming what the GPUs show, or none. Nothing to judge on a node without NVIDIA PCI
    devices, without an installed version, or with a reboot still pending (the old module runs).

    ``gpu``: gpu_facts' reading; ``installed``: what ``check_install()`` returned."""
    gpu = gpu or {}
    if not gpu.get("pci_devices") or not installed.get("installed_version") or installed.get("reboot_pending"):
        return []
    running = (gpu.get("driver") or {}).get("version")
    if gpu.get("state") == "ok" and running and version_tuple(running) == version_tuple(installed["installed_version"]):
        return []
    return ["the driver does not work after the install: GPU state %s, running %s, installed %s (%s). Fix: read the "
            "kernel log (dmesg | grep -i nvrm) and reboot the node if the old module is still loaded."
            % (gpu.get("state"), running or "none", installed["installed_version"], "; ".join(gpu.get("messages") or []) or "no message")]


def reboot_needed(gpu, module_changed, record, boot_id, installed_version=None):
    """True after a kernel module change not yet followed by a reboot, or when the loaded module
    differs from the installed userspace (NVML's mismatch, or the installed package's version).
    ``record``: the role's install record, whose ``module_changed_boot`` is the boot during
    which the module last changed."""
    driver = (gpu or {}).get("driver") or {}
    if module_changed or driver.get("mismatch"):
        return True
    loaded = driver.get("loaded_version")
    if loaded and installed_version and version_tuple(loaded) != version_tuple(installed_version):
        return True
    return bool(record and record.get("module_changed_boot") == boot_id)


def package_driver_version(package_version):
    """The driver version in a package version: ``535.309.01-0+deb12u1`` -> ``535.309.01``,
    ``3:580.95.05-1.el9`` -> ``580.95.05``; None when there is none."""
    match = re.match(r"^(?:\d+:)?(\d+\.\d+(?:\.\d+)?)", package_version or "")
    return match.group(1) if match else None


# ---------------------------------------------------------------------------
# Parsers of node outputs
# ---------------------------------------------------------------------------

_SB_STATE = re.compile(r"SecureBoot\s+(enabled|disabled)", re.IGNORECASE)


def parse_secure_boot(mokutil_output=None, efivar_bytes=None):
    """``"enabled"``, ``"disabled"`` or ``"unsupported"`` (no EFI) from ``mokutil --sb-state``
    or, without mokutil, the bytes of the ``SecureBoot-8be4df61-...`` efivar (4 attribute bytes
    then the value)."""
    if mokutil_output:
        match = _SB_STATE.search(mokutil_output)
        if match:
            return match.group(1).lower()
        if "not supported" in mokutil_output.lower() or "doesn't support" in mokutil_output.lower():
            return "unsupported"
    if efivar_bytes:
        return "enabled" if bytearray(efivar_bytes)[-1] == 1 else "disabled"
    return "unsupported"


_DKMS_LINE = re.compile(r"^(?P<module>[^/,\s]+)[/,]\s*(?P<version>[^,:\s]+)(?:,\s*(?P<kernel>[^,:\s]+)(?:,\s*(?P<arch>[^:\s]+))?)?:\s*(?P<state>\w+)")


def parse_dkms_status(text):
    """``dkms status`` lines (dkms 2.x ``mod, ver, ...`` and 3.x ``mod/ver, ...``) as dicts of
    module, version, kernel, arch, state (added, built, installed)."""
    entries = []
    for line in (text or "").splitlines():
        match = _DKMS_LINE.match(line.strip())
        if match:
            entries.append(match.groupdict())
    return entries


def dkms_problems(entries, module, kernels):
    """Problems when ``module`` is not registered, or not installed for one of ``kernels``."""
    mine = [entry for entry in entries if entry["module"] == module]
    if not mine:
        return ["dkms: module %s is not registered (dkms status lists: %s)" % (
            module, ", ".join(sorted(set(entry["module"] for entry in entries))) or "nothing")]
    installed = set(entry["kernel"] for entry in mine if entry["state"] == "installed")
    return ["dkms: module %s is not installed for kernel %s; install linux-headers/kernel-devel for it and run "
            "dkms autoinstall -k %s" % (module, kernel, kernel) for kernel in kernels if kernel not in installed]
