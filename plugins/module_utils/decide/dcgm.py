# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Decisions of the dcgm role, as pure functions (no I/O): every rule is a unit test.

- ``cuda_major()``: the CUDA major of the node's driver, from ``nvidia-smi`` (gpu_facts) or, where
  the driver does not answer yet (installed, not loaded), from its version and CUDA's minor-version
  compatibility floors (``cuda/tables.py``).
- ``package_for()``: DCGM 4's package for that CUDA major and the node's OS family.
- ``installed_dcgm()``: the DCGM the node's package manager has, from its package list.
- ``decide()``: skip (no GPU), absent (not installed, install off), install (or upgrade one this
  role installed), keep (this role's, at the version asked) or adopt (one the role did not install:
  never replaced, a newer one never downgraded); a downgrade of the role's own DCGM is refused.
- ``parse_dcgmi_version()`` and ``engine_problems()``: the client and host engine versions that
  ``dcgmi -v`` prints, which must be the installed package's (NVIDIA/DCGM#314: a host engine left
  running at another version answers "API version mismatch").

Every problem names the variable that decides it.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.cuda.tables import MINOR_VERSION_COMPAT_FLOOR
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import package_pins
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.package_pins import upstream_version
from ansible_collections.aistack.gpu_node.plugins.module_utils.versions import compare_versions, version_tuple

SOURCE_INSTALL = 'https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/getting-started.html'
SOURCE_PACKAGING = ('https://github.com/NVIDIA/DCGM/blob/master/cmake/packaging.cmake (DCGM 4.6.0: the -core package, '
                    '-cuda11/-cuda12/-cuda13 each depending on -core at the same version, epoch 1; -core conflicts '
                    'with DCGM 3\'s datacenter-gpu-manager)')
SOURCE_MISMATCH = 'https://github.com/NVIDIA/DCGM/issues/314'
SOURCE_WRONG_CUDA = 'https://github.com/dsx-ai-factory/infra-controller/issues/384'

# DCGM 4 in NVIDIA's CUDA repository: the same package names for apt and dnf (getting-started guide:
# "datacenter-gpu-manager-4-cuda${CUDA_VERSION}"); the CUDA package carries the diagnostics built
# for that CUDA major, -core the host engine and dcgmi.
CORE_PACKAGE = 'datacenter-gpu-manager-4-core'
CUDA_PACKAGES = {11: 'datacenter-gpu-manager-4-cuda11', 12: 'datacenter-gpu-manager-4-cuda12',
                 13: 'datacenter-gpu-manager-4-cuda13'}
# DCGM 3 and earlier: one package; DCGM 4's -core conflicts with it.
LEGACY_PACKAGE = 'datacenter-gpu-manager'
# Every package of a DCGM install, held together: 4.7 splits dcgmi, libdcgm, nv-hostengine and the
# modules out of -core (dpkg -l of a DCGM 4.7.0 node in NVIDIA/DCGM#314).
PACKAGE_PATTERN = re.compile(r'^(datacenter-gpu-manager(-.+)?|dcgmi|libdcgm|nv-hostengine)$')
PACKAGE_GLOBS = ('datacenter-gpu-manager*', 'dcgmi', 'libdcgm', 'nv-hostengine')
# The package version epoch NVIDIA's DCGM 4 debs and rpms carry (packaging.cmake).
EPOCH = 1
FAMILIES = ('debian', 'redhat')
SERVICE = 'nvidia-dcgm.service'

_CUDA = re.compile(r'^\s*(\d+)(?:\.\d+)*\s*$')


def cuda_major(cuda_version=None, driver_version=None):
    """``(major, how)``: the CUDA major of the driver, from nvidia-smi's CUDA version, else from the
    driver's version and the newest CUDA major whose minor-version compatibility floor it reaches;
    ``(None, why)`` when neither is known."""
    match = _CUDA.match(str(cuda_version or ''))
    if match:
        return int(match.group(1)), 'nvidia-smi reports CUDA %s' % cuda_version
    try:
        driver = version_tuple(driver_version)
    except ValueError:
        return None, 'the driver answers no CUDA version (nvidia-smi) and no driver version is known'
    reached = [int(major) for major, floor in MINOR_VERSION_COMPAT_FLOOR.items()
               if floor.get('min_driver') and driver >= version_tuple(floor['min_driver'])]
    if not reached:
        return None, 'driver %s is below every CUDA minor-version compatibility floor' % driver_version
    major = max(reached)
    return major, 'driver %s reaches CUDA %d\'s minor-version compatibility floor (%s; %s)' % (
        driver_version, major, MINOR_VERSION_COMPAT_FLOOR[str(major)]['min_driver'],
        MINOR_VERSION_COMPAT_FLOOR[str(major)]['source'])


def package_for(major, family):
    """``(package, problem)``: DCGM 4's package for a CUDA major on an OS family (``debian``/``redhat``)."""
    if family not in FAMILIES:
        return None, ('DCGM is installed from NVIDIA\'s CUDA repository for Debian/Ubuntu (apt) and RHEL/Rocky (dnf); '
                      'this node\'s OS family is %s' % family)
    if major not in CUDA_PACKAGES:
        return None, ('DCGM 4 ships packages for CUDA %s, not for the driver\'s CUDA %s (set dcgm_cuda_major, or '
                      'upgrade the driver)' % ('/'.join(str(m) for m in sorted(CUDA_PACKAGES)), major))
    return CUDA_PACKAGES[major], None


def installed_dcgm(packages):
    """The DCGM a node has, from ``{name: version}`` of its installed packages (any, unfiltered).

    Returns None without DCGM, else ``{'version', 'packages': {name: version}, 'cuda_package',
    'cuda_major', 'legacy'}``; ``version`` is the upstream version of -core (DCGM 4) or of
    datacenter-gpu-manager (DCGM 3).
    """
    found = dict((name, version) for name, version in (packages or {}).items() if PACKAGE_PATTERN.match(name))
    if not found:
        return None
    legacy = LEGACY_PACKAGE in found and CORE_PACKAGE not in found
    main = found.get(CORE_PACKAGE) or found.get(LEGACY_PACKAGE) or sorted(found.items())[0][1]
    cuda = sorted(name for name in found if name in CUDA_PACKAGES.values())
    majors = dict((name, major) for major, name in CUDA_PACKAGES.items())
    return {'version': upstream_version(main), 'packages': found, 'cuda_package': cuda[-1] if cuda else None,
            'cuda_major': majors[cuda[-1]] if cuda else None, 'legacy': legacy}


def _newer(left, right):
    return compare_versions(left, '>', right)


def decide(gpu_state, cuda, installed, record, family, install, version=None, install_without_gpu=False):
    """What the role does on one node.

    ``cuda``: :func:`cuda_major`'s ``(major, how)``; ``installed``: :func:`installed_dcgm`;
    ``record``: the role's record (``{'package', 'version'}``) or None; ``version``: dcgm_version.
    Returns ``{'mode', 'reason', 'package', 'packages', 'version', 'upgrade_from', 'managed',
    'problems', 'warnings'}``; ``packages`` are what the package manager installs (the CUDA package
    and -core, pinned when a version is asked).
    """
    major, how = cuda
    result = {'mode': None, 'reason': '', 'package': None, 'packages': [], 'version': version,
              'upgrade_from': None, 'managed': bool(record and installed), 'cuda_major': major, 'cuda_from': how,
              'installed': installed, 'problems': [], 'warnings': []}
    # Input first: a bad value is refused on every node, also on one the role would skip.
    if version is not None and not re.match(r'^\d+\.\d+\.\d+$', str(version)):
        result['problems'].append('dcgm_version must be an exact DCGM version such as "4.5.0", got %r' % (version,))
        return dict(result, mode='refuse')
    if gpu_state == 'no_gpu' and not install_without_gpu:
        return dict(result, mode='skip', reason='no NVIDIA GPU on the PCI bus (set dcgm_install_without_gpu for an image build)')
    wanted, problem = package_for(major, family) if major is not None else (None, None)
    if installed and not result['managed']:
        # The image's DCGM (or one installed by hand): reported and checked, never replaced.
        result.update(mode='adopt', version=installed['version'], package=installed['cuda_package'],
                      reason='DCGM %s is installed and this role did not install it: adopted, never replaced'
                      % installed['version'])
        if version is not None and _newer(version, installed['version']):
            result['warnings'].append('dcgm_version %s is newer than the adopted DCGM %s, which this role does not upgrade: '
                                      'upgrade it with the image, or remove it to let the role install %s'
                                      % (version, installed['version'], version))
        elif version is not None and _newer(installed['version'], version):
            result['reason'] += '; dcgm_version %s is older: no downgrade' % version
        if wanted and installed['cuda_package'] and installed['cuda_package'] != wanted:
            result['warnings'].append('the adopted DCGM has %s, the driver runs CUDA %d (%s): its diagnostics need %s (%s)'
                                      % (installed['cuda_package'], major, how, wanted, SOURCE_WRONG_CUDA))
        return result
    if installed:
        if version is not None and _newer(installed['version'], version):
            result['problems'].append(
                'dcgm_version %s is older than DCGM %s that this role installed: the role never downgrades DCGM; '
                'set dcgm_version to %s or newer, or leave it empty' % (version, installed['version'], installed['version']))
            return dict(result, mode='refuse', version=installed['version'])
        if version is None or not _newer(version, installed['version']):
            if wanted and installed['cuda_package'] != wanted:
                result['problems'].append(
                    'this role installed %s, the driver now runs CUDA %d (%s): its diagnostics need %s; remove %s '
                    'and run the role again (%s)' % (installed['cuda_package'], major, how, wanted,
                                                     installed['cuda_package'], SOURCE_WRONG_CUDA))
                return dict(result, mode='refuse')
            return dict(result, mode='keep', version=installed['version'], package=installed['cuda_package'],
                        packages=sorted(installed['packages']),
                        reason='DCGM %s, installed by this role, is at the version asked' % installed['version'])
        result['upgrade_from'] = installed['version']
    elif not install:
        return dict(result, mode='absent', reason='DCGM is not installed and dcgm_install is false')
    if major is None:
        result['problems'].append('the CUDA major of the driver is unknown (%s): set dcgm_cuda_major' % how)
        return dict(result, mode='refuse')
    if problem:
        result['problems'].append(problem)
        return dict(result, mode='refuse')
    return dict(result, mode='install', package=wanted, packages=[CORE_PACKAGE, wanted],
                reason=('upgrade DCGM %s to %s' % (installed['version'], version)) if installed
                else 'install %s (%s)' % (wanted, how))


def package_specs(packages, version, manager):
    """The package manager's names for ``packages`` at ``version`` (any version when None):
    ``name=1:4.5.0-*`` for apt (DCGM's epoch), ``name-4.5.0`` for dnf."""
    return package_pins.package_specs(packages, version, manager, epoch=EPOCH)


_SECTION = re.compile(r'^\s*(Local|Hostengine) build info:\s*$', re.I)
_VERSION_LINE = re.compile(r'^\s*Version\s*:\s*(\S+)\s*$')


def parse_dcgmi_version(text):
    """``{'client', 'hostengine'}`` from ``dcgmi -v``: DCGM 4 prints "Local build info:" and, when a
    host engine answers, "Hostengine build info:", each with a "Version : X" line; older dcgmi prints
    one unlabelled block (the client's)."""
    found, section = {'client': None, 'hostengine': None}, 'client'
    for line in (text or '').splitlines():
        header = _SECTION.match(line)
        if header:
            section = 'hostengine' if header.group(1).lower() == 'hostengine' else 'client'
            continue
        match = _VERSION_LINE.match(line)
        if match and found[section] is None:
            found[section] = match.group(1)
    return found


def engine_problems(versions, package_version, engine_required=True):
    """What is wrong with the client and host engine that ``dcgmi -v`` reported, beside the installed
    package's upstream version: each problem says what to do. Without ``engine_required`` (no host
    engine run by the role) none need answer, but one that answers must run the client's version."""
    problems = []
    client, engine = versions.get('client'), versions.get('hostengine')
    if client is None:
        problems.append('dcgmi -v printed no client version: DCGM %s is not installed whole' % package_version)
    elif package_version and client != package_version:
        problems.append('dcgmi is %s, the installed package %s: another dcgmi comes first on PATH' % (client, package_version))
    if engine is None and engine_required:
        problems.append('no DCGM host engine answers (dcgmi -v printed no "Hostengine build info"): start %s' % SERVICE)
    elif engine is not None and client is not None and engine != client:
        problems.append('the DCGM host engine runs %s, the client is %s: restart %s (a host engine left at another version '
                        'answers "API version mismatch", %s)' % (engine, client, SERVICE, SOURCE_MISMATCH))
    return problems
