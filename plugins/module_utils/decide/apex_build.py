# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Pure decisions of the apex_build role: whether a node gets APEX at all, what APEX's setup.py offers,
which flags and environment a build gets, how parallel it may run, and the key of its wheel in the cache.

Nothing here touches the node: the role reads setup.py, the environment and the node's size, and
these functions turn them into answers that unit tests pin down.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import hashlib
import json
import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import env_proof

CORE_FLAGS = ("--cpp_ext", "--cuda_ext")
# Upstream measured about 3.6 GiB of memory per parallel compile job (APEX pull #1882).
DEFAULT_MIB_PER_JOB = 3686
# apex.amp, apex.parallel and apex.RNN were removed after this tag (upstream PR #1896, May 2025).
LAST_TAG_WITH_LEGACY_APIS = "25.05"
CACHE_KEY_FIELDS = ("apex_source", "torch_version", "torch_cuda", "torch_cuda_version", "python_tag",
                    "platform", "arch_list", "flags")

_ENV_TO_FLAG_BLOCK = re.compile(r"^ENV_TO_FLAG\s*=\s*\{(.*?)^\}", re.MULTILINE | re.DOTALL)
_ENV_TO_FLAG_ITEM = re.compile(r"""["'](APEX_\w+)["']\s*:\s*["'](--\w+)["']""")
_FLAG_BLOCK_HEAD = re.compile(r"""^if\s+(?:has_flag\(\s*["'](--\w+)["']|["'](--\w+)["']\s+in\s+sys\.argv)""")
_EXTENSION = re.compile(r"""\b(CppExtension|CUDAExtension)\(\s*(?:name\s*=\s*)?["'](\w+)["']""")
_COMPOUND = re.compile(r"^(if|elif|else|for|while|try|except|with)\b")
_CALENDAR_TAG = re.compile(r"^v?(\d{2})\.(\d{2})(?:\.(\d+))?$")
# A cache entry's wheel is a file name beside its marker, never a path (markers may come from a URL).
_WHEEL_NAME = re.compile(r"^apex-[A-Za-z0-9_.+!-]+\.whl$")
# What the role's inputs must look like where an argument spec cannot say it.
_COMMIT_ID = re.compile(r"^[0-9a-f]{7,40}$")
_ARCHIVE_PATH = re.compile(r"^/.*\.(tar\.gz|tgz|tar\.xz|tar|zip)$")
_ARCH_LIST = re.compile(r"^([0-9]+\.[0-9]+[af]?(\+PTX)?)([; ][0-9]+\.[0-9]+[af]?(\+PTX)?)*$")
_CACHE_URL = re.compile(r"^https?://[^/\s]+(/\S*)?$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _indent(line):
    return len(line) - len(line.lstrip())


def _is_conditional(lines_before, extension_indent):
    """Is an extension built only under a nested condition (cuDNN, NCCL or nvcc version) of its flag's block?"""
    scope = extension_indent
    for line in reversed(lines_before):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = _indent(line)
        if indent >= scope:
            continue
        if _COMPOUND.match(stripped):
            return True
        scope = indent
    return False


def _flag_blocks(text):
    """Top-level ``if has_flag("--x", ...)`` / ``if "--x" in sys.argv`` blocks: flag -> list of lines."""
    blocks, current = {}, None
    for line in text.splitlines():
        head = _FLAG_BLOCK_HEAD.match(line)
        if head:
            current = head.group(1) or head.group(2)
            blocks.setdefault(current, [])
            continue
        if current and line.strip() and _indent(line) == 0 and not line.lstrip().startswith(("#", ")", "]", "}")):
            current = None
        if current:
            blocks[current].append(line)
    return blocks


def parse_setup_py(text):
    """What an APEX ``setup.py`` offers, read from its text (never executed).

    Returns ``{"env_flags": {flag: env var}, "parallel_env": bool, "flags": {flag: {"cuda": bool,
    "required": [module, ...], "optional": [module, ...]}}}``. ``env_flags`` is empty for trees older
    than upstream PR #1910, which read only command-line flags (``--cpp_ext``). Extensions built only
    under a nested condition (a cuDNN, NCCL or nvcc version) are ``optional``.
    """
    env_block = _ENV_TO_FLAG_BLOCK.search(text)
    env_flags = dict((flag, env) for env, flag in _ENV_TO_FLAG_ITEM.findall(env_block.group(1))) if env_block else {}
    flags = {}
    for flag, lines in _flag_blocks(text).items():
        body = "\n".join(lines)
        entry = {"cuda": "CUDAExtension(" in body or "raise_if_cuda_home_none" in body, "required": [], "optional": []}
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line) + 1)
        for match in _EXTENSION.finditer(body):
            line_number = max(i for i, start in enumerate(offsets[:-1]) if start <= match.start())
            conditional = _is_conditional(lines[:line_number], _indent(lines[line_number]))
            entry["optional" if conditional else "required"].append(match.group(2))
        if entry["required"] or entry["optional"] or flag in env_flags:
            previous = flags.get(flag, {"cuda": False, "required": [], "optional": []})
            flags[flag] = {"cuda": previous["cuda"] or entry["cuda"],
                           "required": previous["required"] + entry["required"],
                           "optional": previous["optional"] + entry["optional"]}
    return {"env_flags": env_flags, "parallel_env": "APEX_PARALLEL_BUILD" in text, "flags": flags}


def normalize_extension_name(name):
    """``xentropy``, ``--xentropy`` or ``APEX_XENTROPY`` -> ``--xentropy``."""
    text = str(name).strip()
    if text.upper().startswith("APEX_"):
        text = text[5:].lower()
    return "--" + text.lstrip("-")


def build_plan(setup, cpp_ext, cuda_ext, contrib):
    """Flags, environment and pip options of one build, validated against ``parse_setup_py()``.

    Raises ValueError naming every requested flag the tree does not have, and the ones it has.
    """
    wanted = [flag for flag, on in zip(CORE_FLAGS, (cpp_ext, cuda_ext)) if on]
    wanted += sorted(set(normalize_extension_name(name) for name in contrib or []) - set(CORE_FLAGS))
    offered = setup["flags"]
    unknown = [flag for flag in wanted if flag not in offered]
    if unknown:
        contrib_offered = sorted(set(offered) - set(CORE_FLAGS))
        raise ValueError("apex_build_contrib_extensions: this APEX source has no %s; its contrib extensions are: %s" % (
            ", ".join(unknown), ", ".join(name.lstrip("-") for name in contrib_offered) or "none"))
    env_flags = setup["env_flags"]
    if env_flags:
        env = dict((env_flags[flag], "1") for flag in wanted)
        config_settings = []
    else:
        env = {}
        config_settings = ["--build-option=%s" % flag for flag in wanted]
    required, optional = [], []
    for flag in wanted:
        required += offered[flag]["required"]
        optional += offered[flag]["optional"]
    if not required:
        # Nothing could then prove the build compiled anything, and no cache entry would be valid.
        raise ValueError("apex_build_contrib_extensions: %s build only modules this setup.py may skip (%s); request "
                         "apex_build_cpp_ext or apex_build_cuda_ext too" % (", ".join(wanted), ", ".join(optional) or "none"))
    return {
        "flags": wanted,
        "env": env,
        "config_settings": config_settings,
        "needs_nvcc": any(offered[flag]["cuda"] for flag in wanted),
        "required_modules": required,
        "optional_modules": optional,
        "parallel_env": setup["parallel_env"],
    }


def build_parallelism(cpus, memory_mib, extensions, arch_count, cuda, mib_per_job=DEFAULT_MIB_PER_JOB, fixed=None):
    """``MAX_JOBS``, ``APEX_PARALLEL_BUILD`` and nvcc ``--threads`` for a node's size.

    Every compiler process may take ``mib_per_job``; the product of the three never exceeds what the
    available memory holds, and extensions built side by side never exceed half the cores (each one
    also runs ninja jobs). nvcc threads only help with several target architectures. ``fixed``
    holds the factors the user set (``max_jobs``, ``parallel_build``, ``nvcc_threads``); the others
    are sized around them, and a product that still exceeds the memory is refused (ValueError).
    """
    fixed = dict((name, int(value)) for name, value in (fixed or {}).items() if value and int(value) > 0)
    cpus, memory_jobs = max(1, int(cpus)), max(1, int(memory_mib) // max(1, int(mib_per_job)))
    if not cuda:
        threads = 1
    else:
        threads = fixed.get("nvcc_threads") or (min(2, int(arch_count)) if int(arch_count) > 1 and memory_jobs >= 4 else 1)
    parallel = fixed.get("parallel_build") or max(
        1, min(int(extensions) or 1, cpus // 2, memory_jobs // (threads * fixed.get("max_jobs", 1))))
    max_jobs = fixed.get("max_jobs") or max(1, min(cpus, memory_jobs // (parallel * threads)))
    peak = max_jobs * parallel * threads
    if peak > memory_jobs:
        raise ValueError(_memory_refusal(max_jobs, parallel, threads, memory_mib, mib_per_job))
    return {
        "max_jobs": max_jobs,
        "parallel_build": parallel,
        "nvcc_threads": threads if cuda else None,
        "peak_jobs": peak,
        "memory_jobs": memory_jobs,
    }


def _memory_refusal(max_jobs, parallel, threads, memory_mib, mib_per_job):
    peak, memory_jobs = max_jobs * parallel * threads, max(1, int(memory_mib) // max(1, int(mib_per_job)))
    return ("MAX_JOBS %d x APEX_PARALLEL_BUILD %d x nvcc threads %d = %d compiler processes, at %d MiB each, need %d MiB; "
            "the node has %d MiB available (room for %d). Lower apex_build_max_jobs, apex_build_parallel_build or "
            "apex_build_nvcc_threads, or set them to 0 to size the build from the node"
            % (max_jobs, parallel, threads, peak, int(mib_per_job), peak * int(mib_per_job), int(memory_mib), memory_jobs))


def overrides_memory_problem(overrides, memory_mib, cuda, mib_per_job=DEFAULT_MIB_PER_JOB):
    """The refusal build_parallelism() is certain to make, known before the source is read: the
    factors the user set (the others counted as 1) already need more memory than the node has.
    None when they fit; the build itself then sizes the rest and checks the whole product."""
    fixed = dict((name, int(value)) for name, value in (overrides or {}).items() if value and int(value) > 0)
    max_jobs, parallel = fixed.get("max_jobs", 1), fixed.get("parallel_build", 1)
    threads = fixed.get("nvcc_threads", 1) if cuda else 1
    if max_jobs * parallel * threads <= max(1, int(memory_mib) // max(1, int(mib_per_job))):
        return None
    return _memory_refusal(max_jobs, parallel, threads, memory_mib, mib_per_job)


def build_environment(plan, parallelism, cuda_home, arch_list):
    """Environment of the ``pip wheel`` run. ``CUDA_HOME`` whenever a toolkit is given (APEX's
    setup.py asks nvcc for its version even for a C++-only build); the other CUDA variables only
    when the build compiles CUDA."""
    env = dict(plan["env"])
    env["MAX_JOBS"] = str(parallelism["max_jobs"])
    if plan["parallel_env"]:
        env["APEX_PARALLEL_BUILD"] = str(parallelism["parallel_build"])
    if cuda_home:
        env["CUDA_HOME"] = cuda_home
    if plan["needs_nvcc"]:
        env["TORCH_CUDA_ARCH_LIST"] = arch_list
        env["NVCC_APPEND_FLAGS"] = "--threads %d" % parallelism["nvcc_threads"]
    return env


def build_settings(plan, cpus, memory_mib, cuda_home, arch_list, mib_per_job=DEFAULT_MIB_PER_JOB, overrides=None):
    """Parallelism sized for the node around the user's ``overrides`` (max_jobs / parallel_build /
    nvcc_threads, 0 = size it) and the build environment."""
    for name in overrides or {}:
        if name not in ("max_jobs", "parallel_build", "nvcc_threads"):
            raise ValueError("unknown parallelism override %s" % name)
    fixed = dict((name, value) for name, value in (overrides or {}).items() if name != "nvcc_threads" or plan["needs_nvcc"])
    extensions = len(plan["required_modules"]) + len(plan["optional_modules"])
    parallelism = build_parallelism(cpus, memory_mib, extensions, arch_count(arch_list), plan["needs_nvcc"], mib_per_job, fixed)
    return {"parallelism": parallelism, "env": build_environment(plan, parallelism, cuda_home, arch_list)}


def arch_count(arch_list):
    """``"8.0;9.0+PTX"`` -> 2; blank -> 0."""
    return len([item for item in re.split(r"[;\s]+", arch_list or "") if item])


def cache_key(inputs):
    """Stable key of a wheel: sha256 over the sorted JSON of ``CACHE_KEY_FIELDS``, first 24 hex digits."""
    missing = [field for field in CACHE_KEY_FIELDS if field not in inputs]
    if missing:
        raise ValueError("cache key inputs lack %s" % ", ".join(missing))
    canonical = dict((field, inputs[field]) for field in CACHE_KEY_FIELDS)
    canonical["flags"] = sorted(canonical["flags"] or [])
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def cache_entry(marker_text, key):
    """Read a cache entry's marker: ``{"entry": dict or None, "problem": str or None}``.

    An empty text is no entry. Anything else must be a JSON object for ``key`` naming a wheel file
    beside it, its sha256 and the modules to verify; otherwise ``problem`` says what is wrong and
    the entry is not used (a marker from a shared folder or a URL is input, not trusted).
    """
    if not (marker_text or "").strip():
        return {"entry": None, "problem": None}
    try:
        entry = json.loads(marker_text)
    except ValueError as exc:
        return {"entry": None, "problem": "the marker is not JSON (%s)" % exc}
    if not isinstance(entry, dict):
        return {"entry": None, "problem": "the marker is not a JSON object"}
    if entry.get("key") != key:
        return {"entry": None, "problem": "the marker is for key %r, not %s" % (entry.get("key"), key)}
    if not _WHEEL_NAME.match(str(entry.get("wheel") or "")):
        return {"entry": None, "problem": "the marker's wheel %r is not an apex-*.whl file name" % (entry.get("wheel"),)}
    if not _SHA256.match(str(entry.get("wheel_sha256") or "")):
        return {"entry": None, "problem": "the marker's wheel_sha256 %r is not 64 hex digits" % (entry.get("wheel_sha256"),)}
    if not isinstance(entry.get("required_modules"), list) or not entry["required_modules"]:
        return {"entry": None, "problem": "the marker lists no required_modules to verify"}
    return {"entry": entry, "problem": None}


def legacy_apis_ref(ref):
    """Does APEX ``ref`` still have apex.amp / apex.parallel? True, False, or None when it cannot tell (a commit)."""
    match = _CALENDAR_TAG.match(str(ref or ""))
    if not match:
        return None
    year_month = (int(match.group(1)), int(match.group(2)))
    last = tuple(int(part) for part in LAST_TAG_WITH_LEGACY_APIS.split("."))
    return year_month <= last


def build_blockers(plan, compat, require_gpu_arch, build_tools=None):
    """Why this environment cannot build the plan, each ``{"message", "fix"}``; empty when it can.

    ``compat`` is the report of aistack.gpu_node.cuda_compat run with ``apex: true``; ``build_tools``
    what the environment builds with (``{"setuptools": version or None, ...}``), when known.
    """
    torch_info = compat.get("torch") or {}
    nvcc = compat.get("nvcc") or {}
    blockers = []
    if not torch_info.get("present"):
        blockers.append({"message": "torch is not importable in this environment (%s)." % (torch_info.get("error") or "not installed"),
                         "fix": "Install torch into the environment first, or point apex_build_env_prefix at the environment that has it."})
        return blockers
    if build_tools is not None and not build_tools.get("setuptools"):
        blockers.append({"message": "setuptools is not installed in this environment, and pip wheel --no-build-isolation "
                                    "builds with the environment's own.",
                         "fix": "Install setuptools (and ninja, for parallel compiles) into the environment."})
    if not plan["needs_nvcc"]:
        return blockers
    if not torch_info.get("cuda"):
        blockers.append({"message": "CUDA extensions were requested but torch %s is a CPU-only build." % torch_info.get("version"),
                         "fix": "Install a CUDA build of torch, or set apex_build_cuda_ext: false and no contrib extensions."})
    if not nvcc.get("present"):
        blockers.append({"message": "CUDA extensions were requested but there is no nvcc (%s)." % nvcc.get("error"),
                         "fix": "Install the CUDA toolkit %s and set apex_build_cuda_home to it." % (
                             torch_info.get("cuda") or "that matches torch.version.cuda")})
    for item in compat.get("findings") or []:
        if item["id"] == "apex.cuda_mismatch":
            blockers.append({"message": item["message"], "fix": item["fix"]})
    if require_gpu_arch:
        blockers.append({"message": "No GPU here to derive TORCH_CUDA_ARCH_LIST from.",
                         "fix": "Set apex_build_arch_list (for example \"9.0\") on GPU-less build hosts."})
    return blockers


def gpu_gate(gpu_state, cuda_ext, build_host, arch_list):
    """Does this node get APEX: ``{"run": bool, "reason": str or None}``; ``reason`` is the one line
    a skipped node reports.

    APEX's CUDA kernels (``cuda_ext``) are built for and proven on a GPU. A node without an NVIDIA
    GPU (``gpu_state`` ``no_gpu``, from gpu_facts) gets them only as a build host with a declared
    arch list: it compiles for that list and the GPU nodes install its wheel. A C++-only request
    runs anywhere, since a CPU torch compiles and verifies it. A node whose GPU has no working
    driver is not skipped: the build's own blockers name what it lacks.
    """
    if gpu_state != "no_gpu" or not cuda_ext:
        return {"run": True, "reason": None}
    if build_host and (arch_list or "").strip():
        return {"run": True, "reason": None}
    if build_host:
        why = ("this build host has no NVIDIA GPU to derive TORCH_CUDA_ARCH_LIST from and no apex_build_arch_list; "
               "nothing to build. Declare apex_build_arch_list (the fleet's, such as \"9.0\") to build here")
    else:
        why = ("no NVIDIA GPU on this node for APEX's CUDA kernels (apex_build_cuda_ext), and it is not a build host "
               "(apex_build_build_hosts) with apex_build_arch_list declared; nothing to build or install. "
               "Set apex_build_cuda_ext: false for the C++ extensions alone")
    return {"run": False, "reason": why}


# ---------------------------------------------------------------------------
# The role's decisions, stage by stage; aistack.gpu_node.apex_build_plan returns them.
# ---------------------------------------------------------------------------

def requested_flags(cpp_ext, cuda_ext, contrib):
    """The setup.py flags a request names before any source is read: the core ones, then each contrib
    extension (``APEX_XENTROPY``, ``xentropy`` or ``--xentropy``) once, lower case and sorted."""
    named = set(re.sub(r"^-*", "--", re.sub(r"(?i)^APEX_", "", str(name)).lower()) for name in contrib or [])
    return [flag for flag, on in zip(CORE_FLAGS, (cpp_ext, cuda_ext)) if on] + sorted(named - set(CORE_FLAGS))


# The least memory one compiler process of a torch C++/CUDA extension takes, in MiB, and the most of
# any one kind of parallelism a node could use (more is a typo: no node has that many cores).
MIN_MIB_PER_JOB = 256
MAX_PARALLELISM = 1024


def input_problems(inputs, version, legacy_apis_ref):
    """What is wrong with the role's inputs beyond their types (the argument spec checks those), one
    message per variable naming what was expected; empty when nothing is. Each check runs only for
    the inputs given.

    ``inputs``: role variables without the ``apex_build_`` prefix (``env_prefix``, ``cpp_ext``,
    ``cuda_ext``, ``contrib_extensions``, ``source_type``, ``archive``, ``arch_list``, ``cache_dir``,
    ``work_dir``, ``controller_cache_dir``, ``poll_s``, ``timeout_s``, ``cache_url``,
    ``cache_url_upload``, ``legacy_apis``, ``mib_per_job``, ``max_jobs``, ``parallel_build``, ``nvcc_threads``);
    ``version``: the resolved version; ``legacy_apis_ref``:
    what ``legacy_apis_ref(version)`` says."""
    problems = []
    # The env prefix may be empty (no environment yet: the role says so in one line after the gate).
    for name, may_be_empty in (("env_prefix", True), ("cache_dir", False), ("work_dir", False), ("controller_cache_dir", True)):
        value = inputs.get(name)
        if value is not None and (value or not may_be_empty) and not value.startswith("/"):
            problems.append('apex_build_%s must be an absolute path (got "%s").' % (name, value))
    if not (inputs.get("cpp_ext") or inputs.get("cuda_ext") or inputs.get("contrib_extensions")):
        problems.append("apex_build_cpp_ext, apex_build_cuda_ext and apex_build_contrib_extensions request no extension: "
                        "a Python-only APEX has no kernels; request at least one.")
    if inputs.get("source_type") == "archive":
        if not _ARCHIVE_PATH.match(inputs.get("archive") or ""):
            problems.append('apex_build_source_type=archive needs apex_build_archive, an absolute path to a '
                            '.tar.gz/.tgz/.tar.xz/.tar/.zip (got "%s").' % (inputs.get("archive") or ""))
    elif inputs.get("source_type") == "git" and not (_COMMIT_ID.match(version or "") or _CALENDAR_TAG.match(version or "")):
        problems.append('apex_build_version must be a commit id or a tag like 25.05, never a branch (got "%s").' % version)
    if inputs.get("arch_list") and not _ARCH_LIST.match(inputs["arch_list"]):
        problems.append('apex_build_arch_list must look like "9.0" or "8.0;9.0+PTX" (got "%s").' % inputs["arch_list"])
    if "poll_s" in inputs and "timeout_s" in inputs and not 0 < int(inputs["poll_s"]) < int(inputs["timeout_s"]):
        problems.append("apex_build_timeout_s (%s) must exceed apex_build_poll_s (%s), which must be above 0."
                        % (inputs["timeout_s"], inputs["poll_s"]))
    if "mib_per_job" in inputs and int(inputs["mib_per_job"]) < MIN_MIB_PER_JOB:
        problems.append("apex_build_mib_per_job must be at least %d (MiB one compiler process of a torch extension takes; "
                        "less turns the memory guard off), got %s." % (MIN_MIB_PER_JOB, inputs["mib_per_job"]))
    for name in ("max_jobs", "parallel_build", "nvcc_threads"):
        if name in inputs and not 0 <= int(inputs[name]) <= MAX_PARALLELISM:
            problems.append("apex_build_%s must be from 0 (sized from cores and memory) to %d, got %s."
                            % (name, MAX_PARALLELISM, inputs[name]))
    if inputs.get("cache_url") and not _CACHE_URL.match(inputs["cache_url"]):
        problems.append('apex_build_cache_url must be an http:// or https:// URL (got "%s").' % inputs["cache_url"])
    if inputs.get("cache_url_upload") and not inputs.get("cache_url"):
        problems.append("apex_build_cache_url_upload needs apex_build_cache_url, the URL to upload to.")
    if inputs.get("legacy_apis") and legacy_apis_ref is False:
        problems.append("apex_build_legacy_apis is set but apex_build_version %s is newer than tag %s: apex.amp and "
                        "apex.parallel were removed after it. Pin %s or older, or port the code to torch.amp and torch DDP."
                        % (version, LAST_TAG_WITH_LEGACY_APIS, LAST_TAG_WITH_LEGACY_APIS))
    return problems


def gate_decision(version, legacy_apis, tested_commit, cpp_ext, cuda_ext, contrib, gpu_state, build_host, arch_list):
    """The version to build (the pinned one, else the legacy tag or the tested commit), the flags, whether
    that version still has the legacy APIs (True, False or None for a commit) and the GPU gate."""
    resolved = version or (LAST_TAG_WITH_LEGACY_APIS if legacy_apis else tested_commit)
    return {
        "version": resolved,
        "legacy_tag": LAST_TAG_WITH_LEGACY_APIS,
        "flags": requested_flags(cpp_ext, cuda_ext, contrib),
        "legacy_apis_ref": legacy_apis_ref(resolved),
        "gate": gpu_gate(gpu_state, cuda_ext, build_host, arch_list),
    }


def key_decision(probe, compat, source_type, version, archive_sha256, arch_list, cuda, flags, cache_dir, work_dir,
                 cache_url):
    """The wheel's cache key, its inputs and the places named after it.

    ``probe`` is the environment probe's reading, ``compat`` the cuda_compat report. The arch list is
    the user's (spaces read as ``;``), else the one cuda_compat derived from the GPUs; builds that
    compile CUDA key on it and on torch's CUDA (nvcc must match it), C++-only ones do not.
    """
    torch_info = compat.get("torch") or {}
    arch = (arch_list or "").replace(" ", ";") if arch_list else compat.get("torch_cuda_arch_list", "")
    inputs = {
        "apex_source": version if source_type == "git" else "%s archive sha256:%s" % (version, archive_sha256),
        "torch_version": torch_info.get("version"),
        "torch_cuda": torch_info.get("cuda"),
        "torch_cuda_version": torch_info.get("cuda") if cuda else None,
        "python_tag": probe["python_tag"],
        "platform": probe["platform"],
        "arch_list": arch if cuda else None,
        "flags": flags,
    }
    key = cache_key(inputs)
    return {
        "arch_list": arch,
        "key_inputs": inputs,
        "key": key,
        "entry": "%s/%s" % (cache_dir, key),
        "tree_root": "%s/%s" % (work_dir, key),
        "url_entry": "%s/%s" % (re.sub(r"/+$", "", cache_url), key) if cache_url else "",
    }


def proof_holds(action, proof, key):
    """Whether the verify recorded in ``proof`` (the probe's, made on the present state of the environment,
    the driver and the GPUs) stands for this run's: nothing is to be installed, it was made for ``key`` and
    it found no problem."""
    if action != "none" or not env_proof.proof_holds(proof, key):
        return False
    report = proof.get("verify")
    return isinstance(report, dict) and report.get("problems") == []


def cuda_chain_key(python, cuda_home, gpu_facts, toolkit, checks_sha256, month):
    """Key of what a cuda_compat report on ``python``'s environment rests on besides the environment
    itself: the CUDA home asked for, the GPU facts it is handed (driver, GPUs, compute capabilities),
    the toolkit as the environment probe read it (each CUDA home's nvcc, the forward-compat libraries),
    the digest of the checks' code and the month (``"2026-12"``: a driver branch's end of life falls
    on a month's first day). None without GPU facts: cuda_compat then reads the GPUs itself."""
    if not gpu_facts:
        return None
    return env_proof.proof_key(dict(python=python, cuda_home=cuda_home, gpu_facts=gpu_facts, toolkit=toolkit,
                                    checks_sha256=checks_sha256, month=month))


def recorded_cuda_report(proof, chain_key):
    """The cuda_compat report recorded with ``proof`` (which the probe hands over only when it was made
    on the environment's present state) when everything else it rests on reads the same now
    (``chain_key``), else None: cuda_compat runs again."""
    if (chain_key and isinstance(proof, dict) and proof.get("cuda_chain_key") == chain_key
            and isinstance(proof.get("cuda_report"), dict)):
        return proof["cuda_report"]
    return None


def node_entry_reading(probe, key, marker_text=None, wheel_sha256=""):
    """The node cache's entry for ``key`` as read this run: ``(marker text, sha256 of its wheel)``.

    The environment probe reads the entries whose marker names the installed wheel
    (``probe["cache_entries"]``); an entry it did not read is read by the role (``marker_text``, the
    ``wheel_sha256`` of its wheel), and a missing one reads as ``("", "")``.
    """
    found = ((probe or {}).get("cache_entries") or {}).get(key)
    if found is not None:
        return found["marker"], found["wheel_sha256"]
    return marker_text or "", wheel_sha256 or ""


def marker_states(key, texts):
    """Each place's marker text (``{"node": str, ...}``) read for ``key`` with cache_entry()."""
    return dict((place, cache_entry(text, key)) for place, text in texts.items())


def action_decision(markers, node_wheel_sha256, installed_wheel_sha256, is_builder, force_rebuild,
                    controller_cache, url_upload):
    """What this host does: ``build``, ``install`` or ``none`` (the verified wheel is installed).

    The node's own entry counts only when its wheel still has the marker's sha256. The builder builds
    when forced or when no place has an entry; a host whose node entry is installed does nothing;
    every other host installs. A builder that keeps its entry hands it on to the controller cache
    and the URL that lack it (a publish killed midway).
    """
    node = markers["node"]["entry"]
    node_entry = node if node is not None and node_wheel_sha256 == node["wheel_sha256"] else None
    controller_has_entry = markers["controller"]["entry"] is not None
    url_has_entry = markers["url"]["entry"] is not None
    if is_builder and (force_rebuild or (node_entry is None and not controller_has_entry and not url_has_entry)):
        action = "build"
    elif node_entry is not None and not force_rebuild and node_entry["wheel_sha256"] == installed_wheel_sha256:
        action = "none"
    else:
        action = "install"
    hands_on = is_builder and node_entry is not None and action != "build"
    return {
        "action": action,
        "node_entry": node_entry,
        "entry_source": "node" if node_entry is not None else None,
        "controller_has_entry": controller_has_entry,
        "url_has_entry": url_has_entry,
        "share_pending": hands_on and controller_cache and not controller_has_entry,
        "publish_pending": hands_on and url_upload and not url_has_entry,
    }


def preflight_blockers(action, compat, cuda_ext, arch_list, probe, overrides, mib_per_job):
    """What stops a build before its source is read: the CUDA chain and tools (each ``{"message", "fix"}``)
    and a parallelism set by hand that cannot fit the memory (a message or None). Nothing when this
    host does not build."""
    if action != "build":
        return {"blockers": [], "overrides_problem": None}
    return {
        "blockers": build_blockers({"needs_nvcc": cuda_ext}, compat, cuda_ext and not arch_list, probe["build_tools"]),
        "overrides_problem": overrides_memory_problem(overrides, probe["memory_available_mib"], cuda_ext, mib_per_job),
    }


def source_decision(setup_py, cpp_ext, cuda_ext, contrib, probe, compat, cuda_home, arch_list, mib_per_job, overrides):
    """The build of this setup.py: its plan, settings sized for the node, and the blockers of the plan's
    own CUDA needs (contrib extensions may need nvcc without apex_build_cuda_ext). ``cuda_home`` counts
    only when cuda_compat found nvcc there. Raises ValueError for a request the source cannot build."""
    try:
        plan = build_plan(parse_setup_py(setup_py), cpp_ext, cuda_ext, contrib)
    except ValueError as exc:
        raise ValueError("apex_build_plan: %s" % exc)
    home = cuda_home if (compat.get("nvcc") or {}).get("present") else ""
    try:
        settings = build_settings(plan, probe["cpus"], probe["memory_available_mib"], home, arch_list, mib_per_job, overrides)
    except ValueError as exc:
        raise ValueError("apex_build_settings: %s" % exc)
    return {"plan": plan, "settings": settings,
            "blockers": build_blockers(plan, compat, plan["needs_nvcc"] and not arch_list, probe["build_tools"])}


def entry_decision(key, shared_marker, node_entry, force_rebuild, controller_marker, url_marker):
    """The verified entry to install from, and where it is: the node's own (re-read from a shared cache
    folder when given, since the builder may have made it since; stale after a forced rebuild), else
    the controller's, else the URL's. ``{"entry_meta": dict or None, "entry_source": str or None}``."""
    if shared_marker is not None:
        local = cache_entry(shared_marker, key)["entry"]
    else:
        local = node_entry if not force_rebuild else None
    for source, entry in (("node", local), ("controller", cache_entry(controller_marker, key)["entry"]),
                          ("url", cache_entry(url_marker, key)["entry"])):
        if entry is not None:
            return {"entry_meta": entry, "entry_source": source}
    return {"entry_meta": None, "entry_source": None}


# ---------------------------------------------------------------------------
# What the planner says when it stops or warns, and what it derives between the stages.
# ---------------------------------------------------------------------------

def _truncated(text, length):
    """Jinja's truncate: the text whole when it is at most ``length`` (+5) long, else cut at a word and '...'."""
    text = str(text or "").strip()
    if len(text) <= length + 5:
        return text
    return text[:length - 3].rsplit(" ", 1)[0] + "..."


def legacy_apis_warning(version, legacy_apis_ref_value):
    """The deprecation warning of apex_build_legacy_apis."""
    return ("apex_build_legacy_apis pins APEX %s for apex.amp / apex.parallel, which upstream removed in May 2025 and no "
            "longer fixes. %sPort to torch.amp (autocast, GradScaler) and torch.nn.parallel.DistributedDataParallel."
            % (version, "This version is a commit, so the verify step checks that it has them. "
               if legacy_apis_ref_value is None else ""))


def probe_refusal(python, result):
    """Why the environment's Python did not run the probe (a registered command result)."""
    return ("apex_build_env_prefix: %s did not run (%s); point apex_build_env_prefix at a venv or conda env that has torch."
            % (python, _truncated(result.get("stderr") or result.get("msg") or "", 300)))


def torch_refusal(python, compat):
    """None when torch imports in the environment, else the refusal naming apex_build_env_prefix."""
    torch_info = compat.get("torch") or {}
    if torch_info.get("present"):
        return None
    return ("apex_build_env_prefix: torch is not importable with %s (%s). Install torch into the environment first; APEX "
            "builds against the torch it finds there." % (python, torch_info.get("error") or "not installed"))


def url_marker_refusal(url, result, host):
    """None when the cache URL answered 200 or 404 (a registered uri result), else the refusal naming it."""
    status = result.get("status", -1)
    if status in (200, 404):
        return None
    return ("apex_build_cache_url: %s answered %s from %s (%s). Every node must reach the cache URL: check the address, a "
            "proxy, apex_build_cache_url_username / apex_build_cache_url_password and apex_build_cache_url_validate_certs, "
            "or set apex_build_cache_url to \"\" to build without it."
            % (url, "nothing" if status == -1 else "HTTP %s" % status, host, _truncated(result.get("msg"), 200)))


def marker_warnings(markers, key):
    """One warning per place whose marker for ``key`` is not used (marker_states()' problems)."""
    return ["the %s cache entry for key %s is ignored: %s. A builder with this key makes and records a new one."
            % (place, key, state["problem"]) for place, state in sorted(markers.items()) if state["problem"]]


def wheel_travels(cache_shared, controller_cache_dir, url_upload):
    """Whether a wheel built on one host reaches the others: through a shared cache folder, the
    controller's cache or an uploadable cache URL. Without one every host builds its own."""
    return bool(cache_shared or controller_cache_dir or url_upload)


def chain_refusal(what, where, compat, cuda_home, blockers):
    """The refusal of a build that ``blockers`` stop, each message and then each fix."""
    torch_info = compat.get("torch") or {}
    nvcc = compat.get("nvcc") or {}
    return ("apex_build cannot build %s %s (torch %s, torch.version.cuda %s, nvcc %s at %s): %s Fix: %s"
            % (what, where, torch_info.get("version"), torch_info.get("cuda") or "none", nvcc.get("release") or "none",
               cuda_home, " ".join(item["message"] for item in blockers), " ".join(item["fix"] for item in blockers)))


def ninja_warning(env_prefix):
    return ("no ninja in %s/bin nor on PATH; torch's extension builder then compiles one file at a time and ignores "
            "MAX_JOBS. Install ninja into the environment for a parallel build." % env_prefix)


def top_setup_py(paths, tree_root):
    """The setup.py a build runs: the source folder's own, else the first found (archives may hold the tree in one top folder)."""
    own = "%s/src/setup.py" % tree_root
    return own if own in paths else sorted(paths)[0]


def build_failure(result, host, tree_root):
    """None when the background build (its async_status result) finished with rc 0, else the refusal with its last lines."""
    if result.get("finished") and result.get("rc", 1) == 0:
        return None
    lines = ("%s\n%s" % (result.get("stderr") or "", result.get("stdout") or "")).splitlines()[-30:]
    return ("pip wheel of APEX failed on %s (rc %s); full log %s/build.log. Last lines: %s"
            % (host, result.get("rc", "none"), tree_root, "\n".join(lines)))


def _seconds_between(start, end):
    """Seconds from a command result's ``start`` to its ``end`` (``%Y-%m-%d %H:%M:%S.%f``), one decimal."""
    stamp = "%Y-%m-%d %H:%M:%S.%f"
    return round((datetime.datetime.strptime(end, stamp) - datetime.datetime.strptime(start, stamp)).total_seconds(), 1)


def built_entry(key, key_inputs, wheel_path, wheel_stat, build, settings_env, host, build_result):
    """The marker of a wheel this host built: what installers and later runs trust about it."""
    return {
        "key": key,
        "inputs": key_inputs,
        "wheel": wheel_path.rsplit("/", 1)[-1],
        "wheel_sha256": wheel_stat["checksum"],
        "wheel_mib": round(wheel_stat["size"] / 1048576.0, 1),
        "required_modules": build["required_modules"],
        "optional_modules": build["optional_modules"],
        "build_env": settings_env,
        "built_on": host,
        "build_seconds": _seconds_between(build_result["start"], build_result["end"]),
    }
