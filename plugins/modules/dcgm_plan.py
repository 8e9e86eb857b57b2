#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
---
module: dcgm_plan
short_description: Decide what the dcgm role does with a node's DCGM, and check its host engine
version_added: "0.2.0"
description:
  - The read-only half of the P(aistack.gpu_node.dcgm#role) role.
  - O(stage=plan) reads the node's DCGM packages (C(dpkg-query) or C(rpm)), their holds, and the role's record, and
    decides - V(skip) (no GPU), V(absent) (not installed, O(install) off), V(install) (or upgrade one the role
    installed), V(keep) (the role's, at the version asked), V(adopt) (one the role did not install - never replaced, a
    newer one never downgraded) or V(refuse) (a downgrade of the role's own DCGM, an unknown CUDA major, an
    unsupported OS family).
  - The package is DCGM 4's for the CUDA major of the driver - C(datacenter-gpu-manager-4-cuda12) or C(-cuda13) - from
    O(gpu) (C(nvidia-smi)'s CUDA version) or, where the driver does not answer yet, from O(driver_version) and CUDA's
    minor-version compatibility floors.
  - O(stage=verify) runs C(dcgmi -v) and compares the client's and the host engine's versions with the installed
    package's (a host engine left at another version answers C(API version mismatch), NVIDIA/DCGM#314).
author: aistack.gpu_node contributors (@aistack)
options:
  stage:
    description: V(plan) decides; V(verify) checks the client and host engine.
    type: str
    choices: [plan, verify]
    default: plan
  gpu:
    description: The C(aistack_gpu) fact of M(aistack.gpu_node.gpu_facts).
    type: dict
    default: {}
  os_family:
    description: C(ansible_facts.os_family) (Debian, RedHat, ...).
    type: str
  pkg_mgr:
    description: C(ansible_facts.pkg_mgr); C(apt) reads C(dpkg-query), C(dnf) and C(yum) read C(rpm).
    type: str
  install:
    description: Install DCGM where it is missing.
    type: bool
    default: false
  version:
    description: An exact DCGM version (C(4.5.0)); null takes the newest the repositories offer.
    type: raw
  install_without_gpu:
    description: Plan an install on a node without a GPU (an image build).
    type: bool
    default: false
  cuda_major:
    description: The CUDA major to install for, overriding the driver's.
    type: int
  driver_version:
    description: The installed driver's version, for the CUDA major when C(nvidia-smi) gives none.
    type: str
  record_path:
    description: The role's record of the DCGM it installed.
    type: path
    default: /var/lib/aistack/dcgm.json
  package_version:
    description: With O(stage=verify), the installed DCGM's version the client and host engine must have.
    type: str
  engine_required:
    description: With O(stage=verify), a host engine must answer (the role runs one); otherwise one that answers must match.
    type: bool
    default: true
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
attributes:
  platform:
    support: full
    platforms: posix
    description: Debian, Ubuntu (apt) and RHEL, Rocky (dnf) nodes.
seealso:
  - module: aistack.gpu_node.gpu_health
"""

EXAMPLES = r"""
- name: Decide
  aistack.gpu_node.dcgm_plan:
    gpu: "{{ ansible_facts.aistack_gpu }}"
    os_family: "{{ ansible_facts.os_family }}"
    pkg_mgr: "{{ ansible_facts.pkg_mgr }}"
    install: true
  register: dcgm_decision

- name: Check that the host engine runs the installed version
  aistack.gpu_node.dcgm_plan:
    stage: verify
    package_version: "{{ dcgm_decision.installed.version }}"
  register: dcgm_engine
"""

RETURN = r"""
mode:
  description: V(skip), V(absent), V(install), V(keep), V(adopt) or V(refuse).
  returned: stage plan
  type: str
reason:
  description: Why, in one line.
  returned: stage plan
  type: str
package:
  description: The CUDA package of DCGM the node gets or has.
  returned: stage plan
  type: str
  sample: datacenter-gpu-manager-4-cuda13
specs:
  description: What the package manager installs (C(name=1:4.5.0-*) for apt, C(name-4.5.0) for dnf, bare names without a version).
  returned: stage plan
  type: list
  elements: str
cuda_major:
  description: The driver's CUDA major, and C(cuda_from) - how it was found.
  returned: stage plan
  type: int
installed:
  description: The DCGM installed - C(version), C(packages) (name to package version), C(cuda_package), C(cuda_major), C(legacy); null when none.
  returned: stage plan
  type: dict
upgrade_from:
  description: The role's DCGM version an install upgrades.
  returned: stage plan
  type: str
managed:
  description: Whether the installed DCGM is the role's (its record names it).
  returned: stage plan
  type: bool
hold_missing:
  description: Installed DCGM packages not held yet.
  returned: stage plan
  type: list
  elements: str
problems:
  description: Why the role must stop (refuse), or what is wrong with the client and host engine (verify).
  returned: always
  type: list
  elements: str
warnings_found:
  description: What the role reports and goes on.
  returned: stage plan
  type: list
  elements: str
versions:
  description: C(client) and C(hostengine) versions C(dcgmi -v) printed.
  returned: stage verify
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_access import read_json_file
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.packages import installed_and_held
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import dcgm


def plan(module):
    params = module.params
    gpu = params['gpu'] or {}
    driver = gpu.get('driver') or {}
    if params['cuda_major'] is not None:
        cuda = (params['cuda_major'], 'dcgm_cuda_major is %d' % params['cuda_major'])
    else:
        cuda = dcgm.cuda_major(driver.get('cuda_version'), params['driver_version'] or driver.get('userspace_version'))
    packages, held = installed_and_held(module, params['pkg_mgr'], dcgm.PACKAGE_GLOBS)
    installed = dcgm.installed_dcgm(packages)
    version = None if params['version'] in (None, '') else str(params['version'])
    family = {'debian': 'debian', 'redhat': 'redhat'}.get(str(params['os_family']).lower(), str(params['os_family']))
    decision = dcgm.decide(gpu.get('state'), cuda, installed, read_json_file(params['record_path']), family,
                           params['install'], version, params['install_without_gpu'])
    manager = 'apt' if params['pkg_mgr'] == 'apt' else 'dnf'
    decision['specs'] = dcgm.package_specs(decision['packages'], version, manager) if decision['mode'] == 'install' else []
    decision['hold_missing'] = sorted(name for name in packages if name not in held)
    decision['warnings_found'] = decision.pop('warnings')
    return decision


def verify(module):
    dcgmi = module.get_bin_path('dcgmi')
    if not dcgmi:
        return {'versions': {'client': None, 'hostengine': None},
                'problems': ['dcgmi is not on the node\'s PATH although DCGM %s is installed' % module.params['package_version']]}
    _rc, out, _err = module.run_command([dcgmi, '-v'])
    versions = dcgm.parse_dcgmi_version(out)
    problems = dcgm.engine_problems(versions, module.params['package_version'], module.params['engine_required'])
    return {'versions': versions, 'problems': problems}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            stage=dict(type='str', choices=['plan', 'verify'], default='plan'),
            gpu=dict(type='dict', default={}),
            os_family=dict(type='str'),
            pkg_mgr=dict(type='str'),
            install=dict(type='bool', default=False),
            version=dict(type='raw'),
            install_without_gpu=dict(type='bool', default=False),
            cuda_major=dict(type='int'),
            driver_version=dict(type='str'),
            record_path=dict(type='path', default='/var/lib/aistack/dcgm.json'),
            package_version=dict(type='str'),
            engine_required=dict(type='bool', default=True),
        ),
        required_if=[('stage', 'plan', ('os_family', 'pkg_mgr'))],
        supports_check_mode=True,
    )
    result = verify(module) if module.params['stage'] == 'verify' else plan(module)
    module.exit_json(changed=False, failed=False, **result)


if __name__ == '__main__':
    main()
