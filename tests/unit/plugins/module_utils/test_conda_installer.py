# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml

from conftest import REPO_ROOT
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda.installer import (
    choose_installer,
    existing_prefix_action,
    install_action,
    installer_version_tuple,
    started_record_name,
)


@pytest.fixture(scope="module")
def table():
    """The role's own checksum table, so the tests see what the role ships."""
    with open(os.path.join(REPO_ROOT, "roles", "miniconda", "vars", "main.yml")) as handle:
        return yaml.safe_load(handle)["__miniconda_installers"]


@pytest.mark.parametrize("version, expected", [
    ("25.1.1-2", (25, 1, 1, 2)), ("24.11.1-0", (24, 11, 1, 0)), ("25.3.0", (25, 3, 0, 0)), (" 26.7.2-0\n", (26, 7, 2, 0)),
])
def test_installer_versions_compare_as_numbers(version, expected):
    assert installer_version_tuple(version) == expected


def test_installer_version_order_is_numeric_not_textual():
    assert installer_version_tuple("24.11.1-0") > installer_version_tuple("24.9.2-0")
    assert installer_version_tuple("25.1.1-10") > installer_version_tuple("25.1.1-2")


@pytest.mark.parametrize("bad", ["latest", "25.1", "v25.1.1-2", "25.1.1-x", ""])
def test_installer_version_rejects_non_versions(bad):
    with pytest.raises(ValueError):
        installer_version_tuple(bad)


def test_every_table_entry_is_a_sha256_with_a_source(table):
    for flavor, entry in table.items():
        assert entry["default_version"] in entry["versions"], flavor
        for version, arches in entry["versions"].items():
            installer_version_tuple(version)
            for arch, known in arches.items():
                assert len(known["sha256"]) == 64 and int(known["sha256"], 16) >= 0, (flavor, version, arch)
                assert known["source"], (flavor, version, arch)


def test_pinned_miniconda_default_is_the_py311_build_from_the_vendor(table):
    chosen = choose_installer(table, "miniconda", "", "x86_64")
    assert chosen["filename"] == "Miniconda3-py311_25.1.1-2-Linux-x86_64.sh"
    assert chosen["url"] == "https://repo.anaconda.com/miniconda/Miniconda3-py311_25.1.1-2-Linux-x86_64.sh"
    assert chosen["sha256"] == "d8c1645776c0758214e4191c605abe5878002051316bd423f2b14b22d6cb4251"
    assert "repo.anaconda.com" in chosen["source"]


def test_miniforge_on_arm_uses_its_own_checksum(table):
    chosen = choose_installer(table, "miniforge", "25.3.0-3", "arm64")
    assert chosen["filename"] == "Miniforge3-25.3.0-3-Linux-aarch64.sh"
    assert chosen["sha256"] == "ac89f17b0eec4e98d38a53d1ae688e0f22c77d8ea5b5f008c2455e90ef095339"
    assert chosen["url"] == ("https://github.com/conda-forge/miniforge/releases/download/25.3.0-3/"
                             "Miniforge3-25.3.0-3-Linux-aarch64.sh")


def test_miniforge_url_follows_the_version_released(table):
    # Each Miniforge release has its own download folder, named after the version.
    chosen = choose_installer(table, "miniforge", "25.11.0-1", "x86_64", sha256="cd" * 32)
    assert chosen["url"] == ("https://github.com/conda-forge/miniforge/releases/download/25.11.0-1/"
                             "Miniforge3-25.11.0-1-Linux-x86_64.sh")


def test_mirror_url_replaces_the_vendor_url_but_not_the_checksum(table):
    chosen = choose_installer(table, "miniconda", "24.11.1-0", "x86_64", url="http://mirror.local/m.sh")
    assert chosen["url"] == "http://mirror.local/m.sh"
    assert chosen["sha256"] == "807774bae6cd87132094458217ebf713df436f64779faf9bb4c3d4b6615c1e3a"


def test_a_password_in_the_mirror_url_is_masked_in_what_the_plan_returns(table):
    chosen = choose_installer(table, "miniconda", "24.11.1-0", "x86_64", url="https://ci:S3cret@mirror.local/m.sh")
    assert chosen["url"] == "https://ci:***@mirror.local/m.sh"


def test_unknown_version_needs_the_users_checksum(table):
    with pytest.raises(ValueError, match="miniconda_installer_sha256"):
        choose_installer(table, "miniconda", "26.7.1-0", "x86_64")
    chosen = choose_installer(table, "miniconda", "26.7.1-0", "x86_64", sha256="AB" * 32)
    assert chosen["sha256"] == "ab" * 32 and "given by the user" in chosen["source"]


def test_users_checksum_contradicting_the_table_is_refused(table):
    with pytest.raises(ValueError, match="differs from the vendor's published"):
        choose_installer(table, "miniconda", "24.11.1-0", "x86_64", sha256="0" * 64)


@pytest.mark.parametrize("flavor, arch, sha, message", [
    ("anaconda", "x86_64", "", "miniconda_flavor"),
    ("miniconda", "s390x", "", "architecture"),
    ("miniconda", "x86_64", "xyz", "64 hex digits"),
])
def test_bad_input_names_the_variable(table, flavor, arch, sha, message):
    with pytest.raises(ValueError, match=message):
        choose_installer(table, flavor, "", arch, sha256=sha)


DESIRED = {"flavor": "miniconda", "version": "25.1.1-2", "sha256": "a" * 64}


@pytest.mark.parametrize("exists, marker, runs, action", [
    (False, None, False, "install"),
    (True, None, False, "repair"),
    (True, {"flavor": "miniconda"}, True, "repair"),
    (True, "garbage", True, "repair"),
    (True, {"flavor": "miniconda", "version": "25.1.1-2", "sha256": "a" * 64}, False, "repair"),
    (True, {"flavor": "miniconda", "version": "25.1.1-2", "sha256": "a" * 64}, True, "none"),
    (True, {"flavor": "miniconda", "version": "25.1.1-2", "sha256": "b" * 64}, True, "repair"),
    (True, {"flavor": "miniconda", "version": "24.11.1-0"}, True, "upgrade"),
    (True, {"flavor": "miniconda", "version": "26.7.1-0"}, True, "refuse"),
    (True, {"flavor": "miniforge", "version": "25.3.0-3"}, True, "refuse"),
])
def test_install_action(exists, marker, runs, action):
    assert install_action(DESIRED, exists, marker, runs)["action"] == action


def test_downgrade_only_when_allowed():
    marker = {"flavor": "miniconda", "version": "26.7.1-0"}
    assert "miniconda_allow_downgrade" in install_action(DESIRED, True, marker, True)["reason"]
    assert install_action(DESIRED, True, marker, True, allow_downgrade=True)["action"] == "upgrade"


MARKER = ".aistack-miniconda.json"


@pytest.mark.parametrize("entries, started, action", [
    # someone else's folder: refused, whatever is in it
    (["data.tar"], False, "refuse"),
    ([".bashrc"], False, "refuse"),
    (["bin", "lib", "pkgs"], False, "refuse"),
    # not a folder
    (None, False, "refuse"),
    (None, True, "refuse"),
    # empty, or a fresh filesystem's mount point: installed into
    ([], False, "install"),
    (["lost+found"], False, "install"),
    ([], True, "install"),
    # a conda base (the role's or from elsewhere), the role's marker, or its record of a started install:
    # install_action decides
    (["bin", "conda-meta"], False, None),
    ([MARKER, "bin"], False, None),
    (["pkgs", "_conda"], True, None),
])
def test_existing_prefix_action(entries, started, action):
    decision = existing_prefix_action(entries, started, MARKER)
    assert (decision and decision["action"]) == action
    if action == "refuse":
        assert decision["reason"].startswith("miniconda_prefix ") and "Nothing was changed." in decision["reason"]


def test_foreign_folder_refusal_names_what_is_in_it():
    reason = existing_prefix_action(["b", "a", "lost+found"], False, MARKER)["reason"]
    assert "it holds a, b, lost+found, and no conda-meta/" in reason
    reason = existing_prefix_action(["f%d" % number for number in range(8)], False, MARKER)["reason"]
    assert "it holds f0, f1, f2, f3, f4 and 3 more, and no conda-meta/" in reason


@pytest.mark.parametrize("prefix, name", [
    ("/opt/conda", "opt-conda.json"),
    ("/opt/conda/", "opt-conda.json"),
    ("//srv//conda", "srv-conda.json"),
    ("/opt/my-conda", "opt-my\\x2dconda.json"),
    ("/srv/.hidden/conda_1.2", "srv-.hidden-conda_1.2.json"),
    ("/opt/a\\b", "opt-a\\x5cb.json"),
    (u"/opt/c\u00f6nda", "opt-c\\xc3\\xb6nda.json"),
])
def test_started_record_name_is_the_prefix_as_systemd_escapes_it(prefix, name):
    assert started_record_name(prefix) == name


def test_started_record_names_differ_for_different_prefixes():
    prefixes = ["/opt/a-b", "/opt/a/b", "/opt/a_b", "/opt/a.b", "/opt/a\\x2db"]
    assert len(set(started_record_name(prefix) for prefix in prefixes)) == len(prefixes)
