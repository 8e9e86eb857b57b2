"""make demo: the whole job on a fresh local podman node, then what the node now has.

    python3 dev/demo.py [--full]

Runs the site scenario (`molecule test -s site`) on a fresh Debian 12 podman node made from the
embedded test bed (the stand-in Miniforge installer, a local conda-forge channel behind a loopback
mirror, a wheel folder for the env's pip section, the APEX stand-in tree): site.yml in check mode
on the fresh node (proven to change nothing), site.yml from nothing, the no-op re-run (0 changed),
then the drift check (site.yml --check --diff through tools/aistack-drift) clean, tamperings
named and repaired, and the installed collection's playbooks on the same node. The node is removed
at the end. Molecule's whole output goes to .cache/demo/molecule.log (with --full, also to the
terminal, as `make test` wants it); the terminal gets one line per step and, at the end, a short
summary of what the node had, read from the facts the roles published (converge.yml writes them to
AISTACK_SITE_RESULTS). With AISTACK_NODE_SUFFIX set (the node's name ends in it), the folders under
.cache end in it too (.cache/demo-st, .cache/site-results-st), so that two runs share none.
Exit status: molecule's.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

from test_times import ANSI, STEP_LINE

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# AISTACK_NODE_SUFFIX ends the node's name (molecule/site/molecule.yml), so a second copy can run beside one;
# when set, it also ends the folders under .cache that the scenario and the demo write.
NODE = "aistack-site" + os.environ.get("AISTACK_NODE_SUFFIX", "-1")
RESULTS = os.path.join(REPO, ".cache", "site-results" + os.environ.get("AISTACK_NODE_SUFFIX", ""))
RECAP_LINE = re.compile(r"^\s*%s\s*: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)" % re.escape(NODE))


# Each molecule step of the site scenario in the words of the summary, and what its recap's
# `changed` counts there.
STEP_WORDS = {
    "check": ("site.yml --check on the fresh node", "changes predicted"),
    "side_effect": ("the fresh node unchanged by check mode, byte for byte", None),
    "converge": ("site.yml from nothing", "changed"),
    "idempotence": ("the no-op re-run", "changed"),
    "verify": ("drift check clean, tamperings named and repaired, the installed collection", None),
}


class StepTimes:
    """Follows molecule's output: each step's time, verdict and its node's last play recap."""

    def __init__(self):
        self.steps = {}
        self._current = None
        self._started = None

    def feed(self, line, now):
        """Take one line of molecule's output, seen at ``now`` (seconds); return ``(step, 'Executing' or
        the verdict)`` when the line starts or ends a step, else None."""
        line = ANSI.sub("", line)
        match = STEP_LINE.search(line)
        if match:
            _scenario, step, what, verdict = match.groups()
            if what == "Executing":
                self._current, self._started = step, now
                self.steps[step] = {"seconds": None, "verdict": None, "changed": None}
                return step, what
            if step in self.steps:
                self.steps[step].update(seconds=now - self._started, verdict=verdict)
                self._current = None
                return step, verdict
            return None
        recap = RECAP_LINE.match(line)
        if recap and self._current in self.steps:
            self.steps[self._current]["changed"] = int(recap.group(2))
        return None


def _first_clause(text):
    return (text or "").split(";")[0].split(" (")[0]


def summary(published, steps):
    """The lines of the demo's summary: the steps with their time and changes, then what the roles
    published about the node. What was not published is left out, never guessed."""
    lines = ["The steps (podman node %s, local sources only):" % NODE]
    for step, (words, counted) in STEP_WORDS.items():
        record = steps.get(step)
        if record is None:
            continue
        seconds = "-" if record["seconds"] is None else "%.0f s" % record["seconds"]
        changed = ", %d %s" % (record["changed"], counted) if counted and record["changed"] is not None else ""
        lines.append("  %-80s %-12s %6s%s" % (words, record["verdict"] or "not finished", seconds, changed))
    if not published:
        return lines + ["The roles published nothing (the converge did not finish)."]
    lines.append("The node now has:")
    base = published.get("miniconda_result") or {}
    if base:
        verified = ", verified" if base.get("verified") else ""
        lines.append("  conda base      %s: %s %s%s" % (base.get("prefix"), base.get("flavor"), base.get("version"), verified))
    if published.get("mirrors_condarc_chosen"):
        lines.append("  channels from   %s (the fastest healthy mirror)" % published["mirrors_condarc_chosen"])
    manifest = ((published.get("node_manifest_recorded") or {}).get("sections") or {})
    provision = manifest.get("provision") or {}
    target = (published.get("conda_env_target") or {}).get("name")
    for name, env in sorted((published.get("conda_env_info") or {}).items()):
        parts = ["%s (%s)" % (env.get("prefix"), "the target env" if name == target else "env")]
        if name == target and provision.get("torch"):
            parts.append("torch %s" % provision["torch"])
        variant = env.get("torch_variant") or {}
        if variant.get("variant"):
            parts.append("variant %s: %s" % (variant["variant"], variant.get("chosen_by")))
        blas = env.get("blas") or {}
        if blas.get("requested"):
            parts.append("numpy %s on %s%s" % (blas.get("numpy"), blas["requested"], " (verified)" if blas.get("verified") else ""))
        if (env.get("lock") or {}).get("explicit"):
            parts.append("lock %s" % env["lock"]["explicit"])
        lines.append("  environment     %s" % "; ".join(parts))
    apex = published.get("apex_build_report") or {}
    if apex:
        kernels = sorted(name for name, state in (apex.get("modules") or {}).items() if state == "ok")
        lines.append("  APEX            %s, built on %s in %s s; kernels that load: %s" % (
            apex.get("wheel"), apex.get("built_on"), apex.get("build_seconds"), ", ".join(kernels) or "none"))
    kernel = published.get("jupyter_kernel_result") or {}
    if kernel.get("name"):
        ran = kernel.get("ran") or {}
        lines.append("  Jupyter kernel  %s, proven to start (torch %s, CUDA available: %s)" % (
            kernel["name"], ran.get("torch"), ran.get("cuda_available")))
    threads = published.get("numa_tuning_env") or {}
    if threads:
        lines.append("  threads         %s on env activation" % " ".join("%s=%s" % item for item in sorted(threads.items())))
    driver = published.get("nvidia_driver_report") or {}
    if driver:
        lines.append("  driver          %s: %s" % (driver.get("mode"), _first_clause(driver.get("reason"))))
    validation = manifest.get("validation") or {}
    health = (published.get("gpu_validate_result") or {}).get("health") or {}
    lines.append("  GPU validation  %s%s; health %s" % (
        validation.get("status", "not recorded"), " (%s)" % validation["reason"] if validation.get("reason") else "",
        health.get("verdict", "not checked")))
    if manifest:
        lines.append("  manifest        %s (ansible_local.aistack)" % published["node_manifest_recorded"].get("path"))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--full", action="store_true", help="molecule's whole output on the terminal too")
    args = parser.parse_args(argv)
    log_dir = os.path.join(REPO, ".cache", "demo" + os.environ.get("AISTACK_NODE_SUFFIX", ""))
    os.makedirs(log_dir, exist_ok=True)
    log_path = os.path.join(log_dir, "molecule.log")
    env = dict(os.environ, AISTACK_SITE_RESULTS=RESULTS)
    times = StepTimes()
    start = time.monotonic()
    print("==> make demo: the whole job on a fresh podman node (molecule's output: %s)" % os.path.relpath(log_path, REPO), flush=True)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(["molecule", "test", "-s", "site"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, bufsize=1)
        for line in proc.stdout:
            log.write(line)
            if args.full:
                sys.stdout.write(line)
            seen = times.feed(line, time.monotonic())
            if seen and not args.full:
                step, what = seen
                print("  %5.0f s  %-12s %s" % (time.monotonic() - start, step, "started" if what == "Executing" else what), flush=True)
        status = proc.wait()
    published = None
    published_path = os.path.join(RESULTS, "published-%s.json" % NODE)
    if os.path.exists(published_path):
        with open(published_path) as handle:
            published = json.load(handle)
    print("\n".join(summary(published, times.steps)))
    if status:
        if not args.full:
            with open(log_path) as log:
                sys.stdout.write("".join(log.readlines()[-150:]))
        print("==> make demo FAILED (exit %d); molecule's whole output: %s" % (status, log_path))
    else:
        print("==> make demo passed in %.0f s" % (time.monotonic() - start))
    return status


if __name__ == "__main__":
    sys.exit(main())
