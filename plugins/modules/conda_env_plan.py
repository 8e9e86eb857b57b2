#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

# The module runs on the controller, as the action plugin of the same name; this file holds its documentation.

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: conda_env_plan
short_description: Check, publish and verify the environments of the conda_env role
version_added: 0.1.0
description:
  - The decisions of the P(aistack.gpu_node.conda_env#role) role, taken on the controller from the role's variables;
    it never changes the node.
  - With O(stage=preflight) it reads each environment file (looked up like the R(file lookup,ansible_collections.ansible.builtin.file_lookup)
    does, in the role's and the playbook's C(files/)), and checks every declared environment the way
    M(aistack.gpu_node.conda_env) will, before the first one changes; an environment file is normalized once, here.
    Then it looks for C(<conda_prefix>/bin/conda) on the node (M(ansible.builtin.stat)) unless O(conda_verified), and
    fails where it is missing and envs are declared, outside check mode (RV(conda_present)).
  - With O(stage=publish) it returns the role's result facts from this run's M(aistack.gpu_node.conda_env) results.
  - With O(stage=verify) it compares the lock written beside each converged environment with what
    C(conda list --explicit --md5) lists now (packages only) and with the lock's recorded sha256.
author: aistack.gpu_node contributors (@aistack)
options:
  stage:
    description: What to do, see the description.
    type: str
    choices: [preflight, publish, verify]
    default: preflight
  envs:
    description:
      - The role's C(conda_env_envs), each C({name, file}) or C({name, spec}) or C({name, state=absent}), with the
        optional C(prefix), C(primary), C(blas), C(torch_cuda_variant), C(pip_kept). Used by O(stage=preflight) and
        O(stage=publish).
    type: list
    elements: dict
    default: []
  driver_version:
    description: The NVIDIA driver the torch wheel variant is fitted to; empty when there is none. Used by O(stage=preflight).
    type: str
    default: ''
  gpu_present:
    description: Whether the node has an NVIDIA GPU. Used by O(stage=preflight).
    type: bool
  gpus:
    description:
      - The node's GPUs (C(ansible_facts.aistack_gpu.gpus)); the torch wheel variant must carry kernels for each one's
        compute capability. Empty leaves the variant to the driver alone. Used by O(stage=preflight).
    type: list
    elements: dict
    default: []
  torch_cuda_variant:
    description: The role's C(conda_env_torch_cuda_variant), for an env without its own. Used by O(stage=preflight).
    type: str
    default: auto
  torch_index:
    description: The role's C(conda_env_torch_index). Used by O(stage=preflight).
    type: str
    default: https://download.pytorch.org/whl/
  conda_prefix:
    description:
      - The role's C(conda_env_conda_prefix). Used by O(stage=preflight) (an env without its own C(prefix) lives in
        C(<conda_prefix>/envs/<name>); two entries that resolve to one prefix are refused) and O(stage=publish).
    type: str
    default: /opt/conda
  conda_verified:
    description:
      - The P(aistack.gpu_node.miniconda#role) role ran C(<conda_prefix>/bin/conda) in this run (its C(miniconda_result)),
        so conda is not looked for. Used by O(stage=preflight).
    type: bool
    default: false
  lock_dir:
    description: The role's C(conda_env_lock_dir); empty keeps the locks beside each env. Used by O(stage=publish).
    type: str
    default: ''
  results:
    description: The registered loop results of M(aistack.gpu_node.conda_env) in this run. Used by O(stage=publish).
    type: list
    elements: dict
    default: []
  env_name:
    description: C(aistack_env_name), the env the other roles work on. Used by O(stage=publish).
    type: str
    default: ''
  env_prefix:
    description: C(aistack_env_prefix), a prefix the other roles work on instead. Used by O(stage=publish).
    type: str
    default: ''
  locks:
    description:
      - The registered loop results of M(ansible.builtin.slurp) of each converged env's lock, each with its C(item)
        (the env's RV(info) entry). Used by O(stage=verify).
    type: list
    elements: dict
    default: []
  listings:
    description: The registered results of C(conda list --explicit --md5) of the same envs, in the same order. Used by O(stage=verify).
    type: list
    elements: dict
    default: []
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
  - aistack.gpu_node.attributes.per_host
attributes:
  action:
    support: full
    description:
      - Runs on the controller as an action plugin; with O(stage=preflight) it looks for conda on the node with
        M(ansible.builtin.stat), unless O(conda_verified).
  platform:
    support: full
    platforms: posix
    description: Any controller; the node's conda is looked for at a POSIX path.
notes:
  - A refusal fails the task with every message, each naming the env's file or its place in C(conda_env_envs).
seealso:
  - module: aistack.gpu_node.conda_env
'''

EXAMPLES = r'''
- name: Read and check the declared environments, and look for conda
  aistack.gpu_node.conda_env_plan:
    envs:
      - name: torch
        file: envs/torch.yml
    driver_version: "580.95.05"
    gpu_present: true
    gpus: "{{ ansible_facts.aistack_gpu.gpus }}"
  register: checked

- name: Publish conda_env_info and conda_env_target
  aistack.gpu_node.conda_env_plan:
    stage: publish
    envs: "{{ conda_env_envs }}"
    conda_prefix: /opt/conda
    results: "{{ converged.results }}"
  register: published
'''

RETURN = r'''
envs:
  description: Each declared env with its C(spec), the environment file's content for an env declared by C(file).
  returned: O(stage=preflight)
  type: list
  elements: dict
  sample: [{"name": "torch", "file": "envs/torch.yml", "spec": {"channels": ["conda-forge"], "dependencies": ["python=3.11"]}}]
refusals:
  description: One message per env at fault, when the preflight fails.
  returned: O(stage=preflight) failed
  type: list
  elements: str
conda_present:
  description: Whether C(<conda_prefix>/bin/conda) is there (O(conda_verified), or found on the node).
  returned: O(stage=preflight) succeeded
  type: bool
info:
  description:
    - Per declared env, by name, C(name), C(prefix), C(python), C(state), C(primary), C(lock) (C(explicit),
      C(from_history), C(spec), C(marker), C(sha256)), C(blas), C(torch_variant), C(last_change); the role publishes
      it as C(conda_env_info).
  returned: O(stage=publish)
  type: dict
target:
  description:
    - The one environment the other roles work on (C(name), C(prefix), C(python), C(conda), C(chosen_by)), or null;
      the role publishes it as C(conda_env_target).
  returned: O(stage=publish)
  type: dict
'''
