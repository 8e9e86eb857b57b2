"""dev/molecule_lanes.py: `make molecule` runs its scenarios in lanes side by side, never more at once than
there are lanes, in the order given, and starts none after a failure."""

import subprocess
import sys

import molecule_lanes


class FakeRun:
    """A scenario's process that ends with ``code`` after ``polls`` polls."""

    def __init__(self, code, polls):
        self.code, self.polls = code, polls

    def poll(self):
        self.polls -= 1
        return self.code if self.polls < 0 else None


def lanes_run(plan, lanes):
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

    result = molecule_lanes.run_lanes(list(plan), lanes, start, poll=0, report=report)
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


def test_a_scenarios_log_is_printed_whole_when_it_ends_and_the_exit_says_it_failed(tmp_path, monkeypatch, capfd):
    monkeypatch.setattr(molecule_lanes, "LOGS", str(tmp_path))
    monkeypatch.setattr(molecule_lanes, "timed", lambda scenario: [
        sys.executable, "-c", "print('out of %s'); raise SystemExit(%d)" % (scenario, scenario == "bad")])
    assert molecule_lanes.main(["--lanes", "2", "good", "bad"]) == 1
    out = capfd.readouterr().out
    assert "==> molecule/good passed" in out and "out of good\n==> end of molecule/good (passed)" in out
    assert "==> molecule/bad FAILED (exit 1)" in out and "out of bad" in out
    assert "==> molecule: failed: bad" in out
    assert (tmp_path / "bad.log").read_text() == "out of bad\n"


def test_lanes_below_one_are_refused():
    proc = subprocess.run([sys.executable, molecule_lanes.__file__, "--lanes", "0", "site"], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 2 and "--lanes must be at least 1, not 0" in proc.stderr
