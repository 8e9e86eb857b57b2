# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run by the env's python with -c after env_proof.py, with the env prefix, the CUDA home, the kernel's
proof file, the python and the kernelspec's kernel.json (empty: not read) as its arguments: one JSON line
saying whether the env is a conda env, whether ipykernel is on the path the kernel will have (found, not
imported: importing it takes a second), whether the CUDA home exists, the env's state digest, the proof
recorded for that state, and kernel.json as it is. Standard library only."""

import importlib.util
import json
import os
import stat
import sys

# plugins/module_utils/probe/env_proof.py, run ahead of this text (vars/main.yml).
from aistack_env_proof import env_state, recorded_proof


def kernel_file(path):
    """kernel.json's text and permission bits, None unless it is a regular file that reads as text: the
    plan then leaves the kernelspec to the jupyter_kernelspec module, which reads it again."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            return None
        with open(path) as handle:
            return {"text": handle.read(), "mode": stat.S_IMODE(info.st_mode)}
    except (OSError, UnicodeDecodeError):
        return None


# -c puts the working directory first on the path; the kernel will not have it.
sys.path = [entry for entry in sys.path if entry]
STATE = env_state()
print(json.dumps({
    "conda": os.path.isdir(os.path.join(sys.argv[1], "conda-meta")),
    "ipykernel": importlib.util.find_spec("ipykernel") is not None,
    "cuda_home": os.path.exists(sys.argv[2]),
    "env_state": STATE,
    "proof": recorded_proof(sys.argv[3], sys.argv[4], STATE),
    "kernel_file": kernel_file(sys.argv[5]) if sys.argv[5] else None,
}))
