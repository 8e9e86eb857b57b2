# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""module_utils.decide.miniconda: the miniconda role's input check, its refusals, and whether what the plan read of
conda shows the role's settings. The messages are the ones the role's tasks gave, word for word
(tests/bad_inputs.yml and the miniconda scenario look for them)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

import pytest
import yaml

from conftest import REPO_ROOT
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import miniconda

ROLE = os.path.join(REPO_ROOT, "roles", "miniconda")
with open(os.path.join(ROLE, "defaults", "main.yml")) as _handle:
    DEFAULTS = yaml.safe_load(_handle)
with open(os.path.join(ROLE, "vars", "main.yml")) as _handle:
    ROLE_VARS = yaml.safe_load(_handle)
FOLDERS = ROLE_VARS["__miniconda_system_folders"]
CLEAN = ROLE_VARS["__miniconda_clean_flags"]
BAD_INPUT = (
    "miniconda: bad input. miniconda_prefix must be an absolute path without whitespace or '.'/'..' parts, and not a "
    "system folder (/, /bin, /boot, /dev, /etc, /home, /lib, /lib32, /lib64, /media, /mnt, /opt, /proc, /root, /run, "
    "/sbin, /srv, /sys, /tmp, /usr, /usr/bin, /usr/lib, /usr/local, /usr/share, /var, /var/lib, /var/tmp, /var/cache: "
    "the installer would take it over), miniconda_download_dir absolute, miniconda_profile_script a file "
    "/etc/profile.d/*.sh, miniconda_group not empty, miniconda_clean one of none, tarballs, packages, all, "
    "miniconda_installer_url an http(s) URL, miniconda_installer_src and miniconda_installer_remote_src absolute paths.")


def check(**changed):
    """The input check of the role's defaults with ``changed`` (short names)."""
    settings = dict((name, DEFAULTS["miniconda_" + name]) for name in miniconda.CHECKED)
    settings.update(changed)
    return miniconda.bad_input(settings, FOLDERS, CLEAN)


def test_the_roles_defaults_pass():
    assert check() is None


@pytest.mark.parametrize("changed", [
    dict(prefix="/srv/conda"), dict(prefix="/opt/conda/"), dict(prefix="/opt/..conda"), dict(prefix="/var/lib/conda"),
    dict(download_dir="/x"), dict(profile_script="/etc/profile.d/a.sh"), dict(clean="none"), dict(clean="all"),
    dict(installer_url="http://mirror.example/x.sh"), dict(installer_url="https://u:p@mirror.example/x.sh"),
    dict(installer_src="/srv/x.sh"), dict(installer_remote_src="/root/x.sh"), dict(anaconda_tos_channels=[]),
    dict(anaconda_tos_channels=("https://repo.anaconda.com/pkgs/main",)),
])
def test_good_inputs_pass(changed):
    assert check(**changed) is None


@pytest.mark.parametrize("changed", [
    # the prefix: relative, whitespace anywhere, a '.' or '..' part, a system folder with or without a trailing /
    dict(prefix="opt/conda"), dict(prefix=""), dict(prefix="/"), dict(prefix="/opt/conda "), dict(prefix="/opt/c onda"),
    dict(prefix="/opt/conda\n"), dict(prefix="/opt/conda/../../etc"), dict(prefix="/opt/./conda"), dict(prefix="/opt/conda/.."),
    dict(prefix="/opt"), dict(prefix="/opt/"), dict(prefix="/usr/local//"), dict(prefix="/var/cache"), dict(prefix=None),
    dict(download_dir="var/cache"), dict(download_dir="/"), dict(download_dir=""),
    dict(profile_script="/etc/bash.bashrc"), dict(profile_script="/etc/profile.d/.sh"), dict(profile_script="/etc/profileXd/a.sh"),
    dict(profile_script="/etc/profile.d/a.shx"),
    dict(group=""), dict(group=None), dict(group=5),
    dict(clean="everything"), dict(clean=""), dict(clean=None), dict(clean=["all"]),
    dict(installer_url="ftp://mirror.example/x.sh"), dict(installer_url="mirror.example/x.sh"), dict(installer_url=None),
    dict(installer_src="x.sh"), dict(installer_src=None), dict(installer_remote_src="root/x.sh"),
    dict(anaconda_tos_channels="https://repo.anaconda.com/pkgs/main"), dict(anaconda_tos_channels=None),
    dict(anaconda_tos_channels=5),
])
def test_each_bad_input_fails_with_the_roles_message(changed):
    assert check(**changed) == BAD_INPUT


def test_the_folders_and_the_clean_choices_are_the_ones_given():
    settings = dict((name, DEFAULTS["miniconda_" + name]) for name in miniconda.CHECKED)
    settings.update(prefix="/srv", clean="none")
    assert miniconda.bad_input(settings, ["/opt"], {"none": [], "all": ["--all"]}) is None
    message = miniconda.bad_input(dict(settings, prefix="/opt"), ["/opt"], {"none": [], "all": ["--all"]})
    assert "(/opt: the installer would take it over)" in message and "miniconda_clean one of none, all," in message
    assert miniconda.bad_input(dict(settings, clean="tarballs"), ["/opt"], {"none": [], "all": ["--all"]}) is not None


@pytest.mark.parametrize("flavor, accepted, refused", [
    ("miniconda", False, True), ("miniconda", True, False), ("miniforge", False, False), ("miniforge", True, False),
])
def test_miniconda_is_refused_until_anacondas_terms_are_accepted(flavor, accepted, refused):
    message = miniconda.terms_refusal(flavor, accepted)
    if not refused:
        assert message is None
        return
    assert message == (
        "miniconda: Miniconda's default channels (repo.anaconda.com) require Anaconda's terms of service "
        "(https://www.anaconda.com/legal). Read them and set miniconda_accept_anaconda_tos: true, or use "
        "miniconda_flavor: miniforge (conda-forge, no terms to accept).")


def test_group_members_that_are_no_user_are_refused_first():
    plan = {"missing_members": ["alcie", "bbo"], "action": "refuse", "reason": "anything"}
    assert miniconda.plan_refusal(plan, "/opt/conda", "conda", "node1") == (
        "miniconda: miniconda_group_members names alcie, bbo, no user on node1. The role adds existing users to conda; "
        "it never creates one. Create the account first or fix the name. Nothing was changed.")


def test_a_prefix_the_plan_refuses_is_refused_with_its_reason():
    plan = {"missing_members": [], "action": "refuse", "reason": "miniconda_prefix is there but is not a folder"}
    assert miniconda.plan_refusal(plan, "/opt/notes", "conda", "node1") == (
        "miniconda: /opt/notes: miniconda_prefix is there but is not a folder")


@pytest.mark.parametrize("action", ["none", "install", "repair", "upgrade"])
def test_every_other_plan_is_accepted(action):
    assert miniconda.plan_refusal({"missing_members": [], "action": action, "reason": "r"}, "/opt/conda", "conda", "n") is None


def test_conda_settings_keep_only_the_prefix_and_the_activation_setting():
    shown = json.dumps({"root_prefix": "/opt/conda", "auto_activate": False,
                        "channels": ["https://user:secret@mirror.example/conda-forge"]})
    assert miniconda.conda_settings(shown) == {"root_prefix": "/opt/conda", "auto_activate": False}
    assert miniconda.conda_settings(json.dumps({"root_prefix": "/opt/conda", "auto_activate_base": True})) == {
        "root_prefix": "/opt/conda", "auto_activate": True}


@pytest.mark.parametrize("shown", ["", "not json", "[]", "null", "{"])
def test_text_that_is_no_settings_object_is_none(shown):
    assert miniconda.conda_settings(shown) is None


@pytest.mark.parametrize("settings, prefix, wanted, in_place", [
    ({"root_prefix": "/opt/conda", "auto_activate": False}, "/opt/conda", False, True),
    ({"root_prefix": "/opt/conda", "auto_activate": True}, "/opt/conda", True, True),
    ({"root_prefix": "/opt/conda", "auto_activate": True}, "/opt/conda", False, False),
    ({"root_prefix": "/opt/conda", "auto_activate": False}, "/opt/conda", True, False),
    ({"root_prefix": "/srv/conda", "auto_activate": False}, "/opt/conda", False, False),
    # stricter than the verify step's assert, never looser: anything but a boolean is asked again
    ({"root_prefix": "/opt/conda", "auto_activate": 0}, "/opt/conda", False, False),
    ({"root_prefix": "/opt/conda", "auto_activate": None}, "/opt/conda", False, False),
    ({"root_prefix": "/opt/conda"}, "/opt/conda", False, False),
    (None, "/opt/conda", False, False),
])
def test_settings_are_in_place_only_as_the_verify_step_wants_them(settings, prefix, wanted, in_place):
    assert miniconda.settings_in_place(settings, prefix, wanted) is in_place
