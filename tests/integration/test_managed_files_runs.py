# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""aistack.gpu_node.managed_files run for real on this machine (connection local): check mode writes
nothing and shows the content, the first run writes everything as asked, a re-run is one module
round-trip, drift is put back with its diff, and bad input fails before anything is written.

Round-trips are counted from -vvv output: each module executed on the node prints one
"Using module file" line (tests/bench/callback_plugins/bench_counts.py leaves local connections out)."""

import json
import os
import stat

import pytest

from conftest import recap, run

TEMPLATE = "# {{ greeting }}\nvalue={{ 6 * 7 }}\n"
RENDERED = "# hello from the template\nvalue=42\n"
NOTES = "line one\n"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="one directory is owned by root:root")


def write_playbook(tmp_path, directories, files, name="managed.yml"):
    """A play on localhost with one managed_files task; entries are written as JSON (flow YAML)."""
    playbook = tmp_path / name
    playbook.write_text(
        "- hosts: localhost\n  connection: local\n  gather_facts: false\n"
        "  vars:\n    greeting: hello from the template\n"
        "  tasks:\n    - name: Manage the files\n      aistack.gpu_node.managed_files:\n"
        "        directories: %s\n        files: %s\n" % (json.dumps(directories), json.dumps(files)))
    return playbook


def play(playbook, *args, **kwargs):
    proc = run(["ansible-playbook", "-i", "localhost,", "-e", "ansible_python_interpreter=/usr/bin/python3"]
               + list(args) + [str(playbook)], **kwargs)
    return proc, proc.stdout + proc.stderr


@pytest.fixture(name="node")
def fixture_node(tmp_path):
    """The playbook and the paths it manages, under tmp_path/node (which does not exist yet)."""
    (tmp_path / "settings.j2").write_text(TEMPLATE)
    root = tmp_path / "node"
    paths = dict(root=root, shared=root / "shared", deep=root / "plain" / "deep")
    paths.update(rendered=paths["shared"] / "rendered.conf", notes=paths["deep"] / "notes.txt")
    directories = [
        dict(path=str(paths["shared"]), owner="root", group="root", mode="02775"),
        dict(path=str(paths["deep"]), mode="0750"),
    ]
    files = [
        dict(path=str(paths["rendered"]), mode="0640", owner="root", group="root",
             content="{{ lookup('ansible.builtin.template', '%s') }}" % (tmp_path / "settings.j2")),
        dict(path=str(paths["notes"]), mode="0600", content=NOTES),
    ]
    paths["playbook"] = write_playbook(tmp_path, directories, files)
    return paths


def mode_of(path):
    return stat.S_IMODE(os.lstat(str(path)).st_mode)


def assert_in_place(node):
    for key, kind, mode in (("shared", stat.S_ISDIR, 0o2775), ("deep", stat.S_ISDIR, 0o750),
                            ("rendered", stat.S_ISREG, 0o640), ("notes", stat.S_ISREG, 0o600)):
        found = os.lstat(str(node[key]))
        assert kind(found.st_mode), key
        assert stat.S_IMODE(found.st_mode) == mode, "%s: %04o" % (key, stat.S_IMODE(found.st_mode))
    shared = os.lstat(str(node["shared"]))
    assert (shared.st_uid, shared.st_gid) == (0, 0)
    assert node["rendered"].read_text() == RENDERED
    assert node["notes"].read_text() == NOTES


def task_lines(output, marker):
    """What follows ``marker`` on the -vvv lines of the task that hold it, in order."""
    section = output.split("TASK [Manage the files]", 1)[1].split("PLAY RECAP", 1)[0]
    return [line.split(marker, 1)[1].strip() for line in section.splitlines() if marker in line]


def module_runs(output):
    """The modules executed on the node for the task, in order."""
    return [os.path.basename(path) for path in task_lines(output, "Using module file")]


def commands_on_node(output):
    """The commands the connection ran on the node for the task, in order."""
    return task_lines(output, "EXEC ")


def test_check_mode_on_nothing_reports_changed_writes_nothing_and_shows_the_content(node):
    proc, output = play(node["playbook"], "--check", "--diff")
    assert recap(proc.stdout)["localhost"]["changed"] == 1, output
    assert not node["root"].exists(), output
    for path in (node["rendered"], node["notes"]):
        assert "+++ after: %s" % path in output, output
    assert "+# hello from the template\n+value=42\n" in output, output
    assert "+line one\n" in output, output


def test_the_first_run_writes_everything_as_asked_and_a_rerun_changes_nothing_in_one_round_trip(node):
    # Two cases on one node (they were two tests, the second making its own first run): the first run of
    # the playbook, then its re-run.
    proc, output = play(node["playbook"], "-vvv")
    assert recap(proc.stdout)["localhost"]["changed"] == 1, output
    assert_in_place(node)
    # The probe, then a writer for each entry (copy also asks stat first): what a re-run saves.
    runs = module_runs(output)
    assert runs[0] == "managed_files.py", runs
    assert (runs.count("file.py"), runs.count("copy.py")) == (2, 2), runs

    proc, output = play(node["playbook"], "-vvv")
    assert recap(proc.stdout)["localhost"]["changed"] == 0, output
    assert module_runs(output) == ["managed_files.py"], output
    # That one module run is the only command on the node: no temporary folder made and removed.
    assert commands_on_node(output) == ["/bin/sh -c '/usr/bin/python3 && sleep 0'"], output
    assert_in_place(node)


def test_drift_is_shown_and_put_back(node):
    play(node["playbook"])
    os.chmod(str(node["rendered"]), 0o644)
    with open(str(node["notes"]), "a") as handle:
        handle.write("extra\n")
    os.chmod(str(node["shared"]), 0o755)

    # Check mode shows the drift and leaves it.
    proc, output = play(node["playbook"], "--check", "--diff")
    assert recap(proc.stdout)["localhost"]["changed"] == 1, output
    assert "-extra\n" in output, output
    assert (mode_of(node["rendered"]), mode_of(node["shared"])) == (0o644, 0o755)
    assert node["notes"].read_text() == NOTES + "extra\n"

    proc, output = play(node["playbook"], "--diff")
    assert recap(proc.stdout)["localhost"]["changed"] == 1, output
    for before, after, path in (("0755", "02775", node["shared"]), ("0644", "0640", node["rendered"])):
        assert "-    mode: '%s'\n+    mode: '%s'\n     path: %s\n" % (before, after, path) in output, output
    assert "--- before: %s\n+++ after: %s\n" % (node["notes"], node["notes"]) in output, output
    assert " line one\n-extra\n" in output, output
    assert "/plain/deep\n" not in output and "value=42" not in output, output  # what was in place is left alone
    assert_in_place(node)

    proc, output = play(node["playbook"], "--diff")
    assert recap(proc.stdout)["localhost"]["changed"] == 0, output
    assert "--- before" not in output, output


@pytest.mark.parametrize("bad", ["directory", "file"])
def test_a_mode_that_is_not_octal_fails_before_anything_is_written(tmp_path, bad):
    folder = tmp_path / "node" / "etc"
    directories = [dict(path=str(folder), mode="rwx" if bad == "directory" else "0755")]
    files = [dict(path=str(folder / "a.conf"), content="a\n", mode="rwx" if bad == "file" else "0644")]
    proc, output = play(write_playbook(tmp_path, directories, files), check=False)
    assert proc.returncode != 0, output
    assert recap(proc.stdout)["localhost"]["failed"] == 1, output
    named = str(folder) if bad == "directory" else str(folder / "a.conf")
    assert "managed_files: %s: mode 'rwx' is not an octal number" % named in output, output
    assert not (tmp_path / "node").exists(), output


def test_a_file_without_content_fails_naming_content(tmp_path):
    folder = tmp_path / "node" / "etc"
    playbook = write_playbook(tmp_path, [dict(path=str(folder))], [dict(path=str(folder / "a.conf"), mode="0644")])
    proc, output = play(playbook, check=False)
    assert proc.returncode != 0, output
    assert recap(proc.stdout)["localhost"]["failed"] == 1, output
    assert "missing required arguments: content" in output, output
    assert not (tmp_path / "node").exists(), output


def test_an_owner_or_group_the_node_does_not_know_fails_before_anything_is_written(tmp_path):
    # The folder comes first and is fine: it must not be created before the file's group is refused.
    folder = tmp_path / "node" / "etc"
    directories = [dict(path=str(folder), mode="0755")]
    files = [dict(path=str(folder / "a.conf"), content="a\n", mode="0644", group="aistack-no-such-group")]
    proc, output = play(write_playbook(tmp_path, directories, files), check=False)
    assert proc.returncode != 0, output
    assert "managed_files: %s: group aistack-no-such-group does not exist on the node" % (folder / "a.conf") in output, output
    assert not (tmp_path / "node").exists(), output
    # Check mode reports it as a change instead: an earlier task of the run may create the group.
    proc, output = play(write_playbook(tmp_path, directories, files), "--check")
    assert recap(proc.stdout)["localhost"]["changed"] == 1, output
