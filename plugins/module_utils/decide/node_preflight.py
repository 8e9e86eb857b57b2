# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of the shared preflight: a report on a node's facts (and the free space that
probe/node_preflight.py measured), and the problems that must stop provisioning before anything
changes. Every problem names the variable that decides it."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.versions import version_tuple

# The virtualization types Ansible's facts give a node that is a container, not a machine.
CONTAINER_TYPES = ("container", "docker", "podman", "lxc", "containerd", "systemd-nspawn", "openvz", "wsl")


def is_container(virtualization_role, virtualization_type):
    """Whether Ansible's virtualization facts describe a container (which shares its host's kernel)."""
    return virtualization_role == "guest" and virtualization_type in CONTAINER_TYPES


def platform_version(facts):
    """The version preflight tables use: ``22.04`` for Ubuntu, the major version elsewhere."""
    if facts.get('distribution') == 'Ubuntu':
        return str(facts.get('distribution_version', ''))
    return str(facts.get('distribution_major_version', ''))


def input_problems(min_python, paths):
    """What the role's argument spec cannot say about its input: each problem names the variable."""
    problems = []
    if isinstance(min_python, float):
        problems.append('bad input: preflight_min_python is the number %r: YAML reads an unquoted version as a number '
                        '(3.10 becomes 3.1); quote it, such as "3.10"' % (min_python,))
    elif not re.match(r'^[0-9]+\.[0-9]+$', str(min_python)):
        problems.append('bad input: preflight_min_python must be a version like "3.8", got %r' % (min_python,))
    negative = [entry['path'] for entry in paths if int(entry.get('min_free_mib', 0)) < 0]
    if negative:
        problems.append('bad input: preflight_paths min_free_mib must be 0 or more (MiB); below 0 at: %s'
                        % ', '.join(repr(path) for path in negative))
    relative = [entry['path'] for entry in paths if not str(entry['path']).startswith('/')]
    if relative:
        problems.append('bad input: preflight_paths must be a list of {path: <absolute path>, min_free_mib: <int>}; '
                        'not absolute: %s' % ', '.join(repr(path) for path in relative))
    return problems


def build_report(facts, gpu, space, supported_platforms, min_python, paths, require_systemd):
    """Report on a node from its Ansible facts, the gpu_facts and free_space results, with a list of problems."""
    problems = []
    distribution = facts.get('distribution', 'unknown')
    version = platform_version(facts)
    supported_versions = [str(v) for v in (supported_platforms or {}).get(distribution, [])]
    os_supported = version in supported_versions
    if not os_supported:
        problems.append(
            'unsupported OS %s %s; supported: %s (preflight_supported_platforms)' % (
                distribution, version,
                ', '.join('%s %s' % (name, '/'.join(str(v) for v in versions))
                          for name, versions in sorted((supported_platforms or {}).items()))))

    python_version = str(facts.get('python_version', ''))
    python_ok = version_tuple(python_version)[:2] >= version_tuple(min_python)[:2]
    if not python_ok:
        problems.append('Python %s on the node is older than %s (preflight_min_python)' % (python_version, min_python))

    service_manager = facts.get('service_mgr', 'unknown')
    systemd = service_manager == 'systemd'
    if require_systemd and not systemd:
        problems.append('the service manager is %s, not systemd (preflight_require_systemd)' % service_manager)

    virtualization_type = facts.get('virtualization_type', '')
    container = is_container(facts.get('virtualization_role'), virtualization_type)

    measured_by_path = dict((entry['path'], entry) for entry in space or [])
    checked = []
    for entry in paths:
        measured = dict(measured_by_path.get(entry['path'], {'path': entry['path'], 'mount': None, 'free_mib': None}))
        required = int(entry['min_free_mib'])
        measured.update({
            'required_mib': required,
            'purpose': entry.get('purpose', ''),
            'ok': measured['free_mib'] is not None and measured['free_mib'] >= required,
        })
        if not measured['ok']:
            problems.append('%s has %s MiB free on %s, needs %d MiB for %s (preflight_paths)' % (
                entry['path'], measured['free_mib'], measured['mount'], required,
                entry.get('purpose') or 'the install'))
        checked.append(measured)

    gpu = gpu or {}
    return {
        'os': {'distribution': distribution, 'version': version,
               'family': facts.get('os_family', 'unknown'), 'supported': os_supported},
        'python': {'version': python_version, 'minimum': str(min_python), 'ok': python_ok},
        'service_manager': service_manager,
        'systemd': systemd,
        'container': {'is_container': container, 'type': virtualization_type if container else None},
        'virtualization': {'role': facts.get('virtualization_role'), 'type': virtualization_type},
        'paths': checked,
        'gpu': {'present': bool(gpu.get('pci_devices')), 'count': len(gpu.get('pci_devices') or []),
                'driver_loaded': bool((gpu.get('driver') or {}).get('loaded_version')),
                'state': gpu.get('state')},
        'problems': problems,
    }
