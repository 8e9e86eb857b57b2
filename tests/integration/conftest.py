"""Helpers for tests that run the collection's entry points for real on this machine."""

import fcntl
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


def cpus_of_this_worker():
    """This process's share of the CPUs: all of them, or under pytest-xdist (make integration) the CPUs split
    between its workers, so that run_all's runs in every worker together start at most one per CPU."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cpus // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


def run_all(commands):
    """Run independent commands side by side, each as run() would with check=False (its own process, cwd and
    environment), at most one per CPU of this worker's share: {key: CompletedProcess} for commands {key: (args, env)}.
    Only for runs that share nothing they could change: check-mode runs on this machine, each with its own folders."""
    with ThreadPoolExecutor(max_workers=max(1, min(len(commands), cpus_of_this_worker()))) as pool:
        futures = {key: pool.submit(run, args, env, REPO_ROOT, False) for key, (args, env) in commands.items()}
        return {key: future.result() for key, future in futures.items()}


# The files that take longest, longest first (their tests' times added up, from a whole run's JUnit report at 6681992;
# each of the files not named took under 2 % of the layer). make integration runs the files in pytest-xdist workers
# (--dist loadfile --no-loadscope-reorder: a worker that is free takes the next file in collection order), so the
# long ones start first and the workers end together. The order changes nothing else: a file not named keeps its
# place after these.
LONGEST_FILES = ("test_conda_env_killed.py", "test_env_image.py", "test_bad_input.py", "test_conda_standin.py",
                 "test_kill_points.py", "test_managed_files_runs.py", "test_conda_env_scrub.py", "test_gather_once.py",
                 "test_node_manifest_sections.py", "test_entry_points.py", "test_debian13_archive.py",
                 "test_conda_env_verify.py", "test_no_secrets.py", "test_conda_env_repair.py")


def pytest_collection_modifyitems(items):
    rank = dict((name, index) for index, name in enumerate(LONGEST_FILES))
    items.sort(key=lambda item: rank.get(os.path.basename(str(item.path)), len(rank)))  # stable: a file's order kept


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
    execution-environment.yml takes it from: the tarball's path. Under pytest-xdist the workers share one build: the
    first that needs it builds it holding a lock (.cache/build.lock), and records the run's id beside it; another
    worker of the same run waits for the lock, then takes that tarball instead of writing it again under a reader."""
    build = os.path.join(REPO_ROOT, ".cache", "build")
    os.makedirs(build, exist_ok=True)
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")  # one per pytest run, the same in all its workers
    with open(build + ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lock.seek(0)
        built = lock.read().split()
        if run_id and len(built) == 2 and built[0] == run_id and os.path.exists(built[1]):
            return built[1]
        proc = run(["ansible-galaxy", "collection", "build", "--force", "--output-path", build, REPO_ROOT])
        match = re.search(r"^Created collection for aistack\.gpu_node at (\S+\.tar\.gz)$", proc.stdout, re.M)
        assert match, proc.stdout
        lock.truncate(0)
        lock.write("%s %s\n" % (run_id, match.group(1)))
        return match.group(1)


# The conda test bed (tests/support/conda): local channel, loopback mirrors, conda stand-in and installer.
import sys  # noqa: E402

sys.path.insert(0, os.path.join(REPO_ROOT, "tests", "support", "conda"))
from conda_testbed.pytest_plugin import conda_base, conda_channel_root, conda_installer, conda_mirror  # noqa: E402,F401  pylint: disable=wrong-import-position,unused-import
