"""Helpers for tests that run the collection's entry points for real on this machine."""

import os
import re
import subprocess

import pytest

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VENV_BIN = os.path.join(REPO_ROOT, ".venv", "bin")


def run(args, env=None, cwd=REPO_ROOT, check=True):
    """Run a tool from the project venv; return the CompletedProcess, failing with its output."""
    full_env = dict(os.environ)
    full_env["PATH"] = VENV_BIN + os.pathsep + full_env.get("PATH", "")
    full_env["ANSIBLE_FORCE_COLOR"] = "false"
    full_env.update(env or {})
    proc = subprocess.run(args, cwd=cwd, env=full_env, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        pytest.fail("%s exited %d\n--- stdout\n%s\n--- stderr\n%s" % (" ".join(args), proc.returncode, proc.stdout, proc.stderr))
    return proc


def recap(stdout):
    """PLAY RECAP counters per host: {host: {'ok': n, 'changed': n, ...}}."""
    hosts = {}
    for line in stdout.split("PLAY RECAP", 1)[-1].splitlines():
        match = re.match(r"^(\S+)\s+:\s+(.*)$", line.strip())
        if match:
            hosts[match.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(2))}
    return hosts


# The conda test bed (tests/support/conda): local channel, loopback mirrors, conda stand-in and installer.
import sys  # noqa: E402

sys.path.insert(0, os.path.join(REPO_ROOT, "tests", "support", "conda"))
from conda_testbed.pytest_plugin import conda_base, conda_channel_root, conda_installer, conda_mirror  # noqa: E402,F401  pylint: disable=wrong-import-position,unused-import
