# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The host-level knobs' present values, read from the node under a filesystem ``root``: what
decide/host_tuning.py plans from."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.host_tuning import (
    GOVERNOR_GLOB,
    NUMA_BALANCING,
    THP_ENABLED,
    parse_thp,
)
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_access import read_root_file


def _read(root, path):
    text = read_root_file(root, path)
    return None if text is None else text.strip()


def _writable(root, path):
    return os.access(os.path.join(root, path.lstrip("/")), os.W_OK)


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
