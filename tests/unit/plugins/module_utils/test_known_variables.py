# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unknown variables (issue 35): a name that starts with a role's prefix, or nearly does, must be an
option of that role or a fact a role publishes; the published facts are checked against the tasks."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os

import yaml

from conftest import REPO_ROOT
from ansible_collections.aistack.gpu_node.plugins.action.unknown_variables import role_options
from ansible_collections.aistack.gpu_node.plugins.module_utils import known_variables

OPTIONS = role_options(os.path.join(REPO_ROOT, "roles"))


def texts(names, mode="fail"):
    result = known_variables.check({"node1": names}, OPTIONS, mode)
    return result


def test_every_role_has_options_from_its_argument_specs():
    assert sorted(OPTIONS) == sorted(os.listdir(os.path.join(REPO_ROOT, "roles")))
    assert "conda_env_envs" in OPTIONS["conda_env"]
    # An option of a second entry point counts (gpu_validate's preflight, nvidia_driver's preflight).
    assert "jupyter_kernel_lab" in OPTIONS["jupyter_kernel"]


def test_a_typo_is_named_with_the_closest_options():
    result = texts(["conda_env_enviroments", "miniconda_prefx"])
    assert result["failed"]
    assert result["msg"] == (
        "site: unknown variables, set in the inventory or as extra vars (rename or remove them; "
        "aistack_unknown_variables: warn only warns): "
        "conda_env_enviroments: not a variable of the conda_env role; did you mean conda_env_environment or conda_env_envs? | "
        "miniconda_prefx: not a variable of the miniconda role; did you mean miniconda_prefix?")
    assert [problem["name"] for problem in result["unknown"]] == ["conda_env_enviroments", "miniconda_prefx"]


def test_a_misspelt_prefix_is_judged_as_that_role():
    problems = known_variables.unknown(["jupyter_kernal_lab", "conda_enviroment_x", "minconda_prefix", "condaenv_envs"],
                                       OPTIONS)
    assert [(p["name"], p["role"], p["suggestions"]) for p in problems] == [
        ("conda_enviroment_x", "conda_env", ["conda_env_environment"]),
        ("condaenv_envs", "conda_env", ["conda_env_envs"]),
        ("jupyter_kernal_lab", "jupyter_kernel", ["jupyter_kernel_lab"]),
        ("minconda_prefix", "miniconda", ["miniconda_prefix"]),
    ]
    assert known_variables.problem_text(problems[2]) == \
        "jupyter_kernal_lab: not a variable of the jupyter_kernel role; did you mean jupyter_kernel_lab?"


def test_options_published_facts_and_other_names_are_not_flagged():
    names = ["conda_env_envs", "miniconda_prefix", "conda_env_target", "conda_env_info", "miniconda_result",
             "gpu_validate_result", "node_manifest_recorded", "nvidia_driver_report", "apex_build_report",
             "aistack_env_name", "aistack_unknown_variables", "ansible_user", "gpu_count", "refusal_case",
             "numa_node", "inventory_hostname", "__conda_env_plan", "_miniconda_x", "preflight_report"]
    result = texts(names)
    assert not result["failed"] and result["unknown"] == [] and result["warnings"] == []


def test_no_close_option_points_at_the_readme():
    problems = known_variables.unknown(["node_manifest_zzzzzzzzzzzzzzzzzzz"], OPTIONS)
    assert known_variables.problem_text(problems[0]) == (
        "node_manifest_zzzzzzzzzzzzzzzzzzz: not a variable of the node_manifest role; its variables are listed in "
        "roles/node_manifest/README.md")


def test_warn_mode_warns_and_passes():
    result = texts(["conda_env_enviroments"], mode="warn")
    assert not result["failed"]
    assert result["warnings"] == [
        "conda_env_enviroments: not a variable of the conda_env role; did you mean conda_env_environment or conda_env_envs?"]


def test_an_unknown_mode_is_bad_input():
    result = texts([], mode="ignore")
    assert result["failed"]
    assert result["msg"] == 'site: bad input. aistack_unknown_variables must be fail or warn, got "ignore".'


def test_a_name_on_some_hosts_only_names_them_and_a_fleet_wide_one_is_listed_once():
    result = known_variables.check({"node1": ["miniconda_prefx", "jupyter_kernal_lab"], "node2": ["miniconda_prefx"]},
                                   OPTIONS, "fail")
    assert result["msg"].endswith(
        "jupyter_kernal_lab: not a variable of the jupyter_kernel role; did you mean jupyter_kernel_lab? (set for node1) | "
        "miniconda_prefx: not a variable of the miniconda role; did you mean miniconda_prefix?")
    assert result["unknown"][1]["hosts"] == ["node1", "node2"]


def _tasks(node):
    if isinstance(node, list):
        for item in node:
            yield from _tasks(item)
    elif isinstance(node, dict):
        yield node
        for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
            yield from _tasks(node.get(key))


def published_by_the_tasks():
    """Every name a role's tasks, handlers or a playbook set with set_fact or register that starts with a
    role's prefix (the __-prefixed ones are private)."""
    names = set()
    paths = glob.glob(os.path.join(REPO_ROOT, "roles", "*", "tasks", "*.yml")) \
        + glob.glob(os.path.join(REPO_ROOT, "roles", "*", "handlers", "*.yml")) \
        + glob.glob(os.path.join(REPO_ROOT, "playbooks", "*.yml")) + [os.path.join(REPO_ROOT, "site.yml")]
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            for task in _tasks(yaml.safe_load(handle)):
                for key in ("ansible.builtin.set_fact", "set_fact"):
                    if isinstance(task.get(key), dict):
                        names.update(name for name in task[key] if name != "cacheable")
                if isinstance(task.get("register"), str):
                    names.add(task["register"])
    return {name for name in names if known_variables.role_of(name, OPTIONS)[0] and not name.startswith("_")}


def test_the_published_facts_are_every_role_prefixed_fact_the_tasks_set():
    listed = {name for names in known_variables.PUBLISHED.values() for name in names}
    assert listed == published_by_the_tasks()
    for role, names in known_variables.PUBLISHED.items():
        assert all(name.startswith(role + "_") for name in names), role
        # A published fact is a result, never an option users set.
        assert not set(names) & set(OPTIONS[role]), role


def test_the_shipped_inventories_and_scenarios_set_no_unknown_variable():
    names = set()

    def keys(node):
        if isinstance(node, dict):
            names.update(key for key in node if isinstance(key, str))
            for value in node.values():
                keys(value)
        elif isinstance(node, list):
            for item in node:
                keys(item)

    patterns = ["inventories/**/*.yml", "molecule/*/group_vars/**/*.yml", "molecule/*/host_vars/**/*.yml",
                "molecule/*/molecule.yml", "tests/gpu/inventory/**/*.yml"]
    for pattern in patterns:
        for path in glob.glob(os.path.join(REPO_ROOT, pattern), recursive=True):
            with open(path, encoding="utf-8") as handle:
                keys(yaml.safe_load(handle))
    assert known_variables.unknown(names, OPTIONS) == []
