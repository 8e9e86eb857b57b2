# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run by the env's python with -c, the env prefix and the CUDA home as its arguments: one JSON line
saying whether the env is a conda env, whether ipykernel is on the path the kernel will have (found, not imported:
importing it takes a second) and whether the CUDA home exists. Standard library only."""

import importlib.util
import json
import os
import sys

# -c puts the working directory first on the path; the kernel will not have it.
sys.path = [entry for entry in sys.path if entry]
print(json.dumps({
    "conda": os.path.isdir(os.path.join(sys.argv[1], "conda-meta")),
    "ipykernel": importlib.util.find_spec("ipykernel") is not None,
    "cuda_home": os.path.exists(sys.argv[2]),
}))
