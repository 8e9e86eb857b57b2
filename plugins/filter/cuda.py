# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""CUDA filters; each one is documented in the YAML file of its name beside this file."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.aistack.gpu_node.plugins.module_utils.cuda.checks import compare_versions


def driver_version_compare_filter(version, operator, other):
    try:
        return compare_versions(version, operator, other)
    except ValueError as exc:
        raise AnsibleFilterError("driver_version_compare: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {
            "driver_version_compare": driver_version_compare_filter,
        }
