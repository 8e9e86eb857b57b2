# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from conftest import read_conda
from ansible.errors import AnsibleFilterError
from ansible_collections.aistack.gpu_node.plugins.filter import conda

FILTERS = conda.FilterModule().filters()


def test_config_sources_from_real_conda():
    sources = FILTERS['conda_config_sources'](read_conda('conda-config-show-sources.txt'))
    assert [s['source'] for s in sources] == ['/home/ml/.condarc']
    settings = sources[0]['settings']
    assert settings['channel_alias'] == 'file:///srv/conda-mirror' and settings['channel_priority'] == 'strict'
    # That recorded .condarc sets default_channels: fine for Miniconda, a stray "defaults" for Miniforge.
    assert FILTERS['conda_condarc_problems'](settings, 'miniconda') == []
    assert 'Miniforge takes no "defaults"' in FILTERS['conda_condarc_problems'](settings, 'miniforge')[0]
    with pytest.raises(AnsibleFilterError, match='section of /x does not parse'):
        FILTERS['conda_config_sources']('==> /x <==\nchannels: [a\n')


def test_condarc_filter_names_policy_errors():
    assert FILTERS['conda_condarc']('http://m', ['conda-forge'], 'miniforge', solver='classic')['solver'] == 'classic'
    with pytest.raises(AnsibleFilterError, match='conda_condarc: Miniforge takes no "defaults"'):
        FILTERS['conda_condarc']('http://m', ['defaults'], 'miniforge')


def test_environment_file_errors_name_the_file():
    text = 'name: demo\nchannels: [conda-forge]\ndependencies:\n  - pip\n  - pip:\n    - six==1.17.0\n'
    assert FILTERS['conda_environment_file'](text, 'envs/demo.yml')['dependencies'][1] == {'pip': ['six==1.17.0']}
    with pytest.raises(AnsibleFilterError, match='envs/bad.yml is not valid YAML'):
        FILTERS['conda_environment_file']('dependencies: [python\n', 'envs/bad.yml')
    with pytest.raises(AnsibleFilterError, match='envs/bad.yml: dependencies must be a non-empty list'):
        FILTERS['conda_environment_file']('name: x\n', 'envs/bad.yml')


def test_ipykernel_into_a_conda_env_from_conda_forge_only():
    argv = FILTERS["conda_install_argv"](["ipykernel"], "/opt/conda/envs/ml",
                                         channels=["conda-forge", "nodefaults"])
    assert argv == ["conda", "install", "--prefix", "/opt/conda/envs/ml", "--yes", "--json",
                    "--override-channels", "--channel", "conda-forge", "ipykernel"]


def test_configured_channels_and_another_executable():
    assert FILTERS["conda_install_argv"]("ipykernel>=6", "/opt/env", conda="/opt/conda/bin/mamba") == [
        "/opt/conda/bin/mamba", "install", "--prefix", "/opt/env", "--yes", "--json", "ipykernel>=6"]


@pytest.mark.parametrize("packages, prefix", [([], "/opt/env"), ([""], "/opt/env"), (["ipykernel"], "envs/ml"), (["x"], None)])
def test_bad_input_is_named(packages, prefix):
    with pytest.raises(AnsibleFilterError, match="conda_install_argv: (packages|prefix)"):
        FILTERS["conda_install_argv"](packages, prefix)


def test_blas_problems_name_the_declaration():
    problems = FILTERS['conda_blas_problems']
    env = {'channels': ['conda-forge'], 'dependencies': ['python=3.11', 'numpy', 'blas=*=openblas', {'pip': ['six']}]}
    assert problems(env, None, 'conda_env_envs[1]') == [] and problems(env, 'openblas', 'conda_env_envs[1]') == []
    assert problems(env, 'mkl', 'conda_env_envs[1]') == [
        'conda_env_envs[1].blas is mkl but the dependencies of conda_env_envs[1] select openblas (blas=*=openblas); '
        'make them agree']
    assert problems({}, 'atlas', 'conda_env_envs[0]') == [
        "conda_env_envs[0].blas is 'atlas'; expected one of openblas, mkl, blis, netlib"]
    assert problems({'dependencies': ['=bad']}, None, 'conda_env_envs[2]') == [
        'conda_env_envs[2]: dependency =bad is not a conda match spec']


def test_explicit_entries_ignore_the_header_that_names_conda():
    listed = read_conda('conda-list-explicit-md5.txt')
    assert listed.startswith('# This file may be used to create an environment')
    # The same env's lock written before conda was upgraded: only the created-by line differs.
    older = listed.replace('# created-by: conda 26.7', '# created-by: conda 26.5', 1)
    assert older != listed
    entries = FILTERS['conda_explicit_entries'](listed)
    assert entries == FILTERS['conda_explicit_entries'](older) and len(entries) > 1
    assert all(line.startswith(('https://', 'http://', 'file://')) and '#' in line for line in entries)
    # One package more or less is a difference.
    assert FILTERS['conda_explicit_entries'](listed + entries[0].replace('libfoo', 'libbar') + '\n') != entries
    with pytest.raises(AnsibleFilterError, match='expected the text of conda list --explicit, got NoneType'):
        FILTERS['conda_explicit_entries'](None)


@pytest.mark.parametrize('value, found', [
    (['https://mirror.example.com/conda'], False),
    (['https://mirror.example.com/t/tk-1234/conda'], True),
    ({'private': 'https://conda.example.com/t/abc'}, True),
    (['conda-forge', 'https://repo.example.com/t/tk-9/private-channel'], True),
    ({'https': 'http://ops:s3cret@proxy.example.com:3128'}, True),
    ({'https': 'http://proxy.example.com:3128'}, False),
    ({'remote_read_timeout_secs': 60, 'ssl_verify': '/etc/ssl/ca.pem'}, False),
    ([{'channel_alias': 'https://user:pw@mirror.example.com'}], True),
])
def test_credentials_are_found_wherever_they_ride(value, found):
    assert FILTERS['conda_has_credentials'](value) is found


TORCH_ENV = {'channels': ['conda-forge'], 'dependencies': ['python=3.11', 'pip', {'pip': ['torch==2.11.0']}]}


def test_environment_problems_are_the_modules_refusals_named_by_declaration():
    problems = FILTERS['conda_environment_problems']
    assert problems(TORCH_ENV, 'conda_env_envs[1].spec', '580.159.04') == []
    # Debian 12's 535 driver cannot run the cu130 wheels the spec asks for by name.
    refused = problems(TORCH_ENV, 'conda_env_envs[1].spec', '535.309.01', 'cu130')
    assert len(refused) == 1 and refused[0].startswith('conda_env_envs[1].spec: torch cu130 wheels (torch 2.11.0) need a '
                                                       "newer driver than this node's 535.309.01. Fix: use cu128")
    legacy = {'channels': ['pytorch', 'nvidia'], 'dependencies': ['pytorch=2.6', 'pytorch-cuda=12.4']}
    assert 'pytorch-cuda' in problems(legacy, 'envs/train.yml', '')[0] and problems(legacy, 'envs/train.yml')[0].startswith(
        'envs/train.yml: ')
    assert problems({'dependencies': 'python'}, 'conda_env_envs[0].spec') == [
        'conda_env_envs[0].spec: dependencies must be a non-empty list']
