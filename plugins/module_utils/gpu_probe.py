# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Read NVIDIA GPU, driver, nvcc and torch state.

Parsers are pure functions of command output or file text. Collectors take a ``runner``
(``runner(argv) -> (rc, stdout, stderr)``, rc 127 when the program is missing), a filesystem
``root`` and optionally an NVML module, so tests feed them recorded outputs and fake trees.
Sources are tried in order NVML, nvidia-smi, /proc + sysfs: a GPU without a working driver is
reported as a state, never raised.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import json
import os
import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.cuda_tables import GPU_COMPUTE_CAPABILITY, PARSING

NVIDIA_VENDOR_ID = "0x10de"
# VGA controller and 3D controller; data-center GPUs are 3D controllers.
GPU_PCI_CLASSES = ("0x0300", "0x0302")

QUERY_GPU_FIELDS = (
    "index", "name", "uuid", "driver_version", "compute_cap", "memory.total",
    "pci.bus_id", "persistence_mode", "mig.mode.current",
)

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_VERSION = re.compile(r"^\s*(\d+(?:\.\d+)*)\s*$")
_MISMATCH = "Driver/library version mismatch"
_NVML_LIBRARY_VERSION = re.compile(r"NVML library version:\s*(\d+(?:\.\d+)+)")
_TOPO_AFFINITY_COLUMNS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_NVML_LIBRARY_DIRS = (
    "usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "usr/lib64", "usr/lib",
    "usr/local/nvidia/lib64",
)


# ---------------------------------------------------------------------------
# Versions
# ---------------------------------------------------------------------------

def version_tuple(version):
    """``"580.159.04"`` -> ``(580, 159, 4)``; ``"550.135"`` -> ``(550, 135)``. Raises ValueError."""
    if isinstance(version, (tuple, list)):
        return tuple(int(part) for part in version)
    match = _VERSION.match(str(version))
    if not match:
        raise ValueError("not a dotted numeric version: %r" % (version,))
    return tuple(int(part) for part in match.group(1).split("."))


_COMPARATORS = {
    "==": lambda a, b: a == b, "eq": lambda a, b: a == b,
    "!=": lambda a, b: a != b, "ne": lambda a, b: a != b,
    "<": lambda a, b: a < b, "lt": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, "le": lambda a, b: a <= b,
    ">": lambda a, b: a > b, "gt": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "ge": lambda a, b: a >= b,
}


def compare_versions(left, operator, right):
    """Compare two dotted versions as integer tuples; missing parts count as 0."""
    if operator not in _COMPARATORS:
        raise ValueError("unknown comparison operator %r; use one of %s" % (operator, ", ".join(sorted(_COMPARATORS))))
    a, b = version_tuple(left), version_tuple(right)
    width = max(len(a), len(b))
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return _COMPARATORS[operator](a, b)


def major_minor(version):
    """``"12.4.1"`` -> ``"12.4"``; None stays None."""
    if version is None:
        return None
    parts = version_tuple(version)
    return "%d.%d" % (parts[0], parts[1] if len(parts) > 1 else 0)


# ---------------------------------------------------------------------------
# Parsers
# ---------------------------------------------------------------------------

def strip_ansi(text):
    return _ANSI_ESCAPE.sub("", text)


def _unavailable(value):
    return value in PARSING["query_gpu_unavailable_tokens"] or value == ""


def parse_query_gpu_csv(text, fields=None):
    """Parse ``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]``.

    With ``fields`` None the first line is the header. Unavailable values ("[N/A]",
    "[Not Supported]", ...) become None. Returns a list of dicts keyed by field name.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if fields is None:
        if not lines:
            return []
        fields = [re.sub(r"\s*\[.*\]$", "", name.strip()) for name in lines[0].split(",")]
        lines = lines[1:]
    rows = []
    for line in lines:
        values = [value.strip() for value in line.split(",")]
        if len(values) != len(fields):
            raise ValueError("nvidia-smi query line has %d values for %d fields: %r" % (len(values), len(fields), line))
        rows.append(dict((name, None if _unavailable(value) else value) for name, value in zip(fields, values)))
    return rows


def parse_proc_driver_version(text):
    """``/proc/driver/nvidia/version`` -> ``{"version", "flavour"}`` (flavour open|proprietary)."""
    match = re.search(PARSING["proc_driver_version"], text)
    if not match:
        return {"version": None, "flavour": None}
    flavour = "open" if PARSING["proc_driver_open_flavor"] in text else "proprietary"
    return {"version": match.group(1), "flavour": flavour}


def parse_smi_banner(text):
    """The table header of plain ``nvidia-smi`` -> driver version and highest CUDA it supports."""
    driver = re.search(PARSING["nvidia_smi_banner_driver"], text)
    cuda = re.search(PARSING["nvidia_smi_banner_cuda"], text)
    return {
        "driver_version": driver.group(1) if driver else None,
        "cuda_version": "%s.%s" % cuda.groups() if cuda else None,
    }


def parse_mismatch(text):
    """Recognise "Failed to initialize NVML: Driver/library version mismatch" output."""
    if _MISMATCH.lower() not in text.lower():
        return {"mismatch": False, "userspace_version": None}
    library = _NVML_LIBRARY_VERSION.search(text)
    return {"mismatch": True, "userspace_version": library.group(1) if library else None}


def parse_nvcc_version(text):
    """``nvcc --version`` -> ``{"release": "13.0", "version": "13.0.88"}`` or None."""
    match = re.search(PARSING["nvcc_release"], text)
    if not match:
        return None
    groups = match.groups()
    return {"release": "%s.%s" % groups[:2], "version": "%s.%s.%s" % groups[2:]}


def parse_cpulist(text):
    """Kernel cpulist (``"0-55,112-167"``) -> sorted list of ints; empty or "N/A" -> []."""
    cpus = set()
    for part in (text or "").strip().split(","):
        part = part.strip()
        if not part or not part[0].isdigit():
            continue
        if "-" in part:
            first, last = part.split("-", 1)
            cpus.update(range(int(first), int(last) + 1))
        else:
            cpus.add(int(part))
    return sorted(cpus)


def _topo_value(value):
    return None if value in (None, "", "N/A") else value


def parse_topo_matrix(text):
    """Parse ``nvidia-smi topo -m`` (escape codes allowed, tab or space aligned).

    Returns ``{"devices": [...], "links": {row: {column: link}}, "gpus": [...], "nics": {...}}``;
    each GPU carries ``cpu_affinity`` (text), ``cpus`` (ints), ``numa_affinity`` and
    ``gpu_numa_id`` (int or None).
    """
    lines = strip_ansi(text).splitlines()
    header_at = next((i for i, line in enumerate(lines) if re.search(r"\bGPU0\b", line)), None)
    if header_at is None:
        return {"devices": [], "links": {}, "gpus": [], "nics": {}}
    header = lines[header_at]
    affinity_columns = [name for name in _TOPO_AFFINITY_COLUMNS if name in header]
    first_affinity = min([header.index(name) for name in affinity_columns] or [len(header)])
    devices = header[:first_affinity].split()

    links, gpus = {}, []
    for line in lines[header_at + 1:]:
        tokens = line.split()
        if not tokens or tokens[0] not in devices:
            break
        row = tokens[0]
        # Affinity values are read from the end of the row: they are single tokens, and a paste
        # that runs two link cells together ("NODENODE") then still gives the right affinity.
        extras = {}
        if row.startswith("GPU") and affinity_columns and len(tokens) > len(affinity_columns):
            extras = dict(zip(affinity_columns, tokens[-len(affinity_columns):]))
            tokens = tokens[:-len(affinity_columns)]
        cells = tokens[1:1 + len(devices)]
        links[row] = dict((column, cell) for column, cell in zip(devices, cells) if column != row)
        if row.startswith("GPU"):
            cpu_affinity = _topo_value(extras.get("CPU Affinity"))
            numa = _topo_value(extras.get("NUMA Affinity"))
            gpu_numa = _topo_value(extras.get("GPU NUMA ID"))
            gpus.append({
                "name": row,
                "index": int(row[3:]),
                "cpu_affinity": cpu_affinity,
                "cpus": parse_cpulist(cpu_affinity),
                "numa_affinity": int(numa) if numa and numa.isdigit() else None,
                "gpu_numa_id": int(gpu_numa) if gpu_numa and gpu_numa.isdigit() else None,
            })
    nics = dict(re.findall(r"^\s*(NIC\d+):\s*(\S+)\s*$", "\n".join(lines), re.MULTILINE))
    return {"devices": devices, "links": links, "gpus": gpus, "nics": nics}


def normalize_pci_bus_id(bus_id):
    """``"00000000:00:06.0"`` (nvidia-smi/NVML) and ``"0000:00:06.0"`` (sysfs) -> ``"0000:00:06.0"``."""
    if not bus_id:
        return None
    parts = bus_id.strip().lower().split(":")
    if len(parts) == 3:
        parts[0] = parts[0][-4:].rjust(4, "0")
    return ":".join(parts)


def _on_off(value):
    if value is None:
        return None
    return value.strip().lower() in ("enabled", "on", "1", "true")


# ---------------------------------------------------------------------------
# Collectors
# ---------------------------------------------------------------------------

def read_root_file(root, path):
    """Text of ``path`` under ``root`` (a test's fake sysfs/procfs, or "/"), or None when unreadable."""
    try:
        with open(os.path.join(root, path.lstrip("/"))) as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def scan_pci(root="/"):
    """NVIDIA display/3D controllers from sysfs, whatever driver (if any) is bound."""
    devices = []
    base = os.path.join(root, "sys/bus/pci/devices")
    for path in sorted(glob.glob(os.path.join(base, "*"))):
        vendor = (read_root_file(path, "vendor") or "").strip().lower()
        pci_class = (read_root_file(path, "class") or "").strip().lower()
        if vendor != NVIDIA_VENDOR_ID or not pci_class.startswith(GPU_PCI_CLASSES):
            continue
        numa = (read_root_file(path, "numa_node") or "-1").strip()
        driver_link = os.path.join(path, "driver")
        devices.append({
            "pci_bus_id": normalize_pci_bus_id(os.path.basename(path)),
            "vendor_id": vendor,
            "device_id": (read_root_file(path, "device") or "").strip().lower() or None,
            "class": pci_class,
            "numa_node": int(numa) if re.match(r"^-?\d+$", numa) else -1,
            "local_cpulist": (read_root_file(path, "local_cpulist") or "").strip() or None,
            "kernel_driver": os.path.basename(os.readlink(driver_link)) if os.path.islink(driver_link) else None,
        })
    return devices


def read_kernel_module(root="/"):
    """Loaded kernel module version and flavour; None values when no module is loaded."""
    proc = read_root_file(root, "/proc/driver/nvidia/version")
    if proc:
        parsed = parse_proc_driver_version(proc)
        if parsed["version"]:
            return parsed
    sys_version = (read_root_file(root, "/sys/module/nvidia/version") or "").strip()
    return {"version": sys_version or None, "flavour": None}


def find_nvml_library_version(root="/"):
    """Version of the installed userspace NVML from its file name (libnvidia-ml.so.580.159.04)."""
    versions = []
    for directory in _NVML_LIBRARY_DIRS:
        for path in glob.glob(os.path.join(root, directory, "libnvidia-ml.so.*.*")):
            suffix = os.path.basename(path)[len("libnvidia-ml.so."):]
            try:
                versions.append((version_tuple(suffix), suffix))
            except ValueError:
                continue
    return max(versions)[1] if versions else None


def _nvml_text(value):
    return value.decode() if isinstance(value, bytes) else value


def collect_nvml(nvml):
    """GPUs and driver through NVML. Returns ``(gpus, driver, error)``; error is a string or None."""
    try:
        nvml.nvmlInit()
    except Exception as exc:  # pylint: disable=broad-except  # NVMLError subclasses vary by version
        return None, None, "NVML: %s" % exc
    try:
        driver = {"userspace_version": _nvml_text(nvml.nvmlSystemGetDriverVersion()), "cuda_version": None}
        cuda = nvml.nvmlSystemGetCudaDriverVersion_v2()
        driver["cuda_version"] = "%d.%d" % (cuda // 1000, (cuda % 1000) // 10)
        gpus = []
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            gpus.append({
                "index": index,
                "name": _nvml_text(nvml.nvmlDeviceGetName(handle)),
                "uuid": _nvml_text(nvml.nvmlDeviceGetUUID(handle)),
                "compute_capability": "%d.%d" % tuple(nvml.nvmlDeviceGetCudaComputeCapability(handle)),
                "memory_total_mib": nvml.nvmlDeviceGetMemoryInfo(handle).total // (1024 * 1024),
                "pci_bus_id": normalize_pci_bus_id(_nvml_text(nvml.nvmlDeviceGetPciInfo(handle).busId)),
                "persistence_mode": bool(nvml.nvmlDeviceGetPersistenceMode(handle)),
                "mig_mode": _nvml_optional(lambda h=handle: bool(nvml.nvmlDeviceGetMigMode(h)[0])),
            })
        return gpus, driver, None
    except Exception as exc:  # pylint: disable=broad-except
        return None, None, "NVML: %s" % exc
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # pylint: disable=broad-except
            pass


def _nvml_optional(call):
    """MIG queries raise "Not Supported" on GPUs without MIG: that is None, not a failure."""
    try:
        return call()
    except Exception:  # pylint: disable=broad-except
        return None


def _smi_gpu(row, index):
    memory = row.get("memory.total")
    return {
        "index": int(row["index"]) if row.get("index") else index,
        "name": row.get("name"),
        "uuid": row.get("uuid"),
        "compute_capability": row.get("compute_cap"),
        "memory_total_mib": int(float(memory)) if memory else None,
        "pci_bus_id": normalize_pci_bus_id(row.get("pci.bus_id")),
        "persistence_mode": _on_off(row.get("persistence_mode")),
        "mig_mode": _on_off(row.get("mig.mode.current")),
    }


def collect_nvidia_smi(runner):
    """GPUs and driver through nvidia-smi. Returns ``(gpus, driver, error)``."""
    fields = list(QUERY_GPU_FIELDS)
    rc, out, err = runner(["nvidia-smi", "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
    if rc == 127:
        return None, None, "nvidia-smi: not found"
    text = (out or "") + (err or "")
    mismatch = parse_mismatch(text)
    if mismatch["mismatch"]:
        return None, {"mismatch": True, "userspace_version": mismatch["userspace_version"]}, "nvidia-smi: " + _MISMATCH
    if rc != 0 and "compute_cap" in text:
        # Drivers before R510 do not know the field; the name table fills it in later.
        fields.remove("compute_cap")
        rc, out, err = runner(["nvidia-smi", "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
    if rc != 0:
        return None, None, "nvidia-smi: %s" % ((err or out or "").strip() or "exit status %d" % rc)
    rows = parse_query_gpu_csv(out, fields)
    gpus = [_smi_gpu(row, index) for index, row in enumerate(rows)]
    driver = {"userspace_version": rows[0].get("driver_version") if rows else None, "cuda_version": None}
    rc, banner, _err = runner(["nvidia-smi"])
    if rc == 0:
        driver["cuda_version"] = parse_smi_banner(banner)["cuda_version"]
    return gpus, driver, None


def module_runner(module, search_dirs=("/usr/bin", "/usr/local/nvidia/bin", "/usr/local/cuda/bin")):
    """A collector runner on top of ``AnsibleModule.run_command``; rc 127 when the program is missing."""
    def runner(argv):
        program = argv[0]
        if not os.path.isabs(program):
            program = module.get_bin_path(program, opt_dirs=list(search_dirs))
        if not program or not os.path.exists(program):
            return 127, "", "%s: not found" % argv[0]
        return module.run_command([program] + list(argv[1:]), environ_update={"LC_ALL": "C"})
    return runner


def import_nvml():
    """The ``pynvml`` module from nvidia-ml-py, or None when it is not installed."""
    try:
        import pynvml  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    return pynvml


def collect_gpu_facts(runner, root="/", nvml=None):
    """Build the ``aistack_gpu`` facts. ``nvml`` is a pynvml-like module or None."""
    pci_devices = scan_pci(root)
    kernel = read_kernel_module(root)
    messages = []
    gpus, driver, source = None, None, "none"
    mismatch_seen = False

    if nvml is not None:
        gpus, driver, error = collect_nvml(nvml)
        if error:
            messages.append(error)
            mismatch_seen = "mismatch" in error.lower()
        else:
            source = "nvml"
    if gpus is None:
        gpus, smi_driver, error = collect_nvidia_smi(runner)
        if error:
            messages.append(error)
            driver = smi_driver
            mismatch_seen = mismatch_seen or bool(smi_driver and smi_driver.get("mismatch"))
        else:
            source, driver = "nvidia-smi", smi_driver

    driver = driver or {}
    userspace = driver.get("userspace_version")
    if mismatch_seen and not userspace:
        userspace = find_nvml_library_version(root)
    by_bus_id = dict((device["pci_bus_id"], device) for device in pci_devices)
    if gpus is None:
        gpus = []
        if pci_devices:
            source = "sysfs"
            gpus = [_pci_gpu(index, device) for index, device in enumerate(pci_devices)]
    for gpu in gpus:
        gpu["numa_node"] = by_bus_id.get(gpu["pci_bus_id"], {}).get("numa_node", -1)
        gpu["compute_capability_from"] = "driver" if gpu["compute_capability"] else None
        if not gpu["compute_capability"] and gpu["name"]:
            known = lookup_compute_capability(gpu["name"])
            if known:
                gpu["compute_capability"] = known["cc"]
                gpu["compute_capability_from"] = "name table (%s)" % known["status"]

    loaded = kernel["version"]
    mismatch = mismatch_seen or bool(loaded and userspace and version_tuple(loaded) != version_tuple(userspace))
    facts = {
        "state": _state(pci_devices, gpus, loaded, mismatch, source),
        "source": source,
        "gpu_count": len(gpus),
        "gpus": gpus,
        "driver": {
            "version": loaded or userspace,
            "kernel_module_flavour": kernel["flavour"],
            "cuda_version": driver.get("cuda_version"),
            "loaded_version": loaded,
            "userspace_version": userspace,
            "mismatch": mismatch,
        },
        "pci_devices": pci_devices,
        "messages": messages,
    }
    return facts


def _bare_gpu_name(name):
    return re.sub(r"^(NVIDIA\s+)?(Tesla\s+)?", "", name.strip(), flags=re.IGNORECASE)


def lookup_compute_capability(name):
    """Table entry (``{"cc", "status", "source"}``) for a product name such as "NVIDIA H200", or None.

    "GeForce RTX 40xx" in the table stands for a series; a match must end at a word boundary
    so that "A10" does not match "A100". The longest matching table name wins.
    """
    bare = _bare_gpu_name(name)
    best_name, best_entry = "", None
    for table_name, entry in GPU_COMPUTE_CAPABILITY.items():
        pattern = re.escape(_bare_gpu_name(table_name)).replace("xx", r"\d\d")
        if re.match(pattern + r"(?![A-Za-z0-9])", bare, re.IGNORECASE) and len(table_name) > len(best_name):
            best_name, best_entry = table_name, entry
    return best_entry


def _pci_gpu(index, device):
    return {
        "index": index, "name": None, "uuid": None, "compute_capability": None, "memory_total_mib": None,
        "pci_bus_id": device["pci_bus_id"], "persistence_mode": None, "mig_mode": None,
    }


def _state(pci_devices, gpus, loaded, mismatch, source):
    if not pci_devices and not gpus:
        return "no_gpu"
    if mismatch:
        return "mismatch"
    if not loaded and source in ("sysfs", "none"):
        return "gpu_no_driver"
    if source in ("sysfs", "none"):
        return "driver_error"
    return "ok"


# ---------------------------------------------------------------------------
# CUDA toolkit and Python environment
# ---------------------------------------------------------------------------

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
