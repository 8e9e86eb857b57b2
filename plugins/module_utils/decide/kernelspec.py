# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of a declarative Jupyter kernelspec: the kernel.json wanted from module options,
whether what is on disk already says the same, and the diff when it does not. Where it lives on the
node is probe/kernelspec.py's. Nothing here writes; the module does."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.conda.env import NODEFAULTS, env_name_from_prefix

KERNEL_FILE = 'kernel.json'
# The mode the jupyter_kernelspec module gives kernel.json unless its mode option says another.
KERNEL_FILE_MODE = 0o644
CONNECTION_FILE_PLACEHOLDER = '{connection_file}'

# Jupyter accepts these characters in a kernel name and lower-cases the name when it installs
# or looks one up, so an upper-case name would never match its own directory.
_NAME_CHARACTERS = re.compile(r'^[A-Za-z0-9._-]+$')
# jupyter_client's KernelManager starts its own python3 kernel when asked for 'python', so a
# kernelspec of that name is never the one that runs.
_NAMES_TAKEN_BY_JUPYTER = ('python',)


class KernelspecError(Exception):
    """A problem with the options; the message names the option that decides it."""


def validate_name(name):
    """Raise KernelspecError unless ``name`` is a kernel name Jupyter finds as written."""
    if not name or not _NAME_CHARACTERS.match(name):
        raise KernelspecError(
            'name %r is not a valid kernel name: use only letters, digits, ".", "_" and "-"' % (name,))
    if name != name.lower():
        raise KernelspecError(
            'name %r has upper-case letters; Jupyter lower-cases kernel names, so use %r' % (name, name.lower()))
    if name in _NAMES_TAKEN_BY_JUPYTER:
        raise KernelspecError(
            'name %r is taken by Jupyter: jupyter_client starts its own python3 kernel for it, not this kernelspec; '
            'pick another name (the env\'s name, say)' % (name,))


def default_name(prefix, target=None):
    """The kernel name for an env at ``prefix``: the name of ``target`` (conda_env's published
    conda_env_target) when the kernel runs in that env, else the env's folder name (its parent's for
    a hidden folder such as /opt/torch/.venv), lower-cased and with other characters made '-'.
    An empty prefix (no env yet) gives 'aistack'; a name Jupyter keeps for itself gets '-env'."""
    target = target or {}
    if prefix and target.get('name') and target.get('prefix') == prefix:
        name = target['name']
    else:
        name = env_name_from_prefix(prefix) or 'aistack'
    name = re.sub(r'[^a-z0-9._-]', '-', name.lower())
    return name + '-env' if name in _NAMES_TAKEN_BY_JUPYTER else name


def display_name_for(name, prefix):
    """The name Jupyter's launcher shows for kernel ``name`` running in the env at ``prefix``."""
    return 'Python (%s, %s)' % (name, prefix)


def conda_install_argv(packages, prefix, channels=None, conda='conda'):
    """argv of ``conda install`` into ``prefix`` from exactly ``channels``.

    ``nodefaults`` is a marker of environment.yml files, not a channel: conda fails on it, so it
    is dropped, and ``--override-channels`` keeps the ``defaults`` channels (and their terms of
    service) out whatever .condarc says. Raises KernelspecError naming the bad input.
    """
    if isinstance(packages, str):
        packages = [packages]
    if not packages or not all(isinstance(name, str) and name for name in packages):
        raise KernelspecError('packages must be a non-empty list of package specs, got %r' % (packages,))
    if not isinstance(prefix, str) or not prefix.startswith('/'):
        raise KernelspecError('prefix must be an absolute path, got %r' % (prefix,))
    argv = [conda, 'install', '--prefix', prefix, '--yes', '--json']
    wanted = [channel for channel in (channels or []) if channel != NODEFAULTS]
    if wanted:
        argv.append('--override-channels')
        for channel in wanted:
            argv.extend(['--channel', channel])
    return argv + list(packages)


def validate_argv(argv):
    """Raise KernelspecError unless ``argv`` is non-empty and passes the connection file on."""
    if not argv:
        raise KernelspecError('argv must name the kernel command, for example [python, -m, ipykernel_launcher, -f, %s]'
                              % CONNECTION_FILE_PLACEHOLDER)
    # Jupyter substitutes the placeholder inside any argument, so "--file={connection_file}" counts.
    if not any(CONNECTION_FILE_PLACEHOLDER in str(argument) for argument in argv):
        raise KernelspecError('argv must contain %s, where Jupyter passes the connection file to the kernel'
                              % CONNECTION_FILE_PLACEHOLDER)


def normalize_env(env):
    """Environment values as strings; numbers are accepted because YAML makes ``OMP_NUM_THREADS: 8`` an int."""
    normalized = {}
    for key, value in (env or {}).items():
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise KernelspecError('env %s must be a string, got %s' % (key, type(value).__name__))
        normalized[str(key)] = str(value)
    return normalized


def build_kernel(argv, display_name, language='python', env=None, metadata=None,
                 interrupt_mode=None, kernel_protocol_version=None):
    """The kernel.json content, exactly the options given: empty or unset optional keys are left out."""
    kernel = {
        'argv': [str(argument) for argument in argv],
        'display_name': display_name,
        'language': language,
    }
    if env:
        kernel['env'] = normalize_env(env)
    if metadata:
        kernel['metadata'] = metadata
    if interrupt_mode:
        kernel['interrupt_mode'] = interrupt_mode
    if kernel_protocol_version:
        kernel['kernel_protocol_version'] = kernel_protocol_version
    return kernel


def parse_kernel(text):
    """The parsed kernel.json, or None when ``text`` is missing or not a JSON object."""
    if text is None:
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def same_kernel(existing_text, desired):
    """Whether the file on disk already describes ``desired``; key order and whitespace do not matter."""
    return parse_kernel(existing_text) == desired


def kernel_in_place(reading, kernel):
    """Whether the jupyter_kernelspec module, asked for ``kernel`` with its default mode and without resources
    or an owner, would change nothing: ``reading`` (kernel.json's text and mode as the node has them, None when
    it is no regular file) says the same with that mode."""
    return reading is not None and reading['mode'] == KERNEL_FILE_MODE and same_kernel(reading['text'], kernel)


def render_kernel(kernel):
    """kernel.json as this module writes it, in the layout Jupyter itself uses (indent 1)."""
    return json.dumps(kernel, indent=1, sort_keys=True) + '\n'


def render_diff(existing_text, desired, kernel_path):
    """Ansible diff of kernel.json; ``desired`` None means removal. Parsed files are re-rendered so
    that only content shows as changed, not the other writer's layout."""
    existing = parse_kernel(existing_text)
    if existing is not None:
        before = render_kernel(existing)
    else:
        before = existing_text or ''
    return {
        'before': before,
        'after': render_kernel(desired) if desired is not None else '',
        'before_header': kernel_path,
        'after_header': kernel_path,
    }


def validate_resource_name(file_name):
    """Raise KernelspecError unless ``file_name`` is a plain file name that is not kernel.json."""
    if not file_name or file_name in ('.', '..') or '/' in file_name or '\0' in file_name:
        raise KernelspecError('resources key %r must be a plain file name such as logo-64x64.png' % (file_name,))
    if file_name == KERNEL_FILE:
        raise KernelspecError('resources must not name %s; it is built from the other options' % KERNEL_FILE)
