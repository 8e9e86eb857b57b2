"""dev/test_times.py: `make test` times each layer and molecule scenario and prints one table at the end,
also when a layer failed."""

import pathlib
import shutil
import subprocess
import sys

import pytest
import test_times

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
SCRIPT = str(REPO_ROOT / "dev" / "test_times.py")


def test_run_records_each_verdict_and_exits_as_the_command_did(tmp_path, monkeypatch):
    times = tmp_path / "times.tsv"
    monkeypatch.setenv("AISTACK_TEST_TIMES", str(times))
    assert test_times.main(["run", "lint", "--", sys.executable, "-c", "pass"]) == 0
    assert test_times.main(["run", "molecule/conda", "--", sys.executable, "-c", "raise SystemExit(3)"]) == 3
    assert [(name, status) for name, _seconds, status, _steps in test_times.read(str(times))] == [
        ("lint", "passed"), ("molecule/conda", "FAILED (exit 3)")]


def test_a_scenarios_steps_are_timed_from_its_output_which_passes_through(tmp_path, monkeypatch, capfd):
    """molecule's step lines (stderr and stdout alike, coloured or not) time each step; the output reaches the terminal
    in order; the step table line adds up a step run twice; a layer records no steps of its own."""
    times = tmp_path / "times.tsv"
    monkeypatch.setenv("AISTACK_TEST_TIMES", str(times))
    script = "\n".join([
        "import sys, time",
        "def say(text, stream=sys.stderr):",
        "    stream.write(text + '\\n'); stream.flush()",
        "say('INFO     [conda > destroy] Executing'); say('INFO     [conda > destroy] Executed: Successful')",
        "say('INFO     [conda > converge] Executing'); say('PLAY [x]', sys.stdout); time.sleep(0.3)",
        # molecule colours a verdict even with NO_COLOR set
        "say('INFO     [conda > converge] \\x1b[32mExecuted: Successful\\x1b[0m')",
        "say('INFO     [conda > verify] Executing'); say('INFO     [conda > verify] Executing Testinfra tests found in /x')",
        "time.sleep(0.2); say('INFO     [conda > verify] Executed: Successful')",
        "say('INFO     [conda > destroy] Executing'); say('INFO     [conda > destroy] Executed: Successful')"])
    assert test_times.main(["run", "molecule/conda", "--", sys.executable, "-c", script]) == 0
    assert test_times.main(["run", "molecule", "--", sys.executable, "-c", script]) == 0
    out = capfd.readouterr().out
    assert out.index("[conda > converge] Executing") < out.index("PLAY [x]") < out.index("[conda > converge] \x1b[32mExecuted")
    (scenario, _seconds, _status, steps), (layer, _s, _st, layer_steps) = test_times.read(str(times))
    assert (scenario, [step for step, _seconds in steps]) == ("molecule/conda", ["destroy", "converge", "verify", "destroy"])
    assert dict(steps[1:3])["converge"] >= 0.3 and dict(steps[1:3])["verify"] >= 0.2
    assert (layer, layer_steps) == ("molecule", [])
    line = test_times.table(test_times.read(str(times)))[3]
    assert line.startswith("      steps: destroy ") and ", converge " in line and line.count("destroy") == 1


def test_table_nests_the_scenarios_and_names_what_did_not_run():
    rows = [("setup-testbed", 12.3, "passed", []), ("lint", 95.0, "passed", []), ("molecule/node image", 3.0, "passed", []),
            ("molecule/apex_build", 410.7, "passed", [("converge", 250.0), ("verify", 95.4)]),
            ("molecule/bad_inputs", 200.0, "FAILED (exit 1)", []), ("molecule", 614.0, "FAILED (exit 1)", [])]
    expect = ["setup-testbed", "lint", "unit", "molecule", "molecule/node image", "molecule/apex_build",
              "molecule/bad_inputs", "molecule/conda", "matrix 2.21"]
    assert test_times.table(rows, expect) == [
        "==> time per layer",
        "  setup-testbed      0m 12s  passed",
        "  lint               1m 35s  passed",
        "  unit                       not run",
        "  molecule          10m 14s  FAILED (exit 1)",
        "    node image       0m 03s  passed",
        "    apex_build       6m 51s  passed",
        "      steps: converge 4m 10s, verify 1m 35s",
        "    bad_inputs       3m 20s  FAILED (exit 1)",
        "    conda                    not run",
        "  matrix 2.21                not run",
        "  total             12m 01s"]


def test_a_layer_without_its_own_line_is_the_sum_of_its_parts():
    """`make molecule` alone, or a `make test` killed in its molecule layer."""
    rows = [("molecule/node image", 1.0, "passed", []), ("molecule/default", 59.0, "passed", [])]
    assert test_times.table(rows)[1:] == ["  molecule          1m 00s  passed", "    node image      0m 01s  passed",
                                          "    default         0m 59s  passed", "  total             1m 00s"]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_test_prints_the_table_when_a_layer_fails(tmp_path):
    """The project's own `test` target, with a static layer that fails at once: the table still comes, then the failure."""
    proc = subprocess.run(["make", "--no-print-directory", "test", "SETUP_LAYER=help", "STATIC_LAYERS=no-such-layer changelog-lint",
                           "STATIC_LANES=1", "TEST_TIMES=%s" % (tmp_path / "times.tsv")], cwd=str(REPO_ROOT),
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0 and "all tests passed" not in proc.stdout
    # The failed static layer's output printed whole; no layer started after it.
    assert "==> no-such-layer FAILED (exit 2)" in proc.stdout and "==> changelog-lint started" not in proc.stdout
    table = proc.stdout[proc.stdout.index("==> time per layer"):].splitlines()
    assert table[1].split()[0] == "help" and table[1].endswith("passed")
    assert table[2].split()[0] == "no-such-layer" and table[2].endswith("FAILED (exit 2)")
    # Then what was still to run: the static layer after it, the integration layer, the molecule layer with each scenario.
    assert table[3].split() == ["changelog-lint", "not", "run"] and table[4].split() == ["integration", "not", "run"]
    assert table[5].split() == ["molecule", "not", "run"] and table[6].split() == ["node", "image", "not", "run"]
    assert table[-1].split()[0] == "total"
    assert all(line.endswith("not run") for line in table[3:-1]) and len(table) > 10
