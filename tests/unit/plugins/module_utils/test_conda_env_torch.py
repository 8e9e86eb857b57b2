# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The torch wheel variant of an environment's pip section, fitted to the node's driver.

Drivers are real ones: the H200 host's (recorded /proc/driver/nvidia/version), Debian 12's 535
(the DKMS status recorded in the driver scenario's node) and a V100 host's 470 (public nvidia-smi).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

import pytest

from conftest import read_h200, read_public
from ansible_collections.aistack.gpu_node.plugins.module_utils import conda_env as ce
from ansible_collections.aistack.gpu_node.plugins.module_utils import cuda_checks
from ansible_collections.aistack.gpu_node.plugins.module_utils.nvidia_parsers import parse_proc_driver_version

H200_DRIVER = parse_proc_driver_version(read_h200('proc-driver-nvidia-version.txt'))['version']
H200_TORCH = re.search(r'^torch (\S+)', read_h200('torch-info.txt'), re.M).group(1)
DEBIAN12_DRIVER = re.search(r'nvidia-current/(535\.\d+\.\d+)', read_public('dkms-status-debian12-container.txt')).group(1)
V100_DRIVER = re.search(r'Driver Version: (\S+)', read_public('nvidia-smi-v100-470.txt')).group(1)
SOURCE = 'env torch (files/torch.yml)'


def test_recorded_inputs():
    assert (H200_DRIVER, H200_TORCH, DEBIAN12_DRIVER, V100_DRIVER) == ('580.159.04', '2.11.0+cu130', '535.309.01', '470.182.03')


def test_variant_for_driver_prefers_full_support_then_minor_compatibility():
    assert cuda_checks.torch_variant_for_driver('2.11', H200_DRIVER) == {
        'series': '2.11', 'variant': 'cu130', 'cuda': '13.0', 'support': 'full'}
    # 535 fully supports CUDA 12.2 only: no 2.11 build; cu128 runs by minor-version compatibility.
    assert cuda_checks.torch_variant_for_driver('2.11', DEBIAN12_DRIVER)['variant'] == 'cu128'
    assert cuda_checks.torch_variant_for_driver('2.11', DEBIAN12_DRIVER)['support'] == 'minor-compat'
    # 2.12 dropped cu128: the newest 12.x build is cu126.
    assert cuda_checks.torch_variant_for_driver('2.12', DEBIAN12_DRIVER)['variant'] == 'cu126'
    assert cuda_checks.torch_variant_for_driver('2.11', V100_DRIVER)['variant'] is None
    assert cuda_checks.torch_variant_for_driver('2.7', V100_DRIVER) == {
        'series': '2.7', 'variant': 'cu118', 'cuda': '11.8', 'support': 'minor-compat'}
    assert cuda_checks.torch_variant_for_driver('1.13', H200_DRIVER) is None


def test_auto_adds_the_index_of_the_variant_that_fits():
    lines, choice, warnings = ce.choose_torch_index(['torch==2.11.0', 'numpy'], SOURCE, H200_DRIVER)
    assert lines == ['--extra-index-url https://download.pytorch.org/whl/cu130', 'torch==2.11.0', 'numpy']
    assert choice == {'series': '2.11', 'variant': 'cu130', 'cuda': '13.0', 'support': 'full',
                      'chosen_by': 'driver 580.159.04', 'index': 'https://download.pytorch.org/whl/cu130'}
    assert warnings == []


def test_auto_on_an_older_driver_warns_about_minor_compatibility():
    lines, choice, warnings = ce.choose_torch_index(['torchvision==0.26.0', 'torch==2.11.0'], SOURCE, DEBIAN12_DRIVER,
                                                    index_base='https://mirror.example/pytorch/whl/')
    assert lines[0] == '--extra-index-url https://mirror.example/pytorch/whl/cu128'
    assert choice['support'] == 'minor-compat' and 'minor-version compatibility' in warnings[0]


def test_unpinned_torch_is_fitted_for_the_newest_series_with_a_warning():
    lines, choice, warnings = ce.choose_torch_index(['torch'], SOURCE, H200_DRIVER)
    assert choice['series'] == cuda_checks.torch_series_known()[-1] and 'not pinned' in warnings[0]


def test_a_variant_named_by_the_spec_is_kept_and_checked():
    spec_lines = ['--index-url https://download.pytorch.org/whl/cu130', 'torch==2.11.0']
    lines, choice, warnings = ce.choose_torch_index(spec_lines, SOURCE, H200_DRIVER)
    assert lines == spec_lines and choice['chosen_by'] == 'spec' and choice['support'] == 'full'
    lines, choice, _w = ce.choose_torch_index(['torch==%s' % H200_TORCH], SOURCE, H200_DRIVER)
    assert lines == ['torch==2.11.0+cu130'] and choice['variant'] == 'cu130'
    with pytest.raises(ce.CondaEnvError) as error:
        ce.choose_torch_index(spec_lines, SOURCE, DEBIAN12_DRIVER)
    assert str(error.value).startswith("env torch (files/torch.yml): torch cu130 wheels (torch 2.11.0) need a newer driver "
                                       "than this node's 535.309.01. Fix: use cu128")


def test_an_explicit_variant_must_exist_for_the_series_and_fit_the_driver():
    lines, choice, _w = ce.choose_torch_index(['torch==2.11.0'], SOURCE, H200_DRIVER, requested='cu126')
    assert lines[0].endswith('/whl/cu126') and choice['chosen_by'] == 'torch_cuda_variant'
    lines, choice, _w = ce.choose_torch_index(['torch==2.11.0'], SOURCE, None, requested='cpu')
    assert lines[0] == '--extra-index-url https://download.pytorch.org/whl/cpu' and choice['support'] == 'cpu'
    with pytest.raises(ce.CondaEnvError, match='torch 2.11 has no cu118 wheels; its CUDA variants are cu126, cu128, cu130'):
        ce.choose_torch_index(['torch==2.11.0'], SOURCE, H200_DRIVER, requested='cu118')
    with pytest.raises(ce.CondaEnvError, match="torch_cuda_variant 'cuda13': expected auto, none, cpu"):
        ce.choose_torch_index(['torch==2.11.0'], SOURCE, H200_DRIVER, requested='cuda13')


def test_no_fit_and_unknown_series_are_refused_with_the_fix():
    with pytest.raises(ce.CondaEnvError, match='driver 470.182.03 runs none of the CUDA builds of torch 2.11'):
        ce.choose_torch_index(['torch==2.11.0'], SOURCE, V100_DRIVER)
    with pytest.raises(ce.CondaEnvError, match='torch 1.13 is not in the wheel table'):
        ce.choose_torch_index(['torch==1.13.1'], SOURCE, H200_DRIVER)


@pytest.mark.parametrize('lines, requested, driver', [
    (['six==1.17.0'], 'auto', H200_DRIVER),
    (['torch==2.11.0'], 'none', H200_DRIVER),
])
def test_sections_without_torch_or_with_none_are_left_alone(lines, requested, driver):
    assert ce.choose_torch_index(lines, SOURCE, driver, requested) == (lines, None, [])


def test_unknown_driver_leaves_the_section_and_says_why():
    lines, choice, warnings = ce.choose_torch_index(['torch==2.11.0'], SOURCE, None)
    assert lines == ['torch==2.11.0'] and choice is None and 'driver version is unknown' in warnings[0]


def test_the_chosen_index_is_part_of_the_rendered_spec():
    spec = {'channels': ['conda-forge'], 'dependencies': ['python=3.11', 'pip', {'pip': ['torch==2.11.0']}]}
    environment = ce.normalize_environment(spec, SOURCE, driver_version=H200_DRIVER)
    assert environment['torch_variant']['variant'] == 'cu130'
    assert '      - "--extra-index-url https://download.pytorch.org/whl/cu130"' in ce.render_environment('torch', environment)
    assert ce.normalize_environment(spec, SOURCE, driver_version=H200_DRIVER, torch_variant='none')['pip'] == ['torch==2.11.0']


def test_a_node_without_a_gpu_gets_the_cpu_build():
    lines, choice, warnings = ce.choose_torch_index(['torch', 'ipykernel'], SOURCE, driver_version=None, gpu_present=False)
    assert lines == ['--extra-index-url https://download.pytorch.org/whl/cpu', 'torch', 'ipykernel']
    assert choice == {'variant': 'cpu', 'series': None, 'support': 'cpu', 'chosen_by': 'no NVIDIA GPU on the node',
                      'index': 'https://download.pytorch.org/whl/cpu'}
    assert warnings == []


def test_a_variant_named_by_the_user_wins_over_the_missing_gpu():
    _lines, choice, _warnings = ce.choose_torch_index(['torch==2.11.0'], SOURCE, requested='cu130', gpu_present=False)
    assert choice['variant'] == 'cu130' and choice['chosen_by'] == 'torch_cuda_variant'


def test_an_unknown_gpu_state_leaves_the_variant_to_the_driver():
    # No facts gathered: neither "no GPU" nor a driver is known, so nothing is chosen (and it says so).
    lines, choice, warnings = ce.choose_torch_index(['torch'], SOURCE)
    assert lines == ['torch'] and choice is None
    assert 'the driver version is unknown' in warnings[0]
    # A GPU and its driver: the driver decides, as before.
    assert ce.choose_torch_index(['torch==2.11.0'], SOURCE, H200_DRIVER, gpu_present=True)[1]['variant'] == 'cu130'
