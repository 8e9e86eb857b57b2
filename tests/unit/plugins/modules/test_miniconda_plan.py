# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The miniconda_plan module: what it reads of a (fake) prefix and the decision it hands the role.
The rules themselves are tested on module_utils.conda.installer."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

import pytest
import yaml

from ansible.module_utils import basic
from conftest import REPO_ROOT, run_module
from ansible_collections.aistack.gpu_node.plugins.modules import miniconda_plan
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda.installer import started_record_name

with open(os.path.join(REPO_ROOT, "roles", "miniconda", "vars", "main.yml")) as _handle:
    TABLE = yaml.safe_load(_handle)["__miniconda_installers"]


@pytest.fixture
def node(tmp_path, monkeypatch):
    """A prefix path on a node whose conda answers ``node.conda_rc``, and ``config --show --json`` ``node.config_rc``
    (None: as conda_rc) with ``node.config_out``: by default the role's settings, and a channel with a password."""
    class Node(object):
        prefix = tmp_path / "conda"
        marker = tmp_path / "conda" / ".aistack-miniconda.json"
        records = tmp_path / "records"
        conda_rc = 0
        config_rc = None
        config_out = json.dumps({"root_prefix": str(tmp_path / "conda"), "auto_activate": False,
                                 "channels": ["https://mirror-user:s3cret@mirror.example/conda-forge"]})
        calls = []

    def run_command(self, argv, **kwargs):
        Node.calls.append(argv)
        if argv[1:] == ["config", "--show", "--json"]:
            return (Node.conda_rc if Node.config_rc is None else Node.config_rc), Node.config_out, ""
        return Node.conda_rc, "conda 25.1.1\n", ""

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    Node.calls = []
    return Node


def plan(node, capsys, **settings):
    args = dict(installers=TABLE, flavor="miniconda", architecture="x86_64", prefix=str(node.prefix),
                marker=str(node.marker), started_records=str(node.records), _ansible_check_mode=True)
    args.update(settings)
    return run_module(miniconda_plan, args, capsys)


def install_conda(node, marker, conda_meta=True):
    """A conda base at the prefix (``conda-meta/`` unless told otherwise) whose bin/conda runs."""
    (node.prefix / "bin").mkdir(parents=True)
    if conda_meta:
        (node.prefix / "conda-meta").mkdir()
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
    assert node.calls == [] and result["conda_settings"] is None and result["conda_settings_in_place"] is False


def write_started_record(node, prefix=None, mode=0o644):
    node.records.mkdir(exist_ok=True)
    record = node.records / started_record_name(str(node.prefix))
    record.write_text(json.dumps({"prefix": prefix or str(node.prefix), "flavor": "miniconda", "version": "25.1.1-2"}))
    record.chmod(mode)
    return record


def test_no_prefix_is_installed_without_update_in_place(node, capsys):
    result = plan(node, capsys)[1]
    assert result["prefix_exists"] is False
    assert result["started_record"] == str(node.records / started_record_name(str(node.prefix)))


def test_existing_folder_the_role_did_not_make_is_refused_without_running_it(node, capsys):
    install_conda(node, None, conda_meta=False)
    (node.prefix / "notes.txt").write_text(u"an admin's file\n")
    rc, result = plan(node, capsys)
    assert rc == 0 and result["action"] == "refuse" and result["prefix_exists"] is True
    assert result["reason"].startswith("miniconda_prefix is an existing folder this role did not make: it holds bin, "
                                       "notes.txt, and no conda-meta/")
    assert node.calls == []


@pytest.mark.parametrize("found", [[], ["lost+found"]])
def test_empty_folder_is_installed_into_in_place(node, capsys, found):
    node.prefix.mkdir()
    for name in found:
        (node.prefix / name).mkdir()
    rc, result = plan(node, capsys)
    assert (rc, result["action"], result["prefix_exists"]) == (0, "install", True)
    assert node.calls == []


def test_install_the_role_started_before_conda_meta_is_repaired(node, capsys):
    (node.prefix / "pkgs").mkdir(parents=True)
    write_started_record(node)
    rc, result = plan(node, capsys)
    assert (rc, result["action"]) == (0, "repair") and "no completion marker" in result["reason"]


@pytest.mark.parametrize("prefix, mode", [("/elsewhere", 0o644), (None, 0o664), (None, 0o646)])
def test_a_record_others_may_write_or_of_another_prefix_proves_nothing(node, capsys, prefix, mode):
    (node.prefix / "pkgs").mkdir(parents=True)
    write_started_record(node, prefix, mode)
    assert plan(node, capsys)[1]["action"] == "refuse"


def test_a_linked_record_proves_nothing(node, capsys, tmp_path):
    (node.prefix / "pkgs").mkdir(parents=True)
    real = write_started_record(node)
    real.rename(tmp_path / "elsewhere.json")
    real.symlink_to(tmp_path / "elsewhere.json")
    assert plan(node, capsys)[1]["action"] == "refuse"


def test_conda_base_from_elsewhere_is_adopted(node, capsys):
    install_conda(node, None)
    rc, result = plan(node, capsys)
    assert (rc, result["action"]) == (0, "repair")
    assert node.calls == [[str(node.prefix / "bin" / "conda"), "config", "--show", "--json"]]


def test_a_file_at_the_prefix_is_refused(node, capsys):
    node.prefix.write_text(u"not a folder\n")
    result = plan(node, capsys)[1]
    assert result["action"] == "refuse" and result["reason"].startswith("miniconda_prefix is there but is not a folder")


def install_verified(node, capsys):
    installer = plan(node, capsys)[1]["installer"]
    install_conda(node, dict((k, installer[k]) for k in ("flavor", "version", "sha256", "filename")))


def test_verified_prefix_needs_nothing_and_one_conda_run_shows_its_settings(node, capsys):
    install_verified(node, capsys)
    rc, result = plan(node, capsys)
    assert (rc, result["action"]) == (0, "none")
    # conda config answering is conda running: no --version besides.
    assert node.calls == [[str(node.prefix / "bin" / "conda"), "config", "--show", "--json"]]
    assert result["conda_settings"] == {"root_prefix": str(node.prefix), "auto_activate": False}
    assert result["conda_settings_in_place"] is True
    # Only the two settings come back: a channel's password never does.
    assert "s3cret" not in json.dumps(result)


@pytest.mark.parametrize("shown, settings", [
    ({"auto_activate": False}, dict(auto_activate_base=True)),
    ({"root_prefix": "/elsewhere"}, {}),
    ({"auto_activate": None}, {}),
])
def test_settings_other_than_the_roles_are_not_in_place(node, capsys, shown, settings):
    install_verified(node, capsys)
    node.config_out = json.dumps(dict({"root_prefix": str(node.prefix), "auto_activate": False}, **shown))
    result = plan(node, capsys, **settings)[1]
    assert result["action"] == "none" and result["conda_settings_in_place"] is False


def test_an_older_conda_names_the_activation_setting_auto_activate_base(node, capsys):
    install_verified(node, capsys)
    node.config_out = json.dumps({"root_prefix": str(node.prefix), "auto_activate_base": True})
    result = plan(node, capsys, auto_activate_base=True)[1]
    assert result["conda_settings"] == {"root_prefix": str(node.prefix), "auto_activate": True}
    assert result["conda_settings_in_place"] is True


@pytest.mark.parametrize("config_rc, config_out", [(1, ""), (0, "not json"), (0, "[]")])
def test_a_conda_that_runs_but_shows_no_settings_is_decided_as_before_and_not_in_place(node, capsys, config_rc, config_out):
    install_verified(node, capsys)
    node.config_rc, node.config_out = config_rc, config_out
    result = plan(node, capsys)[1]
    assert result["action"] == "none" and result["conda_settings"] is None and result["conda_settings_in_place"] is False
    conda = str(node.prefix / "bin" / "conda")
    # conda config failing (a broken .condarc) is no damaged install: --version alone says whether conda runs.
    assert node.calls == [[conda, "config", "--show", "--json"]] + ([[conda, "--version"]] if config_rc else [])


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


def test_a_prefix_that_cannot_be_read_fails_naming_it(node, capsys, monkeypatch):
    node.prefix.mkdir()

    def refuse(path):
        raise PermissionError(13, "Permission denied", path)
    monkeypatch.setattr(miniconda_plan.os, "listdir", refuse)
    rc, result = plan(node, capsys)
    assert rc == 1 and result["msg"].startswith("miniconda: cannot read miniconda_prefix %s: " % node.prefix)
