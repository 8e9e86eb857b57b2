"""dev/lanes.py: `make test`'s static layers and `make molecule`'s scenarios run in lanes side by side, never
more at once than there are lanes, in the order given, and none starts after a failure."""

import subprocess
import sys

import lanes


class FakeRun:
    """A scenario's process that ends with ``code`` after ``polls`` polls."""

    def __init__(self, code, polls):
        self.code, self.polls = code, polls

    def poll(self):
        self.polls -= 1
        return self.code if self.polls < 0 else None


def lanes_run(plan, count):
    """Runs ``plan`` ({scenario: (code, polls)}) and returns what started, the most running at once, the ends in
    order and run_lanes' result."""
    started, ended, running = [], [], set()
    most = [0]

    def start(scenario):
        started.append(scenario)
        running.add(scenario)
        most[0] = max(most[0], len(running))
        return FakeRun(*plan[scenario])

    def report(scenario, code, _seconds):
        running.discard(scenario)
        ended.append((scenario, code))

    result = lanes.run_lanes(list(plan), count, start, poll=0, report=report)
    return started, most[0], ended, result


def test_never_more_at_once_than_lanes_and_every_scenario_runs_in_order():
    plan = {"site": (0, 12), "apex_build": (0, 5), "conda": (0, 1), "miniconda": (0, 1), "default": (0, 0)}
    started, most, ended, result = lanes_run(plan, 2)
    assert started == list(plan)
    assert most == 2
    assert sorted(ended) == sorted((scenario, 0) for scenario in plan)
    # The short ones ran beside site in the lane apex_build left.
    assert ended[-1] == ("site", 0)
    assert result == ([], [])
    assert lanes_run(plan, 1)[1] == 1


def test_after_a_failure_none_starts_and_those_running_finish():
    plan = {"site": (0, 8), "apex_build": (2, 1), "conda": (0, 1), "default": (0, 0)}
    started, _most, ended, result = lanes_run(plan, 2)
    assert started == ["site", "apex_build"]
    assert ended == [("apex_build", 2), ("site", 0)]
    assert result == (["apex_build"], ["conda", "default"])


def test_a_jobs_log_is_printed_whole_when_it_ends_and_the_exit_says_it_failed(tmp_path, monkeypatch, capfd):
    monkeypatch.setattr(lanes, "LOGS", str(tmp_path))
    monkeypatch.setattr(lanes, "timed", lambda job: [
        sys.executable, "-c", "print('out of %s'); raise SystemExit(%d)" % (job, job == "molecule/bad")])
    assert lanes.main(["--lanes", "2", "molecule/good", "molecule/bad"]) == 1
    out = capfd.readouterr().out
    assert "==> molecule/good passed" in out and "out of molecule/good\n==> end of molecule/good (passed)" in out
    assert "==> molecule/bad FAILED (exit 1)" in out and "out of molecule/bad" in out
    assert "==> failed: molecule/bad" in out
    assert "==> 2 job(s) in 2 lane(s): 0m 0" in out and "s of wall time" in out
    assert (tmp_path / "molecule-logs" / "bad.log").read_text() == "out of molecule/bad\n"


def test_each_kind_of_job_runs_its_own_command_under_its_own_name():
    assert lanes.command_of("molecule/conda") == ["molecule", "test", "-s", "conda"]
    assert lanes.command_of("molecule/site")[1:] == [lanes.os.path.join(lanes.REPO, "dev", "demo.py"), "--full"]
    assert lanes.command_of("matrix-2.21") == ["make", "--no-print-directory", "matrix", "VERSIONS=2.21",
                                               "CHECKS=sanity,unit,deprecations"]
    assert lanes.command_of("lint") == ["make", "--no-print-directory", "lint"]
    assert [lanes.timed_name(job) for job in ("molecule/conda", "matrix-2.21", "lint")] == ["molecule/conda", "matrix 2.21", "lint"]
    assert lanes.log_of("lint") == lanes.os.path.join(lanes.REPO, ".cache", "test-logs", "lint.log")


def test_lanes_below_one_are_refused():
    proc = subprocess.run([sys.executable, lanes.__file__, "--lanes", "0", "molecule/site"], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 2 and "--lanes must be at least 1, not 0" in proc.stderr
