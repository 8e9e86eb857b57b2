# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Dotted numeric versions: parse and compare as integer tuples."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re


_VERSION = re.compile(r"^\s*(\d+(?:\.\d+)*)\s*$")


def version_tuple(version):
    """``"580.159.04"`` -> ``(580, 159, 4)``; ``"550.135"`` -> ``(550, 135)``. Raises ValueError."""
    if isinstance(version, (tuple, list)):
        return tuple(int(part) for part in version)
    match = _VERSION.match(str(version))
    if not match:
        raise ValueError("not a dotted numeric version: %r" % (version,))
    return tuple(int(part) for part in match.group(1).split("."))


_COMPARATORS = {
    "==": lambda a, b: a == b, "eq": lambda a, b: a == b,
    "!=": lambda a, b: a != b, "ne": lambda a, b: a != b,
    "<": lambda a, b: a < b, "lt": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, "le": lambda a, b: a <= b,
    ">": lambda a, b: a > b, "gt": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "ge": lambda a, b: a >= b,
}


def compare_versions(left, operator, right):
    """Compare two dotted versions as integer tuples; missing parts count as 0."""
    if operator not in _COMPARATORS:
        raise ValueError("unknown comparison operator %r; use one of %s" % (operator, ", ".join(sorted(_COMPARATORS))))
    a, b = version_tuple(left), version_tuple(right)
    width = max(len(a), len(b))
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return _COMPARATORS[operator](a, b)


def major_minor(version):
    """``"12.4.1"`` -> ``"12.4"``; None stays None."""
    if version is None:
        return None
    parts = version_tuple(version)
    return "%d.%d" % (parts[0], parts[1] if len(parts) > 1 else 0)
