# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Host-level CPU/memory knobs for GPU work (kernel.numa_balancing, transparent hugepages, the CPU
frequency governor): what to write and where, planned from what probe/host_tuning.py reads of the
host. Pure; the module writes."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import re

NUMA_BALANCING = "/proc/sys/kernel/numa_balancing"
THP_ENABLED = "/sys/kernel/mm/transparent_hugepage/enabled"
GOVERNOR_GLOB = "/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"
SYSCTL_FILE = "/etc/sysctl.d/90-aistack-numa.conf"
TMPFILES_FILE = "/etc/tmpfiles.d/aistack-numa.conf"
TUNED_PROFILE = "aistack-gpu"
THP_MODES = ("always", "madvise", "never")


def parse_thp(text):
    """``always [madvise] never`` -> ``madvise``; None when unreadable."""
    match = re.search(r"\[(\w+)\]", text or "")
    return match.group(1) if match else None


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
