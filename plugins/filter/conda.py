# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Conda command filters; each one is documented in the YAML file of its name beside this file."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError


def conda_install_argv(packages, prefix, channels=None, conda="conda"):
    """argv of ``conda install`` into ``prefix`` from exactly ``channels``.

    ``nodefaults`` is a marker of environment.yml files, not a channel: conda fails on it, so it
    is dropped, and ``--override-channels`` keeps the ``defaults`` channels (and their terms of
    service) out whatever .condarc says.
    """
    if isinstance(packages, str):
        packages = [packages]
    if not packages or not all(isinstance(name, str) and name for name in packages):
        raise AnsibleFilterError("conda_install_argv: packages must be a non-empty list of package specs, got %r" % (packages,))
    if not isinstance(prefix, str) or not prefix.startswith("/"):
        raise AnsibleFilterError("conda_install_argv: prefix must be an absolute path, got %r" % (prefix,))
    argv = [conda, "install", "--prefix", prefix, "--yes", "--json"]
    wanted = [channel for channel in (channels or []) if channel != "nodefaults"]
    if wanted:
        argv.append("--override-channels")
        for channel in wanted:
            argv.extend(["--channel", channel])
    return argv + list(packages)


class FilterModule(object):
    def filters(self):
        return {"conda_install_argv": conda_install_argv}
