# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""APEX build filters; each one is documented in the YAML file of its name beside this file."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.aistack.gpu_node.plugins.module_utils.apex_build import (
    build_blockers,
    build_plan,
    build_settings,
    cache_entry,
    cache_key,
    gpu_gate,
    legacy_apis_ref,
    overrides_memory_problem,
    parse_setup_py,
)


def apex_build_plan_filter(setup_py, cpp_ext=True, cuda_ext=True, contrib=None):
    try:
        return build_plan(parse_setup_py(setup_py), cpp_ext, cuda_ext, contrib or [])
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError("apex_build_plan: %s" % exc)


def apex_build_settings_filter(plan, cpus, memory_mib, cuda_home=None, arch_list="", mib_per_job=3686, overrides=None):
    try:
        return build_settings(plan, cpus, memory_mib, cuda_home, arch_list, mib_per_job, overrides)
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("apex_build_settings: %s" % exc)


def apex_build_overrides_problem_filter(overrides, memory_mib, cuda=True, mib_per_job=3686):
    try:
        return overrides_memory_problem(overrides, memory_mib, cuda, mib_per_job)
    except (AttributeError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("apex_build_overrides_problem: %s" % exc)


def apex_cache_key_filter(inputs):
    try:
        return cache_key(inputs)
    except (AttributeError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("apex_cache_key: %s" % exc)


def apex_cache_entry_filter(marker_text, key):
    if not isinstance(key, str):
        raise AnsibleFilterError("apex_cache_entry: key must be a string, got %s" % type(key).__name__)
    return cache_entry(marker_text, key)


def apex_build_blockers_filter(plan, compat, require_gpu_arch=False, build_tools=None):
    try:
        return build_blockers(plan, compat, require_gpu_arch, build_tools)
    except (AttributeError, KeyError, TypeError) as exc:
        raise AnsibleFilterError("apex_build_blockers: %s" % exc)


def apex_build_gpu_gate_filter(gpu_state, cuda_ext=True, build_host=False, arch_list=""):
    return gpu_gate(gpu_state, cuda_ext, build_host, arch_list)


class FilterModule(object):
    def filters(self):
        return {
            "apex_build_plan": apex_build_plan_filter,
            "apex_build_settings": apex_build_settings_filter,
            "apex_build_overrides_problem": apex_build_overrides_problem_filter,
            "apex_cache_key": apex_cache_key_filter,
            "apex_cache_entry": apex_cache_entry_filter,
            "apex_build_blockers": apex_build_blockers_filter,
            "apex_build_gpu_gate": apex_build_gpu_gate_filter,
            "apex_legacy_apis_ref": legacy_apis_ref,
        }
