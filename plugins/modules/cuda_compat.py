#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
---
module: cuda_compat
short_description: Check that driver, CUDA toolkit, torch and GPUs fit together
version_added: "0.1.0"
description:
  - Probes a Python environment (venv or conda env) for torch, C(torch.version.cuda), its arch
    list, cuDNN, C(torch.cuda.is_available) and APEX, finds nvcc the way
    C(torch.utils.cpp_extension) does, reads the GPUs and driver, and checks the chain.
  - "Checks: the driver runs torch's CUDA runtime (toolkit table, minor-version compatibility floors
    450.80.02 / 525.60.13 / 580, data-center forward compatibility); nvcc matches C(torch.version.cuda)
    (different major is an error, different minor a warning for torch extensions and an error for
    APEX); torch's arch list covers every GPU (same-major SASS or PTX) and nvcc can target it; the
    driver branch still supports the GPU generation; the kernel module flavour fits the GPU."
  - No GPU, no driver, no torch and no nvcc are reported as findings, not failures.
  - The full report is always returned; O(fail_on) decides when the task fails.
author: aistack.gpu_node contributors (@aistack)
options:
  python:
    description:
      - Path of the environment's Python interpreter, for example C(/opt/conda/envs/train/bin/python).
    type: path
    required: true
  cuda_home:
    description:
      - CUDA toolkit to check (its C(bin/nvcc) is used).
      - When unset it is found like C(torch.utils.cpp_extension) finds it; E(CUDA_HOME), E(CUDA_PATH),
        the parent of the directory of C(nvcc) on E(PATH), then C(/usr/local/cuda).
    type: path
  required_cuda:
    description:
      - CUDA version (C(major.minor)) that C(torch.version.cuda) must equal; a different one is an error.
    type: str
  apex:
    description:
      - Apply APEX's rule (nvcc must equal C(torch.version.cuda) in major and minor) as an error.
      - When V(false) a minor difference is only reported as information.
    type: bool
    default: true
  fail_on:
    description:
      - Fail the task when the verdict is V(error), when it is V(warning) or worse, or V(never).
    type: str
    choices: [error, warning, never]
    default: error
  gpu_facts:
    description:
      - The C(aistack_gpu) fact from M(aistack.gpu_node.gpu_facts); when omitted the module reads the GPUs itself.
    type: dict
  reading:
    description:
      - The RV(report) of an earlier run of this module on the same O(python), for an environment that has not
        changed since; its C(python), C(torch) and C(apex) stand for the environment, which is then not run
        again (importing torch takes seconds). nvcc, the GPUs and the driver are still read.
      - Its C(python.interpreter) must be O(python), and it must have run (no C(python.error)).
    type: dict
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
attributes:
  platform:
    support: full
    platforms: posix
    description: Linux hosts, with or without a GPU.
notes:
  - The probe runs O(python) with C(-c); it imports torch, then looks up APEX's compiled extension
    modules with C(importlib.util.find_spec) without importing them.
  - When torch cannot initialise CUDA, its compiled arch list is read from C(torch._C._cuda_getArchFlags),
    and failing that from the published wheel table.
seealso:
  - module: aistack.gpu_node.gpu_facts
  - name: CUDA minor version compatibility
    description: NVIDIA's rules for running a newer CUDA minor on an older driver.
    link: https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html
"""

EXAMPLES = r"""
- name: Check the training environment
  aistack.gpu_node.cuda_compat:
    python: /opt/conda/envs/train/bin/python
  register: cuda_check

- name: Show what is wrong and how to fix it
  ansible.builtin.debug:
    msg: "{{ cuda_check.report.findings | selectattr('severity', '!=', 'info') | list }}"

- name: Require CUDA 13.0 torch and nvcc from a given toolkit, fail on warnings too
  aistack.gpu_node.cuda_compat:
    python: /opt/torch/.venv/bin/python
    cuda_home: /usr/local/cuda-13.0
    required_cuda: "13.0"
    fail_on: warning

- name: Reuse facts already gathered, report only
  aistack.gpu_node.cuda_compat:
    python: /opt/torch/.venv/bin/python
    gpu_facts: "{{ ansible_facts.aistack_gpu }}"
    apex: false
    fail_on: never

- name: Check the toolkit again later in the run without importing torch a second time
  aistack.gpu_node.cuda_compat:
    python: /opt/torch/.venv/bin/python
    reading: "{{ cuda_check.report }}"
    fail_on: never
"""

RETURN = r"""
verdict:
  description: V(ok), V(warning) or V(error); the worst finding severity (info counts as ok).
  type: str
  returned: always
  sample: ok
report:
  description: Everything that was measured and every finding.
  type: dict
  returned: always
  contains:
    verdict:
      description: Same as RV(verdict).
      type: str
      sample: ok
    findings:
      description: Findings, each with C(id), C(severity) (V(error), V(warning), V(info)), C(message) and C(fix).
      type: list
      elements: dict
      sample:
        - id: nvcc.torch_minor_mismatch
          severity: warning
          message: "nvcc is CUDA 12.4 but torch was built with CUDA 12.1: torch extensions build with a warning."
          fix: "Use the CUDA 12.1 toolkit for extension builds (set cuda_home / CUDA_HOME to it) or install torch built for CUDA 12.4."
    python:
      description: The interpreter probed and its version; C(error) when the probe did not run.
      type: dict
      sample: {interpreter: /opt/torch/.venv/bin/python, version: 3.12.3, error: null}
    torch:
      description:
        - C(present), C(version), C(cuda) (C(torch.version.cuda)), C(arch_list), C(arch_list_source), C(cudnn)
          (number), C(cudnn_version) (dotted), C(cuda_available), C(error) when not importable.
      type: dict
      sample:
        present: true
        version: 2.11.0+cu130
        cuda: "13.0"
        arch_list: [sm_75, sm_80, sm_86, sm_90, sm_100, sm_120]
        arch_list_source: torch.cuda.get_arch_list
        cudnn: 91900
        cudnn_version: 9.19.0
        cuda_available: true
    apex:
      description: C(present) (the C(apex) package is importable) and C(extensions) (compiled extension module name to found).
      type: dict
      sample: {present: true, extensions: {apex_C: true, amp_C: true, fused_layer_norm_cuda: true}}
    nvcc:
      description: C(present), C(cuda_home), C(found_by), C(path), C(release) (C(13.0)), C(version) (C(13.0.88)), C(error).
      type: dict
      sample: {present: true, cuda_home: /usr/local/cuda, found_by: nvcc on PATH, path: /usr/local/cuda/bin/nvcc,
               release: "13.0", version: 13.0.88, error: null}
    gpu_state:
      description: C(state) of the GPU facts (V(ok), V(no_gpu), V(gpu_no_driver), V(mismatch), V(driver_error)).
      type: str
      sample: ok
    gpus:
      description: GPUs as in the C(aistack_gpu) fact of M(aistack.gpu_node.gpu_facts).
      type: list
      elements: dict
    driver:
      description: Driver as in the C(aistack_gpu) fact of M(aistack.gpu_node.gpu_facts).
      type: dict
    driver_lifecycle:
      description:
        - The running driver branch's lifecycle from NVIDIA's end-of-life table, null without a driver; C(branch),
          C(designation), C(eol) (the last supported month), C(status) (V(supported), V(end_of_life), V(unknown)),
          C(successor) (an end-of-life branch's oldest newer supported branch) and C(source).
        - An end-of-life branch is also the warning finding C(driver.branch_end_of_life).
      type: dict
      sample: {branch: R580, designation: LTSB, eol: "2028-06", status: supported, successor: null}
    forward_compat:
      description: For torch's CUDA version, the cuda-compat directory checked and whether its libcuda is installed.
      type: dict
      sample: {path: /usr/local/cuda-13.0/compat, present: true}
    torch_cuda_arch_list:
      description: TORCH_CUDA_ARCH_LIST for the GPUs of the host (for extension builds such as APEX); empty without GPUs.
      type: str
      sample: "9.0"
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aistack.gpu_node.plugins.module_utils.cuda.checks import (
    branch_lifecycle,
    evaluate,
    torch_cuda_arch_list,
)
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.gpu_collection import (
    collect_gpu_facts,
    import_nvml,
)
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_access import module_runner
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.toolchain import (
    collect_nvcc,
    collect_python,
    find_forward_compat,
    resolve_cuda_home,
)
from ansible_collections.aistack.gpu_node.plugins.module_utils.versions import version_tuple

FAIL_THRESHOLDS = {"error": ("error",), "warning": ("error", "warning"), "never": ()}


def driver_lifecycle(facts):
    """The running driver branch's lifecycle, None without a driver."""
    version = (facts.get("driver") or {}).get("version")
    return branch_lifecycle(version_tuple(version)[0]) if version else None


def reading_problem(reading, python):
    """Why an earlier report cannot stand for ``python``'s environment, None when it can."""
    python_info = reading.get("python") or {}
    if python_info.get("interpreter") != python:
        return "reading is the report of %s, not of python %s" % (python_info.get("interpreter"), python)
    if python_info.get("error") or not isinstance(reading.get("torch"), dict):
        return "reading is the report of a probe of %s that did not run: %s" % (python, python_info.get("error"))
    return None


def probe_from_reading(reading):
    """The probe dict of an earlier report (its python, torch and apex parts)."""
    python_info = reading["python"]
    return {"interpreter": python_info["interpreter"], "python_version": python_info.get("version"), "error": None,
            "torch": dict(reading["torch"]), "apex": dict(reading.get("apex") or {})}


def build_report(module, runner):
    params = module.params
    if params["reading"]:
        probe = probe_from_reading(params["reading"])
    else:
        probe = collect_python(runner, params["python"])
    if params["cuda_home"]:
        cuda_home, found_by = params["cuda_home"], "cuda_home option"
    else:
        cuda_home, found_by = resolve_cuda_home(os.environ, module.get_bin_path, os.path.exists)
    nvcc = collect_nvcc(runner, cuda_home, found_by)
    facts = params["gpu_facts"] or collect_gpu_facts(runner, root="/", nvml=import_nvml())
    torch_info = probe.get("torch") or {}
    forward_compat = find_forward_compat("/", torch_info.get("cuda"))
    result = evaluate(facts, probe, nvcc, required_cuda=params["required_cuda"], apex=params["apex"], forward_compat=forward_compat)
    return {
        "verdict": result["verdict"],
        "findings": result["findings"],
        "python": {"interpreter": params["python"], "version": probe.get("python_version"), "error": probe.get("error")},
        "torch": torch_info,
        "apex": probe.get("apex") or {},
        "nvcc": nvcc,
        "gpu_state": facts.get("state"),
        "gpus": facts.get("gpus") or [],
        "driver": facts.get("driver") or {},
        "driver_lifecycle": driver_lifecycle(facts),
        "forward_compat": forward_compat,
        "torch_cuda_arch_list": torch_cuda_arch_list(facts.get("gpus") or []),
    }


def failure_message(report, fail_on):
    failing = [item for item in report["findings"] if item["severity"] in FAIL_THRESHOLDS[fail_on]]
    lines = ["CUDA compatibility verdict is %s (fail_on=%s):" % (report["verdict"], fail_on)]
    for item in failing:
        lines.append("[%s] %s: %s Fix: %s" % (item["severity"], item["id"], item["message"], item["fix"] or "none known"))
    return "\n".join(lines)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            python=dict(type="path", required=True),
            cuda_home=dict(type="path"),
            required_cuda=dict(type="str"),
            apex=dict(type="bool", default=True),
            fail_on=dict(type="str", default="error", choices=["error", "warning", "never"]),
            gpu_facts=dict(type="dict"),
            reading=dict(type="dict"),
        ),
        supports_check_mode=True,
    )
    if module.params["reading"]:
        problem = reading_problem(module.params["reading"], module.params["python"])
        if problem:
            module.fail_json(msg=problem)
    report = build_report(module, module_runner(module))
    fail_on = module.params["fail_on"]
    if report["verdict"] in FAIL_THRESHOLDS[fail_on]:
        module.fail_json(msg=failure_message(report, fail_on), verdict=report["verdict"], report=report)
    module.exit_json(changed=False, verdict=report["verdict"], report=report)


if __name__ == "__main__":
    main()
