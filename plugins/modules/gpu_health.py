#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: gpu_health
short_description: Classify the NVIDIA Xid and SXid events of the kernel log since boot, optionally with a DCGM diagnostic
version_added: 0.1.0
description:
  - The health half of the P(aistack.gpu_node.gpu_validate#role) role, read-only.
  - Reads the kernel log since boot with C(journalctl -k -b -o short-monotonic --no-pager); where journald is absent,
    fails or holds no kernel messages, with C(dmesg). Neither changes anything.
  - Classifies each NVRM Xid and NVSwitch SXid event by O(catalogue) into C(OK), C(MONITOR), C(RESET), C(REBOOT) or
    C(ISOLATE), gives each GPU (by PCI bus id) the worst class of its events and of its model's escalation thresholds,
    and the node the worst class of its devices.
  - With O(dcgm_diag_level) above 0, runs C(dcgmi diag -r <level> -j) and folds its failures in; a node without
    C(dcgmi) is refused, naming C(gpu_validate_dcgm_diag_level). A failure that a waiver of the catalogue covers at
    the node's DCGM version (C(dcgmi -v)), a known false diagnostic, is listed as waived and does not count.
  - A kernel log that cannot be read, with no diagnostic run, gives the verdict C(UNKNOWN), never C(OK).
  - With O(scan=false) only checks the input (the catalogue, the variables, C(dcgmi) where a level is asked for) and
    returns RV(problems), for the role's preflight. Without a DCGM level that check needs nothing from the node, so the
    action plugin of the same name makes it on the controller.
author: aistack.gpu_node contributors (@aistack)
options:
  catalogue:
    description:
      - The health catalogue (classes and actions, Xid and SXid entries with their sources, per-model escalations,
        DCGM severities).
      - Omitted, the action reads the P(aistack.gpu_node.gpu_validate#role) role's own,
        C(roles/gpu_validate/vars/health_catalogue.yml), and passes it to the module.
    type: dict
  gpus:
    description: The GPUs as M(aistack.gpu_node.gpu_facts) reports them (C(index), C(name), C(pci_bus_id)), to name GPUs and pick their model.
    type: list
    elements: dict
    default: []
  dcgm_diag_level:
    description: C(dcgmi diag) run level, 1 (quick) to 3 (long); 0 runs none.
    type: int
    default: 0
  dcgm_install_planned:
    description:
      - The P(aistack.gpu_node.dcgm#role) role installs DCGM later in this run (its preflight's fact
        C(dcgm_install_planned)); with O(scan=false) a missing C(dcgmi) is then not a problem.
    type: bool
    default: false
  fail_class:
    description: The class from which RV(health.fails) is true; C(never) makes every class a warning.
    type: str
    default: REBOOT
  scan:
    description: Read the kernel log and judge; false only checks the input.
    type: bool
    default: true
attributes:
  action:
    support: partial
    description:
      - The action plugin checks the input on the controller when O(scan=false) and O(dcgm_diag_level=0); everything else
        runs on the node. An input check (O(scan=false)) is handed back from the task's registered result with the same
        RV(inputs_key) without running anything.
  check_mode:
    support: full
    description: Reads the kernel log in check mode too; the DCGM diagnostic, which loads the GPUs, is skipped there.
  diff_mode:
    support: none
    description: Returns no diff.
  platform:
    support: full
    platforms: posix
    description: Linux nodes with journald or C(dmesg).
notes:
  - C(dmesg) reads the kernel ring buffer, which can have wrapped on a node up for long; the journal keeps the whole boot.
'''

EXAMPLES = r'''
- name: Scan the kernel log since boot (the gpu_validate role's health catalogue)
  aistack.gpu_node.gpu_health:
    gpus: "{{ ansible_facts.aistack_gpu.gpus }}"
  register: health

- name: The same with DCGM's medium diagnostic, and only ISOLATE failing
  aistack.gpu_node.gpu_health:
    gpus: "{{ ansible_facts.aistack_gpu.gpus }}"
    dcgm_diag_level: 2
    fail_class: ISOLATE
  register: health
'''

RETURN = r'''
inputs_key:
  description:
    - The sha256 of the input check's arguments and check mode (a keyed decision). When the task's registered result
      from an earlier run in the same playbook has the same key, the action hands that result back without asking the node.
  returned: when O(scan) is false
  type: str
reused:
  description: Whether the input check was handed back from the task's registered result (see RV(inputs_key)).
  returned: when O(scan) is false
  type: bool
problems:
  description: Every bad input, each naming its variable or catalogue entry; empty when none.
  returned: always
  type: list
  elements: str
  sample:
    - "gpu_validate_dcgm_diag_level is 2 but dcgmi is not installed on the node: install DCGM (datacenter-gpu-manager)
      or set gpu_validate_dcgm_diag_level: 0"
health:
  description: The verdict.
  returned: when O(scan) is true
  type: dict
  contains:
    verdict:
      description: The worst class found, C(OK) to C(ISOLATE); C(UNKNOWN) when the kernel log could not be read and no diagnostic ran.
      type: str
      sample: OK
    action:
      description: What to do about the verdict, from the catalogue.
      type: str
    fails:
      description: Whether the verdict reaches O(fail_class).
      type: bool
      sample: false
    fail_class:
      description: O(fail_class) as given.
      type: str
    kernel_log:
      description: C(source) (C(journalctl), C(dmesg) or C(none)), C(reason) (why a source was passed over), C(events) (Xid and SXid lines found).
      type: dict
    events:
      description:
        - One entry per device and code, C(device), C(kind) (C(xid) or C(sxid)), C(code), C(name), C(class), C(why),
          C(source), C(count), C(first_line), C(last_line).
      type: list
      elements: dict
    devices:
      description:
        - One entry per GPU or NVSwitch with events, C(device) (PCI bus id), C(kind), C(label), C(gpu_index), C(gpu_name),
          C(model), C(class), C(counts) (per Xid code), C(escalations) (thresholds reached), C(message).
      type: list
      elements: dict
    dcgm:
      description:
        - C(level), C(version) (the DCGM client's, C(dcgmi -v)), C(status) (C(off), C(skipped), C(passed), C(failed)),
          C(class), C(findings) (a waived one with C(waived) - the class it had, C(why), C(source)), C(waived) (how many).
      type: dict
    messages:
      description: One line per device not OK and per DCGM finding.
      type: list
      elements: str
    summary:
      description: One line for the report.
      type: str
      sample: "health OK: 0 Xid/SXid events in the kernel log since boot (journalctl) on 0 devices"
'''

import json

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import dcgm, gpu_health


def read_kernel_log(module):
    """The kernel log since boot: ``{'source', 'text', 'reason'}``; journald first, then dmesg."""
    passed_over = []
    journalctl = module.get_bin_path('journalctl')
    if journalctl:
        rc, out, err = module.run_command([journalctl, '-k', '-b', '-o', 'short-monotonic', '--no-pager'])
        if rc == 0 and gpu_health.journal_has_entries(out):
            return {'source': 'journalctl', 'text': out, 'reason': ''}
        passed_over.append('journalctl: %s' % ((err or out or '').strip() or 'no kernel messages since boot')
                           if rc == 0 else 'journalctl: exit %d %s' % (rc, (err or '').strip()))
    else:
        passed_over.append('journalctl: not installed')
    dmesg = module.get_bin_path('dmesg')
    if dmesg:
        rc, out, err = module.run_command([dmesg])
        if rc == 0 and out.strip():
            return {'source': 'dmesg', 'text': out, 'reason': '; '.join(passed_over)}
        passed_over.append('dmesg: exit %d %s' % (rc, (err or '').strip()))
    else:
        passed_over.append('dmesg: not installed')
    return {'source': 'none', 'text': '', 'reason': '; '.join(passed_over)}


def run_dcgm(module, dcgmi, level, catalogue):
    if module.check_mode:
        return {'level': level, 'status': 'skipped', 'reason': 'check mode'}
    version = dcgm.parse_dcgmi_version(module.run_command([dcgmi, '-v'])[1])['client']
    rc, out, err = module.run_command([dcgmi, 'diag', '-r', str(level), '-j'])
    try:
        data = json.loads(out)
    except ValueError:
        module.fail_json(msg='gpu_validate: dcgmi diag -r %d -j gave no JSON (exit %d): %s' % (level, rc, (err or out).strip()))
    return gpu_health.assess_dcgm(data, level, catalogue, version=version)


def main():
    module = AnsibleModule(argument_spec=gpu_health.ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    if params['catalogue'] is None:
        # Only a task that bypasses the action plugin, which fills in the role's catalogue, gets here.
        module.fail_json(msg='gpu_health: no catalogue given, and none is read without the action plugin')
    level = params['dcgm_diag_level']
    problems = gpu_health.catalogue_problems(params['catalogue']) + gpu_health.input_problems(level, params['fail_class'])
    dcgmi = module.get_bin_path('dcgmi') if level else None
    if level and not dcgmi and not (params['dcgm_install_planned'] and not params['scan']):
        problems.append(gpu_health.dcgmi_missing_problem(level))
    if not params['scan']:
        module.exit_json(changed=False, problems=problems)
    if problems:
        module.fail_json(msg='gpu_validate: bad input: %s' % ' | '.join(problems), problems=problems)
    dcgm = run_dcgm(module, dcgmi, level, params['catalogue']) if level else None
    health = gpu_health.assess(read_kernel_log(module), params['gpus'], params['catalogue'],
                               fail_class=params['fail_class'], dcgm=dcgm)
    module.exit_json(changed=False, problems=problems, health=health)


if __name__ == '__main__':
    main()
