# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filters of the nvidia_driver role; each one is documented in the YAML file of its name beside this file."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64

from ansible_collections.aistack.gpu_node.plugins.module_utils.nvidia_driver import (
    adopt_report,
    dkms_problems,
    package_driver_version,
    parse_dkms_status,
    parse_secure_boot,
    plan_install,
    reboot_needed,
    resolve_mode,
)


def plan_filter(facts, source="auto", branch=None, version=None, flavour="auto", kernels=None, precompiled=False, ubuntu_server=True):
    gpu = facts.get("aistack_gpu") or {}
    return plan_install(facts.get("distribution"), facts.get("distribution_version"), facts.get("architecture"),
                        source=source, branch=branch, version=version, flavour=flavour, gpus=gpu.get("gpus") or [],
                        kernels=kernels, precompiled=precompiled, ubuntu_server=ubuntu_server)


def mode_filter(gpu, requested="auto", managed=None, owners=None, takeover=False, install_without_gpu=False):
    return resolve_mode(requested, gpu, managed or None, owners or [], takeover=takeover, install_without_gpu=install_without_gpu)


def adopt_filter(gpu, branch=None, min_version=None, flavour="auto", owners=None):
    return adopt_report(gpu, branch=branch, min_version=min_version, flavour=flavour, owners=owners or [])


def reboot_needed_filter(gpu, module_changed=False, record=None, boot_id=None, installed_version=None):
    return reboot_needed(gpu, module_changed, record or None, boot_id, installed_version=installed_version)


def secure_boot_filter(mokutil_output, efivar_base64=None):
    return parse_secure_boot(mokutil_output, base64.b64decode(efivar_base64) if efivar_base64 else None)


def dkms_filter(text, module, kernels):
    entries = parse_dkms_status(text)
    return {"entries": entries, "problems": dkms_problems(entries, module, kernels)}


class FilterModule(object):
    def filters(self):
        return {
            "nvidia_driver_plan": plan_filter,
            "nvidia_driver_mode": mode_filter,
            "nvidia_driver_adopt": adopt_filter,
            "nvidia_driver_reboot_needed": reboot_needed_filter,
            "nvidia_driver_secure_boot": secure_boot_filter,
            "nvidia_driver_dkms": dkms_filter,
            "nvidia_driver_package_version": package_driver_version,
        }
