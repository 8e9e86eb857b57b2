# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The managed_files action with root_owned_tree: the tree is walked in the read of the entries, and the
root_owned_tree module runs (after the writes) only where that walk found something, an entry was written or
the tree was not there to walk. Without the option, the action is as the other roles use it. The modules here
answer what a (fake) node would; tests/integration/test_managed_files_runs.py runs them for real."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import stat
from unittest import mock

from conftest import run_action, run_module
from ansible_collections.aistack.gpu_node.plugins.action.managed_files import ActionModule
from ansible_collections.aistack.gpu_node.plugins.modules import managed_files

PROBE = "aistack.gpu_node.managed_files"
TREE = "aistack.gpu_node.root_owned_tree"
DIRECTORY = {"path": "/opt/conda", "owner": "root", "group": "root", "mode": "0755"}
WALK = {"path": "/opt/conda", "members_under": ["envs"]}
IN_PLACE = {"path": "/opt/conda", "kind": "directory", "in_place": True, "reasons": [], "parent_exists": True,
            "unknown_names": []}


class Node(object):
    """The modules as the action sees them; every run kept, in order (the round-trips)."""

    def __init__(self, entry=None, walked=None, tree=None):
        self.entry = entry or IN_PLACE
        self.walked = walked
        self.tree = tree or {"changed": True, "found": 2, "entries": [{"path": "/opt/conda/bin/conda",
                                                                      "reasons": ["mode 0775 writable by group"]}],
                             "left_alone": [], "diff": {"before": "x", "after": "y"}}
        self.calls = []

    def __call__(self, module_name=None, module_args=None, task_vars=None):
        self.calls.append((module_name, module_args))
        if module_name == PROBE:
            reading = dict(changed=False, entries=[self.entry], written=[], backups={})
            if "root_owned_tree" in module_args:
                reading["root_owned_tree"] = self.walked
            return reading
        if module_name == TREE:
            return dict(self.tree)
        return {"changed": True}


def manage(tmp_path, node, check_mode=False, **args):
    with mock.patch.object(ActionModule, "_execute_module", side_effect=node), \
            mock.patch.object(ActionModule, "_remove_tmp_path"):
        return run_action(ActionModule, dict(dict(directories=[DIRECTORY]), **args), tmp_path, check_mode=check_mode)


def test_without_a_tree_the_entries_are_read_once_and_no_tree_is_walked(tmp_path):
    node = Node()
    result = manage(tmp_path, node)
    assert [name for name, _args in node.calls] == [PROBE] and "root_owned_tree" not in node.calls[0][1]
    assert result["changed"] is False and "root_owned_tree" not in result


def test_a_tree_root_owns_alone_with_entries_in_place_is_one_round_trip(tmp_path):
    node = Node(walked={"found": 0, "entries": [], "left_alone": ["/opt/conda/envs/by-alice"]})
    result = manage(tmp_path, node, root_owned_tree=WALK)
    assert [name for name, _args in node.calls] == [PROBE] and node.calls[0][1]["root_owned_tree"] == WALK
    assert result["changed"] is False
    assert result["root_owned_tree"] == {"changed": False, "found": 0, "entries": [], "left_alone": ["/opt/conda/envs/by-alice"]}


def test_what_the_walk_found_is_changed_by_the_tree_module(tmp_path):
    node = Node(walked={"found": 2, "entries": [], "left_alone": []})
    result = manage(tmp_path, node, root_owned_tree=WALK)
    assert node.calls == [(PROBE, mock.ANY), (TREE, WALK)]
    assert result["changed"] is True and result["root_owned_tree"]["found"] == 2 and "diff" not in result["root_owned_tree"]
    assert result["diff"] == [{"before": "x", "after": "y"}]


def test_after_an_entry_is_written_the_tree_is_walked_again(tmp_path):
    node = Node(entry=dict(IN_PLACE, in_place=False, reasons=["mode 0775, not 0755"]),
                walked={"found": 0, "entries": [], "left_alone": []},
                tree={"changed": False, "found": 0, "entries": [], "left_alone": []})
    result = manage(tmp_path, node, root_owned_tree=WALK)
    assert [name for name, _args in node.calls] == [PROBE, "ansible.legacy.file", TREE]
    assert result["changed"] is True and result["written"] == ["/opt/conda"] and result["root_owned_tree"]["changed"] is False


def test_check_mode_reports_what_the_tree_module_would_change(tmp_path):
    node = Node(walked={"found": 2, "entries": [], "left_alone": []})
    result = manage(tmp_path, node, check_mode=True, root_owned_tree=WALK)
    assert [name for name, _args in node.calls] == [PROBE, TREE] and result["changed"] is True


def test_a_tree_not_there_to_walk_is_left_to_the_tree_module_and_its_refusal(tmp_path):
    msg = "path must be an existing folder given by an absolute path (not a link): /opt/conda"
    node = Node(walked=None, tree={"failed": True, "msg": msg})
    result = manage(tmp_path, node, root_owned_tree=WALK)
    assert [name for name, _args in node.calls] == [PROBE, TREE]
    assert result["failed"] and result["msg"] == msg


def test_the_module_walks_the_tree_read_only(capsys, tmp_path):
    base = tmp_path / "conda"
    (base / "bin").mkdir(parents=True)
    (base / "bin" / "conda").write_text("")
    os.chmod(base / "bin" / "conda", 0o775)
    code, result = run_module(managed_files, {"directories": [{"path": str(base)}],
                                              "root_owned_tree": {"path": str(base)}}, capsys)
    assert code == 0 and result["changed"] is False
    assert result["root_owned_tree"]["found"] >= 1
    found = dict((entry["path"], entry["reasons"]) for entry in result["root_owned_tree"]["entries"])
    assert "mode 0775 writable by group" in found[str(base / "bin" / "conda")]
    assert stat.S_IMODE(os.stat(base / "bin" / "conda").st_mode) == 0o775
    code, result = run_module(managed_files, {"directories": [{"path": str(base)}]}, capsys)
    assert code == 0 and "root_owned_tree" not in result
