# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The dcgm role's decisions: the package per CUDA major and OS family, adopt or install, no downgrade,
and the client beside the host engine, fed by real dcgmi -v and dpkg -l outputs."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import dcgm
from conftest import read_h100, read_public

H100 = ('ok', (13, 'nvidia-smi reports CUDA 13.0'))


def dpkg_l(name):
    """``{package: version}`` of a ``dpkg -l`` listing."""
    return dict(line.split()[1:3] for line in read_public(name).splitlines() if line.startswith('ii '))


def node_4_5(cuda='cuda13', version='1:4.5.0-1'):
    return dcgm.installed_dcgm({dcgm.CORE_PACKAGE: version, 'datacenter-gpu-manager-4-' + cuda: version, 'bash': '5.2'})


ROLE_RECORD = {'managed_by': 'aistack.gpu_node.dcgm', 'package': 'datacenter-gpu-manager-4-cuda13', 'version': '4.5.0'}


# The CUDA major of the driver.

def test_cuda_major_from_the_h100_host_nvidia_smi():
    banner = read_h100('nvidia-smi.txt')
    assert 'CUDA Version: 13.0' in banner
    assert dcgm.cuda_major('13.0') == (13, 'nvidia-smi reports CUDA 13.0')
    assert dcgm.cuda_major('12.8', '570.172.08')[0] == 12


@pytest.mark.parametrize('driver, major', [('580.95.05', 13), ('575.57.08', 12), ('535.261.03', 12),
                                           ('470.256.02', 11), ('440.33.01', None)])
def test_cuda_major_from_the_driver_version_where_nvidia_smi_gives_none(driver, major):
    found, how = dcgm.cuda_major(None, driver)
    assert found == major
    if major:
        assert 'minor-version compatibility floor' in how and driver in how


def test_cuda_major_unknown_without_either():
    assert dcgm.cuda_major(None, None) == (
        None, 'the driver answers no CUDA version (nvidia-smi) and no driver version is known')


# The package per CUDA major and OS family.

@pytest.mark.parametrize('major, family, package', [
    (12, 'debian', 'datacenter-gpu-manager-4-cuda12'), (13, 'debian', 'datacenter-gpu-manager-4-cuda13'),
    (12, 'redhat', 'datacenter-gpu-manager-4-cuda12'), (13, 'redhat', 'datacenter-gpu-manager-4-cuda13'),
    (11, 'debian', 'datacenter-gpu-manager-4-cuda11')])
def test_package_per_cuda_major_and_family(major, family, package):
    assert dcgm.package_for(major, family) == (package, None)


def test_package_refused_for_an_unknown_major_or_family():
    assert dcgm.package_for(10, 'debian')[1] == ('DCGM 4 ships packages for CUDA 11/12/13, not for the driver\'s CUDA 10 '
                                                 '(set dcgm_cuda_major, or upgrade the driver)')
    assert 'this node\'s OS family is suse' in dcgm.package_for(13, 'suse')[1]


def test_package_specs_per_manager():
    names = [dcgm.CORE_PACKAGE, 'datacenter-gpu-manager-4-cuda13']
    assert dcgm.package_specs(names, '4.5.0', 'apt') == ['datacenter-gpu-manager-4-core=1:4.5.0-*',
                                                         'datacenter-gpu-manager-4-cuda13=1:4.5.0-*']
    assert dcgm.package_specs(names, '4.5.0', 'dnf') == ['datacenter-gpu-manager-4-core-4.5.0',
                                                         'datacenter-gpu-manager-4-cuda13-4.5.0']
    assert dcgm.package_specs(names, None, 'apt') == names


# What is installed.

def test_installed_dcgm_4_7_split_packages():
    installed = dcgm.installed_dcgm(dpkg_l('dpkg-l-dcgm-4.7.0.txt'))
    assert installed['version'] == '4.7.0' and installed['cuda_package'] == 'datacenter-gpu-manager-4-cuda13'
    assert installed['cuda_major'] == 13 and not installed['legacy']
    # Every package of the install, held together: the ones 4.7 split out too.
    assert {'dcgmi', 'libdcgm', 'nv-hostengine', 'datacenter-gpu-manager-4-module-diag'} <= set(installed['packages'])
    assert len(installed['packages']) == 21


def test_installed_dcgm_3_and_none():
    legacy = dcgm.installed_dcgm({'datacenter-gpu-manager': '1:3.3.5', 'libc6': '2.36'})
    assert legacy == {'version': '3.3.5', 'packages': {'datacenter-gpu-manager': '1:3.3.5'}, 'cuda_package': None,
                      'cuda_major': None, 'legacy': True}
    assert dcgm.installed_dcgm({'libc6': '2.36'}) is None
    assert dcgm.upstream_version('4.5.0-1') == '4.5.0' and dcgm.upstream_version('') is None


# The decision.

def test_no_gpu_is_skipped_with_its_reason():
    decision = dcgm.decide('no_gpu', (None, 'x'), None, None, 'debian', install=True)
    assert decision['mode'] == 'skip' and decision['reason'].startswith('no NVIDIA GPU on the PCI bus')


def test_absent_and_install_off_is_reported_not_installed():
    decision = dcgm.decide(*H100, installed=None, record=None, family='debian', install=False)
    assert decision['mode'] == 'absent' and decision['packages'] == [] and decision['problems'] == []


def test_install_takes_the_package_of_the_driver_cuda_major():
    decision = dcgm.decide(*H100, installed=None, record=None, family='debian', install=True, version='4.5.0')
    assert decision['mode'] == 'install' and decision['package'] == 'datacenter-gpu-manager-4-cuda13'
    assert decision['packages'] == ['datacenter-gpu-manager-4-core', 'datacenter-gpu-manager-4-cuda13']
    image_build = dcgm.decide('no_gpu', (12, 'dcgm_cuda_major is 12'), None, None, 'redhat', True, None, True)
    assert image_build['mode'] == 'install' and image_build['package'] == 'datacenter-gpu-manager-4-cuda12'


def test_install_refused_without_a_cuda_major_or_a_known_family():
    unknown = dcgm.decide('gpu_no_driver', (None, 'no driver'), None, None, 'debian', True)
    assert unknown['mode'] == 'refuse' and unknown['problems'] == [
        'the CUDA major of the driver is unknown (no driver): set dcgm_cuda_major']
    suse = dcgm.decide(*H100, installed=None, record=None, family='suse', install=True)
    assert suse['mode'] == 'refuse' and 'OS family is suse' in suse['problems'][0]


def test_a_newer_dcgm_of_the_image_is_adopted_never_downgraded():
    decision = dcgm.decide(*H100, installed=node_4_5(version='1:4.7.0-1'), record=None, family='debian', install=True,
                           version='4.5.0')
    assert decision['mode'] == 'adopt' and decision['packages'] == [] and decision['problems'] == []
    assert decision['version'] == '4.7.0' and not decision['managed']
    assert decision['reason'] == ('DCGM 4.7.0 is installed and this role did not install it: adopted, never replaced; '
                                  'dcgm_version 4.5.0 is older: no downgrade')


def test_an_older_dcgm_of_the_image_is_adopted_with_a_warning():
    decision = dcgm.decide(*H100, installed=node_4_5(), record=None, family='debian', install=True, version='4.7.0')
    assert decision['mode'] == 'adopt' and decision['packages'] == []
    assert decision['warnings'][0].startswith('dcgm_version 4.7.0 is newer than the adopted DCGM 4.5.0')


def test_an_adopted_dcgm_for_the_wrong_cuda_major_is_named():
    decision = dcgm.decide(*H100, installed=node_4_5('cuda12'), record=None, family='debian', install=False)
    assert decision['mode'] == 'adopt'
    assert decision['warnings'] == [
        'the adopted DCGM has datacenter-gpu-manager-4-cuda12, the driver runs CUDA 13 (nvidia-smi reports CUDA 13.0): '
        'its diagnostics need datacenter-gpu-manager-4-cuda13 (%s)' % dcgm.SOURCE_WRONG_CUDA]


def test_a_downgrade_of_the_role_own_dcgm_is_refused():
    decision = dcgm.decide(*H100, installed=node_4_5(), record=ROLE_RECORD, family='debian', install=True, version='4.4.2')
    assert decision['mode'] == 'refuse' and decision['packages'] == []
    assert decision['problems'] == ['dcgm_version 4.4.2 is older than DCGM 4.5.0 that this role installed: the role never '
                                    'downgrades DCGM; set dcgm_version to 4.5.0 or newer, or leave it empty']


def test_the_role_own_dcgm_is_kept_or_upgraded():
    kept = dcgm.decide(*H100, installed=node_4_5(), record=ROLE_RECORD, family='debian', install=False, version='4.5.0')
    assert kept['mode'] == 'keep' and kept['managed'] and kept['upgrade_from'] is None
    assert dcgm.decide(*H100, installed=node_4_5(), record=ROLE_RECORD, family='debian', install=True)['mode'] == 'keep'
    upgrade = dcgm.decide(*H100, installed=node_4_5(), record=ROLE_RECORD, family='debian', install=True, version='4.7.0')
    assert upgrade['mode'] == 'install' and upgrade['upgrade_from'] == '4.5.0' and upgrade['managed']
    assert upgrade['reason'] == 'upgrade DCGM 4.5.0 to 4.7.0'


def test_the_role_own_dcgm_for_another_cuda_major_is_refused():
    decision = dcgm.decide(*H100, installed=node_4_5('cuda12'), record=ROLE_RECORD, family='debian', install=True)
    assert decision['mode'] == 'refuse'
    assert decision['problems'][0].startswith('this role installed datacenter-gpu-manager-4-cuda12, the driver now runs CUDA 13')


@pytest.mark.parametrize('version', ['4.5', '4.5.0-1', 'latest', 4.5])
def test_a_version_that_is_not_exact_is_refused(version):
    decision = dcgm.decide(*H100, installed=None, record=None, family='debian', install=True, version=version)
    assert decision['mode'] == 'refuse'
    assert decision['problems'] == ['dcgm_version must be an exact DCGM version such as "4.5.0", got %r' % (version,)]


def test_a_version_that_is_not_exact_is_refused_on_a_node_the_role_skips_too():
    """Bad input is refused wherever it is given, not only where a GPU happens to be."""
    decision = dcgm.decide('no_gpu', (None, 'x'), None, None, 'debian', install=True, version='4.5')
    assert decision['mode'] == 'refuse'


# The client and the host engine.

def test_dcgmi_v_of_4_7_0_client_and_host_engine_match():
    versions = dcgm.parse_dcgmi_version(read_public('dcgmi-v-4.7.0.txt'))
    assert versions == {'client': '4.7.0', 'hostengine': '4.7.0'}
    assert dcgm.engine_problems(versions, '4.7.0') == []


def test_host_engine_left_at_the_old_version_after_an_upgrade():
    # The 4.7.0 output with the host engine's block at 4.6.1: the engine not restarted after the upgrade.
    text = read_public('dcgmi-v-4.7.0.txt')
    at = text.index('Hostengine build info:')
    versions = dcgm.parse_dcgmi_version(text[:at] + text[at:].replace('4.7.0', '4.6.1'))
    assert versions == {'client': '4.7.0', 'hostengine': '4.6.1'}
    assert dcgm.engine_problems(versions, '4.7.0') == [
        'the DCGM host engine runs 4.6.1, the client is 4.7.0: restart nvidia-dcgm.service (a host engine left at another '
        'version answers "API version mismatch", https://github.com/NVIDIA/DCGM/issues/314)']


def test_no_host_engine_is_a_problem_only_where_the_role_runs_one():
    versions = dcgm.parse_dcgmi_version(read_public('dcgmi-v-3.3.5-no-hostengine.txt'))
    assert versions == {'client': '3.3.5', 'hostengine': None}
    assert dcgm.engine_problems(versions, '3.3.5') == [
        'no DCGM host engine answers (dcgmi -v printed no "Hostengine build info"): start nvidia-dcgm.service']
    assert dcgm.engine_problems(versions, '3.3.5', engine_required=False) == []


def test_a_client_of_another_install_and_no_client():
    versions = dcgm.parse_dcgmi_version(read_public('dcgmi-v-4.7.0.txt'))
    assert dcgm.engine_problems(versions, '4.5.0') == [
        'dcgmi is 4.7.0, the installed package 4.5.0: another dcgmi comes first on PATH']
    assert dcgm.engine_problems({'client': None, 'hostengine': None}, '4.5.0', engine_required=False) == [
        'dcgmi -v printed no client version: DCGM 4.5.0 is not installed whole']
