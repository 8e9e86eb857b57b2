# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import os

import yaml

from conftest import REPO_ROOT, read_public
from ansible_collections.aistack.gpu_node.plugins.filter.nvidia_driver import FilterModule

FILTERS = FilterModule().filters()
NO_GPU = {"state": "no_gpu", "gpus": [], "driver": {"version": None, "loaded_version": None, "mismatch": False}}


def test_every_filter_has_a_doc_file():
    for name in FILTERS:
        with open(os.path.join(REPO_ROOT, "plugins", "filter", name + ".yml")) as handle:
            doc = yaml.safe_load(handle)
        assert doc["DOCUMENTATION"]["name"] == name and doc["EXAMPLES"] and doc["RETURN"]


def test_plan_reads_ansible_facts():
    facts = {"distribution": "Debian", "distribution_version": "12.11", "architecture": "x86_64", "aistack_gpu": NO_GPU}
    plan = FILTERS["nvidia_driver_plan"](facts, version="535.309.01")
    assert plan["problems"] == [] and plan["packages"][0] == "nvidia-kernel-dkms" and plan["version_package"] == "nvidia-kernel-dkms"
    assert plan["hold_pattern"].startswith("^(nvidia-|libnvidia-|libcuda1")
    facts = {"distribution": "Ubuntu", "distribution_version": "24.04", "architecture": "x86_64",
             "aistack_gpu": {"gpus": [{"name": "NVIDIA B200", "compute_capability": "10.0"}]}}
    assert "Blackwell" in FILTERS["nvidia_driver_plan"](facts, flavour="proprietary")["problems"][0]


def test_mode_adopt_and_reboot_filters():
    assert FILTERS["nvidia_driver_mode"](NO_GPU)["mode"] == "skip"
    assert FILTERS["nvidia_driver_mode"](NO_GPU, install_without_gpu=True) == {"mode": "install", "reason": "no driver on the node", "problems": []}
    assert FILTERS["nvidia_driver_mode"](NO_GPU, "install", {"branch": 535}, ["libnvidia-ml1"], False, True)["reason"] == "installed by this role"
    working = {"state": "ok", "gpus": [], "driver": {"version": "580.95.05", "kernel_module_flavour": "open"}}
    assert FILTERS["nvidia_driver_adopt"](working, "580")["report"]["branch"] == 580
    assert FILTERS["nvidia_driver_reboot_needed"](NO_GPU, False, {"module_changed_boot": "b"}, "b") is True
    assert FILTERS["nvidia_driver_reboot_needed"](NO_GPU) is False


def test_secure_boot_dkms_and_package_version_filters():
    assert FILTERS["nvidia_driver_secure_boot"]("SecureBoot enabled") == "enabled"
    assert FILTERS["nvidia_driver_secure_boot"]("", base64.b64encode(b"\x06\x00\x00\x00\x00").decode()) == "disabled"
    dkms = FILTERS["nvidia_driver_dkms"](read_public("dkms-status-installed.txt"), "nvidia", ["6.12.10-76061203-generic"])
    assert dkms["problems"] == [] and len(dkms["entries"]) == 2
    assert FILTERS["nvidia_driver_package_version"]("535.309.01-0+deb12u1") == "535.309.01"
