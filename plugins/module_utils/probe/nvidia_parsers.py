# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Parsers of NVIDIA tool output: nvidia-smi (query CSV, banner, topology matrix, mismatch
errors), /proc/driver/nvidia/version and ``nvcc --version``. Pure functions of text.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.cuda.tables import PARSING


QUERY_GPU_FIELDS = (
    "index", "name", "uuid", "driver_version", "compute_cap", "memory.total",
    "pci.bus_id", "persistence_mode", "mig.mode.current",
)


_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


DRIVER_LIBRARY_MISMATCH = "Driver/library version mismatch"


_NVML_LIBRARY_VERSION = re.compile(r"NVML library version:\s*(\d+(?:\.\d+)+)")


_TOPO_AFFINITY_COLUMNS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")


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
    if DRIVER_LIBRARY_MISMATCH.lower() not in text.lower():
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


def parse_enabled(value):
    """nvidia-smi "Enabled"/"Disabled" (and on/off, 1/0) -> bool; None stays None."""
    if value is None:
        return None
    return value.strip().lower() in ("enabled", "on", "1", "true")
