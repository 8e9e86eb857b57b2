"""Issue 18, item 5 (part): killed runs converge. ``ansible`` runs the conda_env module in its own
process group; when the conda stand-in reaches its pause hook (CONDA_TESTBED_PAUSE_FILE, a marker
poll, no sleep-and-hope), the whole group (ansible, the module, the stand-in) gets SIGKILL. Then check
mode must report the half-made env as drift, and a normal re-run must leave the same state as an
uninterrupted run on a fresh base."""

import json
import os
import signal
import time

from test_conda_env_killed import AFTER, BEFORE, module, result_of

# (kill point, spec applied before the killed run, spec of the killed run)
KILL_POINTS = [("mid env create", None, AFTER), ("mid env update", BEFORE, AFTER)]


def env_state(base, name="demo"):
    """What a converged env is: its files (relative to the prefix), its package records and its locks,
    with the base's own path taken out so two bases compare; conda-meta/history is a log of runs."""
    prefix = os.path.join(base.prefix, "envs", name)
    files = sorted(os.path.relpath(os.path.join(folder, entry), prefix) for folder, _dirs, names in os.walk(prefix)
                   for entry in names if entry != "history")
    locks = {}
    for suffix in (".explicit.txt", ".in-progress.json", ".pip.txt"):
        path = prefix + suffix
        if os.path.exists(path):
            with open(path) as handle:
                locks[suffix] = handle.read().replace(base.prefix, "<base>")
    leftovers = sorted(entry for entry in os.listdir(os.path.join(base.prefix, "envs")) if entry.startswith("."))
    return {"files": files, "locks": locks, "leftovers": leftovers}


def process_state(pid):
    """The state letter in /proc/PID/stat (Z: killed, not yet reaped), None when gone."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def kill_group_at_pause(base, spec, pause_file):
    """Starts the module, waits for the stand-in's pause, SIGKILLs ansible's whole process group."""
    open(pause_file, "w").close()
    proc = module(base, spec, environment={"CONDA_TESTBED_PAUSE_FILE": pause_file}, new_session=True)
    deadline = time.monotonic() + 120
    while not os.path.exists(pause_file + ".reached"):
        assert proc.poll() is None and time.monotonic() < deadline, "the stand-in never reached the pause"
        time.sleep(0.1)
    with open(pause_file + ".reached") as handle:
        reached = json.load(handle)
    # ansible's module runner detaches from the group (the stand-in is in its own session), so the
    # child doing the work is killed by its pid, as pkill would on a node.
    os.killpg(proc.pid, signal.SIGKILL)
    os.kill(reached["pid"], signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    while process_state(reached["pid"]) not in (None, "Z"):
        assert time.monotonic() < deadline, "the stand-in survived SIGKILL"
        time.sleep(0.05)
    return reached


def test_killed_runs_converge(conda_base, tmp_path, capsys):
    reference = conda_base(name="reference")
    assert result_of(module(reference, AFTER))["changed"] is True
    wanted = env_state(reference)
    assert ".explicit.txt" in wanted["locks"] and ".in-progress.json" not in wanted["locks"]
    assert "conda-meta/libfoo-1.1.0-h4616a5c_0.json" in wanted["files"] and not wanted["leftovers"]

    converged = []
    for number, (point, before, spec) in enumerate(KILL_POINTS):
        base = conda_base(name="killed%d" % number)
        if before:
            assert result_of(module(base, before))["changed"] is True
        kill_group_at_pause(base, spec, str(tmp_path / ("pause%d" % number)))
        half_made = env_state(base)
        assert ".in-progress.json" in half_made["locks"], "%s: no marker names the unfinished change" % point

        checked = result_of(module(base, spec, check=True))
        assert checked["changed"] is True and checked["drift"][0].startswith("an earlier change of env demo"), (point, checked)
        assert env_state(base) == half_made, "%s: check mode changed the env" % point

        repaired = result_of(module(base, spec))
        assert repaired.get("failed") is not True and repaired["changed"] is True, (point, repaired)
        if env_state(base) == wanted and result_of(module(base, spec))["changed"] is False:
            converged.append(point)

    with capsys.disabled():
        print("\nkill points: %d tried, %d converged" % (len(KILL_POINTS), len(converged)))
    assert converged == [point for point, _before, _spec in KILL_POINTS]
