#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

# The module runs on the controller, as the action plugin of the same name; this file holds its documentation.

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: mirrors_condarc_plan
short_description: Build and check the .condarc of the mirrors_condarc role
version_added: 0.1.0
description:
  - The decisions of the P(aistack.gpu_node.mirrors_condarc#role) role, taken on the controller from the role's
    variables and what the role read of the node; it never reads or changes the node.
  - With O(stage=plan) it builds the C(.condarc) of each candidate mirror under the collection's channel policy, and
    says whether the inputs hold a channel token or a password in a URL.
  - With O(stage=refuse) it fails, with the role's message, on what the role's read of the node (O(node)) rules out
    before anything is written - no conda (outside check mode), a solver conda lacks, users the node has no account
    for, a secret that would lock them out of conda, no healthy mirror - in that order.
  - With O(stage=verify) it reads the text of C(conda config --show-sources) and fails unless O(system_file) is
    loaded with O(condarc)'s mirror and channels and no loaded source breaks the channel policy.
author: aistack.gpu_node contributors (@aistack)
options:
  stage:
    description: What to do, see the description.
    type: str
    choices: [plan, refuse, verify]
    default: plan
  distribution:
    description: The role's C(mirrors_condarc_distribution), C(miniconda) or C(miniforge).
    type: str
    required: true
  mirrors:
    description: The candidate mirror roots, C(mirrors_condarc_mirrors). Used by O(stage=plan).
    type: list
    elements: str
    default: []
  channels:
    description: The role's C(mirrors_condarc_channels). Used by O(stage=plan).
    type: list
    elements: str
    default: []
  default_channels:
    description: The role's C(mirrors_condarc_default_channels). Used by O(stage=plan).
    type: raw
  custom_channels:
    description: The role's C(mirrors_condarc_custom_channels). Used by O(stage=plan).
    type: raw
  solver:
    description: The role's C(mirrors_condarc_solver). Used by O(stage=plan) and O(stage=refuse).
    type: raw
  pkgs_dirs:
    description: The role's C(mirrors_condarc_pkgs_dirs). Used by O(stage=plan).
    type: raw
  envs_dirs:
    description: The role's C(mirrors_condarc_envs_dirs). Used by O(stage=plan).
    type: raw
  proxy_servers:
    description: The role's C(mirrors_condarc_proxy_servers). Used by O(stage=plan).
    type: raw
  ssl_verify:
    description: The role's C(mirrors_condarc_ssl_verify). Used by O(stage=plan).
    type: raw
  settings:
    description: The role's C(mirrors_condarc_settings). Used by O(stage=plan).
    type: raw
  show_sources:
    description: What C(conda config --show-sources) printed. Used by O(stage=verify).
    type: str
    default: ''
  system_file:
    description: The system C(.condarc) the role writes. Required by O(stage=verify) and O(stage=refuse).
    type: str
  condarc:
    description: The C(.condarc) the role wrote, one of RV(condarcs). Required by O(stage=verify).
    type: dict
  chosen:
    description: The chosen mirror, as the message names it. Used by O(stage=verify).
    type: str
    default: ''
  node:
    description:
      - What M(aistack.gpu_node.mirrors_condarc_probe) returned, its RV(aistack.gpu_node.mirrors_condarc_probe#module:probe)
        included. Required by O(stage=refuse).
      - Without its RV(aistack.gpu_node.mirrors_condarc_probe#module:show_sources), which may hold a secret.
    type: dict
  conda:
    description: The conda executable of the base the role configures. Required by O(stage=refuse).
    type: str
  users:
    description: The role's C(mirrors_condarc_users). Used by O(stage=refuse).
    type: list
    elements: str
    default: []
  group:
    description: The role's C(mirrors_condarc_group). Used by O(stage=refuse).
    type: str
  has_credentials:
    description: What O(stage=plan) returned as RV(has_credentials). Used by O(stage=refuse).
    type: bool
    default: false
  miniconda_result:
    description:
      - The C(miniconda_result) the miniconda role published in this run, if it ran (its C(group) and C(group_members)).
        Used by O(stage=refuse).
    type: dict
    default: {}
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
  - aistack.gpu_node.attributes.controller_plan
  - aistack.gpu_node.attributes.per_host
notes:
  - Its input and RV(condarcs) may hold a channel token or a proxy password; run it with C(no_log).
seealso:
  - module: aistack.gpu_node.conda_mirror_probe
'''

EXAMPLES = r'''
- name: Build .condarc for each candidate mirror
  aistack.gpu_node.mirrors_condarc_plan:
    mirrors: [https://mirror-a.example.org/conda, https://mirror-b.example.org/conda]
    channels: [conda-forge]
    distribution: miniforge
  register: plan
  no_log: true

- name: Check what conda loads
  aistack.gpu_node.mirrors_condarc_plan:
    stage: verify
    distribution: miniforge
    show_sources: "{{ sources.stdout }}"
    system_file: /opt/conda/.condarc
    condarc: "{{ plan.condarcs[0] }}"
'''

RETURN = r'''
condarcs:
  description: The C(.condarc) mapping of each candidate mirror, in the order of O(mirrors); empty when RV(problem) is set.
  returned: O(stage=plan)
  type: list
  elements: dict
  sample: [{"channel_alias": "https://mirror-a.example.org/conda", "channels": ["conda-forge"], "channel_priority": "strict"}]
problem:
  description: The channel-policy rule or the input that stops the role, or null.
  returned: O(stage=plan)
  type: str
  sample: Miniforge takes no "defaults" channel (Anaconda terms and ABI mixing)
has_credentials:
  description: Whether the inputs that reach the file hold a channel token (C(/t/<token>/)) or a password in a URL.
  returned: O(stage=plan)
  type: bool
sources:
  description: The sources conda loads, lowest precedence first.
  returned: O(stage=verify)
  type: list
  elements: str
problems:
  description: What the loaded sources break of the channel policy.
  returned: O(stage=verify)
  type: list
  elements: str
'''
