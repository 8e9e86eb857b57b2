# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""How collectors reach a node: files under a ``root`` and a command ``runner``.

A runner is ``runner(argv) -> (rc, stdout, stderr)`` with rc 127 when the program is missing, so
tests feed collectors recorded outputs and fake trees instead of a real node.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os


def read_file(path, mode="r"):
    """Text of the file ``path`` (bytes with mode "rb"); None when it is missing or unreadable."""
    try:
        with open(path, mode) as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def read_json_file(path):
    """The JSON value in the file ``path``; None when it is missing, unreadable or not JSON (a write
    that a kill cut short proves nothing)."""
    text = read_file(path)
    try:
        return json.loads(text) if text is not None else None
    except ValueError:
        return None


def read_root_file(root, path):
    """Text of ``path`` under ``root`` (a test's fake sysfs/procfs, or "/"), or None when unreadable."""
    return read_file(os.path.join(root, path.lstrip("/")))


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
