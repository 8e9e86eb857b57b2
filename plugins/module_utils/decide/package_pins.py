# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Package versions as apt and dnf spell them, for the roles that install NVIDIA packages at a pinned
version and hold them (dcgm, container_toolkit): pure functions, no I/O."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

_UPSTREAM = re.compile(r'^(?:\d+:)?(?P<upstream>\d+(?:\.\d+)*)')


def upstream_version(package_version):
    """``1:4.5.0-1`` (dpkg) or ``4.5.0-1`` (rpm) -> ``4.5.0``; None when it has no leading dotted number."""
    match = _UPSTREAM.match(str(package_version or ''))
    return match.group('upstream') if match else None


def package_specs(packages, version, manager, epoch=None):
    """The package manager's names for ``packages`` at upstream ``version`` (any version when None):
    ``name=[epoch:]4.5.0-*`` for apt, ``name-4.5.0`` for dnf."""
    if version is None:
        return list(packages)
    if manager == 'apt':
        prefix = '%d:' % epoch if epoch is not None else ''
        return ['%s=%s%s-*' % (name, prefix, version) for name in packages]
    return ['%s-%s' % (name, version) for name in packages]
