# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Collect the ``aistack_gpu`` facts: GPUs, driver and PCI devices of a node.

Sources are tried in order NVML (nvidia-ml-py, or the driver's library through ctypes), nvidia-smi,
/proc + sysfs: a GPU without a working driver is reported as a state, never raised.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os
import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.cuda.tables import GPU_COMPUTE_CAPABILITY
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_access import read_root_file
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.nvml_library import load_nvml
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.nvidia_parsers import (
    DRIVER_LIBRARY_MISMATCH,
    QUERY_GPU_FIELDS,
    normalize_pci_bus_id,
    parse_enabled,
    parse_mismatch,
    parse_proc_driver_version,
    parse_query_gpu_csv,
    parse_smi_banner,
)
from ansible_collections.aistack.gpu_node.plugins.module_utils.versions import version_tuple


NVIDIA_VENDOR_ID = "0x10de"


# VGA controller and 3D controller; data-center GPUs are 3D controllers.
GPU_PCI_CLASSES = ("0x0300", "0x0302")


_NVML_LIBRARY_DIRS = (
    "usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "usr/lib64", "usr/lib",
    "usr/local/nvidia/lib64",
)


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
        "persistence_mode": parse_enabled(row.get("persistence_mode")),
        "mig_mode": parse_enabled(row.get("mig.mode.current")),
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
        return None, {"mismatch": True, "userspace_version": mismatch["userspace_version"]}, "nvidia-smi: " + DRIVER_LIBRARY_MISMATCH
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


def import_nvml(load=load_nvml):
    """NVML: the ``pynvml`` module of nvidia-ml-py where the node's Python has it, else the driver's
    library through ctypes (nvml_library), else None (no driver library loads)."""
    try:
        import pynvml  # pylint: disable=import-outside-toplevel
    except ImportError:
        return load()
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
