#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
---
module: container_toolkit_probe
short_description: Read what the container_toolkit role decides on, in one round-trip
version_added: "0.2.0"
description:
  - The read-only half of the P(aistack.gpu_node.container_toolkit#role) role, which the
    M(aistack.gpu_node.container_toolkit_plan) action runs on the node.
  - Reads which container runtimes the node has (C(dockerd), C(containerd), C(podman), C(crio) on the C(PATH)), whether
    docker's C(daemon.json) and containerd's configuration (its C(config.toml) and C(conf.d) drop-ins) already name
    the C(nvidia) runtime, the installed toolkit packages and which are held (C(dpkg-query), or C(rpm) and
    C(dnf versionlock list)), whether the repository's signing key is there, and the CDI spec's text.
author: aistack.gpu_node contributors (@aistack)
options:
  pkg_mgr:
    description: C(ansible_facts.pkg_mgr); C(apt) reads C(dpkg-query), others C(rpm).
    type: str
    required: true
  cdi_spec_path:
    description: The CDI spec whose text is read.
    type: path
    required: true
  key_path:
    description: Where the role keeps the repository's signing key (apt).
    type: path
    required: true
  docker_config:
    description: docker's daemon configuration, as C(nvidia-ctk runtime configure --runtime=docker) writes it.
    type: path
    default: /etc/docker/daemon.json
  containerd_config:
    description:
      - containerd's configuration; C(conf.d/*.toml) and C(config.d/*.toml) beside it are read too (the toolkit's
        drop-in; 1.18.0 wrote it to C(config.d), NVIDIA/nvidia-container-toolkit#1404).
    type: path
    default: /etc/containerd/config.toml
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
"""

EXAMPLES = r"""
- name: Read the runtimes, the toolkit packages and the CDI spec
  aistack.gpu_node.container_toolkit_probe:
    pkg_mgr: apt
    cdi_spec_path: /etc/cdi/nvidia.yaml
    key_path: /etc/apt/keyrings/aistack-nvidia-container-toolkit.asc
"""

RETURN = r"""
runtimes:
  description: Per runtime (docker, containerd, podman, crio) C(present) and, for docker and containerd, C(configured)
    (its configuration names the nvidia runtime).
  returned: always
  type: dict
packages:
  description: The installed toolkit packages and their versions.
  returned: always
  type: dict
held:
  description: Those of RV(packages) that are held.
  returned: always
  type: list
  elements: str
key_present:
  description: Whether O(key_path) exists.
  returned: always
  type: bool
cdi_spec:
  description: The text of O(cdi_spec_path), null where there is none.
  returned: always
  type: str
"""

import glob
import json
import os
import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import container_toolkit
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import container_runtimes
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.packages import installed_and_held

# nvidia-ctk's containerd section: runtimes.nvidia under the CRI plugin, in every config version it writes.
_CONTAINERD_NVIDIA = re.compile(r'\.runtimes\.["\']?nvidia["\']?\]')


def _read(path):
    try:
        with open(path, encoding='utf-8', errors='replace') as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def docker_configured(text):
    """Whether docker's daemon.json names the nvidia runtime."""
    try:
        return 'nvidia' in ((json.loads(text or '{}') or {}).get('runtimes') or {})
    except (ValueError, AttributeError):
        return False


def containerd_configured(texts):
    """Whether containerd's configuration or a drop-in of it names the nvidia runtime."""
    return any(_CONTAINERD_NVIDIA.search(text or '') for text in texts)


def read_runtimes(module, docker_config, containerd_config):
    found = container_runtimes.present(module.get_bin_path)
    runtimes = dict((name, {'present': name in found}) for name in container_toolkit.RUNTIMES)
    runtimes['docker']['configured'] = docker_configured(_read(docker_config))
    # Toolkit 1.18 writes a drop-in; 1.18.0 wrote it to config.d instead of conf.d (NVIDIA/nvidia-container-toolkit#1404).
    folder = os.path.dirname(containerd_config)
    drop_ins = sorted(glob.glob(os.path.join(folder, 'conf.d', '*.toml')) + glob.glob(os.path.join(folder, 'config.d', '*.toml')))
    runtimes['containerd']['configured'] = containerd_configured(_read(path) for path in [containerd_config] + drop_ins)
    return runtimes


def main():
    module = AnsibleModule(
        argument_spec=dict(
            pkg_mgr=dict(type='str', required=True),
            cdi_spec_path=dict(type='path', required=True),
            key_path=dict(type='path', required=True),
            docker_config=dict(type='path', default='/etc/docker/daemon.json'),
            containerd_config=dict(type='path', default='/etc/containerd/config.toml'),
        ),
        supports_check_mode=True,
    )
    params = module.params
    packages, held = installed_and_held(module, params['pkg_mgr'], container_toolkit.PACKAGES)
    module.exit_json(changed=False, failed=False, runtimes=read_runtimes(module, params['docker_config'], params['containerd_config']),
                     packages=packages, held=held, key_present=os.path.exists(params['key_path']),
                     cdi_spec=_read(params['cdi_spec_path']))


if __name__ == '__main__':
    main()
