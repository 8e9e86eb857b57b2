# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os

from conftest import REPO_ROOT
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import multi_gpu_env


def test_multicast_off_env_is_pinned():
    # The project's hosts run with NVLink SHARP / multicast off in NCCL, torch symmetric memory and NVSHMEM.
    assert multi_gpu_env.multicast_off_env() == {
        "NCCL_NVLS_ENABLE": "0",
        "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
        "NVSHMEM_DISABLE_NVLS": "1",
    }


def test_each_caller_gets_its_own_copy():
    first = multi_gpu_env.multicast_off_env()
    first["NCCL_NVLS_ENABLE"] = "1"
    assert multi_gpu_env.multicast_off_env()["NCCL_NVLS_ENABLE"] == "0"


def test_no_role_or_plugin_code_defines_it_again():
    places = ["roles/*/%s/**/*" % part for part in ("vars", "defaults", "tasks", "templates", "files", "handlers")]
    places += ["plugins/module_utils/**/*.py", "plugins/action/*.py", "plugins/filter/*.py"]
    defined_again = []
    for pattern in places:
        for path in glob.glob(os.path.join(REPO_ROOT, pattern), recursive=True):
            if os.path.isfile(path) and not path.endswith("multi_gpu_env.py"):
                with open(path, errors="replace") as handle:
                    if any(name in handle.read() for name in multi_gpu_env.MULTICAST_OFF_ENV):
                        defined_again.append(os.path.relpath(path, REPO_ROOT))
    assert defined_again == []
