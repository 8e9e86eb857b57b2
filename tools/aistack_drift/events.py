# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""From ansible-runner events to what each host would change. Pure functions."""

import difflib
import json
import re

# Tasks outside any role (a play's own tasks) are reported under this role name.
NO_ROLE = "(play)"
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def render_diff(diff):
    """One diff as Ansible's callbacks give it (``prepared`` text, or before/after) as unified text."""
    if not isinstance(diff, dict):
        return str(diff)
    if diff.get("prepared"):
        return diff["prepared"]
    before, after = diff.get("before", ""), diff.get("after", "")
    if not isinstance(before, str):
        before = json.dumps(before, indent=2, sort_keys=True) + "\n"
    if not isinstance(after, str):
        after = json.dumps(after, indent=2, sort_keys=True) + "\n"
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                        diff.get("before_header", "before"), diff.get("after_header", "after")))


def _diffs(res):
    """Every diff in a task result, loop items included, as text."""
    found = []
    for result in [res] + [r for r in res.get("results", []) if isinstance(r, dict)]:
        diff = result.get("diff")
        if result is not res and not result.get("changed"):
            continue
        for one in diff if isinstance(diff, list) else [diff] if diff else []:
            text = render_diff(one)
            if text.strip():
                found.append(text)
    return found


def _changed(event, res):
    """Whether a task result says it changed. A no_log result is censored down to a note, without
    ``changed``: the line the callback printed for it (``changed: [host]``) still says so."""
    if "censored" in res:
        return _COLOUR.sub("", event.get("stdout") or "").lstrip().startswith("changed:")
    return bool(res.get("changed"))


def _host(hosts, name):
    return hosts.setdefault(name, {"roles": [], "changed": [], "failed": [], "unreachable": None, "stats": {}})


def _task_record(data):
    return {"play": data.get("play", ""), "role": data.get("role") or NO_ROLE, "task": data.get("task", ""),
            "action": data.get("task_action", "")}


def collect(events):
    """Per host: roles seen, tasks that would change (with diffs), failures, unreachability, recap.

    ``events`` are ansible-runner event dicts (``event`` and ``event_data``), in order.
    """
    hosts = {}
    for event in events:
        kind = event.get("event", "")
        data = event.get("event_data") or {}
        if kind == "playbook_on_stats":
            for counter in ("ok", "changed", "failures", "dark", "skipped", "rescued", "ignored"):
                for name, count in (data.get(counter) or {}).items():
                    _host(hosts, name)["stats"][counter] = count
            continue
        if not kind.startswith("runner_on_") or not data.get("host"):
            continue
        host = _host(hosts, data["host"])
        role = data.get("role") or NO_ROLE
        if role not in host["roles"]:
            host["roles"].append(role)
        res = data.get("res") or {}
        if kind == "runner_on_ok" and _changed(event, res):
            record = _task_record(data)
            record["diff"] = _diffs(res)
            host["changed"].append(record)
        elif kind == "runner_on_failed" and not data.get("ignore_errors"):
            record = _task_record(data)
            record["message"] = str(res.get("msg") or res.get("stderr") or res.get("exception") or "failed")
            host["failed"].append(record)
        elif kind == "runner_on_unreachable":
            host["unreachable"] = str(res.get("msg") or "unreachable")
    return hosts


def host_status(host):
    if host["unreachable"]:
        return "unreachable"
    if host["failed"]:
        return "failed"
    return "drift" if host["changed"] else "clean"


def verdict(hosts, runner_rc):
    """(status, exit code): 1 for an error or an unreachable host, 2 for drift, 0 for none."""
    statuses = [host_status(host) for host in hosts.values()]
    if not hosts or runner_rc != 0 or "failed" in statuses or "unreachable" in statuses:
        return "error", 1
    if "drift" in statuses:
        return "drift", 2
    return "clean", 0
