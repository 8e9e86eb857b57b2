"""`make molecule`'s scenarios in lanes side by side, each timed by dev/test_times.py.

    python3 dev/molecule_lanes.py [--lanes N] SCENARIO...

Lanes pay where a machine has cores to spare: on 2 cores the scenarios are CPU-bound, and two side
by side took as long as one after the other (docs/testing.md, "Scenarios in lanes"). The scenarios are started in
the order given (put the longest first), one per free lane. Each one's output goes to
.cache/molecule-logs/SCENARIO.log and is printed whole, under a header, when it ends, so logs
never interleave. After a failure no further scenario starts; those running finish, and the exit
status is 1. Each scenario names its own nodes, ports and folders, so none shares state with
another (docs/testing.md, "Scenarios in lanes"). Standard library only.
"""

import argparse
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGS = os.path.join(REPO, ".cache", "molecule-logs")


def command_of(scenario):
    """The command that tests ``scenario``: site's is dev/demo.py --full (the whole job, then what
    the node has), every other scenario's is ``molecule test``."""
    if scenario == "site":
        return [sys.executable, os.path.join(REPO, "dev", "demo.py"), "--full"]
    return ["molecule", "test", "-s", scenario]


def timed(scenario):
    return [sys.executable, os.path.join(REPO, "dev", "test_times.py"), "run", "molecule/" + scenario, "--"] \
        + command_of(scenario)


def run_lanes(scenarios, lanes, start, poll=0.5, report=print):
    """Runs each scenario with ``start(scenario)`` (which returns a Popen-like object with ``poll()``),
    at most ``lanes`` at a time, in the given order; ``report(scenario, code, seconds)`` is called as
    each one ends. No scenario starts after one failed. Returns the scenarios that failed, and those
    never started, as two lists."""
    waiting = list(scenarios)
    running = {}
    failed = []
    while waiting or running:
        while waiting and len(running) < lanes and not failed:
            scenario = waiting.pop(0)
            running[scenario] = (start(scenario), time.monotonic())
        if failed and not running:
            break
        for scenario, (proc, began) in list(running.items()):
            code = proc.poll()
            if code is None:
                continue
            del running[scenario]
            report(scenario, code, time.monotonic() - began)
            if code != 0:
                failed.append(scenario)
        if running:
            time.sleep(poll)
    return failed, waiting


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--lanes", type=int, default=1, help="scenarios run at once (default 1)")
    parser.add_argument("scenarios", nargs="+")
    args = parser.parse_args(argv)
    if args.lanes < 1:
        parser.error("--lanes must be at least 1, not %d" % args.lanes)
    os.makedirs(LOGS, exist_ok=True)
    logs = {}

    def start(scenario):
        print("==> molecule/%s started (%s)" % (scenario, " ".join(command_of(scenario))), flush=True)
        logs[scenario] = open(os.path.join(LOGS, scenario + ".log"), "wb")
        return subprocess.Popen(timed(scenario), stdout=logs[scenario], stderr=subprocess.STDOUT, cwd=REPO)

    def report(scenario, code, seconds):
        logs.pop(scenario).close()
        verdict = "passed" if code == 0 else "FAILED (exit %d)" % code
        print("==> molecule/%s %s in %dm %02ds; its output:" % ((scenario, verdict) + divmod(int(seconds), 60)),
              flush=True)
        with open(os.path.join(LOGS, scenario + ".log"), "rb") as handle:
            out = getattr(sys.stdout, "buffer", sys.stdout)
            for line in handle:
                out.write(line)
            out.flush()
        print("==> end of molecule/%s (%s)" % (scenario, verdict), flush=True)

    failed, never = run_lanes(args.scenarios, args.lanes, start, report=report)
    if failed:
        print("==> molecule: failed: %s%s" % (" ".join(failed), "; not run: " + " ".join(never) if never else ""))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
