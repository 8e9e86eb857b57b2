import os
import stat

from conftest import run_module
from ansible_collections.aistack.gpu_node.plugins.modules import root_owned_tree
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.root_owned_tree import tree_state


def group_writable_base(tmp_path):
    base = tmp_path / "conda"
    (base / "bin").mkdir(parents=True)
    for name in ("conda", "python", "pip"):
        (base / "bin" / name).write_text("")
        os.chmod(base / "bin" / name, 0o775)
    return base


def test_check_mode_reports_and_changes_nothing(capsys, tmp_path):
    base = group_writable_base(tmp_path)
    code, result = run_module(root_owned_tree, {"path": str(base), "report_limit": 2, "_ansible_check_mode": True,
                                                "_ansible_diff": True}, capsys)
    assert code == 0 and result["changed"] is True and result["found"] == 3
    assert result["entries"] == [{"path": str(base / "bin/conda"), "reasons": ["mode 0775 writable by group"]},
                                 {"path": str(base / "bin/pip"), "reasons": ["mode 0775 writable by group"]}]
    assert result["diff"]["before"].endswith("(and 1 more)\n")
    assert stat.S_IMODE(os.stat(base / "bin/conda").st_mode) == 0o775


def test_fixes_then_a_rerun_changes_nothing(capsys, tmp_path):
    base = group_writable_base(tmp_path)
    code, result = run_module(root_owned_tree, {"path": str(base)}, capsys)
    assert code == 0 and result["changed"] is True and result["found"] == 3 and "diff" not in result
    code, result = run_module(root_owned_tree, {"path": str(base)}, capsys)
    result.pop("invocation", None)  # ansible-core 2.21 no longer returns it
    assert code == 0 and result == {"changed": False, "found": 0, "entries": [], "left_alone": []}


def test_refuses_a_path_that_is_no_folder(capsys, tmp_path):
    code, result = run_module(root_owned_tree, {"path": str(tmp_path / "missing")}, capsys)
    assert code == 1
    assert result["msg"] == "path must be an existing folder given by an absolute path (not a link): %s" % (tmp_path / "missing")


def test_tree_state_reads_what_the_module_would_find_and_changes_nothing(capsys, tmp_path):
    base = group_writable_base(tmp_path)
    state = tree_state(str(base), limit=2)
    code, result = run_module(root_owned_tree, {"path": str(base), "report_limit": 2, "_ansible_check_mode": True}, capsys)
    assert state == dict((key, result[key]) for key in ("found", "entries", "left_alone")) and state["found"] == 3
    assert stat.S_IMODE(os.stat(base / "bin/conda").st_mode) == 0o775


def test_tree_state_of_no_folder_is_none(tmp_path):
    (tmp_path / "file").write_text("")
    (tmp_path / "link").symlink_to(tmp_path)
    assert [tree_state(path) for path in (str(tmp_path / "missing"), str(tmp_path / "file"), str(tmp_path / "link"),
                                          "relative")] == [None] * 4
