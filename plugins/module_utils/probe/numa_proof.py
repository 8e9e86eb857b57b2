# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The numa_tuning role's recorded check and the node as it is now, read the way the check's shell
read it (decide/numa_tuning.py's check_script): each recorded file's sha256, numactl as ``command -v``
finds it on PATH, and the CPUs and memory nodes this process may use. Whether the record still proves
the run is decided on the controller."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.numa_tuning import allowed_lists
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.env_proof import file_digest
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_access import read_file, read_json_file


def command_path(name, path=None):
    """What ``command -v name`` prints for a program on ``path`` (default PATH); '' when none is there."""
    for folder in (os.environ.get("PATH", "") if path is None else path).split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return ""


def _digest(path):
    try:
        return file_digest(path)
    except (IOError, OSError):
        return None


def read_proof(path, status="/proc/self/status"):
    """``{"recorded": <the record, or None>, "state": <the node now, for what the record holds, or None>}``."""
    recorded = read_json_file(path)
    if not isinstance(recorded, dict) or not isinstance(recorded.get("state"), dict):
        return {"recorded": recorded if isinstance(recorded, dict) else None, "state": None}
    then = recorded["state"]
    now = {"files": dict((name, _digest(name)) for name in then.get("files") or {}),
           "allowed": allowed_lists((read_file(status) or "").splitlines())}
    if "numactl" in then:
        now["numactl"] = command_path("numactl")
    return {"recorded": recorded, "state": now}
