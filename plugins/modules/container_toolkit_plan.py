#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

# The module runs on the controller, as the action plugin of the same name; this file holds its documentation.

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: container_toolkit_plan
short_description: Decide what the container_toolkit role does on a node, and judge the CDI spec it made
version_added: 0.2.0
description:
  - The decisions of the P(aistack.gpu_node.container_toolkit#role) role, taken on the controller. It reads the role's
    variables from the task's variables, templated and typed by the role's C(meta/argument_specs.yml), and the facts
    it needs from C(ansible_facts) (C(aistack_gpu), C(os_family), C(pkg_mgr), C(aistack_container_runtimes) where the
    preflight read it). Where this run has not read them yet (a role run alone), it reads the OS facts, the GPUs
    and the runtimes in one M(aistack.gpu_node.node_facts) run and returns them as C(ansible_facts). It never
    changes the node.
  - With O(stage=plan) it refuses bad values of the role's variables, each named, before the node is read; then,
    unless C(container_toolkit_install) is false, or V(auto) on a node where the preflight found no container runtime
    (C(ansible_facts.aistack_container_runtimes) of M(aistack.gpu_node.node_facts) empty), it reads the node through
    M(aistack.gpu_node.container_toolkit_probe) (one round-trip) and returns the mode (C(skip), C(work) or C(refuse)), the packages to install at the pinned
    version (never a downgrade), those to hold, the runtimes C(nvidia-ctk runtime configure) is for, and whether the
    CDI spec must be made again because it no longer fits the driver or the GPUs. This decision is keyed
    (RV(inputs_key)) - registered under the same name with the same settings, facts, check mode and
    C(container_toolkit_report), it is handed back (RV(reused)) without reading the node again. A decision with
    RV(problems) (mode C(refuse)) fails the task, its message naming the host and each problem.
  - With O(stage=cdi), after C(nvidia-ctk cdi generate), it reads the spec again and fails unless it fits the driver
    and GPUs of C(ansible_facts.aistack_gpu).
author: aistack.gpu_node contributors (@aistack)
options:
  stage:
    description: C(plan) decides before any change; C(cdi) judges the spec nvidia-ctk made.
    type: str
    choices: [plan, cdi]
    default: plan
extends_documentation_fragment:
  - aistack.gpu_node.attributes.per_host
  - aistack.gpu_node.attributes.read_only
attributes:
  action:
    support: full
    description:
      - Runs on the controller as an action plugin. It reads the node with M(aistack.gpu_node.container_toolkit_probe)
        unless the decision is handed back, C(container_toolkit_install) is false, or it is V(auto) and the
        preflight's C(aistack_container_runtimes) names no runtime.
  platform:
    support: full
    platforms: posix
    description: Any controller; the probe needs a Linux node with apt or dnf.
notes:
  - The role's variables are read by their names (C(container_toolkit_*)) and the role's private
    C(__container_toolkit_key_path) (C(vars/main.yml)); the options are all a task passes.
seealso:
  - module: aistack.gpu_node.container_toolkit_probe
  - module: aistack.gpu_node.gpu_facts
  - module: aistack.gpu_node.node_facts
'''

EXAMPLES = r'''
# In the container_toolkit role: the settings and the facts are read from the task's variables.
- name: Decide skip or work, the packages, the runtimes and the CDI spec
  aistack.gpu_node.container_toolkit_plan:
  register: __container_toolkit_decision

- name: Judge the CDI spec nvidia-ctk made
  aistack.gpu_node.container_toolkit_plan:
    stage: cdi
  register: __container_toolkit_cdi
'''

RETURN = r'''
ansible_facts:
  description:
    - What M(aistack.gpu_node.node_facts) read for a role run alone (C(ansible.builtin.setup)'s C(min) and C(virtual)
      subsets, the container runtimes, C(aistack_gpu) where it was not set), published as facts; never part of a
      decision handed back.
  returned: O(stage=plan), where this run had not read those facts yet and the decision has no problem
  type: dict
mode:
  description: O(stage=plan), C(skip) (off, or no container runtime with C(container_toolkit_install=auto)), C(work)
    or C(refuse) (RV(problems) says why).
  returned: O(stage=plan)
  type: str
reason:
  description: O(stage=plan), why, in one line.
  returned: O(stage=plan)
  type: str
problems:
  description: O(stage=plan), what stops the role (a downgrade, an unsupported OS family), each naming its variable.
  returned: O(stage=plan)
  type: list
  elements: str
manager:
  description: O(stage=plan), C(apt) or C(dnf); null where the role skips or refuses before it.
  returned: O(stage=plan)
  type: str
version:
  description: O(stage=plan), the toolkit version asked for (C(container_toolkit_version)).
  returned: O(stage=plan)
  type: str
installed:
  description: O(stage=plan), the installed toolkit (C(version), C(packages), C(complete)), null without one.
  returned: O(stage=plan)
  type: dict
upgrade_from:
  description: O(stage=plan), the installed version an install replaces, null for none.
  returned: O(stage=plan)
  type: str
install:
  description: O(stage=plan), whether the packages are installed or upgraded.
  returned: O(stage=plan)
  type: bool
specs:
  description: O(stage=plan), the package manager's names at the pinned version (C(name=1.18.0-*), C(name-1.18.0)).
  returned: O(stage=plan)
  type: list
  elements: str
hold_missing:
  description: O(stage=plan), installed toolkit packages not held yet (empty with C(container_toolkit_hold) false).
  returned: O(stage=plan)
  type: list
  elements: str
runtimes:
  description: O(stage=plan), C(found) (the runtimes the node has) and C(configured) (docker and containerd already
    naming the nvidia runtime).
  returned: O(stage=plan)
  type: dict
configure:
  description: O(stage=plan), the runtimes C(nvidia-ctk runtime configure) is run for.
  returned: O(stage=plan)
  type: list
  elements: str
cdi:
  description:
    - The CDI spec - C(path), C(state) (C(off), C(no_driver), C(missing), C(stale), C(current)), C(generate), C(reasons)
      (why it is made again, or why not), C(driver_version) and C(gpus) (the node's), C(devices) and C(made_for) (the
      driver versions the spec's libraries carry). O(stage=cdi) returns it for the spec just made.
    - Null in O(stage=plan) where the role skips or refuses.
  returned: always
  type: dict
key_present:
  description: O(stage=plan) after a node read, whether the repository's signing key is in place.
  returned: when the node was read
  type: bool
inputs_key:
  description: O(stage=plan), the sha256 of what the decision rests on.
  returned: O(stage=plan)
  type: str
reused:
  description: O(stage=plan), whether the decision was handed back from the task's registered result.
  returned: O(stage=plan)
  type: bool
'''
