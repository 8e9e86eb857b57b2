# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Host-level CPU/memory knobs for GPU work: kernel.numa_balancing, transparent hugepages and the
CPU frequency governor. Readers take a filesystem ``root``; planning is pure; the module writes."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import json
import os
import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.node_access import read_root_file

NUMA_BALANCING = "/proc/sys/kernel/numa_balancing"
THP_ENABLED = "/sys/kernel/mm/transparent_hugepage/enabled"
GOVERNOR_GLOB = "/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"
SYSCTL_FILE = "/etc/sysctl.d/90-aistack-numa.conf"
TMPFILES_FILE = "/etc/tmpfiles.d/aistack-numa.conf"
TUNED_PROFILE = "aistack-gpu"
THP_MODES = ("always", "madvise", "never")
KNOBS = ("numa_balancing", "thp", "governor")


def _read(root, path):
    text = read_root_file(root, path)
    return None if text is None else text.strip()


def _writable(root, path):
    return os.access(os.path.join(root, path.lstrip("/")), os.W_OK)


def parse_thp(text):
    """``always [madvise] never`` -> ``madvise``; None when unreadable."""
    match = re.search(r"\[(\w+)\]", text or "")
    return match.group(1) if match else None


def governor_paths(root):
    return sorted(glob.glob(os.path.join(root, GOVERNOR_GLOB.lstrip("/"))))


def read_host(root="/"):
    """Current value of each knob, whether this process can write it, or why it is unsupported."""
    governors = governor_paths(root)
    values = set(_read("/", path) for path in governors)
    return {
        "numa_balancing": {
            "value": _read(root, NUMA_BALANCING), "writable": _writable(root, NUMA_BALANCING),
            "supported": _read(root, NUMA_BALANCING) is not None,
        },
        "thp": {
            "value": parse_thp(_read(root, THP_ENABLED)), "writable": _writable(root, THP_ENABLED),
            "supported": _read(root, THP_ENABLED) is not None,
        },
        "governor": {
            "value": values.pop() if len(values) == 1 else (",".join(sorted(v for v in values if v)) or None),
            "writable": bool(governors) and all(os.access(path, os.W_OK) for path in governors),
            "supported": bool(governors),
        },
    }


def wanted_values(numa_balancing=None, thp=None, governor=None):
    """The knobs asked for, as the strings the kernel files take; None means leave alone."""
    wanted = {}
    if numa_balancing is not None:
        wanted["numa_balancing"] = "1" if numa_balancing else "0"
    if thp is not None:
        if thp not in THP_MODES:
            raise ValueError("thp must be one of %s, got %r" % (", ".join(THP_MODES), thp))
        wanted["thp"] = thp
    if governor is not None:
        wanted["governor"] = governor
    return wanted


def plan(host, wanted):
    """``(changes, skipped)``: knob -> (before, after) to write, and knob -> reason it is left alone."""
    changes, skipped = {}, {}
    for knob, value in wanted.items():
        state = host[knob]
        if not state["supported"]:
            skipped[knob] = "not supported on this host (no %s)" % {
                "numa_balancing": NUMA_BALANCING, "thp": THP_ENABLED, "governor": "cpufreq"}[knob]
        elif state["value"] != value:
            if not state["writable"]:
                skipped[knob] = "not writable here (read-only /proc/sys or /sys, as in a container)"
            else:
                changes[knob] = (state["value"], value)
    return changes, skipped


def render_sysctl(values):
    """/etc/sysctl.d content that keeps kernel.numa_balancing across reboots, or None."""
    if "numa_balancing" not in values:
        return None
    return ("# Managed by aistack.gpu_node numa_tuning; removed by numa_tuning_host_state=absent\n"
            "kernel.numa_balancing = %s\n" % values["numa_balancing"])


def render_tmpfiles(values):
    """systemd-tmpfiles lines that rewrite THP mode and governor at boot, or None."""
    lines = []
    if "thp" in values:
        lines.append("w %s - - - - %s" % (THP_ENABLED, values["thp"]))
    if "governor" in values:
        lines.append("w %s - - - - %s" % (GOVERNOR_GLOB.replace("[0-9]", ""), values["governor"]))
    if not lines:
        return None
    return "# Managed by aistack.gpu_node numa_tuning; removed by numa_tuning_host_state=absent\n" + "\n".join(lines) + "\n"


def render_tuned_profile(values, parent):
    """A tuned profile on top of ``parent`` with the wanted knobs."""
    text = "# Managed by aistack.gpu_node numa_tuning\n[main]\nsummary=aistack.gpu_node GPU node\n"
    if parent:
        text += "include=%s\n" % parent
    if "governor" in values:
        text += "\n[cpu]\ngovernor=%s\n" % values["governor"]
    if "thp" in values:
        text += "\n[vm]\ntransparent_hugepages=%s\n" % values["thp"]
    if "numa_balancing" in values:
        text += "\n[sysctl]\nkernel.numa_balancing=%s\n" % values["numa_balancing"]
    return text


def parse_saved_state(text):
    """The originals recorded before the first change; {} when there is no usable record."""
    try:
        state = json.loads(text) if text else {}
    except ValueError:
        return {}
    return state if isinstance(state, dict) else {}


def parse_tuned_active(text):
    """``tuned-adm active`` -> profile name or None."""
    match = re.search(r"Current active profile:\s*(\S+)", text or "")
    return match.group(1) if match else None
