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
short_description: Check the inputs of the jupyter_kernel role, read its env and decide its kernel, and judge what ran in it
version_added: 0.1.0
description:
  - The decisions of the P(aistack.gpu_node.jupyter_kernel#role) role, taken on the controller. O(stage=input) and
    O(stage=kernel) read the role's variables from the task's variables, templated and typed by the role's
    C(meta/argument_specs.yml) (as C(ansible.builtin.validate_argument_spec) does), so a task passes only what its own
    YAML knows. Only O(stage=kernel) reads the node, with one run of the env's python; nothing changes it.
  - With O(stage=input), the role's variables alone, before the role looks for its env. What a type cannot say fails
    the task with one message (C(jupyter_kernel_env_prefix) and C(jupyter_kernel_cuda_home) empty or absolute, a kernel name
    of lower-case letters, digits, C(.), C(_) and C(-) that is not C(python), C(jupyter_kernel_require_cuda) auto, true
    or false, C(jupyter_kernel_verify_timeout) at least 1); with C(jupyter_kernel_lab), so does every problem of the
    JupyterLab inputs that O(stage=lab) lists, and a node whose service manager is not systemd.
  - With O(stage=kernel), the kernel's name when none is given (the name of C(conda_env_target) when the kernel runs in
    it, else the env's folder name, its parent's for a hidden folder such as C(.venv)) and the launcher's name; then
    the env's python runs the role's probe (C(files/env_probe.py)), and from its reading the env type (conda when the
    prefix has C(conda-meta/)), the kernel's variables (the thread variables, C(CUDA_HOME) when it exists, then
    C(jupyter_kernel_env)), whether the kernel must see CUDA (V(auto) - the node has an NVIDIA GPU in
    C(ansible_facts.aistack_gpu)), how ipykernel gets in when the env's python does not find it (its pip for a venv,
    C(conda install) from exactly the given channels for a conda env), whether the kernel check recorded on the
    env's present state may stand for this run's, and, for a system kernel, whether the kernelspec's C(kernel.json)
    (read by the same probe) already says the kernel asked for with mode 0644, so that the role runs no
    M(aistack.gpu_node.jupyter_kernelspec) for it. An env whose python does not run fails the task.
  - With O(stage=ran), whether what ran in the kernel (O(ran)) is the kernel planned (O(plan)), found in O(spec_dir);
    a kernel that is not fails the task.
  - With O(stage=lab), the JupyterLab inputs given as options, so that the server is never reachable without
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
    description: Which decision, see the description.
    type: str
    required: true
    choices: [input, kernel, ran, lab]
  plan:
    description: The registered result of O(stage=kernel). Required by O(stage=ran).
    type: dict
  ran:
    description: What the kernel check reported (its C(executable), C(env), C(cuda_available), C(resource_dir) ...), for O(stage=ran).
    type: raw
  spec_dir:
    description: The kernelspec directory the kernel must have been found in. Required by O(stage=ran).
    type: str
  lab_password_hash:
    description: The role's C(jupyter_kernel_lab_password_hash), for O(stage=lab).
    type: str
    default: ''
  lab_token:
    description: The role's C(jupyter_kernel_lab_token), for O(stage=lab).
    type: str
    default: ''
  lab_verify_password:
    description:
      - The role's C(jupyter_kernel_lab_verify_password), the password O(lab_password_hash) hashes; required with it.
      - Checked against the hash (sha1 always; argon2 only when argon2-cffi is installed on the controller).
    type: str
    default: ''
  lab_ip:
    description: The role's C(jupyter_kernel_lab_ip), for O(stage=lab).
    type: str
    default: 127.0.0.1
  lab_port:
    description: The role's C(jupyter_kernel_lab_port), for O(stage=lab).
    type: int
    default: 8888
  lab_certfile:
    description: The role's C(jupyter_kernel_lab_certfile), for O(stage=lab).
    type: str
    default: ''
  lab_keyfile:
    description: The role's C(jupyter_kernel_lab_keyfile), for O(stage=lab).
    type: str
    default: ''
  lab_allow_plain_http:
    description: The role's C(jupyter_kernel_lab_allow_plain_http), for O(stage=lab).
    type: bool
    default: false
extends_documentation_fragment:
  - aistack.gpu_node.attributes.per_host
attributes:
  action:
    support: full
    description: Runs on the controller as an action plugin. O(stage=kernel) reads the node with C(ansible.builtin.command) (the env probe).
  check_mode:
    support: full
    description: Read-only. Check mode would skip the env probe, so the role runs O(stage=kernel) with C(check_mode) set to false.
  diff_mode:
    support: none
    description: Returns no diff.
  platform:
    support: full
    platforms: posix
    description: Any controller; the node's env needs a python that runs the standard library.
seealso:
  - module: aistack.gpu_node.jupyter_kernelspec
'''

EXAMPLES = r'''
# In the jupyter_kernel role, whose variables the task's variables hold.
- name: Check the role's variables and the JupyterLab inputs
  aistack.gpu_node.jupyter_kernel_plan:
    stage: input

- name: Read the env and decide the kernel
  aistack.gpu_node.jupyter_kernel_plan:
    stage: kernel
  register: kernel_plan
  check_mode: false

- name: Check what ran in the kernel
  aistack.gpu_node.jupyter_kernel_plan:
    stage: ran
    plan: "{{ kernel_plan }}"
    ran: "{{ kernel_check.stdout | from_json }}"
    spec_dir: "{{ kernelspec.path }}"

# Anywhere: JupyterLab settings given as options.
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
python:
  description: The env's python, which the kernel runs.
  returned: success, with O(stage=kernel)
  type: str
  sample: /opt/conda/envs/train/bin/python
type:
  description: The env type, V(conda) or V(venv).
  returned: success, with O(stage=kernel)
  type: str
  sample: conda
env:
  description: The kernel's variables.
  returned: success, with O(stage=kernel)
  type: dict
  sample: {OMP_NUM_THREADS: "8", CUDA_HOME: /usr/local/cuda}
require_cuda:
  description: Whether C(torch.cuda.is_available()) must be true in the kernel.
  returned: success, with O(stage=kernel)
  type: bool
  sample: true
ipykernel:
  description: Whether the env's python finds ipykernel on the path the kernel will have.
  returned: success, with O(stage=kernel)
  type: bool
  sample: true
ipykernel_install_argv:
  description: The command that installs ipykernel into the env; null when its python finds it.
  returned: success, with O(stage=kernel)
  type: list
  elements: str
  sample: [conda, install, --prefix, /opt/conda/envs/train, --yes, --json, --override-channels, --channel, conda-forge, ipykernel]
proof_path:
  description: Where the env keeps the kernel's last passing check.
  returned: success, with O(stage=kernel)
  type: str
  sample: /opt/conda/envs/train/etc/aistack/jupyter_kernel-train-proof.json
proof_asked:
  description: What the kernel check is asked beyond the env's state, recorded with a passing check.
  returned: success, with O(stage=kernel)
  type: dict
proof:
  description: The check recorded on the env's present state by its python, or null.
  returned: success, with O(stage=kernel)
  type: dict
proof_usable:
  description: Whether that check stands for this run's when the kernelspec is left as it is.
  returned: success, with O(stage=kernel)
  type: bool
kernelspec:
  description: The options of M(aistack.gpu_node.jupyter_kernelspec) for the kernel (C(argv), C(display_name), C(env), C(metadata)).
  returned: success, with O(stage=kernel)
  type: dict
spec_in_place:
  description:
    - Whether the system kernelspec's C(kernel.json) already says that kernel with mode 0644, so that the module would
      change nothing; false for a user kernel, which the module reads itself.
  returned: success, with O(stage=kernel)
  type: bool
spec_dir:
  description: The kernelspec's folder when it is in place (the module's RV(aistack.gpu_node.jupyter_kernelspec#module:path)), else null.
  returned: success, with O(stage=kernel)
  type: str
  sample: /usr/local/share/jupyter/kernels/train
spec_diff:
  description: When it is in place, the module's diff of the same C(kernel.json) before and after, else null.
  returned: success, with O(stage=kernel)
  type: dict
msg:
  description: What ran in the kernel, in one line.
  returned: success, with O(stage=ran)
  type: str
  sample: "kernel train: /opt/conda/envs/train/bin/python, torch 2.8.0, CUDA True, NVIDIA H100 80GB HBM3"
lab_problems:
  description: What is wrong with the JupyterLab inputs, each naming the role variable; empty when nothing is.
  returned: success, with O(stage=lab)
  type: list
  elements: str
  sample: ["jupyter_kernel_lab_port must be a port number from 1 to 65535, got 70000."]
'''
