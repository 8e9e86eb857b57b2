# -*- coding: utf-8 -*-
"""The container_toolkit role's decisions: input, skip, refusal of a downgrade, install, hold, runtimes, CDI spec."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest
import yaml

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import container_toolkit as ct
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import package_pins

from test_cdi_spec import GPUS, SPEC, UUID

SETTINGS = dict(install='auto', version='1.18.0', repo_url='https://nvidia.github.io/libnvidia-container/stable',
                repo_key='https://nvidia.github.io/libnvidia-container/gpgkey', repo_trusted=False, hold=True,
                restart_runtimes=False, cdi=True, cdi_spec_path='/etc/cdi/nvidia.yaml')
GPU = {"state": "ok", "gpus": GPUS, "driver": {"version": "580.159.04", "userspace_version": "580.159.04"}}
INSTALLED = dict((name, '1.18.0-1') for name in ct.PACKAGES)


def node(runtimes=('podman',), configured=(), packages=None, held=(), spec='SPEC'):
    """What the probe reads; ``spec`` is the CDI judge's test spec unless another (None: no spec) is given."""
    spec = SPEC if spec == 'SPEC' else spec
    return {'runtimes': dict((name, {'present': name in runtimes, 'configured': name in configured}) for name in ct.RUNTIMES),
            'packages': dict(packages or {}), 'held': list(held), 'cdi_summary': None if spec is None else ct.spec_summary(
                yaml.safe_dump(spec), yaml.safe_load)}


def settings(**changes):
    return dict(SETTINGS, **changes)


@pytest.mark.parametrize('name, value, words', [
    ('install', 'sometimes', "container_toolkit_install must be auto, true or false, got 'sometimes'"),
    ('install', 1, 'container_toolkit_install must be auto, true or false, got 1'),
    ('version', '1.18', 'container_toolkit_version must be an exact toolkit version such as "1.18.0"'),
    ('version', None, 'container_toolkit_version must be an exact toolkit version'),
    ('repo_url', 'nvidia.github.io/libnvidia-container', 'container_toolkit_repo_url must be an http(s):// or file:// URL'),
    ('repo_key', 'ftp://example.invalid/key', 'container_toolkit_repo_key must be an http(s):// or file:// URL'),
    ('cdi_spec_path', 'etc/cdi/nvidia.yaml', 'container_toolkit_cdi_spec_path must be an absolute path ending in .yaml or .json'),
    ('cdi_spec_path', '/etc/cdi/nvidia.conf', 'container_toolkit_cdi_spec_path must be an absolute path'),
])
def test_bad_input_is_named(name, value, words):
    problems = ct.input_problems(settings(**{name: value}))
    assert len(problems) == 1 and words in problems[0]


def test_good_input_and_every_spelling_of_install():
    assert ct.input_problems(SETTINGS) == []
    assert ct.input_problems(settings(repo_url='file:///srv/ctk', cdi_spec_path='/var/run/cdi/nvidia.json')) == []
    assert [ct.install_setting(value) for value in (True, False, 'True', 'auto', ' false ')] == [
        'true', 'false', 'true', 'auto', 'false']


def test_off_and_auto_without_a_runtime_skip_with_one_line():
    off = ct.decide(settings(install=False), {}, GPU, 'Debian')
    assert off['mode'] == 'skip' and off['reason'] == 'container_toolkit_install is false'
    alone = ct.decide(SETTINGS, node(runtimes=()), GPU, 'Debian')
    assert alone['mode'] == 'skip' and alone['reason'].startswith('no container runtime on this node (docker, containerd, '
                                                                  'podman, crio looked for)')
    assert '\n' not in alone['reason'] and alone['cdi'] is None and not alone['install']
    # auto on a node with a runtime but no GPU (a login node, a CI runner): left alone too.
    no_gpu = ct.decide(SETTINGS, node(), {"state": "no_gpu", "gpus": [], "driver": {}}, 'Debian')
    assert no_gpu['mode'] == 'skip' and no_gpu['reason'].startswith('no NVIDIA GPU on this node (GPU state no_gpu)')
    assert ct.decide(settings(install='true'), node(), {"state": "no_gpu", "gpus": [], "driver": {}}, 'Debian')['mode'] == 'work'
    # Asked for, a node without a runtime gets the toolkit (an image build).
    assert ct.decide(settings(install='true'), node(runtimes=()), GPU, 'Debian')['mode'] == 'work'


def test_the_node_is_read_unless_off_or_the_preflight_found_no_runtime_for_auto():
    assert not ct.reads_the_node(settings(install=False), None)
    # auto: the preflight's reading (ansible_facts.aistack_container_runtimes) found none; without it, the probe looks.
    assert not ct.reads_the_node(SETTINGS, [])
    assert ct.reads_the_node(SETTINGS, None) and ct.reads_the_node(SETTINGS, ['podman'])
    # Asked for, the toolkit goes on a node without a runtime: the probe reads its packages and spec.
    assert ct.reads_the_node(settings(install='true'), []) and ct.reads_the_node(settings(install=True), None)
    # What decide() gives without the probe's reading is what it gives on the probe's reading of no runtime.
    assert ct.decide(SETTINGS, {}, GPU, 'Debian') == ct.decide(SETTINGS, node(runtimes=()), GPU, 'Debian')


def test_a_fresh_node_gets_the_four_packages_at_the_pinned_version_and_the_spec():
    decision = ct.decide(SETTINGS, node(runtimes=('docker', 'podman'), spec=None), GPU, 'Debian')
    assert decision['mode'] == 'work' and decision['manager'] == 'apt' and decision['install']
    assert decision['specs'] == ['%s=1.18.0-*' % name for name in ct.PACKAGES]
    assert decision['reason'] == 'install the NVIDIA container toolkit 1.18.0' and decision['upgrade_from'] is None
    assert decision['runtimes'] == {'found': ['docker', 'podman'], 'configured': []} and decision['configure'] == ['docker']
    assert decision['cdi']['state'] == 'missing' and decision['cdi']['generate']
    assert decision['hold_missing'] == []
    assert ct.decide(SETTINGS, node(), GPU, 'RedHat')['specs'] == ['%s-1.18.0' % name for name in ct.PACKAGES]


def test_a_node_as_the_role_left_it_needs_nothing():
    decision = ct.decide(SETTINGS, node(runtimes=('docker', 'containerd', 'podman'), configured=('docker', 'containerd'),
                                        packages=INSTALLED, held=ct.PACKAGES), GPU, 'Debian')
    assert decision['mode'] == 'work' and not decision['install'] and decision['specs'] == []
    assert decision['hold_missing'] == [] and decision['configure'] == []
    assert decision['cdi']['state'] == 'current' and not decision['cdi']['generate'] and decision['cdi']['reasons'] == []
    assert decision['cdi']['made_for'] == ['580.159.04'] and UUID in decision['cdi']['devices']
    assert decision['reason'] == 'the NVIDIA container toolkit 1.18.0 is installed'


def test_what_is_not_held_is_held_unless_the_hold_is_off():
    half = node(packages=INSTALLED, held=ct.PACKAGES[:2])
    assert ct.decide(SETTINGS, half, GPU, 'Debian')['hold_missing'] == sorted(ct.PACKAGES[2:])
    assert ct.decide(settings(hold=False), half, GPU, 'Debian')['hold_missing'] == []


def test_a_newer_version_upgrades_an_older_one_is_refused_naming_the_variable():
    upgrade = ct.decide(settings(version='1.18.1'), node(packages=INSTALLED), GPU, 'Debian')
    assert upgrade['install'] and upgrade['upgrade_from'] == '1.18.0'
    assert upgrade['reason'] == 'upgrade the NVIDIA container toolkit 1.18.0 to 1.18.1'
    refused = ct.decide(settings(version='1.17.8'), node(packages=INSTALLED), GPU, 'Debian')
    assert refused['mode'] == 'refuse' and refused['problems'] == [
        'container_toolkit_version 1.17.8 is older than the installed toolkit 1.18.0: the role never downgrades it; set '
        'container_toolkit_version to 1.18.0 or newer']
    # A package of the four missing: installed again at the version asked.
    partial = dict(INSTALLED)
    del partial['libnvidia-container-tools']
    assert ct.decide(SETTINGS, node(packages=partial), GPU, 'Debian')['install']


def test_an_os_family_without_apt_or_dnf_is_refused():
    refused = ct.decide(SETTINGS, node(), GPU, 'Suse')
    assert refused['mode'] == 'refuse' and 'this node\'s OS family is Suse' in refused['problems'][0]


def test_a_driver_update_or_another_gpu_makes_the_spec_again():
    updated = dict(GPU, driver={'version': '580.200.01'})
    decision = ct.decide(SETTINGS, node(packages=INSTALLED, held=ct.PACKAGES), updated, 'Debian')
    assert decision['cdi']['state'] == 'stale' and decision['cdi']['generate']
    assert decision['cdi']['reasons'] == ['the CDI spec was made for driver 580.159.04, the node runs 580.200.01']
    more = dict(GPU, gpus=GPUS + [{'index': 1, 'uuid': 'GPU-00000000-0000-0000-0000-000000000001'}])
    assert ct.decide(SETTINGS, node(packages=INSTALLED), more, 'Debian')['cdi']['state'] == 'stale'


def test_a_spec_that_does_not_parse_is_made_again_and_no_driver_means_no_spec():
    summary = ct.spec_summary('devices: [unclosed', yaml.safe_load)
    assert summary['problems'][0].startswith('the CDI spec does not parse: ')
    cdi = ct.cdi_decision(True, '/etc/cdi/nvidia.yaml', summary, GPU)
    assert cdi['state'] == 'stale' and cdi['generate']
    assert ct.spec_summary(None, yaml.safe_load) is None
    no_gpu = ct.cdi_decision(True, '/etc/cdi/nvidia.yaml', None, {'state': 'no_gpu', 'gpus': [], 'driver': {}})
    assert no_gpu['state'] == 'no_driver' and not no_gpu['generate']
    assert no_gpu['reasons'] == ['no NVIDIA driver answers on this node (GPU state no_gpu): no CDI spec to make']
    off = ct.cdi_decision(False, '/etc/cdi/nvidia.yaml', None, GPU)
    assert off['state'] == 'off' and not off['generate']


def test_the_installed_version_is_the_base_package_s():
    assert ct.installed_toolkit({'libc6': '2.36'}) is None
    mixed = dict(INSTALLED, **{'nvidia-container-toolkit-base': '1.18.1-1'})
    assert ct.installed_toolkit(mixed)['version'] == '1.18.1'
    only_lib = ct.installed_toolkit({'libnvidia-container1': '1.17.8-1', 'libnvidia-container-tools': '1.9.0-1'})
    assert only_lib['version'] == '1.17.8' and not only_lib['complete']


def test_package_pins_spell_apt_and_dnf_versions():
    assert package_pins.package_specs(['a'], '1.18.0', 'apt') == ['a=1.18.0-*']
    assert package_pins.package_specs(['a'], '4.5.0', 'apt', epoch=1) == ['a=1:4.5.0-*']
    assert package_pins.package_specs(['a'], '1.18.0', 'dnf') == ['a-1.18.0']
    assert package_pins.upstream_version('1:4.5.0-1') == '4.5.0'
