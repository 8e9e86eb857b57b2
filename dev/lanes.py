"""`make test`'s static layers and `make molecule`'s scenarios in lanes side by side, each timed by
dev/test_times.py.

    python3 dev/lanes.py [--lanes N] JOB...

A JOB is a molecule scenario (``molecule/SCENARIO``), a line of the ansible-core matrix
(``matrix-2.21``: its sanity, unit and deprecation checks) or a make target (``lint``). The jobs
start in the order given (put the longest first), one per free lane. Each one's output goes to
.cache/molecule-logs/SCENARIO.log or .cache/test-logs/JOB.log and is printed whole, under a header,
when it ends, so logs never interleave. After a failure no further job starts; those running
finish, and the exit status is 1. Lanes pay where the jobs leave cores idle: the static layers run
on about one core each, so two share the 2-core machine; the molecule scenarios are CPU-bound
there, and two side by side took as long as one after the other (docs/testing.md, "Lanes"). Each
scenario names its own nodes, ports and folders, so none shares state with another. Standard library
only.
"""

import argparse
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGS = os.path.join(REPO, ".cache")


MOLECULE = "molecule/"
MATRIX = "matrix-"


def command_of(job):
    """The command that runs ``job``: a scenario's ``molecule test`` (site's is dev/demo.py --full: the whole
    job, then what the node has), a matrix line's sanity, unit and deprecation checks, else ``make JOB``."""
    if job == MOLECULE + "site":
        return [sys.executable, os.path.join(REPO, "dev", "demo.py"), "--full"]
    if job.startswith(MOLECULE):
        return ["molecule", "test", "-s", job[len(MOLECULE):]]
    if job.startswith(MATRIX):
        return ["make", "--no-print-directory", "matrix", "VERSIONS=" + job[len(MATRIX):], "CHECKS=sanity,unit,deprecations"]
    return ["make", "--no-print-directory", job]


def timed_name(job):
    """The job's line in the times table: ``molecule/conda``, ``matrix 2.21``, ``lint``."""
    return "matrix " + job[len(MATRIX):] if job.startswith(MATRIX) else job


def log_of(job):
    if job.startswith(MOLECULE):
        return os.path.join(LOGS, "molecule-logs", job[len(MOLECULE):] + ".log")
    return os.path.join(LOGS, "test-logs", job + ".log")


def timed(job):
    return [sys.executable, os.path.join(REPO, "dev", "test_times.py"), "run", timed_name(job), "--"] + command_of(job)


def run_lanes(jobs, lanes, start, poll=0.5, report=print):
    """Runs each job with ``start(job)`` (which returns a Popen-like object with ``poll()``), at most ``lanes``
    at a time, in the given order; ``report(job, code, seconds)`` is called as each one ends. No job starts
    after one failed. Returns the jobs that failed, and those never started, as two lists."""
    waiting = list(jobs)
    running = {}
    failed = []
    while waiting or running:
        while waiting and len(running) < lanes and not failed:
            job = waiting.pop(0)
            running[job] = (start(job), time.monotonic())
        if failed and not running:
            break
        for job, (proc, began) in list(running.items()):
            code = proc.poll()
            if code is None:
                continue
            del running[job]
            report(job, code, time.monotonic() - began)
            if code != 0:
                failed.append(job)
        if running:
            time.sleep(poll)
    return failed, waiting


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--lanes", type=int, default=1, help="jobs run at once (default 1)")
    parser.add_argument("jobs", nargs="+")
    args = parser.parse_args(argv)
    if args.lanes < 1:
        parser.error("--lanes must be at least 1, not %d" % args.lanes)
    logs = {}

    def start(job):
        print("==> %s started (%s)" % (job, " ".join(command_of(job))), flush=True)
        os.makedirs(os.path.dirname(log_of(job)), exist_ok=True)
        logs[job] = open(log_of(job), "wb")
        return subprocess.Popen(timed(job), stdout=logs[job], stderr=subprocess.STDOUT, cwd=REPO)

    def report(job, code, seconds):
        logs.pop(job).close()
        verdict = "passed" if code == 0 else "FAILED (exit %d)" % code
        print("==> %s %s in %dm %02ds; its output:" % ((job, verdict) + divmod(int(seconds), 60)), flush=True)
        with open(log_of(job), "rb") as handle:
            out = getattr(sys.stdout, "buffer", sys.stdout)
            for line in handle:
                out.write(line)
            out.flush()
        print("==> end of %s (%s)" % (job, verdict), flush=True)

    began = time.monotonic()
    failed, never = run_lanes(args.jobs, args.lanes, start, report=report)
    # The jobs' own lines in the times table overlap: this is the wall time they took together.
    print("==> %d job(s) in %d lane(s): %dm %02ds of wall time" % (
        (len(args.jobs) - len(never), args.lanes) + divmod(int(time.monotonic() - began), 60)), flush=True)
    if failed:
        print("==> failed: %s%s" % (" ".join(failed), "; not run: " + " ".join(never) if never else ""))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
