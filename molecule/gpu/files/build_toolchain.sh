#!/bin/sh
# Test harness of the GPU scenario: what APEX was compiled with in the env PREFIX (its python and
# headers, the C++ compiler and nvcc torch's extension builder finds, and the libstdc++ the built
# kernels load), as one JSON object. Usage: build_toolchain.sh PREFIX CUDA_HOME
prefix=$1 cuda_home=$2
PATH="$prefix/bin:$cuda_home/bin:$PATH" "$prefix/bin/python" - "$prefix" "$cuda_home" <<'PY'
import importlib.util, json, os, re, shutil, subprocess, sys, sysconfig

prefix, cuda_home = sys.argv[1:3]


def first_line(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, check=False).stdout.strip().splitlines()
    except OSError as error:
        return str(error)
    return out[0] if out else ""


def last_line(argv):
    out = subprocess.run(argv, capture_output=True, text=True, check=False).stdout.strip().splitlines()
    return out[-1] if out else ""


kernel = importlib.util.find_spec("fused_layer_norm_cuda")
libstdcxx = None
if kernel and kernel.origin:
    # The libstdc++ this process maps once torch and the kernel are loaded: the one the kernel runs with.
    import torch  # noqa: F401  pylint: disable=unused-import
    importlib.import_module("fused_layer_norm_cuda")
    with open("/proc/self/maps") as maps:
        mapped = sorted({line.split()[-1] for line in maps if "libstdc++" in line and line.split()[-1].startswith("/")})
    libstdcxx = mapped[0] if mapped else None
glibcxx = []
if libstdcxx:
    with open(os.path.realpath(libstdcxx), "rb") as handle:
        glibcxx = sorted(set(re.findall(rb"GLIBCXX_(\d+\.\d+(?:\.\d+)?)", handle.read())),
                         key=lambda v: tuple(int(p) for p in v.split(b".")))
cxx = os.environ.get("CXX") or shutil.which("c++")
print(json.dumps({
    "python": sys.executable,
    "python_version": sys.version.split()[0],
    "python_include": sysconfig.get_paths()["include"],
    "python_h_present": os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")),
    "cxx": cxx,
    "cxx_version": first_line([cxx, "--version"]) if cxx else None,
    "nvcc": os.path.join(cuda_home, "bin", "nvcc"),
    "nvcc_version": last_line([os.path.join(cuda_home, "bin", "nvcc"), "--version"]),
    "kernel": kernel.origin if kernel else None,
    "libstdcxx_loaded": libstdcxx,
    "libstdcxx_newest_glibcxx": glibcxx[-1].decode() if glibcxx else None,
    "env_has_own_libstdcxx": os.path.exists(os.path.join(prefix, "lib", "libstdc++.so.6")),
}, sort_keys=True))
PY
