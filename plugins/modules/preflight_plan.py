#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

# The module runs on the controller, as the action plugin of the same name; this file holds its documentation.

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: preflight_plan
short_description: Decide whether a node can be provisioned, before anything changes
version_added: 0.1.0
description:
  - The decision of the P(aistack.gpu_node.preflight#role) role; it never changes the node.
  - Checks what the role's argument spec cannot say (O(min_python) is a version, every path in O(paths) is
    absolute), then reads the node in one module run, M(aistack.gpu_node.node_facts) (the C(min) and C(virtual) fact
    subsets, the GPUs unless C(ansible_facts.aistack_gpu) is set already, the container runtimes, the free space at
    O(paths)), publishes the facts it read and reports on the node from that reading, with every problem that must
    stop provisioning, each naming the variable that decides it.
author: aistack.gpu_node contributors (@aistack)
options:
  supported_platforms:
    description: The role's C(preflight_supported_platforms).
    type: dict
    required: true
  min_python:
    description: The role's C(preflight_min_python), as C(major.minor).
    type: str
    required: true
  paths:
    description: The role's C(preflight_paths).
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: An absolute path, existing or not.
        type: str
        required: true
      min_free_mib:
        description: The free space needed there, in MiB.
        type: int
        required: true
      purpose:
        description: What the space is for, named in the problem.
        type: str
        default: ''
  require_systemd:
    description: The role's C(preflight_require_systemd).
    type: bool
    default: false
extends_documentation_fragment:
  - aistack.gpu_node.attributes.per_host
  - aistack.gpu_node.attributes.read_only
attributes:
  action:
    support: full
    description: Runs on the controller as an action plugin; it runs M(aistack.gpu_node.node_facts) on the node.
  platform:
    support: full
    platforms: posix
    description: Any node M(aistack.gpu_node.node_facts) runs on.
seealso:
  - module: aistack.gpu_node.node_facts
  - module: aistack.gpu_node.gpu_facts
'''

EXAMPLES = r'''
- name: Decide whether the node can be provisioned
  aistack.gpu_node.preflight_plan:
    supported_platforms: {Ubuntu: ["22.04", "24.04"], Debian: ["12"]}
    min_python: "3.8"
    paths: [{path: /opt, min_free_mib: 20480, purpose: conda base}]
  register: plan

- name: Stop when it cannot
  ansible.builtin.fail:
    msg: "{{ plan.report.problems | join(' | ') }}"
  when: plan.report.problems | length > 0
'''

RETURN = r'''
ansible_facts:
  description:
    - What M(aistack.gpu_node.node_facts) read, published for the later tasks - the C(min) and C(virtual) subsets of
      C(ansible.builtin.setup), C(aistack_container_runtimes), and C(aistack_gpu) where it was read.
  returned: success
  type: dict
report:
  description: The report on the node; the role publishes it as C(preflight_report).
  returned: success
  type: dict
  contains:
    os:
      description: Distribution, version as the tables use it, family, and whether it is supported.
      type: dict
      returned: success
      sample: {distribution: Debian, version: "12", family: Debian, supported: true}
    python:
      description: The node's Python, the minimum, and whether it is new enough.
      type: dict
      returned: success
      sample: {version: 3.11.2, minimum: "3.8", ok: true}
    service_manager:
      description: The node's service manager.
      type: str
      returned: success
      sample: systemd
    systemd:
      description: Whether it is systemd.
      type: bool
      returned: success
    container:
      description: Whether the node is a container (it shares its host's kernel), and which type.
      type: dict
      returned: success
      sample: {is_container: true, type: podman}
    virtualization:
      description: Ansible's virtualization role and type.
      type: dict
      returned: success
    paths:
      description: Each path of O(paths) with the free space M(aistack.gpu_node.node_facts) measured, the need and whether it is met.
      type: list
      elements: dict
      returned: success
    gpu:
      description: Whether NVIDIA GPUs are present, how many, whether a driver is loaded, and the state of C(aistack_gpu).
      type: dict
      returned: success
      sample: {present: true, count: 8, driver_loaded: true, state: ok}
    problems:
      description: Every problem that must stop provisioning, each naming the variable that decides it.
      type: list
      elements: str
      returned: success
      sample: ["unsupported OS Debian 11; supported: Debian 12, Ubuntu 22.04/24.04 (preflight_supported_platforms)"]
'''
