# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run by the env's python with -c after env_proof.py, with the env prefix, the CUDA home, the kernel's
proof file and the python as its arguments: one JSON line saying whether the env is a conda env, whether
ipykernel is on the path the kernel will have (found, not imported: importing it takes a second), whether
the CUDA home exists, the env's state digest and the proof recorded for that state. Standard library only."""

import importlib.util
import json
import os
import sys

# plugins/module_utils/probe/env_proof.py, run ahead of this text (vars/main.yml).
from aistack_env_proof import env_state, recorded_proof

# -c puts the working directory first on the path; the kernel will not have it.
sys.path = [entry for entry in sys.path if entry]
STATE = env_state()
print(json.dumps({
    "conda": os.path.isdir(os.path.join(sys.argv[1], "conda-meta")),
    "ipykernel": importlib.util.find_spec("ipykernel") is not None,
    "cuda_home": os.path.exists(sys.argv[2]),
    "env_state": STATE,
    "proof": recorded_proof(sys.argv[3], sys.argv[4], STATE),
}))
