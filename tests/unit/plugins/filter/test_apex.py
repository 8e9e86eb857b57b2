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
from ansible_collections.aistack.gpu_node.plugins.filter.apex import FilterModule

FILTERS = FilterModule().filters()


def _stub_setup():
    with open(os.path.join(REPO_ROOT, "tests", "apex_stub", "setup.py")) as handle:
        return handle.read()


def test_every_filter_has_a_doc_file():
    for name in FILTERS:
        with open(os.path.join(REPO_ROOT, "plugins", "filter", name + ".yml")) as handle:
            doc = yaml.safe_load(handle)
        assert doc["DOCUMENTATION"]["name"] == name and doc["EXAMPLES"] and doc["RETURN"]


def test_plan_settings_and_key_chain_as_the_role_uses_them():
    plan = FILTERS["apex_build_plan"](_stub_setup(), cpp_ext=True, cuda_ext=False, contrib=["demo_contrib"])
    settings = FILTERS["apex_build_settings"](plan, 2, 20000, overrides={"max_jobs": 0})
    assert settings["env"] == {"APEX_CPP_EXT": "1", "APEX_DEMO_CONTRIB": "1", "MAX_JOBS": "2", "APEX_PARALLEL_BUILD": "1"}
    inputs = {"apex_source": "0.1-stub", "torch_version": "2.13.0+cpu", "torch_cuda": None, "torch_cuda_version": None,
              "python_tag": "cp311", "platform": "linux_x86_64", "arch_list": None, "flags": plan["flags"]}
    assert len(FILTERS["apex_cache_key"](inputs)) == 24
    assert FILTERS["apex_build_blockers"](plan, {"torch": {"present": True, "cuda": None}}) == []
    assert FILTERS["apex_legacy_apis_ref"]("25.05") is True
    assert FILTERS["apex_build_gpu_gate"]("no_gpu", False) == {"run": True, "reason": None}
    assert FILTERS["apex_build_gpu_gate"]("no_gpu")["run"] is False


@pytest.mark.parametrize("name, args, message", [
    ("apex_build_plan", (None,), "apex_build_plan: "),
    ("apex_build_plan", ("", True, False, ["xentropy"]), "apex_build_plan: apex_build_contrib_extensions: this APEX source has no --cpp_ext"),
    ("apex_build_settings", ({}, 2, 2048), "apex_build_settings: "),
    ("apex_cache_key", ({"apex_source": "x"},), "apex_cache_key: cache key inputs lack torch_version"),
    ("apex_cache_key", ("text",), "apex_cache_key: "),
    ("apex_build_blockers", ({}, {"torch": {"present": True}}), "apex_build_blockers: "),
])
def test_bad_input_raises_a_filter_error(name, args, message):
    with pytest.raises(AnsibleFilterError) as error:
        FILTERS[name](*args)
    assert str(error.value).startswith(message)
