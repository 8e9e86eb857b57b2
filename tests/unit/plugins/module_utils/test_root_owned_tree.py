import os
import stat

import pytest

from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.root_owned_tree import entry_problems, make_root_owned, scan

MEMBER = 1001


@pytest.mark.parametrize("uid, mode, expected", [
    (0, stat.S_IFREG | 0o644, []),
    (0, stat.S_IFDIR | 0o755, []),
    (0, stat.S_IFDIR | 0o2775, ["mode 2775 writable by group"]),
    (0, stat.S_IFREG | 0o666, ["mode 0666 writable by group and others"]),
    (0, stat.S_IFREG | 0o602, ["mode 0602 writable by others"]),
    (MEMBER, stat.S_IFREG | 0o644, ["owned by uid 1001"]),
    (0, stat.S_IFLNK | 0o777, []),  # a link's mode is not its target's
    (MEMBER, stat.S_IFLNK | 0o777, ["owned by uid 1001"]),
])
def test_entry_problems(uid, mode, expected):
    assert entry_problems(uid, mode) == expected


def base_as_the_old_model_left_it(tmp_path):
    """A conda base after `chmod -R g+rwX` (the role's old model), a member's file in pkgs and a
    member's environment in envs, beside root's own environment."""
    base = tmp_path / "conda"
    for folder in ("bin", "etc/profile.d", "pkgs", "envs/torch/bin", "condarc.d"):
        (base / folder).mkdir(parents=True)
    (base / "bin/conda").write_text("#!/bin/sh\n")
    (base / "bin/python3").symlink_to("python3.12")
    (base / "etc/profile.d/conda.sh").write_text("conda() { :; }\n")
    (base / "envs/torch/bin/python").write_text("")
    (base / "pkgs/urls.txt").write_text("")
    os.chown(base / "pkgs/urls.txt", MEMBER, MEMBER)
    mine = base / "envs/alice-scratch"
    (mine / "bin").mkdir(parents=True)
    (mine / "bin/python").write_text("")
    os.chown(mine, MEMBER, MEMBER)
    os.chmod(mine / "bin/python", 0o777)
    for folder, dirs, files in os.walk(base / "bin"):
        for name in dirs + files:
            if not os.path.islink(os.path.join(folder, name)):
                os.chmod(os.path.join(folder, name), 0o775)
    os.chmod(base / "etc/profile.d/conda.sh", 0o664)
    os.chmod(base / "condarc.d", 0o2775)
    return base


def test_scan_finds_what_others_may_change_and_leaves_members_envs_alone(tmp_path):
    base = base_as_the_old_model_left_it(tmp_path)
    problems, left_alone = scan(str(base), ["envs"])
    found = {os.path.relpath(p.path, str(base)): p.reasons for p in problems}
    assert found == {
        "bin/conda": ["mode 0775 writable by group"],
        "condarc.d": ["mode 2775 writable by group"],
        "etc/profile.d/conda.sh": ["mode 0664 writable by group"],
        "pkgs/urls.txt": ["owned by uid 1001"],
    }
    assert left_alone == [str(base / "envs/alice-scratch")]


def test_a_members_folder_outside_members_under_is_walked(tmp_path):
    base = base_as_the_old_model_left_it(tmp_path)
    problems, left_alone = scan(str(base), [])
    assert left_alone == []
    assert str(base / "envs/alice-scratch") in [p.path for p in problems]
    assert str(base / "envs/alice-scratch/bin/python") in [p.path for p in problems]


def test_made_root_owned_then_nothing_is_found_and_links_are_not_followed(tmp_path):
    base = base_as_the_old_model_left_it(tmp_path)
    outside = tmp_path / "outside"
    outside.write_text("")
    os.chmod(outside, 0o666)
    (base / "bin/elsewhere").symlink_to(outside)
    os.lchown(base / "bin/elsewhere", MEMBER, -1)
    problems, dummy = scan(str(base), ["envs"])
    make_root_owned(problems)
    assert scan(str(base), ["envs"]) == ([], [str(base / "envs/alice-scratch")])
    assert os.lstat(base / "bin/elsewhere").st_uid == 0
    assert stat.S_IMODE(os.stat(outside).st_mode) == 0o666
    assert stat.S_IMODE(os.stat(base / "bin/conda").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(base / "condarc.d").st_mode) == 0o2755
    assert os.stat(base / "envs/alice-scratch").st_uid == MEMBER
    assert stat.S_IMODE(os.stat(base / "envs/alice-scratch/bin/python").st_mode) == 0o777


def test_problems_come_in_the_order_of_a_top_down_walk_with_sorted_names(tmp_path):
    """The order os.walk(top) gives, each folder's names sorted: a folder's subfolders (a link to a folder among
    them, not walked into), then its other entries, then each subfolder's tree in turn."""
    base = tmp_path / "base"
    for folder in ("b/inner", "a", "c"):
        (base / folder).mkdir(parents=True)
    for name in ("z", "b/inner/f", "b/y", "a/x", "c/w"):
        (base / name).write_text("")
    (base / "a_link").symlink_to(base / "c")
    for folder, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            os.lchown(os.path.join(folder, name), MEMBER, -1)
    problems, dummy = scan(str(base))
    assert [os.path.relpath(p.path, str(base)) for p in problems] == [
        "a", "a_link", "b", "c", "z", "a/x", "b/inner", "b/y", "b/inner/f", "c/w"]
