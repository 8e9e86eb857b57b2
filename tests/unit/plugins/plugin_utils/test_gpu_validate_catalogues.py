# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_validate role's catalogues as the gpu_validation and gpu_health actions read them: the one variable of
each vars file, as include_vars loaded it (issue 37 item 7)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml

from conftest import REPO_ROOT
from ansible_collections.aistack.gpu_node.plugins.plugin_utils import gpu_validate_catalogues


@pytest.mark.parametrize("name, file_name, variable", [
    ("gpu", "gpu_catalogue.yml", "__gpu_validate_catalogue"),
    ("health", "health_catalogue.yml", "__gpu_validate_health_catalogue"),
])
def test_each_catalogue_is_the_variable_of_its_vars_file(name, file_name, variable):
    with open(os.path.join(REPO_ROOT, "roles", "gpu_validate", "vars", file_name)) as handle:
        data = yaml.safe_load(handle)
    assert list(data) == [variable]
    assert gpu_validate_catalogues.load(name) == data[variable]


def test_a_caller_that_changes_its_copy_changes_no_other():
    first = gpu_validate_catalogues.load("gpu")
    first["schema"] = "changed"
    assert gpu_validate_catalogues.load("gpu")["schema"] == 1


def test_an_unknown_catalogue_is_refused():
    with pytest.raises(KeyError):
        gpu_validate_catalogues.load("fabric")
