"""Helpers for tests that run the collection's entry points for real on this machine."""

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

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


def run_all(commands):
    """Run independent commands side by side, each as run() would with check=False (its own process, cwd and
    environment), at most one per CPU: {key: CompletedProcess} for commands {key: (args, env)}. Only for runs that
    share nothing they could change: check-mode runs on this machine, each with its own folders."""
    with ThreadPoolExecutor(max_workers=max(1, min(len(commands), os.cpu_count() or 1))) as pool:
        futures = {key: pool.submit(run, args, env, REPO_ROOT, False) for key, (args, env) in commands.items()}
        return {key: future.result() for key, future in futures.items()}


def recap(stdout):
    """PLAY RECAP counters per host: {host: {'ok': n, 'changed': n, ...}}."""
    hosts = {}
    for line in stdout.split("PLAY RECAP", 1)[-1].splitlines():
        match = re.match(r"^(\S+)\s+:\s+(.*)$", line.strip())
        if match:
            hosts[match.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(2))}
    return hosts


@pytest.fixture(scope="session")
def collection_tarball():
    """The collection built once for the session (ansible-galaxy collection build --force) into .cache/build, where
    execution-environment.yml takes it from: the tarball's path."""
    build = os.path.join(REPO_ROOT, ".cache", "build")
    proc = run(["ansible-galaxy", "collection", "build", "--force", "--output-path", build, REPO_ROOT])
    match = re.search(r"^Created collection for aistack\.gpu_node at (\S+\.tar\.gz)$", proc.stdout, re.M)
    assert match, proc.stdout
    return match.group(1)


# The conda test bed (tests/support/conda): local channel, loopback mirrors, conda stand-in and installer.
import sys  # noqa: E402

sys.path.insert(0, os.path.join(REPO_ROOT, "tests", "support", "conda"))
from conda_testbed.pytest_plugin import conda_base, conda_channel_root, conda_installer, conda_mirror  # noqa: E402,F401  pylint: disable=wrong-import-position,unused-import
