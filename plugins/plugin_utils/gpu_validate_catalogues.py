# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The gpu_validate role's two catalogues, read by the gpu_validation and gpu_health action plugins from the
role's own vars files (where the role's tasks loaded them with include_vars), so that a task that is given no
catalogue needs no include_vars task before it. Each file holds one variable, as before."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import os

import yaml

from ansible_collections.aistack.gpu_node.plugins.plugin_utils.role_settings import ROLES

# The catalogue's name: its vars file and the one variable that file holds.
FILES = {
    'gpu': ('gpu_catalogue.yml', '__gpu_validate_catalogue'),
    'health': ('health_catalogue.yml', '__gpu_validate_health_catalogue'),
}
_LOADED = {}


def load(name, roles=ROLES):
    """The catalogue ``name`` (``gpu`` or ``health``) of the gpu_validate role, a copy the caller may keep."""
    file_name, variable = FILES[name]
    path = os.path.join(roles, 'gpu_validate', 'vars', file_name)
    if path not in _LOADED:
        with open(path, encoding='utf-8') as handle:
            _LOADED[path] = yaml.safe_load(handle)[variable]
    return copy.deepcopy(_LOADED[path])
