# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml

from conftest import SHARED
from ansible_collections.aistack.gpu_node.plugins.module_utils.cuda import tables as cuda_tables

DATA_FILE = os.path.join(SHARED, "reference", "cuda_compat_data.yml")
STATUSES = {"primary", "secondary", "unconfirmed"}


@pytest.fixture(scope="module")
def research_data():
    with open(DATA_FILE) as handle:
        return yaml.safe_load(handle)


def test_every_section_of_the_data_file_is_a_table(research_data):
    missing = [section for section in research_data if not hasattr(cuda_tables, section.upper())]
    assert missing == []


@pytest.mark.parametrize("section", sorted(
    name.lower() for name in dir(cuda_tables) if name.isupper() and not name.startswith("SRC_") and name not in ("GPU_GENERATIONS", "DRIVER_BRANCHES_ADDED")
))
def test_table_equals_the_data_file(research_data, section):
    assert getattr(cuda_tables, section.upper()) == research_data[section]


def test_entries_keep_status_and_source():
    for name, entry in cuda_tables.TOOLKIT_MIN_DRIVER.items():
        assert entry["status"] in STATUSES, name
        assert entry["source"], name
    for name, entry in cuda_tables.GPU_COMPUTE_CAPABILITY.items():
        assert entry["status"] in STATUSES and entry["source"], name
    for table in (cuda_tables.FORWARD_COMPAT, cuda_tables.DRIVER_BRANCHES, cuda_tables.KERNEL_MODULE_FLAVOR,
                  cuda_tables.TORCH_DEVICE_REQUIREMENT, cuda_tables.GPU_GENERATIONS):
        assert table["status"] in STATUSES and table["source"]
    for name, entry in cuda_tables.DRIVER_BRANCHES_ADDED.items():
        if name.startswith("R"):
            assert entry["status"] in STATUSES and entry["source"], name
            assert name not in cuda_tables.DRIVER_BRANCHES, "%s is in the data file now: drop it from DRIVER_BRANCHES_ADDED" % name


def test_minor_compat_floors_are_the_documented_ones():
    floors = dict((major, entry["min_driver"]) for major, entry in cuda_tables.MINOR_VERSION_COMPAT_FLOOR.items())
    assert floors == {"13": "580", "12": "525.60.13", "11": "450.80.02", "10": None}
