# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which container runtimes a node has: the program each one is known by, found on the PATH (and the
sbin folders Ansible's ``get_bin_path`` adds). container_toolkit_probe and node_facts both read it."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

# Runtime (as decide/container_toolkit.RUNTIMES names it, in its order) and its program: docker is there when its
# daemon is, not only its client.
PROGRAMS = (('docker', 'dockerd'), ('containerd', 'containerd'), ('podman', 'podman'), ('crio', 'crio'))


def present(get_bin_path):
    """The runtimes whose program ``get_bin_path`` (AnsibleModule's) finds, in PROGRAMS' order."""
    return [name for name, program in PROGRAMS if get_bin_path(program)]
