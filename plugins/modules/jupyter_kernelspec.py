#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: jupyter_kernelspec
short_description: Declare a Jupyter kernelspec (kernel.json and its resource files)
version_added: 0.1.0
description:
  - Writes a Jupyter kernelspec directory with a C(kernel.json) built from the options, system-wide or for one user.
  - Declarative and idempotent; nothing is written when the existing C(kernel.json) already has the same content,
    compared as parsed JSON, so key order and layout of a file written by another tool do not matter.
  - The wanted C(kernel.json) is exactly what the options describe. Keys that an existing file has and the options
    do not, for example C(kernel_protocol_version) written by C(ipykernel install), are dropped on the next write;
    set O(kernel_protocol_version) and O(metadata) to adopt such a file unchanged.
  - C(kernel.json) and resource files are replaced atomically from a temporary file in the kernel directory.
  - Resource files already in the directory and not named in O(resources) are left alone.
author: aistack.gpu_node contributors (@aistack)
options:
  name:
    description:
      - Kernel name, the last component of the kernelspec directory, as in C(jupyter kernelspec list).
      - Letters, digits, C(.), C(_) and C(-) only, and lower case, because Jupyter lower-cases kernel names.
    type: str
    required: true
  state:
    description:
      - V(present) writes the kernelspec; V(absent) removes its whole directory.
    type: str
    choices: [present, absent]
    default: present
  scope:
    description:
      - V(system) places the kernel in C(<prefix>/share/jupyter/kernels/<name>).
      - V(user) places it in C(~<user>/.local/share/jupyter/kernels/<name>), the Linux per-user location,
        and makes O(user) own the files and the directories created for them.
      - Ignored when O(path) is set.
    type: str
    choices: [system, user]
    default: system
  user:
    description:
      - Owner of a O(scope=user) kernel, whose home directory is looked up in the password database.
      - Defaults to the user the module runs as.
    type: str
  prefix:
    description:
      - Installation prefix of a O(scope=system) kernel, for example the prefix of a conda env.
    type: path
    default: /usr/local
  path:
    description:
      - Kernelspec directory itself, overriding O(scope) and O(prefix).
    type: path
  argv:
    description:
      - Command that starts the kernel; Jupyter replaces C({connection_file}) with the connection file's path.
      - Required with O(state=present), and must contain C({connection_file}), alone or within an argument.
    type: list
    elements: str
  display_name:
    description:
      - Name shown in the Jupyter launcher and kernel menus.
      - Required with O(state=present).
    type: str
  language:
    description:
      - Language of the kernel.
    type: str
    default: python
  env:
    description:
      - Environment variables set for the kernel process. Numbers are written as strings.
      - Left out of C(kernel.json) when empty.
    type: dict
  metadata:
    description:
      - Free-form C(metadata) of the kernelspec, for example C(debugger) set to V(true) to offer the debugger.
      - Left out of C(kernel.json) when empty.
    type: dict
  interrupt_mode:
    description:
      - How Jupyter interrupts the kernel. Left out of C(kernel.json) when unset, which Jupyter reads as V(signal).
    type: str
    choices: [signal, message]
  kernel_protocol_version:
    description:
      - Jupyter messaging protocol version the kernel speaks, for example V(5.5) as written by ipykernel 7.
      - Left out of C(kernel.json) when unset.
    type: str
  resources:
    description:
      - Extra files of the kernelspec, as file name in the kernel directory to absolute source path on the managed node,
        for example C(logo-64x64.png).
      - A file is copied when it is missing or its sha256 differs from the source's.
    type: dict
  mode:
    description:
      - Permissions of C(kernel.json) and of the resource files.
    type: raw
    default: '0644'
attributes:
  check_mode:
    support: full
    description: Reports what would be written or removed, and the diff, without changing anything.
  diff_mode:
    support: full
    description: Shows C(kernel.json) before and after, as sorted JSON.
  platform:
    support: full
    platforms: posix
    description: Any POSIX node; the O(scope=user) location is the one Jupyter uses on Linux.
seealso:
  - name: Jupyter kernel specs
    description: The kernel.json format.
    link: https://jupyter-client.readthedocs.io/en/stable/kernels.html#kernel-specs
'''

EXAMPLES = r'''
- name: Register the conda env's Python as a system-wide kernel
  aistack.gpu_node.jupyter_kernelspec:
    name: torch
    display_name: Python (torch)
    argv: [/opt/conda/envs/torch/bin/python, -m, ipykernel_launcher, -f, '{connection_file}']
    env:
      CUDA_HOME: /usr/local/cuda
      OMP_NUM_THREADS: 8
    metadata:
      debugger: true
    resources:
      logo-64x64.png: /opt/conda/envs/torch/share/jupyter/kernels/python3/logo-64x64.png

- name: Register a kernel for one user only
  aistack.gpu_node.jupyter_kernelspec:
    name: torch
    scope: user
    user: alice
    display_name: Python (torch)
    argv: [/opt/conda/envs/torch/bin/python, -m, ipykernel_launcher, -f, '{connection_file}']

- name: Remove the kernel
  aistack.gpu_node.jupyter_kernelspec:
    name: torch
    state: absent
'''

RETURN = r'''
path:
  description: Kernelspec directory.
  returned: always
  type: str
  sample: /usr/local/share/jupyter/kernels/torch
kernel:
  description: Content of C(kernel.json) as written or as it would be written; empty with O(state=absent).
  returned: always
  type: dict
  sample:
    argv: [/opt/conda/envs/torch/bin/python, -m, ipykernel_launcher, -f, '{connection_file}']
    display_name: Python (torch)
    language: python
    env:
      CUDA_HOME: /usr/local/cuda
diff:
  description: C(kernel.json) before and after, as sorted JSON text; empty text for a missing file.
  returned: always
  type: dict
  contains:
    before:
      description: Existing C(kernel.json).
      type: str
    after:
      description: Wanted C(kernel.json).
      type: str
'''

import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.kernelspec import (
    KERNEL_FILE,
    KernelspecError,
    build_kernel,
    render_diff,
    render_kernel,
    same_kernel,
    validate_argv,
    validate_name,
    validate_resource_name,
)
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import kernelspec as kernelspec_node
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.kernelspec import kernel_directory, sha256_of
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_access import read_file


def missing_directories(directory):
    """The directories that creating ``directory`` would add, outermost first."""
    missing = []
    current = directory
    while not os.path.isdir(current) and current != os.path.dirname(current):
        missing.insert(0, current)
        current = os.path.dirname(current)
    return missing


class KernelspecWriter(object):
    """Applies the wanted state through AnsibleModule, so that check mode and ownership are handled once."""

    def __init__(self, module, directory, owner):
        self.module = module
        self.directory = directory
        self.owner = owner  # (uid, gid) as strings for scope=user, else None
        self.changed = False

    def ensure_directory(self):
        created = missing_directories(self.directory)
        if created:
            self.changed = True
            if self.module.check_mode:
                return
            try:
                os.makedirs(self.directory)
            except OSError as error:
                self.module.fail_json(msg='cannot create %s: %s' % (self.directory, to_native(error)))
            for directory in created:
                self.apply_owner(directory)

    def apply_owner(self, path):
        if self.owner:
            self.changed = self.module.set_owner_if_different(path, self.owner[0], self.changed, expand=False)
            self.changed = self.module.set_group_if_different(path, self.owner[1], self.changed, expand=False)

    def apply_attributes(self, path):
        if self.module.check_mode and not os.path.exists(path):
            return
        self.changed = self.module.set_mode_if_different(path, self.module.params['mode'], self.changed, expand=False)
        self.apply_owner(path)

    def replace_file(self, destination, write_content):
        """Write a temporary file next to ``destination`` and move it into place."""
        self.changed = True
        if self.module.check_mode:
            return
        descriptor, temporary = tempfile.mkstemp(dir=self.directory, prefix='.%s.' % os.path.basename(destination))
        try:
            with os.fdopen(descriptor, 'wb') as handle:
                write_content(handle)
            self.module.atomic_move(temporary, destination)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)

    def write_kernel(self, kernel_path, kernel):
        text = render_kernel(kernel).encode('utf-8')
        self.replace_file(kernel_path, lambda handle: handle.write(text))

    def copy_resource(self, source, destination):
        def write_content(handle):
            with open(source, 'rb') as source_handle:
                shutil.copyfileobj(source_handle, handle)
        self.replace_file(destination, write_content)


def resource_sources(module):
    """Validated (destination name, source path) pairs, failing before anything is written."""
    pairs = []
    for file_name, source in sorted((module.params['resources'] or {}).items()):
        validate_resource_name(file_name)
        source = str(source)
        if not os.path.isabs(source):
            raise KernelspecError('resources %s: source %s must be an absolute path on the node' % (file_name, source))
        if not os.path.isfile(source):
            raise KernelspecError('resources %s: source %s is not a file on this node' % (file_name, source))
        pairs.append((file_name, source))
    return pairs


def user_owner(module):
    """uid and gid that own a scope=user kernel; numeric so no second name lookup is needed."""
    if module.params['path'] or module.params['scope'] != 'user':
        return None
    user = module.params['user']
    entry = kernelspec_node.pwd.getpwnam(user) if user is not None else kernelspec_node.pwd.getpwuid(os.geteuid())
    return str(entry.pw_uid), str(entry.pw_gid)


def ensure_present(module, directory, kernel_path, existing_text):
    params = module.params
    validate_argv(params['argv'])
    kernel = build_kernel(params['argv'], params['display_name'], params['language'], params['env'],
                          params['metadata'], params['interrupt_mode'], params['kernel_protocol_version'])
    resources = resource_sources(module)

    writer = KernelspecWriter(module, directory, user_owner(module))
    writer.ensure_directory()
    if not same_kernel(existing_text, kernel):
        writer.write_kernel(kernel_path, kernel)
    writer.apply_attributes(kernel_path)
    for file_name, source in resources:
        destination = os.path.join(directory, file_name)
        if sha256_of(destination) != sha256_of(source):
            writer.copy_resource(source, destination)
        writer.apply_attributes(destination)
    return writer.changed, kernel


def ensure_absent(module, directory, existing_text):
    if not os.path.lexists(directory):
        return False
    if not os.path.isdir(directory) or os.path.islink(directory):
        raise KernelspecError('path %s is not a kernelspec directory; refusing to remove it' % directory)
    # A non-empty directory without kernel.json is not a kernelspec, most likely a wrong path or prefix.
    if existing_text is None and os.listdir(directory):
        raise KernelspecError('path %s has no %s; refusing to remove it' % (directory, KERNEL_FILE))
    if not module.check_mode:
        shutil.rmtree(directory)
    return True


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type='str', required=True),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            scope=dict(type='str', choices=['system', 'user'], default='system'),
            user=dict(type='str'),
            prefix=dict(type='path', default='/usr/local'),
            path=dict(type='path'),
            argv=dict(type='list', elements='str'),
            display_name=dict(type='str'),
            language=dict(type='str', default='python'),
            env=dict(type='dict'),
            metadata=dict(type='dict'),
            interrupt_mode=dict(type='str', choices=['signal', 'message']),
            kernel_protocol_version=dict(type='str'),
            resources=dict(type='dict'),
            mode=dict(type='raw', default='0644'),
        ),
        required_if=[('state', 'present', ('argv', 'display_name'))],
        supports_check_mode=True,
    )
    params = module.params
    try:
        validate_name(params['name'])
        directory = kernel_directory(params['name'], params['scope'], params['prefix'], params['user'],
                                     params['path'], passwd=kernelspec_node.pwd)
        kernel_path = os.path.join(directory, KERNEL_FILE)
        existing_text = read_file(kernel_path)
        if params['state'] == 'present':
            changed, kernel = ensure_present(module, directory, kernel_path, existing_text)
            diff = render_diff(existing_text, kernel, kernel_path)
        else:
            changed, kernel = ensure_absent(module, directory, existing_text), {}
            diff = render_diff(existing_text, None, kernel_path)
        module.exit_json(changed=changed, path=directory, kernel=kernel, diff=diff)
    except KernelspecError as error:
        module.fail_json(msg=to_native(error))
    except (IOError, OSError) as error:
        module.fail_json(msg='%s: %s' % (params['name'], to_native(error)))


if __name__ == '__main__':
    main()
