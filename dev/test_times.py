"""Where `make test`'s time goes: each layer and each molecule scenario timed, one table at the end.

    python3 dev/test_times.py run NAME -- COMMAND...   runs COMMAND, appends NAME's time and verdict
                                                     to $AISTACK_TEST_TIMES (when set), exits as it did
    python3 dev/test_times.py table FILE [--expect NAME...]
                                                     prints FILE as a table; an expected NAME that
                                                     has no line is shown as not run

A NAME with a slash (``molecule/conda``) is a part of the layer before the slash and is shown
indented under it. The command's output passes through line by line; a molecule scenario's steps
(its ``[scenario > step] Executing`` and ``Executed`` lines) are timed too and shown on a line under
the scenario, so the slowest step of the slowest scenario is named. The table is printed whether or
not a layer failed, so a failed run still says where its time went. It measures and never judges: no time fails anything. Standard library only
(it times the bootstrap too, before the .venv exists).
"""

import argparse
import os
import re
import subprocess
import sys
import time

# molecule's step lines, colours taken off first: "INFO     [site > converge] Executing", then
# "... Executed: Successful" (groups: scenario, step, Executing or Executed: ..., the verdict).
# "Executing Testinfra tests found in ..." inside verify is no step line. dev/demo.py reads them too.
ANSI = re.compile(r"\x1b\[[0-9;]*m")
STEP_LINE = re.compile(r"\[([\w-]+) > ([\w-]+)\] (Executing|Executed: (\w+))\s*$")


class StepClock:
    """The time of each molecule step seen in a command's output: ``steps``, ``[(step, seconds)]`` in
    the order they ended (a step run twice, such as destroy, is listed twice)."""

    def __init__(self):
        self.steps = []
        self._open = None

    def feed(self, line, now):
        match = STEP_LINE.search(ANSI.sub("", line))
        if not match:
            return
        _scenario, step, what, _verdict = match.groups()
        if what == "Executing":
            self._open = (step, now)
        elif self._open is not None and self._open[0] == step:
            self.steps.append((step, now - self._open[1]))
            self._open = None


def record(path, name, seconds, status, steps=()):
    with open(path, "a") as handle:
        handle.write("%s\t%.1f\t%s\t%s\n" % (name, seconds, status, " ".join("%s=%.1f" % step for step in steps)))


def read(path):
    """``[(name, seconds, status, steps)]`` of a times file, in the order the runs ended; ``steps`` as
    StepClock has them (empty for a layer)."""
    rows = []
    if os.path.exists(path):
        with open(path) as handle:
            for line in handle:
                parts = line.rstrip("\n").split("\t")
                if len(parts) in (3, 4):
                    steps = [(step, float(seconds)) for step, _eq, seconds in
                             (item.partition("=") for item in (parts[3].split() if len(parts) == 4 else []))]
                    rows.append((parts[0], float(parts[1]), parts[2], steps))
    return rows


def passed_through(command, clock):
    """Runs ``command`` with its output (both streams, in order) passed on line by line and fed to ``clock``."""
    out = getattr(sys.stdout, "buffer", sys.stdout)
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as proc:
        for line in iter(proc.stdout.readline, b""):
            out.write(line)
            out.flush()
            clock.feed(line.decode("utf-8", "replace"), time.monotonic())
        return proc.wait()


def duration(seconds):
    return "%dm %02ds" % divmod(int(round(seconds)), 60)


def table(rows, expect=()):
    """The lines of the table: each layer, its parts indented under it, in the order of ``expect``
    (then any other, in the order they ended), what was expected but did not run, and the total of
    the layers. A layer whose parts ran but that has no line of its own (``make molecule`` alone,
    or a run killed midway) is shown with the sum of its parts."""
    ended = dict((name, (seconds, status)) for name, seconds, status, _steps in rows)
    steps_of = dict((name, steps) for name, _seconds, _status, steps in rows if steps)
    order = list(dict.fromkeys(list(expect) + [name for name, _seconds, _status, _steps in rows]))
    layers = list(dict.fromkeys(name.partition("/")[0] for name in order))
    lines = []
    total = 0.0
    for layer in layers:
        parts = [name for name in order if name.startswith(layer + "/")]
        if layer in ended:
            seconds, status = ended[layer]
        elif any(part in ended for part in parts):
            seconds = sum(ended[part][0] for part in parts if part in ended)
            failed = [ended[part][1] for part in parts if part in ended and ended[part][1] != "passed"]
            status = failed[0] if failed else "passed"
        else:
            seconds, status = None, "not run"
        total += seconds or 0.0
        lines.append(("  ", layer, seconds, status))
        for part in parts:
            seconds, status = ended.get(part, (None, "not run"))
            lines.append(("    ", part.partition("/")[2], seconds, status))
            if part in steps_of:
                lines.append(("      ", steps_line(steps_of[part]), None, ""))
    lines.append(("  ", "total", total, ""))
    width = max(len(indent + name) for indent, name, seconds, _status in lines if seconds is not None) + 2
    return ["==> time per layer"] + [
        ("%-*s %9s  %s" % (width, indent + name, "" if seconds is None else duration(seconds), status)).rstrip()
        for indent, name, seconds, status in lines]


def steps_line(steps):
    """A scenario's steps on one line, a step run more than once (destroy) with its times added."""
    summed = {}
    for step, seconds in steps:
        summed[step] = summed.get(step, 0.0) + seconds
    return "steps: " + ", ".join("%s %s" % (step, duration(seconds).replace("0m ", "")) for step, seconds in summed.items())


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:
        if len(argv) < 4 or argv[2] != "--":
            sys.exit("usage: test_times.py run NAME -- COMMAND...")
        name, command = argv[1], argv[3:]
        started = time.monotonic()
        clock = StepClock()
        try:
            code = passed_through(command, clock)
        except KeyboardInterrupt:
            code = 130
        status = "passed" if code == 0 else "FAILED (exit %d)" % code
        if os.environ.get("AISTACK_TEST_TIMES"):
            # Steps belong to a scenario; the layer around them (molecule) would only add them up.
            record(os.environ["AISTACK_TEST_TIMES"], name, time.monotonic() - started, status,
                   clock.steps if "/" in name else ())
        return code
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("command", choices=["table"])
    parser.add_argument("file")
    parser.add_argument("--expect", nargs="*", default=[], help="layers the run was to make, in order")
    args = parser.parse_args(argv)
    print("\n".join(table(read(args.file), args.expect)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
