#!/usr/bin/env python
"""Benchmarks on fresh podman nodes; prints figures, never judges time.

1. The full site.yml on one fresh node, then again: both times and their ratio, with the
   changed count of each; the second run must report 0 changed (that, and only that, fails the
   benchmark). The first run does the whole job: the conda base, the default env with CPU
   torch, APEX (the stand-in tree) built into it, threads, the kernel, the manifest.
2. tools/aistack-drift over one node, then over N nodes with N forks: time per host and the
   ratio of the N-node run to the one-node run.

Nodes are the test bed's image (tests/testbed/build-node-image), started like molecule's
(molecule/resources/create.yml) and removed at the end. The inventory is the site scenario's
(molecule/site/group_vars: the shipped defaults with local sources, which
molecule/site/sources.yml lays out).
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
SITE_SCENARIO = os.path.join(REPO_ROOT, "molecule", "site")
SOURCES = os.environ.setdefault("AISTACK_SITE_SOURCES", os.path.join(REPO_ROOT, ".cache", "site-molecule"))


def sh(args, check=True, **kwargs):
    proc = subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)
    if check and proc.returncode != 0:
        sys.exit("%s exited %d\n%s\n%s" % (" ".join(args), proc.returncode, proc.stdout[-4000:], proc.stderr[-4000:]))
    return proc


def start_nodes(names):
    for name in names:
        sh(["podman", "rm", "--force", "--ignore", name])
        # The host's network: the test bed's mirror listens on its loopback.
        sh(["podman", "run", "--detach", "--name", name, "--hostname", name, "--systemd=always", "--network=host",
            "--volume=%s:/srv/site-wheels:ro" % os.path.join(SOURCES, "wheels"), IMAGE, "/sbin/init"])
    for name in names:
        for _attempt in range(30):
            state = sh(["podman", "exec", name, "systemctl", "is-system-running", "--wait"], check=False).stdout.strip()
            if state in ("running", "degraded"):
                break
            time.sleep(1)


def write_inventory(folder, names):
    """An inventory of the nodes beside the site scenario's group_vars; the first node builds APEX."""
    os.makedirs(folder)
    os.symlink(os.path.join(SITE_SCENARIO, "group_vars"), os.path.join(folder, "group_vars"))
    hosts = "".join("        %s:\n" % name for name in names)
    with open(os.path.join(folder, "hosts.yml"), "w") as handle:
        handle.write("all:\n  children:\n    gpu_nodes:\n      hosts:\n" + hosts
                     + "    build_hosts:\n      hosts:\n        %s:\n" % names[0])
    return folder


def recap(stdout):
    return {host: {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", counts)}
            for host, counts in re.findall(r"^(\S+)\s+:\s+(ok=.*)$", stdout.split("PLAY RECAP", 1)[-1], re.M)}


def timed_site(inventory, extra):
    started = time.perf_counter()
    proc = sh(["ansible-playbook", os.path.join(REPO_ROOT, "site.yml"), "-i", inventory] + extra)
    return time.perf_counter() - started, recap(proc.stdout)


def timed_drift(inventory, forks, extra, skip_tags, out):
    started = time.perf_counter()
    args = [sys.executable, os.path.join(REPO_ROOT, "tools", "aistack-drift"), "-i", inventory, "-f", str(forks), "-o", out]
    args += ["--skip-tags", skip_tags] if skip_tags else []
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
    parser.add_argument("--skip-tags", default="", help="components left out of every run (default: none)")
    parser.add_argument("--keep", action="store_true", help="leave the nodes running")
    args = parser.parse_args()
    names = ["aistack-bench-%d" % i for i in range(1, args.nodes + 1)]
    extra = [a for e in args.extra_vars for a in ("-e", e)] + (["--skip-tags", args.skip_tags] if args.skip_tags else [])
    work = tempfile.mkdtemp(prefix="aistack-bench-")
    one = write_inventory(os.path.join(work, "one"), names[:1])
    fleet = write_inventory(os.path.join(work, "fleet"), names)
    sh(["ansible-playbook", os.path.join(SITE_SCENARIO, "sources.yml")])
    try:
        start_nodes(names)
        first, first_counts = timed_site(one, extra)
        second, counts = timed_site(one, extra)
        changed = counts[names[0]]["changed"]
        print("full site.yml on one fresh node: first run %.1f s (changed=%d), second run %.1f s (changed=%d), "
              "ratio first/second %.2f" % (first, first_counts[names[0]]["changed"], second, changed, first / second))

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
        sh([sys.executable, "-m", "conda_testbed.serve", "stop", "--dir", os.path.join(SOURCES, "conda")], check=False,
           cwd=os.path.join(REPO_ROOT, "tests", "conda"), env=dict(os.environ, PYTHONPATH=os.path.join(REPO_ROOT, "tests", "conda")))


if __name__ == "__main__":
    sys.exit(main())
