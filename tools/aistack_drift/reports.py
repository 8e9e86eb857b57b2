# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift report as JSON (schema: report.schema.json), JUnit XML and a short summary. Pure functions."""

import json
import os
import xml.etree.ElementTree as ET

from . import events

SCHEMA_VERSION = 1
SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "report.schema.json")


def build(hosts, runner_rc, run):
    """The report document. ``run`` describes the run (playbook, inventory, tags, times...)."""
    status, exit_code = events.verdict(hosts, runner_rc)
    document = {"schema_version": SCHEMA_VERSION, "status": status, "exit_code": exit_code,
                "runner_rc": runner_rc, "run": run, "hosts": {}}
    for name in sorted(hosts):
        host = dict(hosts[name])
        host["status"] = events.host_status(host)
        document["hosts"][name] = host
    document["summary"] = summary(document)
    return document


def to_json(document):
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def _task_line(record):
    return "%s : %s (%s)" % (record["role"], record["task"], record["action"])


def to_junit(document):
    """One test suite per host, one test case per role seen there: drift is a failure, an error an error."""
    suites = ET.Element("testsuites", name="aistack-drift")
    for name, host in sorted(document["hosts"].items()):
        roles = host["roles"] or [events.NO_ROLE]
        suite = ET.SubElement(suites, "testsuite", name=name, tests=str(len(roles)))
        failures = errors = 0
        for role in roles:
            case = ET.SubElement(suite, "testcase", classname=name, name=role)
            changed = [r for r in host["changed"] if r["role"] == role]
            failed = [r for r in host["failed"] if r["role"] == role]
            if host["unreachable"]:
                errors += 1
                ET.SubElement(case, "error", message="unreachable", type="unreachable").text = host["unreachable"]
            elif failed:
                errors += 1
                ET.SubElement(case, "error", message="%d task(s) failed" % len(failed), type="failed").text = \
                    "\n".join("%s: %s" % (_task_line(r), r["message"]) for r in failed)
            elif changed:
                failures += 1
                ET.SubElement(case, "failure", message="%d task(s) would change" % len(changed), type="drift").text = \
                    "\n\n".join("\n".join([_task_line(r)] + r["diff"]) for r in changed)
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
    return ET.tostring(suites, encoding="unicode") + "\n"


def summary(document):
    """A few lines for people and for mail from cron."""
    hosts = document["hosts"]
    drifted = [n for n, h in sorted(hosts.items()) if h["status"] == "drift"]
    broken = [n for n, h in sorted(hosts.items()) if h["status"] in ("failed", "unreachable")]
    lines = ["aistack-drift: %s: %d host(s), %d with drift, %d failed or unreachable"
             % (document["status"], len(hosts), len(drifted), len(broken))]
    for name in drifted:
        lines.append("  %s: %d task(s) would change" % (name, len(hosts[name]["changed"])))
        lines.extend("    %s" % _task_line(r) for r in hosts[name]["changed"])
    for name in broken:
        host = hosts[name]
        lines.append("  %s: %s" % (name, host["status"]))
        if host["unreachable"]:
            lines.append("    %s" % host["unreachable"])
        lines.extend("    %s: %s" % (_task_line(r), r["message"].splitlines()[0] if r["message"] else "") for r in host["failed"])
    if not hosts:
        lines.append("  no host ran: see the run's output (runner rc %s)" % document["runner_rc"])
    return "\n".join(lines)
