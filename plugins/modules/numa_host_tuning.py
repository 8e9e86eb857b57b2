#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
---
module: numa_host_tuning
short_description: Set or revert host-level CPU and memory knobs for GPU work
version_added: "0.1.0"
description:
  - Sets C(kernel.numa_balancing), the transparent hugepage mode and the CPU frequency governor, at runtime and across
    reboots, and reverts them.
  - With C(tuned-adm) on the host (and O(use_tuned)), writes a tuned profile C(aistack-gpu) that includes the profile
    active before and switches to it; reverting switches back to that profile.
  - Without tuned, writes the values to C(/proc/sys) and C(/sys), keeps them across reboots with
    C(/etc/sysctl.d/90-aistack-numa.conf) and C(/etc/tmpfiles.d/aistack-numa.conf).
  - The values found before the first change are recorded in O(state_file); O(state=absent) writes them back and removes
    every file this module wrote.
  - A knob the host does not have (no cpufreq in most VMs) or cannot write (read-only C(/proc/sys) in containers) is left
    alone and named in RV(left_alone); it is not an error.
author: aistack.gpu_node contributors (@aistack)
options:
  state:
    description: V(present) applies the values; V(absent) restores the recorded originals and removes the files.
    type: str
    choices: [present, absent]
    default: present
  numa_balancing:
    description: Value of C(kernel.numa_balancing); unset leaves it alone.
    type: bool
  thp:
    description: Transparent hugepage mode; unset leaves it alone.
    type: str
    choices: [always, madvise, never]
  governor:
    description: CPU frequency governor of every CPU, for example V(performance); unset leaves it alone.
    type: str
  use_tuned:
    description: Use tuned when C(tuned-adm) is on the host.
    type: bool
    default: true
  state_file:
    description: Where the original values are recorded.
    type: path
    default: /var/lib/aistack/numa_host_tuning.json
attributes:
  check_mode:
    support: full
    description: Reports what would change, and the diff, without writing.
  diff_mode:
    support: full
    description: Shows the knob values before and after.
  platform:
    support: full
    platforms: posix
    description: Linux hosts.
seealso:
  - module: aistack.gpu_node.numa_facts
"""

EXAMPLES = r"""
- name: No automatic NUMA page migration, THP on request, performance governor
  aistack.gpu_node.numa_host_tuning:
    numa_balancing: false
    thp: madvise
    governor: performance

- name: Put everything back as it was
  aistack.gpu_node.numa_host_tuning:
    state: absent
"""

RETURN = r"""
knobs:
  description: Knob values after the run (what they would be, in check mode).
  returned: always
  type: dict
  sample: {numa_balancing: "0", thp: madvise, governor: null}
left_alone:
  description: Knobs left alone and why.
  returned: always
  type: dict
  sample: {governor: "not supported on this host (no cpufreq)"}
method:
  description: V(tuned) or V(sysfs).
  returned: always
  type: str
  sample: sysfs
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.host_tuning import (
    NUMA_BALANCING,
    SYSCTL_FILE,
    THP_ENABLED,
    TMPFILES_FILE,
    TUNED_PROFILE,
    parse_saved_state,
    parse_tuned_active,
    plan,
    render_sysctl,
    render_tmpfiles,
    render_tuned_profile,
    wanted_values,
)
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.host_tuning import governor_paths, read_host

# Tests point this at a fake tree.
ROOT = "/"


def _path(path):
    return os.path.join(ROOT, path.lstrip("/"))


def _read(path):
    try:
        with open(_path(path)) as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def _write_knob(knob, value):
    paths = governor_paths(ROOT) if knob == "governor" else [_path({"numa_balancing": NUMA_BALANCING, "thp": THP_ENABLED}[knob])]
    for path in paths:
        with open(path, "w") as handle:
            handle.write(value)


class Run(object):
    """One module run: collects changes, honours check mode."""

    def __init__(self, module):
        self.module = module
        self.changed = False

    def put_file(self, path, content):
        if _read(path) == content:
            return
        self.changed = True
        if not self.module.check_mode:
            directory = os.path.dirname(_path(path))
            if not os.path.isdir(directory):
                os.makedirs(directory, 0o755)
            with open(_path(path) + ".tmp", "w") as handle:
                handle.write(content)
            os.chmod(_path(path) + ".tmp", 0o644)
            os.rename(_path(path) + ".tmp", _path(path))

    def remove(self, path):
        if os.path.lexists(_path(path)):
            self.changed = True
            if not self.module.check_mode:
                os.remove(_path(path))

    def knob(self, knob, value):
        self.changed = True
        if not self.module.check_mode:
            _write_knob(knob, value)

    def command(self, argv):
        self.changed = True
        if not self.module.check_mode:
            self.module.run_command(argv, check_rc=True)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", choices=["present", "absent"], default="present"),
            numa_balancing=dict(type="bool"),
            thp=dict(type="str", choices=["always", "madvise", "never"]),
            governor=dict(type="str"),
            use_tuned=dict(type="bool", default=True),
            state_file=dict(type="path", default="/var/lib/aistack/numa_host_tuning.json"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    run = Run(module)
    host = read_host(ROOT)
    before = dict((knob, state["value"]) for knob, state in host.items())
    saved = parse_saved_state(_read(params["state_file"]))
    tuned = module.get_bin_path("tuned-adm") if params["use_tuned"] else None
    tuned_file = "/etc/tuned/%s/tuned.conf" % TUNED_PROFILE
    after, left_alone = dict(before), {}

    if params["state"] == "present":
        wanted = wanted_values(params["numa_balancing"], params["thp"], params["governor"])
        changes, left_alone = plan(host, wanted)
        originals = dict(saved.get("original", {}))
        for knob, (old, _new) in changes.items():
            originals.setdefault(knob, old)
        record = {"original": originals}
        if tuned:
            active = parse_tuned_active(module.run_command([tuned, "active"])[1])
            previous = saved.get("tuned_previous", active if active != TUNED_PROFILE else None)
            record["tuned_previous"] = previous
            run.put_file(tuned_file, render_tuned_profile(wanted, previous))
            if run.changed or active != TUNED_PROFILE:
                run.command([tuned, "profile", TUNED_PROFILE])
        else:
            for knob, (_old, new) in changes.items():
                run.knob(knob, new)
            applied = dict((knob, value) for knob, value in wanted.items() if knob not in left_alone)
            for path, content in ((SYSCTL_FILE, render_sysctl(applied)), (TMPFILES_FILE, render_tmpfiles(applied))):
                if content:
                    run.put_file(path, content)
                else:
                    run.remove(path)
        after.update((knob, new) for knob, (_old, new) in changes.items())
        # Nothing to record when nothing was ever changed: a first run on a host already as wanted stays "ok".
        if saved != record and (originals or tuned or saved):
            run.put_file(params["state_file"], json.dumps(record, indent=1, sort_keys=True) + "\n")
    else:
        if tuned and saved.get("tuned_previous") and os.path.exists(_path(tuned_file)):
            run.command([tuned, "profile", saved["tuned_previous"]])
        for knob, value in saved.get("original", {}).items():
            if value is not None and host[knob]["value"] != value:
                if host[knob]["writable"]:
                    run.knob(knob, value)
                    after[knob] = value
                else:
                    left_alone[knob] = "not writable here; still %s, recorded original %s" % (host[knob]["value"], value)
        for path in (tuned_file, SYSCTL_FILE, TMPFILES_FILE, params["state_file"]):
            run.remove(path)
        if os.path.isdir(_path(os.path.dirname(tuned_file))) and not module.check_mode:
            os.rmdir(_path(os.path.dirname(tuned_file)))

    module.exit_json(
        changed=run.changed,
        knobs=after,
        left_alone=left_alone,
        method="tuned" if tuned else "sysfs",
        diff={"before": json.dumps(before, indent=1, sort_keys=True) + "\n",
              "after": json.dumps(after, indent=1, sort_keys=True) + "\n"},
    )


if __name__ == "__main__":
    main()
