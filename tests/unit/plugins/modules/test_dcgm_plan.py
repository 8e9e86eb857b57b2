# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The dcgm_plan module: what it reads on a (fake) node and hands the role. The rules are tested on
module_utils.decide.dcgm; here dpkg-query, rpm, dnf and dcgmi answer from recorded outputs."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

import pytest

from ansible.module_utils import basic
from conftest import read_public, run_module
from ansible_collections.aistack.gpu_node.plugins.modules import dcgm_plan

H100 = {"state": "ok", "gpus": [{"name": "NVIDIA H100 80GB HBM3"}],
        "driver": {"userspace_version": "580.159.04", "cuda_version": "13.0"}}
UNLOADED = {"state": "gpu_no_driver", "gpus": [{"name": "NVIDIA H100 80GB HBM3"}], "driver": {"userspace_version": None}}


def dpkg_query(text, held=()):
    """``dpkg-query -W -f '${db:Status-Abbrev}\\t${Package}\\t${Version}\\n'`` of a ``dpkg -l`` listing."""
    rows = [line.split()[1:3] for line in text.splitlines() if line.startswith("ii ")]
    return "".join("%s\t%s\t%s\n" % ("hi " if name in held else "ii ", name, version) for name, version in rows)


@pytest.fixture
def node(monkeypatch, tmp_path):
    class Node(object):
        programs = set()
        outputs = {}
        calls = []
        record = str(tmp_path / "dcgm.json")

    def get_bin_path(self, name, required=False, opt_dirs=None):
        return "/usr/bin/" + name if name in Node.programs else None

    def run_command(self, argv, **kwargs):
        Node.calls.append(argv)
        return Node.outputs.get(os.path.basename(argv[0]), (127, "", "not found"))

    Node.outputs, Node.calls, Node.programs = {}, [], set()
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", get_bin_path)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    return Node


def plan(node, capsys, **settings):
    args = dict(gpu=H100, os_family="Debian", pkg_mgr="apt", record_path=node.record, _ansible_check_mode=True)
    args.update(settings)
    return run_module(dcgm_plan, args, capsys)


def test_a_node_without_dcgm_gets_the_package_of_its_cuda_major(node, capsys):
    # dpkg-query exits 1 when a pattern matches nothing.
    node.outputs["dpkg-query"] = (1, "", "dpkg-query: no packages found matching datacenter-gpu-manager*\n")
    code, result = plan(node, capsys, install=True, version="4.5.0")
    assert code == 0 and result["changed"] is False and result["failed"] is False
    assert result["mode"] == "install" and result["specs"] == ["datacenter-gpu-manager-4-core=1:4.5.0-*",
                                                               "datacenter-gpu-manager-4-cuda13=1:4.5.0-*"]
    assert node.calls[0][:2] == ["dpkg-query", "-W"]
    assert node.calls[0][-4:] == ["datacenter-gpu-manager*", "dcgmi", "libdcgm", "nv-hostengine"]


def test_the_image_dcgm_4_7_is_adopted_and_what_is_not_held_is_listed(node, capsys):
    node.outputs["dpkg-query"] = (0, dpkg_query(read_public("dpkg-l-dcgm-4.7.0.txt"), held={"dcgmi"}), "")
    code, result = plan(node, capsys, install=True, version="4.5.0")
    assert result["mode"] == "adopt" and result["specs"] == [] and result["installed"]["version"] == "4.7.0"
    assert len(result["hold_missing"]) == 20 and "dcgmi" not in result["hold_missing"]


def test_the_role_record_makes_it_the_role_own_and_a_downgrade_is_refused(node, capsys):
    with open(node.record, "w") as handle:
        json.dump({"managed_by": "aistack.gpu_node.dcgm", "version": "4.7.0"}, handle)
    node.outputs["dpkg-query"] = (0, dpkg_query(read_public("dpkg-l-dcgm-4.7.0.txt")), "")
    code, result = plan(node, capsys, version="4.5.0")
    assert result["mode"] == "refuse" and result["managed"]
    assert result["problems"][0].startswith("dcgm_version 4.5.0 is older than DCGM 4.7.0 that this role installed")


def test_rpm_and_versionlock_on_el(node, capsys):
    node.outputs["rpm"] = (0, "ii\tdatacenter-gpu-manager-4-core\t1:4.5.0-1\nii\tdatacenter-gpu-manager-4-cuda12\t1:4.5.0-1\n", "")
    node.outputs["dnf"] = (0, "datacenter-gpu-manager-4-core-1:4.5.0-1.*\n", "")
    code, result = plan(node, capsys, os_family="RedHat", pkg_mgr="dnf", cuda_major=12)
    assert result["mode"] == "adopt" and result["cuda_major"] == 12 and result["cuda_from"] == "dcgm_cuda_major is 12"
    assert result["hold_missing"] == ["datacenter-gpu-manager-4-cuda12"]


def test_cuda_major_from_the_driver_version_the_nvidia_driver_role_reports(node, capsys):
    node.outputs["dpkg-query"] = (1, "", "")
    code, result = plan(node, capsys, gpu=UNLOADED, install=True, driver_version="580.95.05")
    assert result["mode"] == "install" and result["package"] == "datacenter-gpu-manager-4-cuda13"
    assert result["specs"] == ["datacenter-gpu-manager-4-core", "datacenter-gpu-manager-4-cuda13"]


def test_verify_compares_client_and_host_engine(node, capsys):
    node.programs = {"dcgmi"}
    node.outputs["dcgmi"] = (0, read_public("dcgmi-v-4.7.0.txt"), "")
    code, result = run_module(dcgm_plan, dict(stage="verify", package_version="4.7.0"), capsys)
    assert code == 0 and result["problems"] == [] and result["versions"] == {"client": "4.7.0", "hostengine": "4.7.0"}
    assert node.calls == [["/usr/bin/dcgmi", "-v"]]
    node.outputs["dcgmi"] = (0, read_public("dcgmi-v-3.3.5-no-hostengine.txt"), "")
    code, result = run_module(dcgm_plan, dict(stage="verify", package_version="3.3.5"), capsys)
    assert result["problems"][0].startswith("no DCGM host engine answers")
    code, result = run_module(dcgm_plan, dict(stage="verify", package_version="3.3.5", engine_required=False), capsys)
    assert result["problems"] == []


def test_verify_without_dcgmi(node, capsys):
    code, result = run_module(dcgm_plan, dict(stage="verify", package_version="4.5.0"), capsys)
    assert result["problems"] == ["dcgmi is not on the node's PATH although DCGM 4.5.0 is installed"]
