# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_toolkit_plan action: the role's settings read from the task's variables (the default version
from the role's vars), bad input refused before the node is read, the node read through container_toolkit_probe
(counted: one round-trip, none where the role is off), the keyed plan, and the judgement of a spec just made.
The rules themselves are tested on module_utils.decide.container_toolkit."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import sys

import yaml
from conftest import read_role_vars, run_planner

from ansible_collections.aistack.gpu_node.plugins.action.container_toolkit_plan import ActionModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import container_toolkit as ct

# The spec of nvidia-ctk's shape the CDI judge's own tests use.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "module_utils"))
from test_cdi_spec import GPUS, SPEC  # noqa: E402  pylint: disable=wrong-import-position

PROBE = "aistack.gpu_node.container_toolkit_probe"
DEFAULTS, ROLE_VARS = read_role_vars("container_toolkit")
GPU = {"state": "ok", "gpus": GPUS, "driver": {"version": "580.159.04"}}
DEBIAN = dict(os_family="Debian", pkg_mgr="apt", architecture="x86_64")


class Node(object):
    """The probe as the action sees it; every call kept (the round-trips)."""

    def __init__(self, runtimes=("podman",), spec="SPEC", packages=None, held=()):
        spec = SPEC if spec == "SPEC" else spec
        self.reading = dict(runtimes=dict((name, {"present": name in runtimes, "configured": False}) for name in ct.RUNTIMES),
                            packages=packages or {}, held=list(held), key_present=True,
                            cdi_spec=None if spec is None else yaml.safe_dump(spec))
        self.calls = []

    def __call__(self, module_name=None, module_args=None, task_vars=None):
        self.calls.append((module_name, module_args))
        return dict(self.reading, changed=False)


def host(gpu=None, published_runtimes=None, **settings):
    """A host's variables; ``published_runtimes``: the preflight's aistack_container_runtimes (None: no preflight ran)."""
    values = dict(DEFAULTS, **ROLE_VARS)
    facts = dict(DEBIAN, aistack_gpu=gpu or GPU)
    if published_runtimes is not None:
        facts["aistack_container_runtimes"] = list(published_runtimes)
    values.update(inventory_hostname="node1", ansible_check_mode=False, ansible_facts=facts)
    values.update(("container_toolkit_" + name, value) for name, value in settings.items())
    return values


def plan(variables, node=None, args=None, register=None):
    node = node or Node()
    return run_planner(ActionModule, variables, node, args=args, register=register), node


def test_the_default_version_is_the_release_the_role_names_with_its_source():
    assert ROLE_VARS["__container_toolkit_release"]["source"].startswith("https://docs.nvidia.com/")
    result, node = plan(host())
    assert result["version"] == ROLE_VARS["__container_toolkit_release"]["version"] and result["mode"] == "work"
    assert node.calls == [(PROBE, {"pkg_mgr": "apt", "cdi_spec_path": "/etc/cdi/nvidia.yaml",
                                   "key_path": ROLE_VARS["__container_toolkit_key_path"]})]
    assert result["cdi"]["state"] == "current" and result["key_present"] is True and result["reused"] is False


def test_bad_input_is_refused_before_the_node_is_read():
    result, node = plan(host(version="1.18", install=True))
    assert result["failed"] and node.calls == []
    assert result["msg"] == ('container_toolkit: bad input. container_toolkit_version must be an exact toolkit version such '
                             'as "1.18.0" (quote it in YAML), got \'1.18\'.')
    typed, node = plan(host(hold="maybe"))
    assert typed["failed"] and "container_toolkit_hold" in typed["msg"] and node.calls == []


def test_off_reads_nothing_and_auto_without_a_runtime_reads_once():
    result, node = plan(host(install=False))
    assert result["mode"] == "skip" and node.calls == []
    result, node = plan(host(), Node(runtimes=()))
    assert result["mode"] == "skip" and len(node.calls) == 1


def test_auto_where_the_preflight_found_no_runtime_reads_nothing():
    result, node = plan(host(published_runtimes=()), Node(runtimes=()))
    assert node.calls == [] and result["mode"] == "skip"
    # The same decision as on the probe's reading of no runtime (key_present comes only with a node read).
    probed, _node = plan(host(), Node(runtimes=()))
    probed.pop("key_present")
    assert dict(result, inputs_key=None) == dict(probed, inputs_key=None)
    # A runtime found, or the toolkit asked for: the probe reads the packages, the configurations and the spec.
    result, node = plan(host(published_runtimes=("podman",)))
    assert result["mode"] == "work" and len(node.calls) == 1
    result, node = plan(host(published_runtimes=(), install=True), Node(runtimes=()))
    assert result["mode"] == "work" and len(node.calls) == 1


def test_the_plan_is_handed_back_once_with_the_same_inputs():
    variables = host()
    first, node = plan(variables, register="__container_toolkit_decision")
    variables["__container_toolkit_decision"] = first
    again, node = plan(variables, node, register="__container_toolkit_decision")
    assert again["reused"] is True and len(node.calls) == 1 and again["mode"] == first["mode"]
    variables["container_toolkit_report"] = {"mode": "work"}
    later, node = plan(variables, node, register="__container_toolkit_decision")
    assert later["reused"] is False and len(node.calls) == 2


def test_a_stale_spec_is_made_again_and_the_spec_made_is_judged():
    updated = dict(GPU, driver={"version": "580.200.01"})
    result, _node = plan(host(gpu=updated))
    assert result["cdi"]["generate"] and result["cdi"]["reasons"] == [
        "the CDI spec was made for driver 580.159.04, the node runs 580.200.01"]
    # After nvidia-ctk: a spec still made for the old driver fails the task, one for the node's driver passes.
    judged, _node = plan(host(gpu=updated), args={"stage": "cdi"})
    assert judged["failed"] and judged["msg"].startswith("container_toolkit: the CDI spec nvidia-ctk made does not fit the node")
    fits, _node = plan(host(), args={"stage": "cdi"})
    assert not fits.get("failed") and fits["cdi"]["state"] == "current" and "inputs_key" not in fits


NODE_FACTS = "aistack.gpu_node.node_facts"


class UnreadNode(Node):
    """A node this run has not read yet (a role run alone): node_facts answers as setup prefixes its facts, with
    the GPUs and the runtimes; the probe as Node."""

    def __call__(self, module_name=None, module_args=None, task_vars=None):
        if module_name != NODE_FACTS:
            return super(UnreadNode, self).__call__(module_name, module_args, task_vars)
        self.calls.append((module_name, module_args))
        facts = dict(("ansible_" + name, value) for name, value in DEBIAN.items())
        facts.update(aistack_gpu=GPU, aistack_container_runtimes=["podman"])
        return dict(changed=False, ansible_facts=facts, paths=[])


def test_a_role_run_alone_reads_the_facts_and_gpus_once_and_publishes_them():
    variables = dict(host(), ansible_facts={})
    result, node = plan(variables, UnreadNode(), register="__container_toolkit_decision")
    assert [name for name, _args in node.calls] == [NODE_FACTS, PROBE] and node.calls[0][1] == {"gpu": True}
    assert result["mode"] == "work" and result["manager"] == "apt" and result["cdi"]["state"] == "current"
    assert result["ansible_facts"]["ansible_os_family"] == "Debian" and result["ansible_facts"]["aistack_gpu"] == GPU
    # The facts published, the role's next run reads nothing of them, and the read facts are no part of the plan
    # handed back: the same key as on a host whose facts were there.
    read = dict(variables, ansible_facts=dict(DEBIAN, aistack_gpu=GPU, aistack_container_runtimes=["podman"]),
                __container_toolkit_decision=result)
    again, node = plan(read, Node(), register="__container_toolkit_decision")
    assert again["reused"] is True and node.calls == [] and "ansible_facts" not in again


def test_a_failed_node_reading_fails_the_task_with_its_message():
    def failing(module_name=None, module_args=None, task_vars=None):
        return dict(failed=True, msg="nvidia-smi hung")
    result = run_planner(ActionModule, dict(host(), ansible_facts={}), failing)
    assert result["failed"] and result["msg"] == ("reading the node (node_facts: the OS facts and the GPUs) failed: "
                                                  "nvidia-smi hung")


def test_a_plan_with_problems_fails_the_task_naming_the_host_and_each_problem():
    # Seen failing against the planner that returned the problems without failing (the role's fail task's job).
    newer = Node(packages=dict((name, "1.19.0-1") for name in ct.PACKAGES))
    result, _node = plan(host(version="1.18.0"), newer)
    assert result["mode"] == "refuse" and result["failed"] is True
    assert result["msg"] == "container_toolkit on node1: " + " | ".join(result["problems"])
    assert result["msg"].startswith("container_toolkit on node1: container_toolkit_version 1.18.0 is older than the "
                                    "installed toolkit 1.19.0")
    assert "reused" in result and "inputs_key" in result
    # A refused node runs no task after it: nothing read is published.
    refused, _node = plan(dict(host(version="1.18.0"), ansible_facts={}), UnreadNode(packages=newer.reading["packages"]))
    assert refused["failed"] is True and refused["mode"] == "refuse" and "ansible_facts" not in refused
    working, _node = plan(host())
    assert "failed" not in working
