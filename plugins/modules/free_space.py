#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: free_space
short_description: Free space at install paths, whether they exist yet or not
version_added: 0.1.0
description:
  - Measures the free space of the filesystem that holds, or would hold, each path.
  - A path that does not exist yet is measured at its nearest existing parent, which is what an install there would use.
  - Works where Ansible's mount facts are incomplete, for example the overlay root of a container.
author: aistack.gpu_node contributors (@aistack)
options:
  paths:
    description: Absolute paths to measure.
    type: list
    elements: path
    required: true
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
attributes:
  platform:
    support: full
    platforms: posix
    description: Any POSIX host with C(statvfs).
'''

EXAMPLES = r'''
- name: Measure the install prefixes
  aistack.gpu_node.free_space:
    paths: [/opt/conda, /var/cache/aistack]
  register: space

- name: Need 20 GiB for conda
  ansible.builtin.assert:
    that: space.paths[0].free_mib >= 20480
'''

RETURN = r'''
paths:
  description: One entry per requested path, in order.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The path as requested.
      type: str
      sample: /opt/conda
    measured_at:
      description: The nearest existing path, where the measurement was made.
      type: str
      sample: /opt
    exists:
      description: Whether the path itself exists.
      type: bool
      sample: false
    mount:
      description: Mount point of the filesystem that holds the path.
      type: str
      sample: /
    free_mib:
      description: Space available to unprivileged users, in MiB.
      type: int
      sample: 81234
    total_mib:
      description: Size of the filesystem, in MiB.
      type: int
      sample: 257000
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_preflight import measure_paths


def main():
    module = AnsibleModule(argument_spec=dict(paths=dict(type='list', elements='path', required=True)), supports_check_mode=True)
    relative = [path for path in module.params['paths'] if not path.startswith('/')]
    if relative:
        module.fail_json(msg='paths must be absolute: %s' % ', '.join(relative))
    module.exit_json(changed=False, paths=measure_paths(module.params['paths']))


if __name__ == '__main__':
    main()
