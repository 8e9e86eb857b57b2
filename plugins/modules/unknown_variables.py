#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

# The module runs on the controller, as the action plugin of the same name; this file holds its documentation.

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: unknown_variables
short_description: Refuse inventory and extra variables that look like a role's variable and are none
version_added: 0.1.0
description:
  - The check of the preflight play (C(playbooks/preflight.yml), the first play of C(site.yml)); it never reads or
    changes a node.
  - Reads the options of every role of the collection (every entry point of its C(meta/argument_specs.yml)) and,
    for each host of O(hosts), the names of its variables from the inventory (group and host variables, files
    beside the inventory or the playbook included) and the extra vars; never a role's defaults or a play's vars.
  - A name belongs to a role when it starts with the role's name and C(_) (C(conda_env_)), or its head is one edit
    from that prefix (two for prefixes over 10 characters, so C(jupyter_kernal_lab) belongs to jupyter_kernel). Such
    a name must be an option of that role or a fact a role publishes (C(conda_env_target), C(miniconda_result),
    ...); every other one is listed with the closest options (Python's C(difflib)).
author: aistack.gpu_node contributors (@aistack)
options:
  hosts:
    description: The hosts whose variables are checked, C(ansible_play_hosts_all).
    type: list
    elements: str
    required: true
  mode:
    description:
      - C(aistack_unknown_variables) - V(fail) fails with every unknown variable listed, V(warn) only warns.
      - Any other value fails as bad input.
    type: str
    default: fail
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
  - aistack.gpu_node.attributes.controller_plan
attributes:
  async:
    support: none
    description: Not asynchronous.
  bypass_host_loop:
    support: none
    description: Run it with C(run_once); it checks every host of O(hosts) at once.
seealso:
  - module: aistack.gpu_node.preflight_plan
'''

EXAMPLES = r'''
- name: Check the inventory and extra variables against the roles' options
  aistack.gpu_node.unknown_variables:
    hosts: "{{ ansible_play_hosts_all }}"
    mode: "{{ aistack_unknown_variables | default('fail') }}"
  run_once: true
'''

RETURN = r'''
unknown:
  description: The unknown variables, each with the role it looks like, the closest options and the hosts it is set for.
  returned: always
  type: list
  elements: dict
  sample: [{name: miniconda_prefx, role: miniconda, suggestions: [miniconda_prefix], hosts: [node1, node2]}]
msg:
  description: "The unknown variables, one C(<name>: not a variable of the <role> role; did you mean <option>?) each."
  returned: always
  type: str
'''
