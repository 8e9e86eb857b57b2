#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

# The module runs on the controller, as the action plugin of the same name; this file holds its documentation.

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: jupyter_kernel_plan
short_description: Decide the kernel names and the ipykernel install of the jupyter_kernel role, and check its JupyterLab inputs
version_added: 0.1.0
description:
  - The decisions of the P(aistack.gpu_node.jupyter_kernel#role) role, taken on the controller from the role's
    variables; it never reads or changes the node.
  - Derives the kernel name when none is given (the name of O(target) when the kernel runs in it, else the env's
    folder name, its parent's for a hidden folder such as C(.venv)), the launcher's name, and the C(conda install)
    command that puts ipykernel into a conda env from exactly the given channels.
  - With O(stage=lab), checks the role's JupyterLab inputs instead, so that the server is never reachable without
    real authentication. It lists as problems, naming the role variable - no password hash and no token; a password
    hash that is not an argon2 or sha1 hash of C(jupyter_server.auth.passwd()) (a plain password, say); the hash of an
    empty password (sha1 always; argon2 only when argon2-cffi is installed on the controller); a password hash without
    O(lab_verify_password), the password the role logs in with to verify the server, or with one the hash does not
    match (checked as the empty password is), and that password without a hash; a token shorter than 32
    characters or with whitespace; a port outside 1-65535; only one of the TLS files, or relative ones; and an address
    that is not a loopback one (V(0.0.0.0), V(::), a host's address or name) without TLS, unless plain HTTP is
    allowed. No problem repeats the hash, the password or the token.
author: aistack.gpu_node contributors (@aistack)
options:
  stage:
    description: V(kernel) decides the kernel's names and the ipykernel install; V(lab) checks the JupyterLab inputs.
    type: str
    choices: [kernel, lab]
    default: kernel
  env_prefix:
    description: The env the kernel runs in, C(jupyter_kernel_env_prefix); required with O(stage=kernel).
    type: str
  target:
    description: C(conda_env_target), the env the P(aistack.gpu_node.conda_env#role) role published.
    type: dict
  name:
    description: The role's C(jupyter_kernel_name); empty derives it.
    type: str
    default: ''
  display_name:
    description: The role's C(jupyter_kernel_display_name); empty gives V(Python (<name>, <env_prefix>\)).
    type: str
    default: ''
  ipykernel_spec:
    description: The role's C(jupyter_kernel_ipykernel_spec).
    type: str
    default: ipykernel
  conda_channels:
    description: The role's C(jupyter_kernel_conda_channels); C(nodefaults) is dropped, the rest override C(.condarc).
    type: list
    elements: str
    default: []
  conda_executable:
    description: The role's C(jupyter_kernel_conda_executable).
    type: str
    default: conda
  lab_password_hash:
    description: The role's C(jupyter_kernel_lab_password_hash).
    type: str
    default: ''
  lab_token:
    description: The role's C(jupyter_kernel_lab_token).
    type: str
    default: ''
  lab_verify_password:
    description:
      - The role's C(jupyter_kernel_lab_verify_password), the password O(lab_password_hash) hashes; required with it.
      - Checked against the hash (sha1 always; argon2 only when argon2-cffi is installed on the controller).
    type: str
    default: ''
  lab_ip:
    description: The role's C(jupyter_kernel_lab_ip).
    type: str
    default: 127.0.0.1
  lab_port:
    description: The role's C(jupyter_kernel_lab_port).
    type: int
    default: 8888
  lab_certfile:
    description: The role's C(jupyter_kernel_lab_certfile).
    type: str
    default: ''
  lab_keyfile:
    description: The role's C(jupyter_kernel_lab_keyfile).
    type: str
    default: ''
  lab_allow_plain_http:
    description: The role's C(jupyter_kernel_lab_allow_plain_http).
    type: bool
    default: false
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
  - aistack.gpu_node.attributes.controller_plan
  - aistack.gpu_node.attributes.per_host
seealso:
  - module: aistack.gpu_node.jupyter_kernelspec
'''

EXAMPLES = r'''
- name: Decide the kernel's names and the ipykernel install
  aistack.gpu_node.jupyter_kernel_plan:
    env_prefix: /opt/conda/envs/train
    target: "{{ conda_env_target }}"
    conda_channels: [conda-forge]
  register: kernel_plan

- name: Check the JupyterLab inputs
  aistack.gpu_node.jupyter_kernel_plan:
    stage: lab
    lab_password_hash: "{{ jupyter_kernel_lab_password_hash }}"
    lab_verify_password: "{{ jupyter_kernel_lab_verify_password }}"
    lab_token: "{{ jupyter_kernel_lab_token }}"
    lab_ip: 0.0.0.0
    lab_port: 8888
  register: lab_plan
'''

RETURN = r'''
name:
  description: The kernel name.
  returned: success, with O(stage=kernel)
  type: str
  sample: train
display_name:
  description: The name Jupyter's launcher shows.
  returned: success, with O(stage=kernel)
  type: str
  sample: Python (train, /opt/conda/envs/train)
conda_install_argv:
  description: The command that installs O(ipykernel_spec) into the conda env at O(env_prefix).
  returned: success, with O(stage=kernel)
  type: list
  elements: str
  sample: [conda, install, --prefix, /opt/conda/envs/train, --yes, --json, --override-channels, --channel, conda-forge, ipykernel]
lab_problems:
  description: What is wrong with the JupyterLab inputs, each naming the role variable; empty when nothing is.
  returned: success, with O(stage=lab)
  type: list
  elements: str
  sample: ["jupyter_kernel_lab_port must be a port number from 1 to 65535, got 70000."]
'''
