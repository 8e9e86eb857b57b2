# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The test bed's podman connection: containers.podman.podman with pipelining.

containers.podman.podman runs a module in six podman commands (mount, echo ~, mkdir, chmod, run,
rm), each a podman process on the controller; with pipelining the module goes to python's
stdin through one `podman exec --interactive`, and the container is mounted only when a file is
copied. Only the test bed's inventories use it (ANSIBLE_CONNECTION_PLUGINS names this folder).
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: podman_pipelining
short_description: containers.podman.podman with pipelining, for the test bed
description:
  - The options of containers.podman.podman, plus pipelining (on unless turned off).
extends_documentation_fragment:
  - ansible.builtin.connection_pipelining
options:
  remote_addr:
    description: The container's name or ID.
    default: inventory_hostname
    vars:
      - name: ansible_host
      - name: inventory_hostname
      - name: ansible_podman_host
  remote_user:
    description: The user commands run as in the container.
    vars:
      - name: ansible_user
  podman_extra_args:
    description: Extra arguments to the podman command line.
    default: ''
    vars:
      - name: ansible_podman_extra_args
  podman_executable:
    description: The podman executable.
    default: podman
    vars:
      - name: ansible_podman_executable
  pipelining:
    default: true
"""

import shlex

from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.connection import ensure_connect
from ansible.plugins.loader import connection_loader

Podman = connection_loader.get("containers.podman.podman", class_only=True)


class Connection(Podman):
    transport = "podman_pipelining"
    has_pipelining = True

    def _connect(self):
        # The mount only serves file copies: put_file and fetch_file ask for it.
        self._connected = True
        return self

    def _mounted(self):
        if not self._mount_point:
            Podman._connect(self)

    def put_file(self, in_path, out_path):
        self._mounted()
        super().put_file(in_path, out_path)

    def fetch_file(self, in_path, out_path):
        self._mounted()
        super().fetch_file(in_path, out_path)

    @ensure_connect
    def exec_command(self, cmd, in_data=None, sudoable=False):
        exec_args = ["exec"] + (["--interactive"] if in_data is not None else [])
        exec_args += ["--user", self.user] if self.user else []
        return self._podman(exec_args, shlex.split(to_native(cmd, errors="surrogate_or_strict")), in_data)
