"""Run by the target environment's Python (stdlib and torch only): ``probe`` or ``verify`` APEX.

probe:  what the cache key and the install decision need (Python tag, platform, installed apex, the
        node cache's entries of the installed wheel), the environment's state digest (env_proof.py),
        the proof an earlier verify recorded for it, and the CUDA toolkit as cuda_compat would find it.
verify: every requested compiled extension imports (torch first: APEX's modules link libc10),
        kernels give the same results as torch, and which APIs this APEX has. One JSON line.
"""

import glob
import importlib
import importlib.util
import json
import os
import shutil
import sys
import sysconfig

# plugins/module_utils/probe/env_proof.py, run ahead of this text (vars/main.yml).
from aistack_env_proof import env_state, file_digest, recorded_proof

LEGACY_APIS = ("apex.amp", "apex.parallel")
CURRENT_APIS = ("apex.optimizers", "apex.normalization")
# Distributions whose files' size and mtime count in the environment's state: APEX's compiled kernels.
WATCHED = ("apex",)


def _installed_apex():
    try:
        from importlib import metadata
        dist = metadata.distribution("apex")
    except Exception:
        return {"present": False}
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    return {"present": True, "version": dist.version,
            "wheel_sha256": ((direct.get("archive_info") or {}).get("hashes") or {}).get("sha256"),
            "url": direct.get("url")}


def _memory_available_mib():
    """MemAvailable, capped by a cgroup v2 memory limit (containers, batch jobs)."""
    available = None
    with open("/proc/meminfo") as handle:
        for line in handle:
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) // 1024
    try:
        with open("/sys/fs/cgroup/memory.max") as handle:
            limit = handle.read().strip()
        with open("/sys/fs/cgroup/memory.current") as handle:
            used = int(handle.read().strip())
        if limit != "max":
            available = min(available, (int(limit) - used) // (1024 * 1024))
    except (OSError, ValueError):
        pass
    return available


def _version(distribution):
    try:
        from importlib import metadata
        return metadata.version(distribution)
    except Exception:
        return None


def _entries_of_wheel(cache_dir, marker_name, wheel_sha256):
    """The node cache's entries whose marker names the installed wheel: ``{key: {"marker": text,
    "wheel_sha256": the sha256 of the entry's wheel file as it is now}}``. A run whose key is among
    them reads neither the marker nor the wheel again; the markers are judged by the role's plan."""
    entries = {}
    if not (cache_dir and marker_name and wheel_sha256):
        return entries
    try:
        keys = sorted(os.listdir(cache_dir))
    except OSError:
        return entries
    for key in keys:
        try:
            with open(os.path.join(cache_dir, key, marker_name)) as handle:
                text = handle.read()
            marker = json.loads(text)
        except (IOError, OSError, ValueError):
            continue
        if not isinstance(marker, dict) or marker.get("wheel_sha256") != wheel_sha256:
            continue
        wheel = marker.get("wheel")
        if not isinstance(wheel, str) or os.sep in wheel:
            continue
        try:
            found_sha256 = file_digest(os.path.join(cache_dir, key, wheel))
        except (IOError, OSError):
            found_sha256 = ""
        entries[key] = {"marker": text, "wheel_sha256": found_sha256}
    return entries


def _file_identity(path):
    """A file by what changes when it is replaced: its real path, size and mtime; None when there is none."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return [os.path.realpath(path), stat.st_size, stat.st_mtime_ns]


def toolkit(cuda_home=""):
    """What cuda_compat reads on the node besides this environment, the driver and the GPUs, as it is now:
    each CUDA home it may take (its cuda_home option, CUDA_HOME, CUDA_PATH, the one of nvcc on the PATH it
    searches, /usr/local/cuda) with the folder's real path and its nvcc, and the forward-compat libraries.
    A recorded cuda_compat report stands for a new one only while this reads the same."""
    # cuda_compat looks nvcc up with AnsibleModule.get_bin_path, which also searches the sbin folders.
    on_path = shutil.which("nvcc", path=os.pathsep.join([os.environ.get("PATH", ""), "/sbin", "/usr/sbin", "/usr/local/sbin"]))
    homes = [cuda_home, os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""),
             os.path.dirname(os.path.dirname(on_path)) if on_path else "", "/usr/local/cuda"]
    return {
        "homes": [[home, os.path.realpath(home) if home and os.path.isdir(home) else None,
                   _file_identity(os.path.join(home, "bin", "nvcc")) if home else None] for home in homes],
        "forward_compat": sorted(glob.glob("/usr/local/cuda-*/compat/libcuda.so*")),
    }


def probe(proof_path="", python="", cache_dir="", marker_name="", cuda_home=""):
    state = env_state(WATCHED)
    installed = _installed_apex()
    # The build runs with the environment's bin first on PATH, as if it were activated: torch's
    # extension builder looks for ninja there.
    build_path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", os.defpath)])
    return {
        "build_path": build_path,
        "build_tools": {"setuptools": _version("setuptools"), "ninja": shutil.which("ninja", path=build_path)},
        "cpus": len(os.sched_getaffinity(0)),
        "memory_available_mib": _memory_available_mib(),
        "python_tag": "%s%d%d%s" % ("cp" if sys.implementation.name == "cpython" else sys.implementation.name,
                                    sys.version_info[0], sys.version_info[1], getattr(sys, "abiflags", "")),
        "platform": sysconfig.get_platform().replace("-", "_").replace(".", "_"),
        "installed": installed,
        "cache_entries": _entries_of_wheel(cache_dir, marker_name, installed.get("wheel_sha256")),
        "env_state": state,
        "proof": recorded_proof(proof_path, python, state) if proof_path else None,
        "toolkit": toolkit(cuda_home),
    }


def _module_available(name):
    try:
        return importlib.util.find_spec(name) is not None
    except Exception:
        return False


def _check_flatten(torch, apex_c):
    tensors = [torch.arange(6, dtype=torch.float32).reshape(2, 3), torch.ones(4)]
    flat = apex_c.flatten(tensors)
    back = apex_c.unflatten(flat, tensors)
    ok = torch.equal(flat, torch.cat([t.reshape(-1) for t in tensors])) and all(torch.equal(a, b) for a, b in zip(back, tensors))
    return {"ok": bool(ok)}


def _check_fused_adam(torch, tolerance):
    from apex.optimizers import FusedAdam
    torch.manual_seed(0)
    reference = [torch.randn(1024, 256, device="cuda", requires_grad=True) for index in range(4)]
    fused = [p.detach().clone().requires_grad_(True) for p in reference]
    optimizers = [torch.optim.Adam(reference, lr=1e-3), FusedAdam(fused, lr=1e-3)]
    for grads in [[torch.randn_like(p) for p in reference] for step in range(5)]:
        for params in (reference, fused):
            for param, grad in zip(params, grads):
                param.grad = grad.clone()
        for optimizer in optimizers:
            optimizer.step()
    diff = max(float((a - b).abs().max()) for a, b in zip(reference, fused))
    return {"ok": diff <= tolerance, "max_abs_diff": diff, "tolerance": tolerance}


def _check_fused_layer_norm(torch, tolerance):
    from apex.normalization import FusedLayerNorm
    torch.manual_seed(0)
    x = torch.randn(64, 1024, device="cuda")
    fused = FusedLayerNorm(1024).cuda()
    with torch.no_grad():
        fused.weight.normal_()
        fused.bias.normal_()
    reference = torch.nn.functional.layer_norm(x, (1024,), fused.weight, fused.bias, fused.eps)
    diff = float((fused(x) - reference).abs().max())
    return {"ok": diff <= tolerance, "max_abs_diff": diff, "tolerance": tolerance}


def _run(checks, name, function, *args):
    try:
        checks[name] = function(*args)
    except Exception as exc:
        checks[name] = {"ok": False, "error": "%s: %s" % (type(exc).__name__, exc)}


def verify(request):
    import torch  # before any APEX extension: they link libc10 from torch's lib folder
    report = {"apex": _installed_apex(), "modules": {}, "apis": {}, "checks": {}, "problems": [],
              "cuda_available": bool(torch.cuda.is_available())}
    for name in request["required_modules"] + request["optional_modules"]:
        if not _module_available(name):
            report["modules"][name] = "missing"
            continue
        try:
            importlib.import_module(name)
            report["modules"][name] = "ok"
        except Exception as exc:
            report["modules"][name] = "error: %s: %s" % (type(exc).__name__, exc)
    for name in LEGACY_APIS + CURRENT_APIS:
        report["apis"][name] = _module_available(name)
    broken = [name for name in request["required_modules"] if report["modules"][name] != "ok"]
    if not report["apex"]["present"] or not _module_available("apex"):
        report["problems"].append("the apex package is not installed in %s" % sys.prefix)
    elif broken and len(broken) == len(request["required_modules"]):
        report["problems"].append("Python-only APEX install: none of the compiled extensions (%s) is there; it was built "
                                  "without APEX_CPP_EXT/APEX_CUDA_EXT or their flags" % ", ".join(broken))
    else:
        # An optional extension may be absent (its build depends on the toolkit), but one that is there must load.
        broken += [name for name in request["optional_modules"] if report["modules"][name].startswith("error")]
        if broken:
            report["problems"].append("compiled extensions that do not import: %s" % "; ".join(
                "%s (%s)" % (name, report["modules"][name]) for name in broken))
    if report["modules"].get("apex_C") == "ok":
        _run(report["checks"], "apex_C.flatten", _check_flatten, torch, importlib.import_module("apex_C"))
    gpu_kernels = [name for name in ("amp_C", "fused_layer_norm_cuda") if name in request["required_modules"]]
    report["skipped"] = ["%s against torch: no GPU visible to torch" % ", ".join(gpu_kernels)] if (
        request["numerics"] and gpu_kernels and not report["cuda_available"]) else []
    if request["numerics"] and report["cuda_available"]:
        if "amp_C" in request["required_modules"]:
            _run(report["checks"], "FusedAdam", _check_fused_adam, torch, request["tolerance"])
        if "fused_layer_norm_cuda" in request["required_modules"]:
            _run(report["checks"], "FusedLayerNorm", _check_fused_layer_norm, torch, request["tolerance"])
    for name, result in sorted(report["checks"].items()):
        if not result["ok"]:
            report["problems"].append("%s does not match torch: %s" % (name, result.get("error") or result))
    if request["legacy_apis"] and not all(report["apis"][name] for name in LEGACY_APIS):
        report["problems"].append("apex_build_legacy_apis is set but this APEX lacks %s (removed after tag 25.05)" % " and ".join(
            name for name in LEGACY_APIS if not report["apis"][name]))
    report["env_state"] = env_state(WATCHED)
    return report


if __name__ == "__main__":
    if sys.argv[1] == "probe":
        print(json.dumps(probe(*sys.argv[2:7])))
    else:
        print(json.dumps(verify(json.loads(sys.argv[2]))))
