# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/probe/managed_files.py: whether each directory and file is already in place, with
fake probes (lstat, checksum, uid_of, gid_of) and on a real tmp_path with the node's own ones."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import grp
import hashlib
import os
import pwd
import stat
from collections import namedtuple

import pytest

from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.managed_files import (
    content_checksum, entry_state, file_checksum, files_state, wanted_mode)

FakeStat = namedtuple("FakeStat", "st_mode st_uid st_gid")

USERS = {"root": 0, "alice": 1000}
GROUPS = {"root": 0, "conda": 1500}
NOT_A_GROUP = "aistack-no-such-group"
NOT_A_USER = "aistack-no-such-user"


def _lookup(table, name):
    """The fake uid_of/gid_of: an id, None when no name is asked for, -1 for a name the node lacks."""
    if name is None or name == "":
        return None
    if str(name).isdigit():
        return int(name)
    return table.get(name, -1)


def fake_uid(name):
    return _lookup(USERS, name)


def fake_gid(name):
    return _lookup(GROUPS, name)


class FakeNode(object):
    """lstat and checksum probes over {path: (FakeStat, checksum)}; records the checksums asked for."""

    def __init__(self, entries):
        self.entries = entries
        self.checksummed = []

    def lstat(self, path):
        if path not in self.entries:
            raise OSError(2, "No such file or directory", path)
        return self.entries[path][0]

    def checksum(self, path):
        self.checksummed.append(path)
        return self.entries[path][1]

    def probes(self):
        return dict(lstat=self.lstat, checksum=self.checksum, uid_of=fake_uid, gid_of=fake_gid)


def directory(mode=0o2775, uid=0, gid=1500):
    return FakeStat(stat.S_IFDIR | mode, uid, gid)


def regular(mode=0o644, uid=0, gid=1500):
    return FakeStat(stat.S_IFREG | mode, uid, gid)


def link(uid=0, gid=1500):
    return FakeStat(stat.S_IFLNK | 0o777, uid, gid)


SETTINGS = "auto_activate_base: false\n"
DIR = {"path": "/opt/conda/condarc.d", "owner": "root", "group": "conda", "mode": "02775"}
FILE = {"path": "/opt/conda/condarc.d/site.yml", "owner": "root", "group": "conda", "mode": "0644",
        "checksum": content_checksum(SETTINGS)}


def state_of(entry, kind, node):
    return entry_state(entry, kind, **node.probes())


# wanted_mode


@pytest.mark.parametrize("given, expected", [
    ("0644", 0o644),
    ("644", 0o644),
    ("02775", 0o2775),
    ("0755", 0o755),
    (420, 420),
    (0o2775, 0o2775),
    (None, None),
    ("", None),
])
def test_wanted_mode_reads_octal_text_and_takes_ints_as_they_are(given, expected):
    assert wanted_mode(given) == expected


@pytest.mark.parametrize("bad", ["0x9", "rwx", "u=rw,g=r", "-644", "0o644", " 0644"])
def test_wanted_mode_refuses_what_is_not_octal_digits_naming_the_value(bad):
    with pytest.raises(ValueError) as raised:
        wanted_mode(bad)
    assert repr(bad) in str(raised.value)
    assert "octal" in str(raised.value)


def test_wanted_mode_refuses_digits_that_are_not_octal_naming_the_value():
    with pytest.raises(ValueError) as raised:
        wanted_mode("0789")
    assert "0789" in str(raised.value)


# content_checksum and file_checksum


def test_content_checksum_is_the_sha1_of_the_utf8_text():
    assert content_checksum(SETTINGS) == hashlib.sha1(SETTINGS.encode("utf-8")).hexdigest()
    assert content_checksum("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709"
    assert content_checksum(u"caf\u00e9\n") == hashlib.sha1(u"caf\u00e9\n".encode("utf-8")).hexdigest()
    assert content_checksum(u"caf\u00e9\n") != hashlib.sha1(u"caf\u00e9\n".encode("latin-1")).hexdigest()


def test_file_checksum_matches_content_checksum_of_what_was_written(tmp_path):
    text = u"gr\u00fc\u00df dich\n" + "x" * (3 << 16)  # more than one read block
    path = tmp_path / "big.txt"
    path.write_bytes(text.encode("utf-8"))
    assert file_checksum(str(path)) == content_checksum(text)
    assert file_checksum(str(path)) != content_checksum(text + "\n")


# entry_state with fake probes


def test_an_entry_as_asked_is_in_place():
    node = FakeNode({DIR["path"]: (directory(), None), FILE["path"]: (regular(), FILE["checksum"])})
    assert state_of(DIR, "directory", node) == dict(
        path=DIR["path"], kind="directory", in_place=True, reasons=[], parent_exists=os.path.isdir("/opt/conda"),
        unknown_names=[])
    assert state_of(FILE, "file", node) == dict(
        path=FILE["path"], kind="file", in_place=True, reasons=[], parent_exists=os.path.isdir("/opt/conda/condarc.d"),
        unknown_names=[])
    assert node.checksummed == [FILE["path"]]


def test_a_missing_entry_is_not_in_place():
    state = state_of(FILE, "file", FakeNode({}))
    assert not state["in_place"]
    assert state["reasons"] == ["missing"]
    assert state["unknown_names"] == []


@pytest.mark.parametrize("kind, entry, found, reason", [
    ("directory", DIR, directory(mode=0o755), "mode 0755, not 2775"),
    ("directory", DIR, directory(mode=0o775), "mode 0775, not 2775"),
    ("file", FILE, regular(mode=0o600), "mode 0600, not 0644"),
    ("file", FILE, regular(mode=0o4644), "mode 4644, not 0644"),
])
def test_a_mode_that_differs_is_not_in_place(kind, entry, found, reason):
    node = FakeNode({entry["path"]: (found, FILE["checksum"])})
    state = state_of(entry, kind, node)
    assert not state["in_place"]
    assert state["reasons"] == [reason]


def test_a_mode_given_as_an_int_is_compared_as_it_is():
    node = FakeNode({FILE["path"]: (regular(mode=0o644), FILE["checksum"])})
    assert state_of(dict(FILE, mode=420), "file", node)["in_place"]
    assert state_of(dict(FILE, mode=0o640), "file", node)["reasons"] == ["mode 0644, not 0640"]


def test_no_mode_asked_leaves_the_mode_alone():
    node = FakeNode({FILE["path"]: (regular(mode=0o600), FILE["checksum"])})
    assert state_of(dict(FILE, mode=None), "file", node)["in_place"]


def test_an_owner_whose_uid_differs_is_not_in_place():
    node = FakeNode({FILE["path"]: (regular(uid=1000), FILE["checksum"])})
    state = state_of(FILE, "file", node)
    assert not state["in_place"]
    assert state["reasons"] == ["owner uid 1000, not root"]
    assert state["unknown_names"] == []


def test_a_group_whose_gid_differs_is_not_in_place():
    node = FakeNode({DIR["path"]: (directory(gid=0), None)})
    state = state_of(DIR, "directory", node)
    assert not state["in_place"]
    assert state["reasons"] == ["group gid 0, not conda"]


def test_owner_and_group_given_as_numbers_are_compared_as_ids():
    node = FakeNode({FILE["path"]: (regular(uid=1000, gid=1500), FILE["checksum"])})
    assert state_of(dict(FILE, owner="1000", group="1500"), "file", node)["in_place"]
    assert state_of(dict(FILE, owner="0", group="1500"), "file", node)["reasons"] == ["owner uid 1000, not 0"]


def test_no_owner_or_group_asked_leaves_them_alone():
    node = FakeNode({FILE["path"]: (regular(uid=4242, gid=4343), FILE["checksum"])})
    assert state_of(dict(FILE, owner=None, group=None), "file", node)["in_place"]
    assert state_of(dict(FILE, owner="", group=""), "file", node)["in_place"]


def test_an_unknown_group_is_never_in_place_and_is_named():
    # Whatever the gid on disk, a group the node does not know cannot be vouched for.
    node = FakeNode({FILE["path"]: (regular(), FILE["checksum"])})
    state = state_of(dict(FILE, group=NOT_A_GROUP), "file", node)
    assert not state["in_place"]
    assert state["unknown_names"] == [NOT_A_GROUP]
    assert state["reasons"] == ["group %s does not exist on the node" % NOT_A_GROUP]


def test_unknown_owner_and_group_are_both_named():
    node = FakeNode({DIR["path"]: (directory(), None)})
    state = state_of(dict(DIR, owner=NOT_A_USER, group=NOT_A_GROUP), "directory", node)
    assert not state["in_place"]
    assert state["unknown_names"] == [NOT_A_USER, NOT_A_GROUP]


def test_a_missing_entry_with_an_unknown_group_reports_both():
    state = state_of(dict(DIR, group=NOT_A_GROUP), "directory", FakeNode({}))
    assert not state["in_place"]
    assert state["reasons"] == ["missing", "group %s does not exist on the node" % NOT_A_GROUP]
    assert state["unknown_names"] == [NOT_A_GROUP]


@pytest.mark.parametrize("kind, entry, reason", [
    ("file", FILE, "not a regular file"),
    ("directory", DIR, "not a directory"),
])
def test_a_symlink_is_never_in_place(kind, entry, reason):
    # Even with every attribute as asked, the link itself is what lstat sees.
    node = FakeNode({entry["path"]: (link(), FILE["checksum"])})
    state = state_of(entry, kind, node)
    assert not state["in_place"]
    assert state["reasons"] == [reason]
    assert node.checksummed == []


def test_a_directory_where_a_file_is_wanted_is_not_in_place():
    node = FakeNode({FILE["path"]: (directory(mode=0o644), FILE["checksum"])})
    state = state_of(FILE, "file", node)
    assert not state["in_place"]
    assert state["reasons"] == ["not a regular file"]
    assert node.checksummed == []


def test_a_file_where_a_directory_is_wanted_is_not_in_place():
    node = FakeNode({DIR["path"]: (regular(mode=0o2775), None)})
    assert state_of(DIR, "directory", node)["reasons"] == ["not a directory"]


def test_content_that_differs_is_not_in_place():
    node = FakeNode({FILE["path"]: (regular(), content_checksum(SETTINGS + "extra\n"))})
    state = state_of(FILE, "file", node)
    assert not state["in_place"]
    assert state["reasons"] == ["content differs"]


def test_every_difference_is_a_reason():
    node = FakeNode({FILE["path"]: (regular(mode=0o600, uid=1000, gid=0), "0" * 40)})
    assert state_of(FILE, "file", node)["reasons"] == [
        "mode 0600, not 0644", "owner uid 1000, not root", "group gid 0, not conda", "content differs"]


def test_without_a_checksum_the_content_is_not_read():
    node = FakeNode({FILE["path"]: (regular(), None)})
    assert state_of(dict(FILE, checksum=None), "file", node)["in_place"]
    assert node.checksummed == []


def test_a_directory_content_is_never_read():
    node = FakeNode({DIR["path"]: (directory(), "0" * 40)})
    assert state_of(dict(DIR, checksum="1" * 40), "directory", node)["in_place"]
    assert node.checksummed == []


def test_a_bad_mode_raises_with_the_value():
    node = FakeNode({FILE["path"]: (regular(), FILE["checksum"])})
    with pytest.raises(ValueError, match="rwx"):
        state_of(dict(FILE, mode="rwx"), "file", node)


def test_parent_exists_reads_the_real_parent(tmp_path):
    node = FakeNode({})
    assert state_of(dict(FILE, path=str(tmp_path / "f")), "file", node)["parent_exists"]
    assert not state_of(dict(FILE, path=str(tmp_path / "no" / "f")), "file", node)["parent_exists"]
    assert state_of(dict(DIR, path=str(tmp_path / "d") + "/"), "directory", node)["parent_exists"]
    assert state_of(dict(DIR, path="/"), "directory", node)["parent_exists"]


# files_state


def test_files_state_checksums_text_content_before_comparing():
    node = FakeNode({FILE["path"]: (regular(), content_checksum(SETTINGS))})
    given = dict(FILE, content=SETTINGS, checksum=None)
    assert files_state([], [given], **node.probes())[0]["in_place"]
    changed = dict(given, content=SETTINGS + "# more\n")
    assert files_state([], [changed], **node.probes())[0]["reasons"] == ["content differs"]
    assert given["checksum"] is None  # the caller's entry is left as it was


def test_files_state_takes_a_checksum_given_without_content():
    node = FakeNode({FILE["path"]: (regular(), FILE["checksum"])})
    assert files_state([], [FILE], **node.probes())[0]["in_place"]
    assert files_state([], [dict(FILE, checksum="0" * 40)], **node.probes())[0]["reasons"] == ["content differs"]


def test_files_state_lists_directories_then_files_in_order():
    second = dict(FILE, path="/opt/conda/condarc.d/other.yml")
    node = FakeNode({DIR["path"]: (directory(), None), FILE["path"]: (regular(), FILE["checksum"])})
    states = files_state([DIR, dict(DIR, path="/opt/conda/more")], [second, FILE], **node.probes())
    assert [(s["kind"], s["path"], s["in_place"]) for s in states] == [
        ("directory", DIR["path"], True),
        ("directory", "/opt/conda/more", False),
        ("file", second["path"], False),
        ("file", FILE["path"], True),
    ]


def test_files_state_of_nothing_is_empty():
    assert files_state([], []) == []


# The node's own probes on a real tmp_path


def _me():
    return pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name


@pytest.fixture(name="tree")
def fixture_tree(tmp_path):
    """A directory (02775) holding a file (0640) with SETTINGS, owned by whoever runs the tests."""
    folder = tmp_path / "condarc.d"
    folder.mkdir()
    os.chmod(str(folder), 0o2775)
    path = folder / "site.yml"
    path.write_text(SETTINGS)
    os.chmod(str(path), 0o640)
    owner, group = _me()
    return dict(
        directory=dict(path=str(folder), owner=owner, group=group, mode="02775"),
        file=dict(path=str(path), owner=owner, group=group, mode="0640", content=SETTINGS))


def test_a_real_tree_as_asked_is_in_place(tree):
    states = files_state([tree["directory"]], [tree["file"]])
    assert [(s["in_place"], s["reasons"], s["parent_exists"], s["unknown_names"]) for s in states] == [
        (True, [], True, []), (True, [], True, [])]


def test_a_real_mode_that_differs_is_not_in_place(tree):
    os.chmod(tree["file"]["path"], 0o644)
    os.chmod(tree["directory"]["path"], 0o755)
    states = files_state([tree["directory"]], [tree["file"]])
    assert [s["reasons"] for s in states] == [["mode 0755, not 2775"], ["mode 0644, not 0640"]]


def test_real_content_that_differs_is_not_in_place(tree):
    with open(tree["file"]["path"], "a") as handle:
        handle.write("extra: true\n")
    state = files_state([], [tree["file"]])[0]
    assert not state["in_place"]
    assert state["reasons"] == ["content differs"]


def test_real_owner_and_group_that_differ_are_not_in_place(tree):
    # Other ids through fake lookups: the entry asks for users the files do not belong to.
    others = dict(tree["file"], owner="alice", group="conda")
    uid, gid = os.getuid(), os.getgid()
    probes = dict(uid_of=lambda name: uid + 1000, gid_of=lambda name: gid + 1500)
    state = files_state([], [others], **probes)[0]
    assert not state["in_place"]
    assert state["reasons"] == ["owner uid %d, not alice" % uid, "group gid %d, not conda" % gid]


def test_real_owner_and_group_given_as_other_numbers_are_not_in_place(tree):
    uid, gid = os.getuid(), os.getgid()
    entry = dict(tree["directory"], owner=str(uid + 4242), group=str(gid + 4242))
    assert files_state([entry], [])[0]["reasons"] == [
        "owner uid %d, not %d" % (uid, uid + 4242), "group gid %d, not %d" % (gid, gid + 4242)]


def test_real_owner_and_group_left_empty_are_left_alone(tree):
    entry = dict(tree["file"], owner="", group=None)
    assert files_state([], [entry])[0]["in_place"]


def test_a_real_unknown_group_is_not_in_place(tree):
    state = files_state([], [dict(tree["file"], group=NOT_A_GROUP)])[0]
    assert not state["in_place"]
    assert state["unknown_names"] == [NOT_A_GROUP]
    assert state["reasons"] == ["group %s does not exist on the node" % NOT_A_GROUP]


def test_a_real_unknown_owner_is_not_in_place(tree):
    state = files_state([dict(tree["directory"], owner=NOT_A_USER)], [])[0]
    assert not state["in_place"]
    assert state["unknown_names"] == [NOT_A_USER]


def test_a_real_symlink_to_a_file_in_place_is_not_in_place(tree, tmp_path):
    alias = tmp_path / "alias.yml"
    alias.symlink_to(tree["file"]["path"])
    state = files_state([], [dict(tree["file"], path=str(alias))])[0]
    assert not state["in_place"]
    assert state["reasons"] == ["not a regular file"]


def test_a_real_symlink_to_a_directory_in_place_is_not_in_place(tree, tmp_path):
    alias = tmp_path / "alias.d"
    alias.symlink_to(tree["directory"]["path"])
    assert files_state([dict(tree["directory"], path=str(alias))], [])[0]["reasons"] == ["not a directory"]


def test_a_real_directory_where_a_file_is_wanted_is_not_in_place(tree):
    state = files_state([], [dict(tree["file"], path=tree["directory"]["path"], mode="02775")])[0]
    assert not state["in_place"]
    assert state["reasons"] == ["not a regular file"]


def test_a_real_file_where_a_directory_is_wanted_is_not_in_place(tree):
    assert files_state([dict(tree["directory"], path=tree["file"]["path"])], [])[0]["reasons"] == ["not a directory"]


def test_a_real_missing_file_reports_whether_its_folder_exists(tree, tmp_path):
    beside = files_state([], [dict(tree["file"], path=tree["directory"]["path"] + "/new.yml")])[0]
    assert (beside["in_place"], beside["reasons"], beside["parent_exists"]) == (False, ["missing"], True)
    deeper = files_state([], [dict(tree["file"], path=str(tmp_path / "later" / "new.yml"))])[0]
    assert (deeper["in_place"], deeper["reasons"], deeper["parent_exists"]) == (False, ["missing"], False)
