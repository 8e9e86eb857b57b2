# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a CDI spec made by ``nvidia-ctk cdi generate`` is for, and whether it still fits the node.

A spec (the Container Device Interface's format, https://github.com/cncf-tags/container-device-interface,
``specs-go/config.go``) names one device per GPU (by index and by UUID with nvidia-ctk's default naming
strategies, plus ``all``) and mounts the driver's user-space libraries by their versioned file names
(``libcuda.so.580.159.04``). Those names are the only record of the driver the spec was made for: a driver
update leaves a spec that mounts files which no longer exist, and containers started through it fail.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

# The driver's libraries whose file names carry the driver version in every packaging (run file, apt, dnf).
_VERSIONED_DRIVER_LIBRARY = re.compile(r'/lib(?:cuda|nvidia-ml)\.so\.(\d+\.\d+(?:\.\d+)?)$')
# nvidia-ctk's full-GPU device names: an index ("0") or a UUID ("GPU-..."); MIG devices are "0:1" or "MIG-...".
_GPU_INDEX_NAME = re.compile(r'^\d+$')
_GPU_DEVICE_NODE = re.compile(r'^/dev/nvidia\d+$')


def _edits(entry):
    edits = entry.get('containerEdits') if isinstance(entry, dict) else None
    return edits if isinstance(edits, dict) else {}


def _paths(items, key):
    return [item.get(key) for item in items or [] if isinstance(item, dict) and isinstance(item.get(key), str)]


def summary(spec):
    """The spec's kind, devices and the driver it was made for. ``problems`` lists what makes it no CDI spec
    of nvidia-ctk's (then the other keys may be empty)."""
    if not isinstance(spec, dict):
        return dict(problems=['the CDI spec is not a mapping'], kind=None, cdi_version=None, devices=[],
                    gpu_indexes=[], gpu_uuids=[], device_nodes=[], gpu_device_nodes=[], driver_versions=[], libraries=[])
    problems = []
    for key in ('cdiVersion', 'kind', 'devices'):
        if key not in spec:
            problems.append('the CDI spec has no %s' % key)
    devices = [device for device in spec.get('devices') or [] if isinstance(device, dict)]
    names = [str(device.get('name')) for device in devices]
    device_nodes = sorted(set(_paths(_edits(spec).get('deviceNodes'), 'path')
                              + [path for device in devices for path in _paths(_edits(device).get('deviceNodes'), 'path')]))
    libraries = sorted(set(_paths(_edits(spec).get('mounts'), 'hostPath')))
    versions = sorted(set(match.group(1) for match in map(_VERSIONED_DRIVER_LIBRARY.search, libraries) if match))
    if not versions:
        problems.append('the CDI spec mounts no versioned driver library (libcuda.so.<version>, libnvidia-ml.so.<version>)')
    return dict(
        problems=problems,
        kind=spec.get('kind'),
        cdi_version=spec.get('cdiVersion'),
        devices=names,
        gpu_indexes=sorted(int(name) for name in names if _GPU_INDEX_NAME.match(name)),
        gpu_uuids=sorted(name for name in names if name.startswith('GPU-')),
        device_nodes=device_nodes,
        gpu_device_nodes=[path for path in device_nodes if _GPU_DEVICE_NODE.match(path)],
        driver_versions=versions,
        libraries=libraries,
    )


def staleness(spec_summary, driver_version, gpus):
    """Why a spec no longer fits the node whose driver is ``driver_version`` and whose GPUs are ``gpus``
    (gpu_facts' list: index, uuid): each reason a sentence; empty when it fits. A GPU in MIG mode is judged
    by its full-GPU device like the others."""
    reasons = list(spec_summary['problems'])
    made_for = spec_summary['driver_versions']
    if made_for and driver_version and made_for != [driver_version]:
        reasons.append('the CDI spec was made for driver %s, the node runs %s' % (', '.join(made_for), driver_version))
    indexes = sorted(gpu['index'] for gpu in gpus if gpu.get('index') is not None)
    uuids = sorted(gpu['uuid'] for gpu in gpus if gpu.get('uuid'))
    if spec_summary['gpu_indexes'] and spec_summary['gpu_indexes'] != indexes:
        reasons.append('the CDI spec names GPUs %s, the node has %s' % (_listed(spec_summary['gpu_indexes']), _listed(indexes)))
    missing = [uuid for uuid in uuids if uuid not in spec_summary['gpu_uuids']]
    gone = [uuid for uuid in spec_summary['gpu_uuids'] if uuid not in uuids]
    if spec_summary['gpu_uuids'] and (missing or gone):
        reasons.append('the CDI spec names GPUs the node does not have (%s) or lacks GPUs it has (%s)'
                       % (_listed(gone), _listed(missing)))
    return reasons


def _listed(items):
    return ', '.join(str(item) for item in items) or 'none'
