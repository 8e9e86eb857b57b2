# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the shared preflight reads of a node: the free space of the filesystem each install path
lands on (the free_space module); decide/node_preflight.py judges it."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

MIB = 1024 * 1024


def nearest_existing(path, exists=os.path.exists):
    """``path`` itself, or its closest parent that exists: where an install there would land."""
    current = os.path.normpath(path)
    while not exists(current) and current != os.path.dirname(current):
        current = os.path.dirname(current)
    return current


def mount_point(path, ismount=os.path.ismount):
    current = os.path.realpath(path)
    while not ismount(current):
        current = os.path.dirname(current)
    return current


def measure_paths(paths, statvfs=os.statvfs, exists=os.path.exists, ismount=os.path.ismount):
    """Free and total MiB of the filesystem holding each path (existing or not)."""
    measured = []
    for path in paths:
        where = nearest_existing(path, exists)
        stats = statvfs(where)
        measured.append({
            'path': path,
            'measured_at': where,
            'exists': where == os.path.normpath(path),
            'mount': mount_point(where, ismount),
            'free_mib': stats.f_bavail * stats.f_frsize // MIB,
            'total_mib': stats.f_blocks * stats.f_frsize // MIB,
        })
    return measured
