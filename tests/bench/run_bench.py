#!/usr/bin/env python
"""Benchmarks on fresh podman nodes; prints figures, never judges time.

1. site.yml on one fresh node, then again: both times and their ratio; the second run must
   report 0 changed (that, and only that, fails the benchmark).
2. tools/aistack-drift over one node, then over N nodes with N forks: time per host and the
   ratio of the N-node run to the one-node run.

Nodes are the test bed's image (tests/testbed/build-node-image), started like molecule's
(molecule/resources/create.yml) and removed at the end.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
IMAGE = "localhost/aistack-debian12-node:latest"


def sh(args, check=True, **kwargs):
    proc = subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)
    if check and proc.returncode != 0:
        sys.exit("%s exited %d\n%s\n%s" % (" ".join(args), proc.returncode, proc.stdout[-4000:], proc.stderr[-4000:]))
    return proc


def start_nodes(names):
    for name in names:
        sh(["podman", "rm", "--force", "--ignore", name])
        sh(["podman", "run", "--detach", "--name", name, "--hostname", name, "--systemd=always", IMAGE, "/sbin/init"])
    for name in names:
        for _attempt in range(30):
            state = sh(["podman", "exec", name, "systemctl", "is-system-running", "--wait"], check=False).stdout.strip()
            if state in ("running", "degraded"):
                break
            time.sleep(1)


def write_inventory(path, names):
    hosts = "".join("        %s:\n" % name for name in names)
    with open(path, "w") as handle:
        handle.write("all:\n  vars:\n    ansible_connection: containers.podman.podman\n"
                     "  children:\n    gpu_nodes:\n      hosts:\n" + hosts)


def recap(stdout):
    return {host: {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", counts)}
            for host, counts in re.findall(r"^(\S+)\s+:\s+(ok=.*)$", stdout.split("PLAY RECAP", 1)[-1], re.M)}


def timed_site(inventory, extra):
    started = time.perf_counter()
    proc = sh(["ansible-playbook", os.path.join(REPO_ROOT, "site.yml"), "-i", inventory] + extra)
    return time.perf_counter() - started, recap(proc.stdout)


def timed_drift(inventory, forks, extra, skip_tags, out):
    started = time.perf_counter()
    args = [sys.executable, os.path.join(REPO_ROOT, "tools", "aistack-drift"), "-i", inventory, "-f", str(forks), "-o", out,
            "--skip-tags", skip_tags]
    proc = sh(args + [a for e in extra for a in ("-e", e)], check=False)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit("aistack-drift exited %d on provisioned nodes:\n%s" % (proc.returncode, proc.stdout))
    with open(os.path.join(out, "drift.json")) as handle:
        return seconds, json.load(handle)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--nodes", type=int, default=4, help="nodes in the drift run (default 4)")
    parser.add_argument("-e", "--extra-vars", action="append", default=[], help="passed to every run")
    # A podman node reaches no conda installer or mirror and would install a real driver: those
    # components are benchmarked by their own scenarios unless asked for here.
    parser.add_argument("--skip-tags", default="driver,conda,env,apex,numa,jupyter",
                        help="components left out of every run (default: %(default)s)")
    parser.add_argument("--keep", action="store_true", help="leave the nodes running")
    args = parser.parse_args()
    names = ["aistack-bench-%d" % i for i in range(1, args.nodes + 1)]
    extra = [a for e in args.extra_vars for a in ("-e", e)] + ["--skip-tags", args.skip_tags]
    work = tempfile.mkdtemp(prefix="aistack-bench-")
    one, fleet = os.path.join(work, "one.yml"), os.path.join(work, "fleet.yml")
    write_inventory(one, names[:1])
    write_inventory(fleet, names)
    try:
        start_nodes(names)
        first = timed_site(one, extra)[0]
        second, counts = timed_site(one, extra)
        changed = counts[names[0]]["changed"]
        print("site.yml on one fresh node: first run %.1f s, second run %.1f s, ratio first/second %.2f, "
              "second run changed=%d" % (first, second, first / second, changed))

        timed_site(fleet, extra)  # the other nodes provisioned, so that the drift runs find none
        alone = timed_drift(one, 1, args.extra_vars, args.skip_tags, os.path.join(work, "drift-one"))[0]
        many, report = timed_drift(fleet, args.nodes, args.extra_vars, args.skip_tags, os.path.join(work, "drift-fleet"))
        print("aistack-drift, 1 node: %.1f s" % alone)
        print("aistack-drift, %d nodes, %d forks: %.1f s, %.1f s per host, ratio to one node %.2f (status %s)"
              % (args.nodes, args.nodes, many, many / args.nodes, many / alone, report["status"]))
        return 1 if changed else 0
    finally:
        if not args.keep:
            for name in names:
                sh(["podman", "rm", "--force", "--ignore", name], check=False)


if __name__ == "__main__":
    sys.exit(main())
