# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The installed packages of a few names and which of them are held, in one read of the package
manager: for the roles that install NVIDIA packages at a pinned version and hold them (nvidia_driver,
dcgm, container_toolkit), whose hold tasks hold what this finds installed and not held yet."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re


def installed_packages(module, pkg_mgr, patterns):
    """``({name: version}, [names dpkg holds])`` of the installed packages matching ``patterns`` (names
    or globs), in one dpkg-query (apt) or rpm run; rpm knows no holds (an empty list)."""
    # dpkg-query exits 1 when a pattern matches nothing, and still lists what the others matched.
    if pkg_mgr == 'apt':
        argv = ['dpkg-query', '-W', '-f', '${db:Status-Abbrev}\\t${Package}\\t${Version}\\n']
    else:
        argv = ['rpm', '-qa', '--qf', 'ii\\t%{NAME}\\t%{EPOCHNUM}:%{VERSION}-%{RELEASE}\\n']
    _rc, out, _err = module.run_command(argv + list(patterns))
    packages, held = {}, []
    for line in out.splitlines():
        fields = line.split('\t')
        if len(fields) == 3 and fields[0][1:2] == 'i':
            packages[fields[1]] = fields[2]
            if fields[0][:1] == 'h':
                held.append(fields[1])
    return packages, held


def installed_and_held(module, pkg_mgr, patterns):
    """``({name: version}, [held names])`` of the installed packages matching ``patterns`` (names or
    globs): dpkg's hold selection for apt, dnf's versionlock list for dnf and yum."""
    packages, held = installed_packages(module, pkg_mgr, patterns)
    if pkg_mgr != 'apt' and packages:
        rc, out, _err = module.run_command(['dnf', 'versionlock', 'list'])
        held = [name for name in packages
                if rc == 0 and any(re.match(re.escape(name) + r'-(\d+:)?\d', line) for line in out.splitlines())]
    return packages, held
