# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Conda installer filters; each one is documented in the YAML file of its name beside this file."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.aistack.gpu_node.plugins.module_utils.conda_installer import (
    choose_installer,
    install_action,
)


def conda_installer_filter(table, flavor, version, architecture, sha256="", url=""):
    try:
        return choose_installer(table, flavor, version, architecture, sha256=sha256, url=url)
    except ValueError as exc:
        raise AnsibleFilterError("conda_installer: %s" % exc)


def conda_install_action_filter(desired, prefix_exists, marker, conda_runs, allow_downgrade=False):
    try:
        return install_action(desired, prefix_exists, marker, conda_runs, allow_downgrade=allow_downgrade)
    except ValueError as exc:
        raise AnsibleFilterError("conda_install_action: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {
            "conda_installer": conda_installer_filter,
            "conda_install_action": conda_install_action_filter,
        }
