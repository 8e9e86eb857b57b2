# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Command line: run the playbook in check and diff mode with ansible-runner and write the reports."""

import argparse
import datetime
import os
import shutil
import sys
import tempfile
import time

from . import events, reports

COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="aistack-drift",
        description="Run site.yml (or chosen tags) in check and diff mode over an inventory and report what "
                    "would change: JSON, JUnit XML and a summary. Exit 0: no drift, 2: drift, "
                    "1: an error or an unreachable host.")
    parser.add_argument("-i", "--inventory", required=True, help="inventory file or directory")
    parser.add_argument("--playbook", default=os.path.join(COLLECTION_ROOT, "site.yml"),
                        help="playbook to check (default: the collection's site.yml)")
    parser.add_argument("-t", "--tags", default="", help="comma-separated tags to check (default: all)")
    parser.add_argument("--skip-tags", default="", help="comma-separated tags to leave out")
    parser.add_argument("-l", "--limit", default=None, help="host pattern")
    parser.add_argument("-f", "--forks", type=int, default=20)
    parser.add_argument("-e", "--extra-vars", action="append", default=[],
                        help="passed to ansible-playbook as -e (repeatable; @file works)")
    parser.add_argument("-o", "--output-dir", default="drift-report",
                        help="where drift.json, drift.junit.xml and summary.txt go (default: ./drift-report)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show ansible-playbook's output")
    return parser.parse_args(argv)


def _split(text):
    return [t.strip() for t in text.split(",") if t.strip()]


def run_playbook(args):
    """Run the check; return (events, runner rc)."""
    import ansible_runner  # the one dependency beyond the standard library

    collected = []
    private_dir = tempfile.mkdtemp(prefix="aistack-drift-")
    cmdline = ["--check", "--diff"] + [arg for extra in args.extra_vars for arg in ("-e", extra)]
    try:
        runner = ansible_runner.run(
            private_data_dir=private_dir,
            project_dir=os.getcwd(),
            playbook=os.path.abspath(args.playbook),
            inventory=os.path.abspath(args.inventory),
            cmdline=" ".join("'%s'" % c.replace("'", "'\\''") for c in cmdline),
            tags=args.tags or None,
            skip_tags=args.skip_tags or None,
            limit=args.limit,
            forks=args.forks,
            quiet=not args.verbose,
            # Use the ansible-playbook of this interpreter's environment (the controller venv or the EE).
            envvars={"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")},
            event_handler=lambda event: collected.append(event) or True,
        )
        return collected, runner.rc
    finally:
        shutil.rmtree(private_dir, ignore_errors=True)


def main(argv=None):
    args = parse_args(argv)
    if not os.path.exists(args.inventory):
        sys.stderr.write("aistack-drift: inventory %s does not exist\n" % args.inventory)
        return 1
    started = time.time()
    collected, runner_rc = run_playbook(args)
    run = {"playbook": os.path.abspath(args.playbook), "inventory": os.path.abspath(args.inventory),
           "tags": _split(args.tags), "skip_tags": _split(args.skip_tags), "limit": args.limit, "forks": args.forks,
           "started": datetime.datetime.fromtimestamp(started, datetime.timezone.utc).replace(microsecond=0).isoformat(),
           "seconds": round(time.time() - started, 2)}
    document = reports.build(events.collect(collected), runner_rc, run)
    os.makedirs(args.output_dir, exist_ok=True)
    for name, text in (("drift.json", reports.to_json(document)), ("drift.junit.xml", reports.to_junit(document)),
                       ("summary.txt", document["summary"] + "\n")):
        with open(os.path.join(args.output_dir, name), "w") as handle:
            handle.write(text)
    print(document["summary"])
    if document["status"] == "error" and not args.verbose:
        for event in collected:
            if event.get("event") in ("runner_on_failed", "error", "verbose") and "ERROR" in event.get("stdout", ""):
                print(event["stdout"], file=sys.stderr)
    return document["exit_code"]
