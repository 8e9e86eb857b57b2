#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
---
module: node_facts
short_description: Read what the preflight decides on, in one module run
version_added: "0.2.0"
description:
  - The node reading of the P(aistack.gpu_node.preflight#role) role, which the M(aistack.gpu_node.preflight_plan)
    action runs on the node. It reads what C(ansible.builtin.setup), M(aistack.gpu_node.gpu_facts) and
    M(aistack.gpu_node.free_space) read, and which container runtimes there are, in one module run instead of four.
  - The C(min) and C(virtual) fact subsets, gathered with ansible-core's own fact collectors as
    C(ansible.builtin.setup) with C(gather_subset=[min, virtual]) gathers them, with the same keys and values.
  - The NVIDIA GPUs and driver as M(aistack.gpu_node.gpu_facts) reads them, published as C(aistack_gpu).
  - The container runtimes whose program is on the C(PATH) (C(dockerd), C(containerd), C(podman), C(crio)), as
    M(aistack.gpu_node.container_toolkit_probe) looks for them, published as C(aistack_container_runtimes).
  - The free space at O(paths), as M(aistack.gpu_node.free_space) measures it.
  - Never changes the host.
author: aistack.gpu_node contributors (@aistack)
options:
  gpu:
    description:
      - Read the GPUs (C(aistack_gpu)). V(false) where the run has read them already.
    type: bool
    default: true
  paths:
    description: Absolute paths whose free space is measured, existing or not.
    type: list
    elements: path
    default: []
  fact_path:
    description: Where the C(local) facts are read from, as C(ansible.builtin.setup)'s option of that name.
    type: path
    default: /etc/ansible/facts.d
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
attributes:
  platform:
    support: full
    platforms: posix
    description: Linux hosts, with NVIDIA GPUs or without.
seealso:
  - name: ansible.builtin.setup
    description: The facts module whose min and virtual subsets this module reads with the same collectors.
    link: https://docs.ansible.com/ansible/latest/collections/ansible/builtin/setup_module.html
  - module: aistack.gpu_node.gpu_facts
  - module: aistack.gpu_node.free_space
  - module: aistack.gpu_node.preflight_plan
"""

EXAMPLES = r"""
- name: Read the node once
  aistack.gpu_node.node_facts:
    paths: [/opt, /var]
  register: node

- name: Free MiB at /opt
  ansible.builtin.debug:
    msg: "{{ node.paths[0].free_mib }} MiB free at /opt on {{ ansible_facts.distribution }}"
"""

RETURN = r"""
ansible_facts:
  description:
    - The C(min) and C(virtual) subsets of C(ansible.builtin.setup), with the same keys and values, and these two.
  returned: always
  type: dict
  contains:
    aistack_gpu:
      description: The NVIDIA GPUs and driver, as RV(aistack.gpu_node.gpu_facts#module:ansible_facts.aistack_gpu).
      returned: when O(gpu) is true
      type: dict
    aistack_container_runtimes:
      description: The container runtimes whose program is on the C(PATH), of V(docker) (C(dockerd)), V(containerd), V(podman), V(crio).
      returned: always
      type: list
      elements: str
      sample: [podman]
paths:
  description: One entry per path of O(paths), in order, as RV(aistack.gpu_node.free_space#module:paths).
  returned: always
  type: list
  elements: dict
  sample:
    - {path: /opt/conda, measured_at: /opt, exists: false, mount: /, free_mib: 81234, total_mib: 257000}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import container_runtimes, setup_facts
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.gpu_collection import collect_gpu_facts, import_nvml
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_access import module_runner
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_preflight import measure_paths

# The subsets the preflight decides on (OS, Python, service manager, virtualization).
FACT_SUBSETS = ['min', 'virtual']


def main():
    module = AnsibleModule(
        argument_spec=dict(
            gpu=dict(type='bool', default=True),
            paths=dict(type='list', elements='path', default=[]),
            fact_path=dict(type='path', default='/etc/ansible/facts.d'),
        ),
        supports_check_mode=True,
    )
    relative = [path for path in module.params['paths'] if not path.startswith('/')]
    if relative:
        module.fail_json(msg='paths must be absolute: %s' % ', '.join(relative))
    facts = setup_facts.gather(module, FACT_SUBSETS)
    facts['aistack_container_runtimes'] = container_runtimes.present(module.get_bin_path)
    if module.params['gpu']:
        facts['aistack_gpu'] = collect_gpu_facts(module_runner(module), root='/', nvml=import_nvml())
    module.exit_json(changed=False, ansible_facts=facts, paths=measure_paths(module.params['paths']))


if __name__ == '__main__':
    main()
