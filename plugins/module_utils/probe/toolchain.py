# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The CUDA toolkit and the Python environment: CUDA home and nvcc, forward-compat libraries,
and the torch/APEX probe run by the target interpreter.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import json
import os

from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.nvidia_parsers import parse_nvcc_version
from ansible_collections.aistack.gpu_node.plugins.module_utils.versions import major_minor


def resolve_cuda_home(environ, which, exists):
    """CUDA home the way torch.utils.cpp_extension finds it.

    Order: CUDA_HOME, CUDA_PATH, dirname(dirname(which nvcc)), /usr/local/cuda if it exists.
    ``which(name)`` returns a path or None; ``exists(path)`` tests a path. Returns
    ``(cuda_home, how)`` or ``(None, None)``.
    """
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        if environ.get(variable):
            return environ[variable], variable
    nvcc = which("nvcc")
    if nvcc:
        return os.path.dirname(os.path.dirname(nvcc)), "nvcc on PATH"
    if exists("/usr/local/cuda"):
        return "/usr/local/cuda", "/usr/local/cuda"
    return None, None


def collect_nvcc(runner, cuda_home, how):
    """nvcc of a CUDA home: ``{"present", "cuda_home", "found_by", "path", "release", "version", "error"}``."""
    result = {"present": False, "cuda_home": cuda_home, "found_by": how, "path": None,
              "release": None, "version": None, "error": None}
    if not cuda_home:
        result["error"] = "no CUDA home: CUDA_HOME and CUDA_PATH unset, no nvcc on PATH, no /usr/local/cuda"
        return result
    nvcc = os.path.join(cuda_home, "bin", "nvcc")
    rc, out, err = runner([nvcc, "--version"])
    parsed = parse_nvcc_version(out or "") if rc == 0 else None
    if not parsed:
        result["error"] = "%s --version failed: %s" % (nvcc, (err or out or "").strip() or "exit status %d" % rc)
        return result
    result.update(present=True, path=nvcc, release=parsed["release"], version=parsed["version"])
    return result


def find_forward_compat(root, cuda_version):
    """Installed cuda-compat libraries for ``cuda_version`` (``/usr/local/cuda-X.Y/compat``)."""
    if not cuda_version:
        return None
    directory = "/usr/local/cuda-%s/compat" % major_minor(cuda_version)
    libraries = glob.glob(os.path.join(root, directory.lstrip("/"), "libcuda.so*"))
    return {"path": directory, "present": bool(libraries)}


# Run by the target interpreter with -c: no ansible imports, stdlib only, one JSON line.
PYTHON_PROBE = r'''
import importlib.util, json, sys
report = {"python_version": "%d.%d.%d" % tuple(sys.version_info[:3]), "executable": sys.executable}
torch_info = {"present": False}
try:
    import torch
except Exception as exc:
    torch_info["error"] = "%s: %s" % (type(exc).__name__, exc)
else:
    torch_info.update(present=True, version=torch.__version__, cuda=getattr(torch.version, "cuda", None))
    try:
        torch_info["cudnn"] = torch.backends.cudnn.version()
    except Exception:
        torch_info["cudnn"] = None
    try:
        torch_info["cuda_available"] = bool(torch.cuda.is_available())
    except Exception as exc:
        torch_info["cuda_available"] = False
        torch_info["cuda_error"] = str(exc)
    try:
        torch_info["arch_list"] = list(torch.cuda.get_arch_list())
        torch_info["arch_list_source"] = "torch.cuda.get_arch_list"
        if not torch_info["arch_list"]:
            flags = torch._C._cuda_getArchFlags()
            torch_info["arch_list"] = flags.split() if flags else []
            torch_info["arch_list_source"] = "torch._C._cuda_getArchFlags"
    except Exception:
        torch_info.setdefault("arch_list", [])
report["torch"] = torch_info
extensions = {}
for name in EXTENSIONS:
    try:
        extensions[name] = importlib.util.find_spec(name) is not None
    except Exception:
        extensions[name] = False
try:
    apex_present = importlib.util.find_spec("apex") is not None
except Exception:
    apex_present = False
report["apex"] = {"present": apex_present, "extensions": extensions}
print(json.dumps(report))
'''


APEX_EXTENSIONS = ("apex_C", "amp_C", "syncbn", "fused_layer_norm_cuda", "mlp_cuda", "fused_dense_cuda")


def python_probe_script():
    return "EXTENSIONS = %r\n%s" % (list(APEX_EXTENSIONS), PYTHON_PROBE)


def format_cudnn_version(number):
    """torch.backends.cudnn.version(): 91900 -> "9.19.0" (cuDNN 9), 8907 -> "8.9.7" (cuDNN 8)."""
    if not number:
        return None
    number = int(number)
    if number >= 90000:
        return "%d.%d.%d" % (number // 10000, (number % 10000) // 100, number % 100)
    return "%d.%d.%d" % (number // 1000, (number % 1000) // 100, number % 100)


def collect_python(runner, python):
    """Run the probe with ``python``. Returns the probe dict, with ``error`` when it did not run."""
    rc, out, err = runner([python, "-c", python_probe_script()])
    for line in reversed((out or "").splitlines()):
        if line.startswith("{"):
            try:
                report = json.loads(line)
            except ValueError:
                break
            torch_info = report.get("torch", {})
            torch_info["cudnn_version"] = format_cudnn_version(torch_info.get("cudnn"))
            report["interpreter"] = python
            report["error"] = None
            return report
    message = (err or out or "").strip() or "exit status %d" % rc
    return {"interpreter": python, "error": "%s did not run the probe: %s" % (python, message[-2000:]),
            "torch": {"present": False}, "apex": {"present": False, "extensions": {}}}
