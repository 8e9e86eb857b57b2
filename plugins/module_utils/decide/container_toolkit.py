# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Decisions of the container_toolkit role, as pure functions (no I/O): every rule is a unit test.

- ``input_problems()``: what the argument spec cannot say about the role's settings, each naming its variable.
- ``decide()``: skip (off, or ``auto`` on a node without a container runtime), refuse (a downgrade, an OS the
  role does not install on) or work: the packages to install at the pinned version, those to hold, the
  runtimes ``nvidia-ctk runtime configure`` is for, and whether the CDI spec must be made again
  (``cdi_spec.staleness()`` against the driver and GPUs that gpu_facts read).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import cdi_spec
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.package_pins import package_specs, upstream_version
from ansible_collections.aistack.gpu_node.plugins.module_utils.versions import compare_versions

# NVIDIA's install guide installs the four together at one version
# (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html).
PACKAGES = ('nvidia-container-toolkit', 'nvidia-container-toolkit-base', 'libnvidia-container-tools', 'libnvidia-container1')
# The runtimes nvidia-ctk configures itself (`nvidia-ctk runtime configure --runtime=...`); podman and CRI-O
# take GPUs through the CDI spec.
CONFIGURED_RUNTIMES = ('docker', 'containerd')
CDI_RUNTIMES = ('podman', 'crio')
RUNTIMES = CONFIGURED_RUNTIMES + CDI_RUNTIMES
# The package manager of each OS family the role installs on (as the dcgm and nvidia_driver roles support them).
MANAGERS = {'debian': 'apt', 'redhat': 'dnf'}
INSTALL_CHOICES = ('auto', 'true', 'false')

_VERSION = re.compile(r'^\d+\.\d+\.\d+(?:~rc\.\d+)?$')
_URL = re.compile(r'^(https?|file)://\S+$')


def install_setting(value):
    """``auto``, ``true`` or ``false`` from container_toolkit_install as YAML gives it; None when it is none of them."""
    text = str(value).strip().lower() if isinstance(value, (bool, str)) else None
    return text if text in INSTALL_CHOICES else None


def reads_the_node(settings, published_runtimes):
    """Whether the plan needs container_toolkit_probe's reading of the node: not where the role is off, nor with
    ``auto`` where the preflight's reading (``ansible_facts.aistack_container_runtimes``) found no container runtime,
    which decide() skips on alone. None there (no preflight in this run) is no reading: the probe looks."""
    install = install_setting(settings['install'])
    return install != 'false' and not (install == 'auto' and published_runtimes is not None and not published_runtimes)


def input_problems(settings):
    """What a spec cannot say about the settings: each problem a sentence naming its variable."""
    problems = []
    if install_setting(settings['install']) is None:
        problems.append('container_toolkit_install must be auto, true or false, got %r' % (settings['install'],))
    if not _VERSION.match(str(settings['version'] or '')):
        problems.append('container_toolkit_version must be an exact toolkit version such as "1.18.0" (quote it in YAML), '
                        'got %r' % (settings['version'],))
    for name in ('repo_url', 'repo_key'):
        if not _URL.match(str(settings[name] or '')):
            problems.append('container_toolkit_%s must be an http(s):// or file:// URL, got %r' % (name, settings[name]))
    path = str(settings['cdi_spec_path'] or '')
    if not path.startswith('/') or not path.endswith(('.yaml', '.json')) or '/../' in path:
        problems.append('container_toolkit_cdi_spec_path must be an absolute path ending in .yaml or .json '
                        '(nvidia-ctk writes the format its name says), got %r' % (settings['cdi_spec_path'],))
    return problems


def installed_toolkit(packages):
    """The toolkit a node has, from ``{name: version}`` of its installed packages: None without any of
    the four, else ``{'version', 'packages', 'complete'}``; the version is nvidia-container-toolkit-base's
    (the package ``nvidia-ctk`` comes from), else the newest of those installed."""
    found = dict((name, version) for name, version in (packages or {}).items() if name in PACKAGES)
    if not found:
        return None
    versions = [upstream_version(version) for version in found.values()]
    version = upstream_version(found.get('nvidia-container-toolkit-base')) or sorted(
        versions, key=lambda item: [int(part) for part in re.findall(r'\d+', item or '0')])[-1]
    return {'version': version, 'packages': found, 'complete': sorted(found) == sorted(PACKAGES)}


def cdi_decision(enabled, path, spec_text_summary, gpu):
    """Whether the CDI spec at ``path`` is made (again): ``{'path', 'state', 'generate', 'reasons',
    'driver_version', 'gpus', 'devices', 'made_for'}``; ``state`` is off (``enabled``, container_toolkit_cdi,
    false), no_driver, missing, stale or current. ``spec_text_summary``: cdi_spec.summary() of the spec on the
    node, None where there is none."""
    driver = (gpu or {}).get('driver') or {}
    driver_version = driver.get('version') or driver.get('userspace_version')
    gpus = [dict(index=item.get('index'), uuid=item.get('uuid')) for item in (gpu or {}).get('gpus') or []]
    cdi = dict(path=path, driver_version=driver_version, gpus=gpus, generate=False, reasons=[],
               devices=spec_text_summary['devices'] if spec_text_summary else [],
               made_for=spec_text_summary['driver_versions'] if spec_text_summary else [])
    if not enabled:
        return dict(cdi, state='off', reasons=['container_toolkit_cdi is false'])
    if not driver_version:
        return dict(cdi, state='no_driver', reasons=['no NVIDIA driver answers on this node (GPU state %s): '
                                                     'no CDI spec to make' % (gpu or {}).get('state', 'unknown')])
    if spec_text_summary is None:
        return dict(cdi, state='missing', generate=True, reasons=['there is no CDI spec at %s' % path])
    reasons = cdi_spec.staleness(spec_text_summary, driver_version, gpus)
    return dict(cdi, state='stale' if reasons else 'current', generate=bool(reasons), reasons=reasons)


def decide(settings, node, gpu, os_family):
    """What the role does on one node.

    ``settings``: the role's settings without the prefix; ``node``: what container_toolkit_probe read
    (``runtimes``: {name: {present, configured}}, ``packages``, ``held``); ``gpu``: gpu_facts' reading;
    ``os_family``: ansible_facts.os_family. The CDI spec's summary is ``node['cdi_summary']`` (None without one).
    Returns ``{'mode', 'reason', 'problems', 'manager', 'version', 'packages', 'installed', 'upgrade_from', 'install',
    'specs', 'hold_missing', 'runtimes', 'configure', 'cdi'}``.
    """
    runtimes = node.get('runtimes') or {}
    found = [name for name in RUNTIMES if (runtimes.get(name) or {}).get('present')]
    install = install_setting(settings['install'])
    result = dict(mode='skip', reason='', problems=[], manager=None, version=settings['version'], packages=list(PACKAGES), installed=None,
                  upgrade_from=None, install=False, specs=[], hold_missing=[], configure=[], cdi=None,
                  runtimes=dict(found=found, configured=[name for name in found if (runtimes.get(name) or {}).get('configured')]))
    if install == 'false':
        return dict(result, reason='container_toolkit_install is false')
    if install == 'auto' and not found:
        return dict(result, reason='no container runtime on this node (%s looked for); set container_toolkit_install '
                                   'to true to install the toolkit anyway' % ', '.join(RUNTIMES))
    # A runtime on a node without an NVIDIA GPU (a login node, a CI runner) has no use for the toolkit.
    if install == 'auto' and (gpu or {}).get('state') == 'no_gpu':
        return dict(result, reason='no NVIDIA GPU on this node (GPU state no_gpu); set container_toolkit_install to true '
                                   'to install the toolkit anyway')
    manager = MANAGERS.get(str(os_family).lower())
    if manager is None:
        return dict(result, mode='refuse', problems=[
            'the role installs the toolkit with apt (Debian, Ubuntu) or dnf (the RHEL family); this node\'s OS family is %s'
            % os_family])
    installed = installed_toolkit(node.get('packages'))
    version = settings['version']
    result.update(manager=manager, installed=installed)
    if installed and compare_versions(installed['version'], '>', version):
        return dict(result, mode='refuse', problems=[
            'container_toolkit_version %s is older than the installed toolkit %s: the role never downgrades it; set '
            'container_toolkit_version to %s or newer' % (version, installed['version'], installed['version'])])
    current = bool(installed and installed['complete'] and installed['version'] == version)
    held = set(node.get('held') or [])
    result.update(
        mode='work', install=not current, specs=[] if current else package_specs(PACKAGES, version, manager),
        upgrade_from=installed['version'] if installed and installed['version'] != version else None,
        hold_missing=sorted(name for name in (installed or {}).get('packages', {}) if name not in held) if settings['hold'] else [],
        configure=[name for name in CONFIGURED_RUNTIMES if name in found and name not in result['runtimes']['configured']],
        cdi=cdi_decision(settings['cdi'], settings['cdi_spec_path'], node.get('cdi_summary'), gpu))
    result['reason'] = ('install the NVIDIA container toolkit %s' % version if not installed
                        else 'upgrade the NVIDIA container toolkit %s to %s' % (installed['version'], version)
                        if result['upgrade_from'] else 'the NVIDIA container toolkit %s is installed' % version)
    return result


def spec_summary(text, parse):
    """cdi_spec.summary() of a spec's text (None where there is no spec); ``parse`` reads YAML (a superset of the
    JSON nvidia-ctk writes for a .json path). Text that does not parse is a spec whose problem is named."""
    if text is None:
        return None
    try:
        spec = parse(text)
    except Exception as error:  # pylint: disable=broad-except
        return dict(cdi_spec.summary(None), problems=['the CDI spec does not parse: %s' % str(error).splitlines()[0]])
    return cdi_spec.summary(spec)
