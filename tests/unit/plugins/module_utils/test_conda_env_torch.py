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

from conftest import read_h100, read_h200, read_public
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import env as ce
from ansible_collections.aistack.gpu_node.plugins.module_utils.cuda import checks as cuda_checks
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.nvidia_parsers import parse_proc_driver_version, parse_query_gpu_csv

H200_DRIVER = parse_proc_driver_version(read_h200('proc-driver-nvidia-version.txt'))['version']
H200_TORCH = re.search(r'^torch (\S+)', read_h200('torch-info.txt'), re.M).group(1)
DEBIAN12_DRIVER = re.search(r'nvidia-current/(535\.\d+\.\d+)', read_public('dkms-status-debian12-container.txt')).group(1)
V100_DRIVER = re.search(r'Driver Version: (\S+)', read_public('nvidia-smi-v100-470.txt')).group(1)
SOURCE = 'env torch (files/torch.yml)'


def test_recorded_inputs():
    assert (H200_DRIVER, H200_TORCH, DEBIAN12_DRIVER, V100_DRIVER) == ('580.159.04', '2.11.0+cu130', '535.309.01', '470.182.03')


def test_variant_for_driver_prefers_full_support_then_minor_compatibility():
    # No GPU given: the driver alone decides.
    assert cuda_checks.torch_variant_for_node('2.11', H200_DRIVER) == {
        'series': '2.11', 'variant': 'cu130', 'cuda': '13.0', 'support': 'full', 'without_kernels': [], 'unconfirmed': []}
    # 535 fully supports CUDA 12.2 only: no 2.11 build; cu128 runs by minor-version compatibility.
    assert cuda_checks.torch_variant_for_node('2.11', DEBIAN12_DRIVER)['variant'] == 'cu128'
    assert cuda_checks.torch_variant_for_node('2.11', DEBIAN12_DRIVER)['support'] == 'minor-compat'
    # 2.12 dropped cu128: the newest 12.x build is cu126.
    assert cuda_checks.torch_variant_for_node('2.12', DEBIAN12_DRIVER)['variant'] == 'cu126'
    assert cuda_checks.torch_variant_for_node('2.11', V100_DRIVER)['variant'] is None
    assert cuda_checks.torch_variant_for_node('2.7', V100_DRIVER)['variant'] == 'cu118'
    assert cuda_checks.torch_variant_for_node('2.7', V100_DRIVER)['support'] == 'minor-compat'
    assert cuda_checks.torch_variant_for_node('1.13', H200_DRIVER) is None


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


# ---------------------------------------------------------------------------
# The variant fitted to every GPU of the node, not to the driver alone
# ---------------------------------------------------------------------------
# GPUs as gpu_facts publishes them (aistack_gpu.gpus), read from `nvidia-smi --query-gpu=... --format=csv`
# output: the H100 host's recorded one, a public TITAN V + RTX 5880 node's, and for the rest the same
# command's output for the product names the driver reports (the compute capabilities of
# GPU_COMPUTE_CAPABILITY). Drivers: the H100 host's 580.159.04, 580.95.05 (CUDA 13.0.2's), Debian 12's
# 535.309.01 (R535, out of support), 525.147.05 (R525) and 570.86.15 (the TITAN V node's).
H100_DRIVER = parse_proc_driver_version(read_h100('proc-driver-nvidia-version.txt'))['version']
TITANV_NODE = read_public('nvidia-smi-query-gpu-titanv-rtx5880.csv')
QUERY_HEADER = 'index, name, compute_cap\n'


def node_gpus(query_csv):
    """``aistack_gpu.gpus`` entries (index, name, compute capability from the driver) of a --query-gpu CSV."""
    return [{'index': int(row['index']), 'name': row['name'], 'compute_capability': row['compute_cap'],
             'compute_capability_from': 'driver'} for row in parse_query_gpu_csv(query_csv)]


H100 = node_gpus(read_h100('nvidia-smi-query-gpu.csv'))
V100 = node_gpus(QUERY_HEADER + '0, Tesla V100-SXM2-32GB, 7.0\n')
T4 = node_gpus(QUERY_HEADER + '0, Tesla T4, 7.5\n')
A100 = node_gpus(QUERY_HEADER + '0, NVIDIA A100-SXM4-80GB, 8.0\n')
B200 = node_gpus(QUERY_HEADER + '0, NVIDIA B200, 10.0\n')
A100_AND_V100 = node_gpus(QUERY_HEADER + '0, NVIDIA A100-SXM4-80GB, 8.0\n1, Tesla V100-SXM2-32GB, 7.0\n')
V100_LABEL = 'GPU 0 (Tesla V100-SXM2-32GB, compute capability 7.0)'


def fitted(pip_lines, driver, gpus, requested='auto'):
    return ce.choose_torch_index(pip_lines, SOURCE, driver, requested, gpus=gpus)


def refusal(pip_lines, driver, gpus, requested='auto'):
    with pytest.raises(ce.CondaEnvError) as error:
        fitted(pip_lines, driver, gpus, requested)
    return str(error.value)


def test_recorded_h100_host():
    assert (H100_DRIVER, H100) == ('580.159.04', [{'index': 0, 'name': 'NVIDIA H100 80GB HBM3', 'compute_capability': '9.0',
                                                   'compute_capability_from': 'driver'}])
    assert [gpu['name'] for gpu in node_gpus(TITANV_NODE)] == ['NVIDIA TITAN V', 'NVIDIA RTX 5880 Ada Generation']


def test_v100_on_r580_gets_the_build_that_still_has_volta_kernels():
    # cu130 (the driver's best) has no sm_70; torch 2.11's cu126 has it.
    _lines, choice, warnings = fitted(['torch==2.11.0'], '580.95.05', V100)
    assert (choice['variant'], choice['support'], warnings) == ('cu126', 'full', [])
    assert choice['chosen_by'] == 'driver 580.95.05 and ' + V100_LABEL


def test_v100_on_r580_refuses_a_variant_without_volta_kernels_naming_gpu_driver_and_fit():
    assert refusal(['torch==2.11.0+cu130'], '580.95.05', V100) == (
        'env torch (files/torch.yml): torch 2.11 cu130 wheels (torch 2.11.0+cu130) carry no kernels for %s; the spec '
        '(its torch pin or index URL) asks for cu130. Fix: use cu126, which fits driver 580.95.05 and every GPU '
        '(torch_cuda_variant: auto, or the index https://download.pytorch.org/whl/cu126)' % V100_LABEL)
    # Unpinned, pip takes the newest torch of the forced variant's index.
    message = refusal(['torch'], '580.95.05', V100, requested='cu130')
    assert message.startswith('env torch (files/torch.yml): torch 2.14 cu130 wheels (torch, not pinned) carry no kernels for '
                              + V100_LABEL)
    assert "torch_cuda_variant (conda_env_torch_cuda_variant, or this env's torch_cuda_variant) asks for cu130" in message


def test_t4_on_the_out_of_support_r535_keeps_the_minor_compat_build_that_has_turing_kernels():
    _lines, choice, warnings = fitted(['torch==2.11.0'], DEBIAN12_DRIVER, T4)
    assert (choice['variant'], choice['support']) == ('cu128', 'minor-compat') and 'minor-version compatibility' in warnings[0]
    assert choice['chosen_by'] == 'driver 535.309.01 and GPU 0 (Tesla T4, compute capability 7.5)'


def test_a100_on_r525_keeps_the_build_the_driver_runs():
    _lines, choice, _warnings = fitted(['torch==2.11.0'], '525.147.05', A100)
    assert (choice['variant'], choice['support']) == ('cu128', 'minor-compat')
    assert choice['chosen_by'] == 'driver 525.147.05 and GPU 0 (NVIDIA A100-SXM4-80GB, compute capability 8.0)'


def test_h100_host_gets_the_build_it_runs_and_its_recorded_torch_is_accepted():
    lines, choice, warnings = fitted(['torch==2.11.0'], H100_DRIVER, H100)
    assert (lines[0], choice['variant'], warnings) == ('--extra-index-url https://download.pytorch.org/whl/cu130', 'cu130', [])
    assert choice['chosen_by'] == 'driver 580.159.04 and GPU 0 (NVIDIA H100 80GB HBM3, compute capability 9.0)'
    # The torch the host runs passes the same check.
    assert fitted(['torch==%s' % read_h100('torch-info.txt').split()[0]], H100_DRIVER, H100)[1]['chosen_by'] == 'spec'


def test_b200_on_r570_needs_a_torch_with_blackwell_kernels():
    assert fitted(['torch==2.11.0'], '570.86.15', B200)[1]['variant'] == 'cu128'
    # torch 2.6's builds stop at sm_90; so does the cu126 build of the newest torch, the only one R570 runs.
    assert refusal(['torch==2.6.0'], '570.86.15', B200) == (
        'env torch (files/torch.yml): torch 2.6 has no wheel that driver 570.86.15 runs with kernels for GPU 0 (NVIDIA B200, '
        'compute capability 10.0) (cu126, cu124, cu118 checked). Fix: pin torch==2.11.* in the pip section and leave '
        'torch_cuda_variant auto: torch 2.11 cu128 fits driver 570.86.15 and every GPU')
    assert refusal(['torch'], '570.86.15', B200).startswith(
        'env torch (files/torch.yml): torch 2.14 (assumed: torch is not pinned) has no wheel that driver 570.86.15 runs '
        'with kernels for GPU 0 (NVIDIA B200, compute capability 10.0) (cu126 checked). Fix: pin torch==2.11.*')


def test_a_node_mixing_a100_and_v100_gets_a_build_for_both():
    _lines, choice, _warnings = fitted(['torch==2.11.0'], '580.95.05', A100_AND_V100)
    assert choice['variant'] == 'cu126'
    assert choice['chosen_by'] == ('driver 580.95.05 and GPU 0 (NVIDIA A100-SXM4-80GB, compute capability 8.0), '
                                   'GPU 1 (Tesla V100-SXM2-32GB, compute capability 7.0)')
    message = refusal(['torch==2.11.0'], '580.95.05', A100_AND_V100, requested='cu128')
    assert 'carry no kernels for GPU 1 (Tesla V100-SXM2-32GB, compute capability 7.0);' in message
    assert 'A100' not in message and 'Fix: use cu126' in message


def test_a_public_titan_v_and_rtx_5880_node_on_r570():
    # R570 fully supports cu128, but torch 2.11's cu128 dropped sm_70: cu126 serves Volta and Ada (sm_86 SASS).
    _lines, choice, _warnings = fitted(['torch==2.11.0'], '570.86.15', node_gpus(TITANV_NODE))
    assert (choice['variant'], choice['support']) == ('cu126', 'full')


def test_alike_gpus_are_named_once():
    eight = [dict(H100[0], index=index) for index in range(8)]
    assert fitted(['torch==2.11.0'], H100_DRIVER, eight)[1]['chosen_by'] == (
        'driver 580.159.04 and GPUs 0, 1, 2, 3, 4, 5, 6, 7 (NVIDIA H100 80GB HBM3, compute capability 9.0)')


def test_without_known_gpus_the_driver_alone_decides_as_before():
    for gpus in (None, []):
        _lines, choice, _warnings = fitted(['torch==2.11.0'], '580.95.05', gpus)
        assert (choice['variant'], choice['chosen_by']) == ('cu130', 'driver 580.95.05')
    assert fitted(['torch'], None, None)[1] is None
    # No GPU on the node: the CPU build, whatever the GPU list says.
    assert ce.choose_torch_index(['torch'], SOURCE, gpu_present=False, gpus=[])[1]['variant'] == 'cpu'


def test_a_gpu_whose_compute_capability_is_unknown_warns_instead_of_refusing():
    sysfs_only = [{'index': 0, 'pci_bus_id': '0000:00:06.0', 'compute_capability': None}]
    _lines, choice, warnings = fitted(['torch==2.11.0'], '580.95.05', sysfs_only)
    assert choice['variant'] == 'cu130'
    assert warnings == ['env torch (files/torch.yml): torch 2.11 cu130 wheels are not confirmed to carry kernels for GPU 0 '
                        '(unknown, compute capability unknown) (an unconfirmed wheel table entry, PTX or compute capability)']


def test_the_environment_and_the_planner_get_the_gpus():
    spec = {'channels': ['conda-forge'], 'dependencies': ['python=3.11', 'pip', {'pip': ['torch==2.11.0']}]}
    assert ce.normalize_environment(spec, SOURCE, '580.95.05', gpus=V100)['torch_variant']['variant'] == 'cu126'
    problems = ce.environment_problems(spec, 'conda_env_envs[0].spec', '580.95.05', 'cu130', gpus=V100)
    assert problems[0].startswith('conda_env_envs[0].spec: torch 2.11 cu130 wheels (torch 2.11.0) carry no kernels for '
                                  + V100_LABEL)
    _declared, refusals = ce.declared_envs([{'name': 'torch', 'spec': spec, 'torch_cuda_variant': 'cu128'}],
                                           None, '580.95.05', True, gpus=A100_AND_V100)
    assert len(refusals) == 1 and 'GPU 1 (Tesla V100-SXM2-32GB, compute capability 7.0)' in refusals[0]


def test_a_gpu_no_published_build_serves_is_refused_saying_none_would_fit():
    # A Kepler K40m (3.5) on its last branch, R470: torch 2.7's cu118 carries sm_37, which a 3.5 cannot run.
    k40 = node_gpus(QUERY_HEADER + '0, Tesla K40m, 3.5\n')
    assert refusal(['torch==2.7.1'], V100_DRIVER, k40) == (
        'env torch (files/torch.yml): torch 2.7 has no wheel that driver 470.182.03 runs with kernels for GPU 0 (Tesla K40m, '
        'compute capability 3.5) (cu118 checked). Fix: no torch in the wheel table (2.4 to 2.14) has a wheel that fits driver '
        '470.182.03 and every GPU; upgrade the driver, or build torch with TORCH_CUDA_ARCH_LIST="3.5" and set '
        'torch_cuda_variant none')
