#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

# The module runs on the controller, as the action plugin of the same name; this file holds its documentation.

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: gpu_validation
short_description: Check GPU validation thresholds and judge the figures of validate_gpu.py
version_added: 0.1.0
description:
  - The decision of the P(aistack.gpu_node.gpu_validate#role) role, taken on the controller from the role's variables
    and the figures given; it never reads or changes the node.
  - Without O(results) and O(gpus), names every bad threshold, reference entry or expectation in RV(problems).
  - With O(health) (and O(python), O(dataloader)) it is the role's preflight, one task - the health catalogue and
    options checked too (on the node only where a DCGM level asks for C(dcgmi)) and bad input refused, each problem named.
  - With O(gpus), judges the node's GPUs against O(expect) and against O(recorded_gpus) in RV(expectation).
  - With O(results), judges the figures against reference figures and returns the verdict in RV(gate); bad input
    then fails the module, each item named.
  - A GPU's reference figures are O(reference)'s where it gives them, else the figures measured on that SKU in
    O(catalogue), else the SKU's datasheet figures times the achievable share measured on the catalogue's measured
    SKUs. A GPU the catalogue does not know is judged against estimates from what it reports (compute capability,
    SM count, clocks, memory clock and bus width); a shortfall there is a warning, or with O(unknown_gpu=fail) the GPU
    fails, named.
  - A node without a GPU (O(results) with status C(skipped)) is C(skipped), never passed.
  - Always returns RV(multicast_off_env), the environment C(validate_gpu.py) measures in (its C(--env)).
  - Its decisions are keyed. When the task's registered result from an earlier run in the same playbook has this run's
    RV(inputs_key), that result is handed back (RV(reused)).
author: aistack.gpu_node contributors (@aistack)
options:
  reference:
    description:
      - The site's figures, GPU name to any of C(gemm_bf16_tflops), C(gemm_fp16_tflops), C(copy_gbps), C(fused_adamw_ms);
        each one given overrides the catalogue's.
    type: raw
    required: true
  catalogue:
    description:
      - The GPU catalogue, SKUs with datasheet and measured figures.
      - Omitted, the action reads the P(aistack.gpu_node.gpu_validate#role) role's own, C(vars/gpu_catalogue.yml).
    type: raw
  unknown_gpu:
    description: C(warn) judges a GPU the catalogue and O(reference) do not know against estimates, as warnings; C(fail)
      fails it.
    type: raw
    default: warn
  expect:
    description: What the node's GPUs must be, any of C(count), C(model) (a regular expression searched in the name),
      C(memory_gb) (per GPU, as sold), C(mig_mode) (C(enabled) or C(disabled)).
    type: raw
    default: {}
  gpus:
    description: The GPUs M(aistack.gpu_node.gpu_facts) found (its C(gpus)); judged against O(expect) and O(recorded_gpus).
    type: list
    elements: dict
  recorded_gpus:
    description: The GPUs (C(index), C(name), C(uuid)) of the node's last passed validation; one gone now is named missing.
    type: list
    elements: dict
    default: []
  min_fraction:
    description: Per metric, the fraction of the reference to reach, each in (0, 1.5].
    type: raw
    required: true
  min_amp_samples_per_s:
    description: Minimum AMP training throughput, samples per second.
    type: raw
    required: true
  min_allreduce_busbw_gbps:
    description: Minimum NCCL all-reduce bus bandwidth in GB/s.
    type: raw
    required: true
  results:
    description: The figures C(validate_gpu.py) wrote (its JSON, parsed). Omit to check the thresholds only.
    type: dict
  python:
    description:
      - The interpreter the figures would be measured with (C(gpu_validate_python)); given, it must be an absolute path
        or empty, and bad input fails the task (see O(health)).
    type: raw
  dataloader:
    description:
      - The DataLoader settings of the AMP step (C(gpu_validate_dataloader)); given, C(num_workers) must be at least 1,
        and bad input fails the task (see O(health)).
    type: raw
  health:
    description:
      - The health input to check as well, as M(aistack.gpu_node.gpu_health) with O(aistack.gpu_node.gpu_health#module:scan=false)
        checks it - on the controller, or with a DCGM level by that module on the node, which looks for C(dcgmi).
      - "With O(health), O(python) or O(dataloader) the task is the role's whole input check; any problem, of the
        thresholds too, fails it with the message C(gpu_validate: bad input: ) and every problem, joined by C( | )."
    type: dict
    suboptions:
      catalogue:
        description: The health catalogue; omitted, the role's own, C(vars/health_catalogue.yml).
        type: dict
      dcgm_diag_level:
        description: C(gpu_validate_dcgm_diag_level); above 0 the node is asked whether C(dcgmi) is there.
        type: int
        default: 0
      dcgm_install_planned:
        description: The P(aistack.gpu_node.dcgm#role) role installs DCGM later in this run; a missing C(dcgmi) is then no problem.
        type: bool
        default: false
      fail_class:
        description: C(gpu_validate_health_fail_class).
        type: str
        default: REBOOT
attributes:
  action:
    support: full
    description:
      - Runs on the controller as an action plugin; the node is contacted only for O(health) with a DCGM level, when
        the M(aistack.gpu_node.gpu_health) module looks for C(dcgmi) there.
  platform:
    support: full
    platforms: posix
    description: Any controller; the decisions do not depend on the node's platform.
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
  - aistack.gpu_node.attributes.per_host
'''

EXAMPLES = r'''
- name: Check the thresholds before any change (the role's GPU catalogue)
  aistack.gpu_node.gpu_validation:
    reference: "{{ gpu_validate_reference }}"
    min_fraction: "{{ gpu_validate_min_fraction }}"
    min_amp_samples_per_s: "{{ gpu_validate_min_amp_samples_per_s }}"
    min_allreduce_busbw_gbps: "{{ gpu_validate_min_allreduce_busbw_gbps }}"
    expect: {count: 8, model: "^NVIDIA H100", memory_gb: 80}
  register: thresholds

- name: The role's whole input check, refusing bad input
  aistack.gpu_node.gpu_validation:
    reference: "{{ gpu_validate_reference }}"
    min_fraction: "{{ gpu_validate_min_fraction }}"
    min_amp_samples_per_s: "{{ gpu_validate_min_amp_samples_per_s }}"
    min_allreduce_busbw_gbps: "{{ gpu_validate_min_allreduce_busbw_gbps }}"
    python: "{{ gpu_validate_python }}"
    dataloader: "{{ gpu_validate_dataloader }}"
    health: {dcgm_diag_level: 1, fail_class: REBOOT}
  register: thresholds

- name: Judge the measured figures
  aistack.gpu_node.gpu_validation:
    reference: "{{ gpu_validate_reference }}"
    min_fraction: "{{ gpu_validate_min_fraction }}"
    min_amp_samples_per_s: "{{ gpu_validate_min_amp_samples_per_s }}"
    min_allreduce_busbw_gbps: "{{ gpu_validate_min_allreduce_busbw_gbps }}"
    results: "{{ figures.content | b64decode | from_json }}"
  register: verdict
'''

RETURN = r'''
inputs_key:
  description: The sha256 of the arguments and check mode that the decision rests on.
  returned: always
  type: str
reused:
  description: Whether the decision was handed back from the task's registered result (see RV(inputs_key)).
  returned: always
  type: bool
problems:
  description:
    - Every bad threshold or reference entry, each naming its variable and what was expected; empty when none.
    - With O(health), O(python) or O(dataloader), also the health input's and the measurement's problems.
  returned: always
  type: list
  elements: str
  sample: ["gpu_validate_min_fraction.copy_gbps must be a number above 0 and at most 1.5 (a fraction of the reference figure), got 2.0"]
multicast_off_env:
  description:
    - The variables that keep NVLink SHARP / multicast (NVLS) off in NCCL, torch symmetric memory and NVSHMEM, which
      fail or hang with it on where the fabric gives no multicast objects; the role passes them to C(validate_gpu.py).
  returned: always
  type: dict
  sample: {NCCL_NVLS_ENABLE: "0", TORCH_SYMM_MEM_DISABLE_MULTICAST: "1", NVSHMEM_DISABLE_NVLS: "1"}
expectation:
  description: The node's GPUs against O(expect) and O(recorded_gpus).
  returned: when O(gpus) is given
  type: dict
  contains:
    checks:
      description: One entry per check, as in RV(gate.checks).
      type: list
      elements: dict
    failed:
      description: The messages of the expectations not met, each naming the GPU and the difference.
      type: list
      elements: str
      sample: ["node count: FAILED (expected 2 GPU(s) (gpu_validate_expect.count), found 1: missing GPU index 1)"]
    summary:
      description: One line for the report.
      type: str
gate:
  description: The verdict on O(results).
  returned: when O(results) is given
  type: dict
  contains:
    status:
      description: C(passed), C(failed), C(skipped) (no GPU) or C(error) (no figures).
      type: str
      sample: passed
    passed:
      description: Whether every check holds; false for C(skipped).
      type: bool
      sample: true
    checks:
      description: One entry per check (C(name), C(subject), C(measured), C(limit), C(unit), C(ok), C(message)).
      type: list
      elements: dict
    failed:
      description: The messages of the failed checks.
      type: list
      elements: str
      sample: []
    warnings:
      description: The messages of shortfalls against estimates (a GPU the catalogue does not know); they do not fail.
      type: list
      elements: str
      sample: []
    judged:
      description:
        - Per GPU, how it was judged - C(basis) (C(measured), C(datasheet), C(estimate) or C(site)), C(model), C(how)
          each figure was made, and C(not_judged) (metrics with no figure, and why).
      type: list
      elements: dict
    summary:
      description: One line for the report, naming each GPU's basis.
      type: str
'''
