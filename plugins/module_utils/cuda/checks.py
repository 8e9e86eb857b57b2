# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Verdict engine for the CUDA chain: driver, toolkit (nvcc), torch build and GPU.

``evaluate()`` takes the ``aistack_gpu`` facts, the Python probe and the nvcc probe (see
``probe/gpu_collection.py`` and ``probe/toolchain.py``) and returns findings, each ``{id, severity, message, fix}``, plus a verdict. It is
pure: no I/O, so every rule is a table-driven unit test. A rule that rests on a table entry with
status ``unconfirmed`` reports a warning at most, never an error.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.cuda.tables import (
    ARCH_SUPPORT,
    DRIVER_BRANCHES,
    DRIVER_BRANCHES_ADDED,
    EXTENSION_BUILD_RULES,
    FORWARD_COMPAT,
    GPU_GENERATIONS,
    KERNEL_MODULE_FLAVOR,
    MINOR_VERSION_COMPAT_FLOOR,
    TOOLKIT_MIN_DRIVER,
    TORCH_DEVICE_REQUIREMENT,
    TORCH_WHEEL_ARCH_LISTS,
    TORCH_WHEEL_VARIANTS,
)
from ansible_collections.aistack.gpu_node.plugins.module_utils.versions import (
    compare_versions,
    major_minor,
    version_tuple,
)

SEVERITIES = ("info", "warning", "error")
WHEEL_INDEX = "https://download.pytorch.org/whl/"
_CONSUMER_GPU = re.compile(r"GeForce|TITAN|Quadro|\bRTX\b", re.IGNORECASE)

# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


def finding(finding_id, severity, message, fix=None, status="primary"):
    """One finding. An ``unconfirmed`` source caps the severity at warning."""
    if status == "unconfirmed" and severity == "error":
        severity = "warning"
        message += " (table entry unconfirmed: reported as a warning)"
    return {"id": finding_id, "severity": severity, "message": message, "fix": fix}


def verdict_of(findings):
    """``error`` if any finding is an error, else ``warning`` if any is, else ``ok``."""
    worst = max([SEVERITIES.index(item["severity"]) for item in findings] or [0])
    return {2: "error", 1: "warning"}.get(worst, "ok")


def _weakest(*statuses):
    for status in ("unconfirmed", "secondary"):
        if status in statuses:
            return status
    return "primary"


def cc_tuple(cc):
    """``"8.6"`` -> ``(8, 6)``; SASS/PTX code ``"86"``/``"sm_86"``/``"compute_90a"`` -> ``(8, 6)``/``(9, 0)``."""
    text = str(cc)
    if "." in text:
        major, minor = text.split(".", 1)
        return int(major), int(minor)
    digits = re.sub(r"^(sm|compute)_", "", text).rstrip("abcdefghijklmnopqrstuvwxyz")
    return int(digits[:-1]), int(digits[-1])


def _cc_text(cc):
    return "%d.%d" % cc_tuple(cc)


def _variant_cuda(variant):
    """``"cu130"`` -> ``"13.0"``."""
    digits = variant[2:]
    return "%s.%s" % (digits[:-1], digits[-1])


def _cuda_variant(cuda):
    return "cu%d%d" % version_tuple(major_minor(cuda))[:2]


def torch_series(torch_version):
    """``"2.11.0+cu130"`` -> ``"2.11"``."""
    match = re.match(r"^(\d+)\.(\d+)", torch_version or "")
    return "%s.%s" % match.groups() if match else None


def _in_series_range(series, key):
    """Is torch ``series`` ("2.9") inside a table key ("2.8-2.14" or "2.11")?"""
    if not re.match(r"^\d+\.\d+(-\d+\.\d+)?$", key):
        return False
    first, _sep, last = key.partition("-")
    return compare_versions(first, "<=", series) and compare_versions(series, "<=", last or first)


# ---------------------------------------------------------------------------
# Tables turned into answers
# ---------------------------------------------------------------------------

def torch_cuda_arch_list(ccs, ptx=False):
    """Compute capabilities (strings like "9.0", numbers, or GPU dicts) -> ``"8.0;9.0"``.

    Duplicates and empty values are dropped; ``ptx=True`` appends ``+PTX`` to the highest.
    """
    found = set()
    for item in ccs or []:
        value = item.get("compute_capability") if isinstance(item, dict) else item
        if value not in (None, ""):
            found.add(cc_tuple(value))
    ordered = ["%d.%d" % cc for cc in sorted(found)]
    if ptx and ordered:
        ordered[-1] += "+PTX"
    return ";".join(ordered)


def gpu_generation(gpu):
    """Architecture name for a GPU dict (name + compute_capability); Grace Hopper by name."""
    if gpu.get("name") and re.search(r"\bGH\d{3}\b|Grace Hopper", gpu["name"]):
        return "Grace Hopper"
    cc = gpu.get("compute_capability")
    if not cc:
        return None
    major, minor = cc_tuple(cc)
    table = GPU_GENERATIONS["by_compute_capability"]
    return table.get("%d.%d" % (major, minor)) or table.get(str(major))


def toolkit_requirement(cuda):
    """Driver needed by a CUDA runtime ``cuda`` ("12.4").

    Returns ``{"full", "full_status", "floor", "floor_status", "label"}``: ``full`` is the driver
    bundled with the first release of that minor (full feature set), ``floor`` the minor-version
    compatibility minimum of the major (None for CUDA 10, which has no minor compatibility).
    """
    wanted = major_minor(cuda)
    rows = sorted((version_tuple(key), row) for key, row in TOOLKIT_MIN_DRIVER.items() if major_minor(key) == wanted)
    first = rows[0][1] if rows else None
    floor = MINOR_VERSION_COMPAT_FLOOR.get(str(version_tuple(wanted)[0]))
    return {
        "label": first["label"] if first else "CUDA %s" % wanted,
        "full": first["toolkit_driver"] if first else None,
        "full_status": first["status"] if first else "unconfirmed",
        "floor": floor["min_driver"] if floor else None,
        "floor_status": floor["status"] if floor else "unconfirmed",
    }


def driver_runs_cuda(driver, cuda):
    """True when ``driver`` runs the CUDA ``cuda`` runtime by full support or minor compatibility."""
    need = toolkit_requirement(cuda)
    minimum = need["floor"] or need["full"]
    return bool(minimum) and compare_versions(driver, ">=", minimum)


def best_wheel_for_node(driver, gpus=None):
    """Newest (torch series, variant) in the wheel table whose CUDA runtime ``driver`` runs and
    whose wheels carry kernels for every GPU of ``gpus`` (see ``wheel_kernel_gaps``; none given:
    the driver alone decides)."""
    for series in reversed(torch_series_known()):
        for variant in reversed(torch_series_variants(series)):
            if driver_runs_cuda(driver, _variant_cuda(variant)) and not wheel_kernel_gaps(series, variant, gpus, driver)[0]:
                return series, variant
    return None


def _variants_by_preference(series, driver):
    """``[(variant, support)]`` of torch ``series`` that ``driver`` runs, best first: the newest
    variant the driver fully supports (its driver is at least the one the CUDA minor shipped with),
    then the newest it runs by minor-version compatibility, which loses PTX JIT of newer code."""
    supported = [(variant, torch_variant_support(variant, driver)) for variant in reversed(torch_series_variants(series))]
    return [pair for support in ("full", "minor-compat") for pair in supported if pair[1] == support]


def torch_variant_for_node(series, driver, gpus=None):
    """The CUDA variant of torch ``series`` ("2.11") that best fits ``driver`` and every GPU of ``gpus``.

    Variants come in the driver's order (``_variants_by_preference``); the first whose wheels carry
    kernels for every GPU wins. Without GPUs (none known: an image build, facts not gathered) the
    driver alone decides. Returns ``{"series", "variant", "cuda", "support", "without_kernels",
    "unconfirmed"}``: ``support`` "full" or "minor-compat"; ``variant`` None when no variant fits;
    ``without_kernels`` each variant the driver runs that was passed over, with the GPUs it lacks
    kernels for; ``unconfirmed`` the GPUs that only an unconfirmed entry speaks for in the chosen
    variant. None when the wheel table does not know the series.
    """
    if series not in TORCH_WHEEL_VARIANTS:
        return None
    without_kernels = []
    for variant, support in _variants_by_preference(series, driver):
        missing, unconfirmed = wheel_kernel_gaps(series, variant, gpus, driver)
        if not missing:
            return {"series": series, "variant": variant, "cuda": _variant_cuda(variant), "support": support,
                    "without_kernels": without_kernels, "unconfirmed": unconfirmed}
        without_kernels.append((variant, missing))
    return {"series": series, "variant": None, "cuda": None, "support": None, "without_kernels": without_kernels,
            "unconfirmed": []}


def torch_variant_support(variant, driver):
    """How ``driver`` runs torch wheels of ``variant`` ("cu128"): "full", "minor-compat" or None."""
    need = toolkit_requirement(_variant_cuda(variant))
    if need["full"] and compare_versions(driver, ">=", need["full"]):
        return "full"
    return "minor-compat" if driver_runs_cuda(driver, _variant_cuda(variant)) else None


def torch_series_known():
    """Torch series ("2.4" ... ) the wheel table has, oldest first."""
    return sorted(TORCH_WHEEL_VARIANTS, key=version_tuple)


def torch_series_variants(series):
    """CUDA variants published for torch ``series``, oldest CUDA first; None for an unknown series."""
    row = TORCH_WHEEL_VARIANTS.get(series)
    return sorted(row["variants"], key=lambda v: version_tuple(_variant_cuda(v))) if row else None


def sass_runs_on(code, cc):
    """Does SASS built for ``code`` ("sm_80") run on a device of compute capability ``cc``?

    torch's DEVICE_REQUIREMENT table: same major and minor at least the code's, minus listed
    exceptions (sm_80 runs on 8.6, not on 8.7 or 9.0). Arch-specific codes (sm_90a) run only on
    their own capability.
    """
    bare = re.sub(r"^sm_", "", code)
    device = cc_tuple(cc)
    if bare[-1:].isalpha():
        return cc_tuple(bare) == device
    rule = TORCH_DEVICE_REQUIREMENT["rules"].get(bare)
    if rule and "only" in rule:
        return _cc_text(cc) in rule["only"]
    built = cc_tuple(rule["same_major_from"]) if rule else cc_tuple(bare)
    excluded = rule.get("exclude", []) if rule else []
    return device[0] == built[0] and device[1] >= built[1] and _cc_text(cc) not in excluded


def arch_coverage(arch_list, cc):
    """How an arch list (``["sm_80", "compute_90"]``) serves ``cc``: ("sass"|"ptx"|None, code)."""
    for code in arch_list:
        if code.startswith("sm_") and sass_runs_on(code, cc):
            return "sass", code
    device = cc_tuple(cc)
    for code in arch_list:
        # Family/arch-specific PTX (compute_90a) is not forward compatible.
        if code.startswith("compute_") and not code[-1].isalpha() and cc_tuple(code) <= device:
            return "ptx", code
    return None, None


def parse_arch_list_setting(setting):
    """``"7.5;8.0;12.0+PTX"`` (TORCH_CUDA_ARCH_LIST) -> ``["sm_75", "sm_80", "sm_120", "compute_120"]``."""
    codes = []
    for item in setting.split(";"):
        digits = "%d%d" % cc_tuple(item.replace("+PTX", ""))
        codes.append("sm_" + digits)
        if item.endswith("+PTX"):
            codes.append("compute_" + digits)
    return codes


def wheel_arch_list(torch_version, cuda):
    """Arch list of the published wheel (table) when torch could not report its own.

    Returns ``(codes, status, ptx_status)`` or None.
    """
    series = torch_series(torch_version)
    variant = TORCH_WHEEL_ARCH_LISTS.get(_cuda_variant(cuda)) if cuda and series else None
    for key, entry in (variant or {}).items():
        if _in_series_range(series, key):
            ptx_status = "unconfirmed" if "unconfirmed" in (entry.get("ptx"), entry.get("ptx_on_pypi_wheel")) else entry["status"]
            codes = entry.get("get_arch_list") or parse_arch_list_setting(entry["torch_cuda_arch_list"])
            return codes, entry["status"], ptx_status
    return None


def wheel_kernel_gaps(series, variant, gpus, driver=None):
    """The GPUs of ``gpus`` that the torch ``series`` wheels of ``variant`` carry no kernels for.

    A GPU is served by SASS that runs on its compute capability (``arch_coverage``), or by PTX that
    ``driver`` JIT-compiles, which needs full support of the variant's CUDA (minor-version
    compatibility cannot JIT newer PTX). Returns ``(missing, unconfirmed)``: the GPUs known to lack
    kernels, and those that only an unconfirmed table entry, PTX or compute capability speaks for
    (never a reason to refuse a variant, as everywhere in this module).
    """
    listed = wheel_arch_list(series, _variant_cuda(variant))
    can_jit = bool(driver) and torch_variant_support(variant, driver) == "full"
    missing, unconfirmed = [], []
    for gpu in gpus or []:
        cc = gpu.get("compute_capability")
        if not listed or not cc:
            unconfirmed.append(gpu)
            continue
        codes, status, ptx_status = listed
        how, _code = arch_coverage(codes, cc)
        if how == "sass" or (how == "ptx" and can_jit and ptx_status != "unconfirmed"):
            continue
        # PTX left here is unconfirmed (with a driver that could JIT it) or its JIT is unknown (no driver).
        doubtful = how == "ptx" and (can_jit or not driver)
        if doubtful or _weakest(status, _cc_status(gpu), TORCH_DEVICE_REQUIREMENT["status"]) == "unconfirmed":
            unconfirmed.append(gpu)
        else:
            missing.append(gpu)
    return missing, unconfirmed


def toolkit_can_target(nvcc_release, cc):
    """``(True|False|None, status)``: can nvcc ``nvcc_release`` compile SASS for ``cc``? None = unknown."""
    support = ARCH_SUPPORT.get(str(version_tuple(nvcc_release)[0]))
    if not support:
        return None, "unconfirmed"
    sm = "%d%d" % cc_tuple(cc)
    if sm not in support["sm"]:
        return False, support["status"]
    added = support.get("added", {}).get(sm)
    if added and compare_versions(nvcc_release, "<", added):
        return False, support["status"]
    return True, support["status"]


def _is_data_center(gpus):
    return bool(gpus) and not any(_CONSUMER_GPU.search(gpu.get("name") or "") for gpu in gpus)


def forward_compat_possible(cuda, driver):
    """Matrix cell (C, X, N/A) for package cuda-compat-X-Y on the driver's branch, or None if not listed."""
    package = "cuda-compat-%d-%d" % version_tuple(major_minor(cuda))[:2]
    row = FORWARD_COMPAT["matrix"].get(package)
    branch = str(version_tuple(driver)[0])
    if row is None or branch not in FORWARD_COMPAT["matrix_columns"]:
        return package, None
    return package, row[FORWARD_COMPAT["matrix_columns"].index(branch)]


# ---------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------

def _check_gpu_state(facts):
    state = facts.get("state")
    driver = facts.get("driver") or {}
    if state == "no_gpu":
        return [finding("gpu.none", "info", "No NVIDIA GPU found (no PCI display or 3D controller with vendor 0x10de).",
                        "Nothing to do on a host without a GPU; run GPU checks on GPU nodes.")]
    if state == "gpu_no_driver":
        bound = sorted(set(device.get("kernel_driver") or "none" for device in facts.get("pci_devices") or []))
        return [finding("driver.not_loaded", "warning",
                        "An NVIDIA GPU is present but the nvidia kernel module is not loaded (PCI driver: %s)." % ", ".join(bound),
                        "Install the NVIDIA driver (aistack.gpu_node driver role) or load it with 'modprobe nvidia'; "
                        "if nouveau is bound, blacklist it and reboot.")]
    if state == "mismatch":
        return [finding("driver.mismatch", "error",
                        "Loaded kernel module %s differs from the installed userspace driver %s (Driver/library version mismatch)."
                        % (driver.get("loaded_version") or "unknown", driver.get("userspace_version") or "unknown"),
                        "Reboot (or unload and reload the nvidia modules) so the kernel module matches the userspace libraries, "
                        "then hold the nvidia packages so unattended upgrades cannot split them again.")]
    if state == "driver_error":
        return [finding("driver.error", "warning",
                        "The nvidia kernel module is loaded but neither NVML nor nvidia-smi answered: %s"
                        % "; ".join(facts.get("messages") or ["no detail"]),
                        "Run nvidia-smi on the host and check dmesg for NVRM errors.")]
    return []


def _check_driver_for_torch(facts, torch_info, forward_compat):
    driver = (facts.get("driver") or {}).get("version")
    cuda = torch_info.get("cuda")
    if not driver or not cuda or facts.get("state") == "mismatch":
        return []
    need = toolkit_requirement(cuda)
    if need["full"] and compare_versions(driver, ">=", need["full"]):
        return []
    if need["floor"] and compare_versions(driver, ">=", need["floor"]):
        return [finding("driver.minor_compat", "info",
                        "Driver %s is older than %s's own driver %s; torch's CUDA %s runtime runs by minor-version compatibility "
                        "(floor %s). Features that need a newer driver, and PTX JIT of newer PTX, are not available."
                        % (driver, need["label"], need["full"] or "(not bundled)", cuda, need["floor"]),
                        "Optional: upgrade the driver to %s or later for full CUDA %s support." % (need["full"] or need["floor"], cuda))]
    # The CUDA version's own row counts even when only the floor is used: an unconfirmed row never errors.
    status = _weakest(need["full_status"], need["floor_status"])
    minimum = need["floor"] or need["full"]
    if not minimum:
        return [finding("driver.cuda_unknown", "warning",
                        "No driver minimum is known for torch's CUDA %s runtime; cannot judge driver %s." % (cuda, driver), None)]
    package, cell = forward_compat_possible(cuda, driver)
    gpus = facts.get("gpus") or []
    if cell == "C" and _is_data_center(gpus):
        if forward_compat and forward_compat.get("present"):
            return [finding("driver.forward_compat", "warning",
                            "Driver %s is older than CUDA %s needs (%s); it can work through forward compatibility: %s is installed."
                            % (driver, cuda, minimum, forward_compat["path"]),
                            "Make sure %s is on LD_LIBRARY_PATH or in ld.so.conf for this environment, "
                            "or upgrade the driver to %s or later." % (forward_compat["path"], minimum))]
        fc_fix = " or install %s (forward compatibility, data-center GPUs) and add %s to the library path" % (
            package, FORWARD_COMPAT["install_dir"].replace("<major>.<minor>", major_minor(cuda)))
    else:
        fc_fix = ""
    best = best_wheel_for_node(driver, facts.get("gpus"))
    wheel_fix = ", or install a torch build this driver runs (torch %s %s: --index-url %s%s)" % (
        best[0], best[1], WHEEL_INDEX, best[1]) if best else ""
    return [finding("driver.too_old_for_torch", "error",
                    "Driver %s is too old for torch's CUDA %s runtime: it needs %s or later%s." % (
                        driver, cuda, minimum, " (minor-version compatibility floor)" if need["floor"] else ""),
                    "Upgrade the NVIDIA driver to %s or later%s%s." % (need["full"] or minimum, fc_fix, wheel_fix),
                    status=status)]


def _check_torch(facts, probe, required_cuda):
    if probe.get("error"):
        return [finding("python.error", "error", probe["error"], "Point 'python' at the environment's interpreter (bin/python).")]
    torch_info = probe.get("torch") or {}
    has_gpu = bool(facts.get("gpus"))
    if not torch_info.get("present"):
        return [finding("torch.missing", "warning" if has_gpu else "info",
                        "torch is not importable by %s (%s)." % (probe.get("interpreter"), torch_info.get("error") or "not installed"),
                        "Install torch into this environment, e.g. pip install torch --index-url %s<variant>." % WHEEL_INDEX)]
    findings = []
    if not torch_info.get("cuda"):
        findings.append(finding("torch.cpu_only", "warning" if has_gpu else "info",
                                "torch %s is a CPU-only build (torch.version.cuda is None)." % torch_info.get("version"),
                                "Install a CUDA build of torch from %s<variant> (e.g. cu130)." % WHEEL_INDEX))
    elif has_gpu and facts.get("state") == "ok" and not torch_info.get("cuda_available"):
        findings.append(finding("torch.cuda_unavailable", "warning",
                                "torch.cuda.is_available() is False although GPUs and a driver are present%s." % (
                                    ": %s" % torch_info["cuda_error"] if torch_info.get("cuda_error") else ""),
                                "Check CUDA_VISIBLE_DEVICES, device permissions (/dev/nvidia*) and the driver findings."))
    if required_cuda and major_minor(required_cuda) != major_minor(torch_info.get("cuda")):
        findings.append(_required_cuda_finding(required_cuda, torch_info))
    return findings


def _required_cuda_finding(required_cuda, torch_info):
    wanted = major_minor(required_cuda)
    variant = _cuda_variant(wanted)
    series = torch_series(torch_info.get("version"))
    offered = TORCH_WHEEL_VARIANTS.get(series, {}).get("variants", [])
    if variant in offered:
        fix = "Install torch %s built for CUDA %s: pip install 'torch==%s.*' --index-url %s%s" % (series, wanted, series, WHEEL_INDEX, variant)
    else:
        having = [s for s in sorted(TORCH_WHEEL_VARIANTS, key=version_tuple) if variant in TORCH_WHEEL_VARIANTS[s]["variants"]]
        fix = "torch %s has no %s wheel; torch series with %s: %s." % (series, variant, variant, ", ".join(having) or "none known")
    return finding("torch.required_cuda", "error",
                   "torch.version.cuda is %s but CUDA %s is required." % (torch_info.get("cuda"), wanted), fix)


def _check_nvcc(torch_info, nvcc, apex):
    cuda = torch_info.get("cuda")
    if not nvcc.get("present"):
        return [finding("nvcc.missing", "info", "No nvcc found (%s); CUDA extensions (APEX, custom ops) cannot be built."
                        % (nvcc.get("error") or "no CUDA home"),
                        "Install the CUDA toolkit matching torch (cuda-toolkit-%s) or set cuda_home." % (
                            major_minor(cuda).replace(".", "-") if cuda else "X-Y"))]
    if not cuda:
        return []
    release, wanted = nvcc["release"], major_minor(cuda)
    if release == wanted:
        return []
    rules = EXTENSION_BUILD_RULES
    fix = "Use the CUDA %s toolkit for extension builds (set cuda_home / CUDA_HOME to it) or install torch built for CUDA %s." % (wanted, release)
    findings = []
    if version_tuple(release)[0] != version_tuple(wanted)[0]:
        findings.append(finding("nvcc.torch_major_mismatch", "error",
                                "nvcc is CUDA %s but torch was built with CUDA %s: torch's extension builder refuses a different major."
                                % (release, wanted), fix, status=rules["torch_cpp_extension"]["status"]))
    else:
        findings.append(finding("nvcc.torch_minor_mismatch", "warning",
                                "nvcc is CUDA %s but torch was built with CUDA %s: torch extensions build with a warning." % (release, wanted),
                                fix, status=rules["torch_cpp_extension"]["status"]))
    findings.append(finding("apex.cuda_mismatch", "error" if apex else "info",
                            "APEX's setup.py requires nvcc (%s) to equal torch.version.cuda (%s) exactly." % (release, wanted),
                            fix, status=rules["apex"]["status"]))
    return findings


def _gpu_label(gpu):
    return gpus_label([gpu])


def gpus_label(gpus):
    """``GPU 0 (Tesla V100-SXM2-32GB, compute capability 7.0)``; alike GPUs once, as ``GPUs 0, 1 (...)``."""
    models, indexes = [], {}
    for gpu in gpus:
        model = (gpu.get("name") or "unknown", gpu.get("compute_capability") or "unknown")
        if model not in indexes:
            models.append(model)
        indexes.setdefault(model, []).append(str(gpu.get("index")))
    return ", ".join("GPU%s %s (%s, compute capability %s)" % ("s" if len(indexes[model]) > 1 else "", ", ".join(indexes[model]),
                                                               model[0], model[1]) for model in models)


def _cc_status(gpu):
    source = gpu.get("compute_capability_from") or ""
    return "unconfirmed" if "unconfirmed" in source else "primary"


def _check_arch(facts, torch_info):
    arch_list = torch_info.get("arch_list") or []
    list_status, ptx_status, origin = "primary", "primary", "torch"
    if not arch_list and torch_info.get("cuda"):
        from_table = wheel_arch_list(torch_info.get("version"), torch_info["cuda"])
        if not from_table:
            return []
        arch_list, list_status, ptx_status = from_table
        origin = "the published wheel table"
    findings = []
    for gpu in facts.get("gpus") or []:
        cc = gpu.get("compute_capability")
        if not cc or not arch_list:
            continue
        how, code = arch_coverage(arch_list, cc)
        status = _weakest(list_status, _cc_status(gpu), TORCH_DEVICE_REQUIREMENT["status"])
        if how is None:
            findings.append(finding("arch.not_in_torch", "error",
                                    "%s is not covered by torch's arch list (%s, from %s): no SASS of the same major "
                                    "at or below %s and no PTX at or below it." % (_gpu_label(gpu), " ".join(arch_list), origin, cc),
                                    "Install a torch build whose arch list includes sm_%d%d (see TORCH_WHEEL_ARCH_LISTS) "
                                    "or build torch with TORCH_CUDA_ARCH_LIST=%s." % (cc_tuple(cc) + (_cc_text(cc),)),
                                    status=status))
        elif how == "ptx":
            findings.append(finding("arch.ptx_jit", "info",
                                    "%s runs torch's kernels only through JIT compilation of %s PTX (slow first start)." % (_gpu_label(gpu), code),
                                    "Prefer a torch build with SASS for sm_%d%d." % cc_tuple(cc), status=_weakest(status, ptx_status)))
    return findings


def _check_toolkit_targets(facts, nvcc):
    if not nvcc.get("present"):
        return []
    findings = []
    for gpu in facts.get("gpus") or []:
        cc = gpu.get("compute_capability")
        if not cc:
            continue
        can, status = toolkit_can_target(nvcc["release"], cc)
        if can is False:
            findings.append(finding("arch.toolkit_cannot_target", "error",
                                    "nvcc %s cannot compile for %s (sm_%d%d is not a target of CUDA %s)." % (
                                        (nvcc["release"], _gpu_label(gpu)) + cc_tuple(cc) + (nvcc["release"],)),
                                    "Use a CUDA toolkit that still targets sm_%d%d (CUDA 13 dropped sm_50 to sm_72: use CUDA 12.x) "
                                    "for extension builds on this GPU." % cc_tuple(cc),
                                    status=_weakest(status, _cc_status(gpu))))
        elif can is None:
            findings.append(finding("arch.toolkit_unknown", "info",
                                    "No arch table for CUDA %s; cannot tell whether it targets %s." % (nvcc["release"], _gpu_label(gpu))))
    return findings


def _check_driver_branch(facts):
    driver = (facts.get("driver") or {}).get("version")
    if not driver:
        return []
    branch = version_tuple(driver)[0]
    last_for = dict((generation, 580) for generation in DRIVER_BRANCHES["R580"]["last_branch_for"])
    last_for["Kepler"] = 470
    blackwell_min = DRIVER_BRANCHES["blackwell_min_branch"]
    findings = []
    for gpu in facts.get("gpus") or []:
        generation = gpu_generation(gpu)
        if generation in last_for and branch > last_for[generation]:
            findings.append(finding("driver.branch_drops_gpu", "error",
                                    "Driver branch R%d no longer supports %s (%s): R%d is the last branch for %s GPUs." % (
                                        branch, _gpu_label(gpu), generation, last_for[generation], generation),
                                    "Install the R%d driver branch (latest %d.x) for this GPU." % (last_for[generation], last_for[generation]),
                                    status=_weakest(DRIVER_BRANCHES["status"], _cc_status(gpu))))
        if generation == "Blackwell" and branch < version_tuple(blackwell_min["value"].lstrip("R"))[0]:
            findings.append(finding("driver.branch_too_old_for_gpu", "error",
                                    "Driver branch R%d predates Blackwell support (%s needs %s or later)." % (
                                        branch, _gpu_label(gpu), blackwell_min["value"]),
                                    "Install driver branch %s or later with the open kernel module." % blackwell_min["value"],
                                    status=blackwell_min["status"]))
    return findings


def _eol_end(eol):
    """The first day a branch is out of support: the table's ``eol`` month ("2026-06") is the
    last month NVIDIA supports it."""
    year, month = (int(part) for part in eol.split("-")[:2])
    return datetime.date(year + month // 12, month % 12 + 1, 1)


def _lifecycle_status(entry, today):
    if not entry.get("eol"):
        return "unknown"
    return "end_of_life" if today >= _eol_end(entry["eol"]) else "supported"


def driver_branches():
    """Every driver branch the tables know, ``{"R580": entry, ...}``: the data file's and the ones added beside it."""
    return dict((key, entry) for table in (DRIVER_BRANCHES, DRIVER_BRANCHES_ADDED) for key, entry in table.items()
                if re.match(r"^R\d+$", key))


def branch_lifecycle(branch, today=None):
    """The lifecycle of driver branch ``branch`` (an int, 580) on ``today`` (a ``datetime.date``,
    default the current date), from the tables' end-of-life months.

    Returns ``branch`` ("R580"), ``designation`` (LTSB, Production Branch, New Feature Branch or
    None), ``eol`` (the last supported month or None), ``status`` (supported, end_of_life, or
    unknown when the tables hold no end of life), ``successor`` (for an end-of-life branch: the
    oldest newer branch still supported, as ``{branch, designation, eol}``, or None) and ``source``.
    """
    today = today or datetime.date.today()
    branches = driver_branches()
    entry = branches.get("R%d" % branch) or {}
    lifecycle = {"branch": "R%d" % branch, "designation": entry.get("designation"), "eol": entry.get("eol"),
                 "status": _lifecycle_status(entry, today), "successor": None,
                 "source": entry.get("source") or DRIVER_BRANCHES["source"]}
    if lifecycle["status"] == "end_of_life":
        newer = sorted(int(key[1:]) for key in branches if re.match(r"^R\d+$", key) and int(key[1:]) > branch
                       and _lifecycle_status(branches[key], today) == "supported")
        if newer:
            successor = branches["R%d" % newer[0]]
            lifecycle["successor"] = {"branch": "R%d" % newer[0], "designation": successor.get("designation"),
                                      "eol": successor.get("eol")}
    return lifecycle


def lifecycle_text(lifecycle):
    """One line: ``R580 (LTSB): supported until 2028-06`` or ``R535 (LTSB): end of life since
    2026-06; supported successor R580 (LTSB, until 2028-06)``."""
    name = "%s (%s)" % (lifecycle["branch"], lifecycle["designation"]) if lifecycle["designation"] else lifecycle["branch"]
    if lifecycle["status"] == "supported":
        return "%s: supported until %s" % (name, lifecycle["eol"])
    if lifecycle["status"] == "unknown":
        return "%s: lifecycle unknown (the driver tables hold no end of life for it)" % name
    successor = lifecycle["successor"]
    return "%s: end of life since %s; %s" % (name, lifecycle["eol"], "supported successor %s (%s, until %s)" % (
        successor["branch"], successor["designation"], successor["eol"]) if successor else "no newer supported branch in the tables")


def _check_driver_lifecycle(facts, today=None):
    driver = (facts.get("driver") or {}).get("version")
    if not driver:
        return []
    lifecycle = branch_lifecycle(version_tuple(driver)[0], today)
    if lifecycle["status"] != "end_of_life":
        return []
    successor = lifecycle["successor"]
    return [finding("driver.branch_end_of_life", "warning",
                    "Driver %s is on branch %s" % (driver, lifecycle_text(lifecycle)),
                    "Move to the %s branch." % successor["branch"] if successor else None)]


def _check_flavour(facts):
    driver = facts.get("driver") or {}
    flavour = driver.get("kernel_module_flavour")
    if not flavour:
        return []
    status = KERNEL_MODULE_FLAVOR["status"]
    open_min = cc_tuple(KERNEL_MODULE_FLAVOR["open_min_cc"])
    findings = []
    for gpu in facts.get("gpus") or []:
        generation = gpu_generation(gpu)
        cc = gpu.get("compute_capability")
        if flavour == "proprietary" and generation in ("Blackwell", "Grace Hopper"):
            findings.append(finding("driver.flavour_open_required", "error",
                                    "%s (%s) needs the open kernel module; the proprietary one is loaded." % (_gpu_label(gpu), generation),
                                    "Install the open kernel module flavour (e.g. nvidia-driver-<branch>-open / nvidia-open) and reboot.",
                                    status=status))
        elif flavour == "open" and cc and cc_tuple(cc) < open_min:
            findings.append(finding("driver.flavour_proprietary_required", "error",
                                    "%s (%s) is not supported by the open kernel module, which is loaded (it needs compute capability %s+)."
                                    % (_gpu_label(gpu), generation or "pre-Turing", KERNEL_MODULE_FLAVOR["open_min_cc"]),
                                    "Install the proprietary kernel module flavour and reboot.", status=_weakest(status, _cc_status(gpu))))
        elif flavour == "proprietary" and cc and cc_tuple(cc) >= open_min:
            findings.append(finding("driver.flavour_open_recommended", "info",
                                    "%s (%s) runs the proprietary kernel module; NVIDIA recommends the open one (default since R%s)."
                                    % (_gpu_label(gpu), generation, KERNEL_MODULE_FLAVOR["open_default_from_branch"]),
                                    "Optional: switch to the open kernel module flavour."))
    return findings


def driver_policy_findings(driver_version, flavour, gpus):
    """The branch and kernel module flavour rules for a driver ``driver_version`` with the
    ``flavour`` module on ``gpus``: what the nvidia_driver role checks before it installs or
    adopts a driver, with the same findings ``evaluate()`` reports for a running one."""
    facts = {"driver": {"version": driver_version, "kernel_module_flavour": flavour}, "gpus": gpus}
    return _check_driver_branch(facts) + _check_flavour(facts)


def evaluate(facts, probe, nvcc, required_cuda=None, apex=True, forward_compat=None, today=None):
    """Run every rule. Returns ``{"findings": [...], "verdict": "ok"|"warning"|"error"}``.

    ``facts``: ``aistack_gpu``; ``probe``: ``toolchain.collect_python()`` output; ``nvcc``:
    ``toolchain.collect_nvcc()`` output; ``forward_compat``: ``toolchain.find_forward_compat()`` (probe/toolchain.py);
    ``today``: the date the driver branch's lifecycle is judged on (default: the current date).
    """
    torch_info = (probe or {}).get("torch") or {}
    nvcc = nvcc or {}
    findings = _check_gpu_state(facts)
    findings += _check_torch(facts, probe or {}, required_cuda)
    findings += _check_driver_for_torch(facts, torch_info, forward_compat)
    findings += _check_nvcc(torch_info, nvcc, apex)
    findings += _check_arch(facts, torch_info)
    findings += _check_toolkit_targets(facts, nvcc)
    findings += _check_driver_branch(facts)
    findings += _check_flavour(facts)
    findings += _check_driver_lifecycle(facts, today)
    return {"findings": findings, "verdict": verdict_of(findings)}
