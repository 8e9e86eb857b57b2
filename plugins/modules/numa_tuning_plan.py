#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

# The module runs on the controller, as the action plugin of the same name; this file holds its documentation.

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: numa_tuning_plan
short_description: Check the input of the numa_tuning role, read the node's NUMA layout and decide; check the activation
version_added: 0.1.0
description:
  - The refusals and decisions of the P(aistack.gpu_node.numa_tuning#role) role, taken on the controller from the
    role's variables and one read of the node with M(aistack.gpu_node.numa_facts).
  - O(stage=plan) refuses bad input (relative paths, negative threads, extra variables that are no shell names) before
    the node is read; reads the node only where there is an env (O(env_ready)) or host knobs to tune; refuses a prefix
    that is no directory, more threads per GPU than the node has CPUs and a prefix that is no Python env of the type
    asked; and decides the env type, the thread variables (RV(env)), whether the host's knobs can be written and the
    activation and launcher check (RV(check)), and whether the check an earlier run recorded on the node still proves
    this run (RV(proven)).
  - O(stage=check) runs that check in one bash on the node - activation and deactivation with sentinel values, and a
    command through the launcher for GPU 0 - and fails when the values set and restored, or the launcher's threads and
    CPU binding, differ from the plan. It returns what to record (RV(proof)).
  - O(stage=host) fails when the kernel does not hold a knob value that M(aistack.gpu_node.numa_host_tuning) reported,
    read back after a write, and returns the role's C(numa_tuning_host_result) (RV(published)).
author: aistack.gpu_node contributors (@aistack)
options:
  stage:
    description: V(plan), V(check) or V(host).
    type: str
    choices: [plan, check, host]
    default: plan
  env_ready:
    description: Whether there is an env to work on (C(node_probe_env_ready)); without it only the host knobs are read.
    type: bool
    default: false
  check:
    description: RV(check) of O(stage=plan); required with O(stage=check).
    type: dict
  host:
    description: RV(host) of O(stage=plan); required with O(stage=host).
    type: dict
  result:
    description: The registered result of M(aistack.gpu_node.numa_host_tuning); required with O(stage=host).
    type: dict
extends_documentation_fragment:
  - aistack.gpu_node.attributes.per_host
attributes:
  action:
    support: full
    description:
      - Runs on the controller as an action plugin. It reads the node with M(aistack.gpu_node.numa_facts) and, with
        O(stage=check), runs bash with C(ansible.builtin.command).
  check_mode:
    support: full
    description: Read-only; the role runs O(stage=check) only outside check mode.
  diff_mode:
    support: none
    description: Returns no diff.
  platform:
    support: full
    platforms: posix
    description: Any controller; the node must be Linux with bash and C(sha256sum).
notes:
  - The role's variables are read by their names (C(numa_tuning_*)) and the role's private C(__numa_tuning_conda_script),
    C(__numa_tuning_hook) and C(__numa_tuning_proof_path) (C(vars/main.yml)).
seealso:
  - module: aistack.gpu_node.numa_facts
  - module: aistack.gpu_node.numa_host_tuning
'''

EXAMPLES = r'''
# In the numa_tuning role.
- name: Check the input, read the NUMA topology, the env and its OpenMP runtime, and decide
  aistack.gpu_node.numa_tuning_plan:
    env_ready: "{{ node_probe_env_ready }}"
  register: __numa_tuning_plan

- name: Activate and deactivate in a shell with sentinel values, and run a command through the launcher for GPU 0
  aistack.gpu_node.numa_tuning_plan:
    stage: check
    check: "{{ __numa_tuning_plan.check }}"
  register: __numa_tuning_check
  when: not ansible_check_mode and not __numa_tuning_plan.proven
'''

RETURN = r'''
ansible_facts:
  description: C(aistack_numa), as M(aistack.gpu_node.numa_facts) returns it (read again after a host knob was written).
  returned: O(stage=plan) where the node was read; O(stage=host) after a write
  type: dict
type:
  description: The env type, V(conda) or V(venv).
  returned: O(stage=plan) with O(env_ready)
  type: str
env:
  description: The thread variables set on activation and in the kernel env (the role's C(numa_tuning_env)).
  returned: O(stage=plan) with O(env_ready)
  type: dict
  sample: {OMP_NUM_THREADS: "16", MKL_NUM_THREADS: "16"}
lines:
  description: The thread plan as the role shows it.
  returned: O(stage=plan) with O(env_ready)
  type: list
  elements: str
check:
  description: The check's bash text (C(script)), what it is judged by, and C(key), the digest of both.
  returned: O(stage=plan) with O(env_ready)
  type: dict
proven:
  description:
    - Whether the check recorded on the node was made for this very check (its key) on the files, C(numactl) and
      allowed CPUs as they are now. The role also asks that its run wrote nothing before it skips the check.
  returned: O(stage=plan) with O(env_ready)
  type: bool
proven_launcher:
  description: What the launcher did in the recorded check, when RV(proven).
  returned: O(stage=plan) with O(env_ready)
  type: str
host:
  description: C(writable), whether the host's knobs are to be written, and the arguments of the read of the node.
  returned: O(stage=plan) with the role's C(numa_tuning_host)
  type: dict
launcher:
  description: What the launcher did (empty without a launcher).
  returned: O(stage=check)
  type: str
proof:
  description: The record of the check that passed - its C(key), C(state) (the node as the check read it) and C(launcher).
  returned: O(stage=check)
  type: dict
published:
  description: The role's C(numa_tuning_host_result).
  returned: O(stage=host)
  type: dict
'''
