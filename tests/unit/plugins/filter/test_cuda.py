# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from conftest import REPO_ROOT
from ansible_collections.aistack.gpu_node.plugins.filter.cuda import FilterModule

FILTERS = FilterModule().filters()


def test_every_filter_has_a_doc_file():
    for name in FILTERS:
        with open(os.path.join(REPO_ROOT, "plugins", "filter", name + ".yml")) as handle:
            doc = yaml.safe_load(handle)
        assert doc["DOCUMENTATION"]["name"] == name and doc["EXAMPLES"] and doc["RETURN"]


@pytest.mark.parametrize("left, op, right, expected", [
    ("580.159.04", ">=", "580.65.06", True),
    ("550.135", ">", "550.54.15", True),
    ("550.54.15", "lt", "550.135", True),
    ("13.0", "==", "13", True),
    ("575.57.08", "ge", "580", False),
])
def test_driver_version_compare(left, op, right, expected):
    assert FILTERS["driver_version_compare"](left, op, right) is expected


@pytest.mark.parametrize("left, op, right", [("580.x", ">=", "1"), ("580", "=~", "1")])
def test_driver_version_compare_errors(left, op, right):
    with pytest.raises(AnsibleFilterError):
        FILTERS["driver_version_compare"](left, op, right)
