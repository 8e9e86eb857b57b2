"""dev/demo.py (`make demo`): the steps followed in molecule's output and the summary read from the
facts the roles published, both fed by a recorded site scenario run (its verify step failed)."""

import copy
import json
import pathlib

import demo

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "demo"
PUBLISHED = json.loads((FIXTURES / "published-aistack-site-1.json").read_text())


def follow(lines):
    times = StepClock()
    steps = demo.StepTimes()
    seen = [steps.feed(line, times.tick()) for line in lines]
    return steps.steps, [event for event in seen if event]


class StepClock:
    """One second per line: a step's time is the number of lines it spans."""

    def __init__(self):
        self.now = 0

    def tick(self):
        self.now += 1
        return self.now


def recorded():
    return (FIXTURES / "molecule-steps.log").read_text().splitlines(keepends=True)


def test_each_step_gets_its_verdict_time_and_its_node_recap():
    steps, events = follow(recorded())
    assert {step: (record["verdict"], record["changed"]) for step, record in steps.items()} == {
        "destroy": ("Successful", None), "create": ("Successful", None), "prepare": ("Successful", 0),
        "check": ("Successful", 8), "side_effect": ("Successful", 0), "converge": ("Successful", 28),
        "idempotence": ("Successful", 0),
        # molecule colours a failed verdict even under NO_COLOR; the second "Executing ..." line starts nothing.
        "verify": ("Failed", None),
        # "Missing playbook (...)" is no verdict of a step that ran.
        "cleanup": (None, None)}
    assert steps["converge"]["seconds"] == 2  # its Executing line, its recap, its verdict
    assert ("verify", "Failed") in events and events.count(("verify", "Executing")) == 1


def test_a_step_cut_off_has_no_verdict_and_no_time():
    lines = recorded()
    cut = next(i for i, line in enumerate(lines) if "[site > converge] Executed" in line)
    steps, _events = follow(lines[:cut])
    assert steps["converge"] == {"seconds": None, "verdict": None, "changed": 28}
    summary = demo.summary(PUBLISHED, steps)
    assert any(line.startswith("  site.yml from nothing") and "not finished" in line for line in summary)


def test_the_summary_names_what_the_node_has_from_the_published_facts():
    steps, _events = follow(recorded())
    text = "\n".join(demo.summary(PUBLISHED, steps))
    assert "8 changes predicted" in text and "28 changed" in text
    assert [line for line in text.splitlines() if line.startswith("  the no-op re-run")][0].endswith("0 changed")
    assert "  conda base      /opt/conda: miniforge 26.7.1-0, verified" in text
    assert "torch 2.13.0+cpu; variant cpu: no NVIDIA GPU on the node; numpy 2.4.6 on openblas (verified)" in text
    assert "kernels that load: apex_C" in text
    assert "  driver          skip: no NVIDIA GPU on this node" in text
    assert "  GPU validation  skipped (no GPU); health UNKNOWN" in text


def test_what_was_not_published_is_left_out_not_guessed():
    published = copy.deepcopy(PUBLISHED)
    del published["apex_build_report"]
    published["node_manifest_recorded"]["sections"]["provision"].pop("torch")
    text = "\n".join(demo.summary(published, {}))
    assert "APEX" not in text and "torch 2.13" not in text.split("Jupyter", maxsplit=1)[0]
    assert demo.summary(None, {})[-1] == "The roles published nothing (the converge did not finish)."
