# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The miniconda_plan module: what it reads of a (fake) prefix and the decision it hands the role.
The rules themselves are tested on module_utils.conda_installer."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

import pytest
import yaml

from ansible.module_utils import basic
from conftest import REPO_ROOT, run_module
from ansible_collections.aistack.gpu_node.plugins.modules import miniconda_plan

with open(os.path.join(REPO_ROOT, "roles", "miniconda", "vars", "main.yml")) as _handle:
    TABLE = yaml.safe_load(_handle)["__miniconda_installers"]


@pytest.fixture
def node(tmp_path, monkeypatch):
    """A prefix path on a node whose conda answers ``node.conda_rc``."""
    class Node(object):
        prefix = tmp_path / "conda"
        marker = tmp_path / "conda" / ".aistack-miniconda.json"
        conda_rc = 0
        calls = []

    def run_command(self, argv, **kwargs):
        Node.calls.append(argv)
        return Node.conda_rc, "conda 25.1.1\n", ""

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    Node.calls = []
    return Node


def plan(node, capsys, **settings):
    args = dict(installers=TABLE, flavor="miniconda", architecture="x86_64", prefix=str(node.prefix),
                marker=str(node.marker), _ansible_check_mode=True)
    args.update(settings)
    return run_module(miniconda_plan, args, capsys)


def install_conda(node, marker):
    (node.prefix / "bin").mkdir(parents=True)
    conda = node.prefix / "bin" / "conda"
    conda.write_text(u"#!/bin/sh\n")
    conda.chmod(0o755)
    if marker is not None:
        node.marker.write_text(marker if isinstance(marker, str) else json.dumps(marker))


def test_no_prefix_is_an_install_of_the_default_version(node, capsys):
    rc, result = plan(node, capsys)
    assert rc == 0 and not result["changed"]
    assert (result["action"], result["reason"]) == ("install", "no conda prefix yet")
    assert result["installer"]["version"] == TABLE["miniconda"]["default_version"]
    assert result["installer"]["filename"] == "Miniconda3-py311_25.1.1-2-Linux-x86_64.sh"
    assert node.calls == []


def test_verified_prefix_needs_nothing(node, capsys):
    installer = plan(node, capsys)[1]["installer"]
    install_conda(node, dict((k, installer[k]) for k in ("flavor", "version", "sha256", "filename")))
    rc, result = plan(node, capsys)
    assert (rc, result["action"]) == (0, "none")
    assert node.calls == [[str(node.prefix / "bin" / "conda"), "--version"]]


@pytest.mark.parametrize("marker, conda_rc, reason", [
    (None, 0, "no completion marker"),
    ("{not json", 0, "no completion marker"),
    ({"flavor": "miniconda", "version": "25.1.1-2"}, 1, "does not run"),
])
def test_damaged_prefix_is_repaired(node, capsys, marker, conda_rc, reason):
    install_conda(node, marker)
    node.conda_rc = conda_rc
    rc, result = plan(node, capsys)
    assert rc == 0 and result["action"] == "repair" and reason in result["reason"]


def test_newer_marker_is_refused_unless_downgrade_is_allowed(node, capsys):
    install_conda(node, {"flavor": "miniconda", "version": "99.1.1-0"})
    result = plan(node, capsys)[1]
    assert result["action"] == "refuse"
    assert "the prefix holds miniconda 99.1.1-0, newer than 25.1.1-2" in result["reason"]
    assert plan(node, capsys, allow_downgrade=True)[1]["action"] == "upgrade"


def test_marker_with_a_bad_version_names_the_marker(node, capsys):
    install_conda(node, {"flavor": "miniconda", "version": "bad"})
    rc, result = plan(node, capsys)
    assert rc == 1 and result["msg"].startswith("miniconda: the completion marker %s: " % node.marker)


@pytest.mark.parametrize("settings, message", [
    (dict(version="99.1.1-0"), "99.1.1-0"),
    (dict(sha256="0" * 64), "d8c1645776c0758214e4191c605abe5878002051316bd423f2b14b22d6cb4251"),
    (dict(flavor="anaconda"), "miniconda_flavor"),
    (dict(architecture="s390x"), "architecture"),
])
def test_bad_installer_input_fails_naming_it(node, capsys, settings, message):
    rc, result = plan(node, capsys, **settings)
    assert rc == 1 and result["msg"].startswith("miniconda: ") and message in result["msg"]


def test_architecture_defaults_to_the_nodes(node, capsys, monkeypatch):
    monkeypatch.setattr(miniconda_plan.platform, "machine", lambda: "aarch64")
    result = plan(node, capsys, architecture=None, flavor="miniforge")[1]
    assert result["installer"]["filename"].endswith("-Linux-aarch64.sh")


def test_says_whether_the_node_has_the_group(node, capsys):
    import grp
    known = grp.getgrgid(os.getgid()).gr_name
    assert plan(node, capsys, group=known)[1]["group_exists"] is True
    assert plan(node, capsys, group="aistack-no-such-group")[1]["group_exists"] is False
    assert plan(node, capsys)[1]["group_exists"] is None


def test_names_group_members_that_are_no_user(node, capsys):
    import pwd
    known = pwd.getpwuid(os.getuid()).pw_name
    assert plan(node, capsys, members=["aistack-no-such-user", known, "alcie"])[1]["missing_members"] == [
        "aistack-no-such-user", "alcie"]
    assert plan(node, capsys)[1]["missing_members"] == []
