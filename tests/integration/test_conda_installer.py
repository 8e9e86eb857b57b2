"""The stand-in Miniconda installer (tests/support/conda/conda_testbed/installer.py) against the real one's
interface: conda/constructor's header.sh, which Miniconda's Linux installers are built from.

Every failure exit is checked for its code, its message (and the stream real Miniconda prints it
on) and for leaving the file system as it was.
"""

import json
import os
import subprocess
import time

import pytest

UNKNOWN_OPTION = "ERROR: did not recognize option '?', please try -h\n"


def run_installer(installer, args, home, env=None):
    return subprocess.run(["bash", installer] + args, capture_output=True, text=True, check=False,
                          env=dict(os.environ, HOME=home, **(env or {})))


def tree(folder):
    """Every path under folder with its content (files) or None (folders, links)."""
    found = {}
    for parent, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(parent, name)
            found[path] = None
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as handle:
                    found[path] = handle.read()
    return found


@pytest.mark.parametrize("args,rc,stream,message", [
    # the prefix (holding a user's file) exists and neither -u nor -f is given
    (["-b", "-p", "{existing}"], 1, "stderr", "ERROR: File or directory already exists: '{existing}'\n"
                                              "If you want to update an existing installation, use the -u option.\n"),
    (["-b", "-x", "-p", "{new}"], 1, "stdout", UNKNOWN_OPTION),
    (["-b", "-p"], 1, "stdout", UNKNOWN_OPTION),  # -p without its value
    (["-b", "-p", "{spaced}"], 1, "stderr", "ERROR: Cannot install into directories with spaces\n"),
    (["-b", "-u", "-p", "{under_a_file}"], 1, "stderr", "ERROR: Could not create directory: '{under_a_file}'.\n"),
    (["-h"], 2, "stdout", "-u           update an existing installation\n"),
    # the stand-in's own: it never prompts, and it runs on the node's python3
    (["-p", "{new}"], 2, "stderr", "ERROR: this test-bed installer runs in batch mode only (-b)\n"),
    (["-b", "-p", "{new}", "CONDA_STANDIN_PYTHON=/bin/false"], 1, "stderr",
     "ERROR: the conda stand-in needs python3 >= 3.10 on the node\n"),
], ids=["prefix-exists", "unknown-option", "p-without-value", "spaces", "cannot-create", "help", "not-batch", "no-python"])
def test_failure_exits_like_miniconda(tmp_path, conda_installer, args, rc, stream, message):
    paths = {"existing": str(tmp_path / "existing"), "new": str(tmp_path / "new"), "spaced": str(tmp_path / "with space"),
             "under_a_file": str(tmp_path / "a-file" / "conda")}
    os.makedirs(paths["existing"])
    (tmp_path / "existing" / "user-data.txt").write_text("kept\n")
    (tmp_path / "a-file").write_text("not a folder\n")
    (tmp_path / "home").mkdir()
    before = tree(str(tmp_path))
    env = dict(a.split("=", 1) for a in args if "=" in a)  # VARIABLE=value: the installer's environment
    proc = run_installer(conda_installer, [a.format(**paths) for a in args if "=" not in a], str(tmp_path / "home"), env)
    assert proc.returncode == rc, proc.stdout + proc.stderr
    assert message.format(**paths) in getattr(proc, stream), (proc.stdout, proc.stderr)
    assert "installation finished." not in proc.stdout
    assert tree(str(tmp_path)) == before


def test_help_shows_the_version_and_options(tmp_path, conda_installer):
    proc = run_installer(conda_installer, ["-h"], str(tmp_path))
    assert proc.returncode == 2
    assert "Installs Miniconda3 26.7.1\n" in proc.stdout
    for option in ("-b ", "-f ", "-h ", "-p PREFIX ", "-u "):
        assert "\n" + option in proc.stdout, option


@pytest.mark.parametrize("option", ["-u", "-f"])
def test_update_over_an_install_keeps_its_envs(tmp_path, conda_installer, option):
    prefix = str(tmp_path / "conda")
    assert run_installer(conda_installer, ["-b", "-p", prefix], str(tmp_path)).returncode == 0
    os.makedirs(os.path.join(prefix, "envs", "demo", "conda-meta"))
    marker = os.path.join(prefix, "envs", "demo", "conda-meta", "history")
    with open(marker, "w") as handle:
        handle.write("==> 2026-12-01 <==\n")
    proc = run_installer(conda_installer, ["-b", option, "-p", prefix], str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("installation finished.\n")
    assert os.path.isfile(marker)
    with open(os.path.join(prefix, "conda-meta", "history")) as handle:
        assert handle.read().count("# cmd: ") == 2
    version = subprocess.run([os.path.join(prefix, "bin", "conda"), "--version"], capture_output=True, text=True, check=False)
    assert version.stdout.strip() == "conda 26.7.1", version.stderr


@pytest.mark.parametrize("variable, conda_meta", [
    ("INSTALLER_TESTBED_PAUSE_BEFORE_META_FILE", False),
    ("INSTALLER_TESTBED_PAUSE_FILE", True),
])
def test_pause_hook_stops_midway_until_its_file_goes(tmp_path, conda_installer, variable, conda_meta):
    """The kill points' hooks: the payload unpacked, conda-meta/ not yet or already there, no conda launcher yet,
    <file>.reached names the installer's pid; removing the file lets the install finish."""
    prefix, pause = str(tmp_path / "conda"), str(tmp_path / "pause")
    open(pause, "w").close()
    proc = subprocess.Popen(["bash", conda_installer, "-b", "-p", prefix], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, HOME=str(tmp_path), **{variable: pause}))
    deadline = time.monotonic() + 60
    while not os.path.exists(pause + ".reached"):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    with open(pause + ".reached") as handle:
        assert json.load(handle) == {"pid": proc.pid, "prefix": prefix}
    assert proc.poll() is None and not os.path.exists(os.path.join(prefix, "bin", "conda"))
    assert os.path.isdir(os.path.join(prefix, "conda-meta")) is conda_meta and os.listdir(prefix)
    os.unlink(pause)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0 and stdout.endswith("installation finished.\n"), stderr
