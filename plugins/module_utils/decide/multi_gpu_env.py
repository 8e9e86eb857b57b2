# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The environment multi-GPU processes run with on the project's hosts, defined once.

Modules hand it on: ``numa_facts`` to the numa_tuning role's per-GPU launcher
(``aistack_numa.multicast_off_env``), ``gpu_validation`` to the gpu_validate role, which passes it
to ``validate_gpu.py`` (``--env``).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

# NVLink SHARP / multicast (NVLS) off: on hosts (VMs, containers) where the fabric manager or IMEX
# gives no multicast objects, NCCL, torch symmetric memory and NVSHMEM fail or hang with it on.
MULTICAST_OFF_ENV = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}


def multicast_off_env():
    """The variables that keep NVLink multicast off, a copy the caller may change."""
    return dict(MULTICAST_OFF_ENV)
