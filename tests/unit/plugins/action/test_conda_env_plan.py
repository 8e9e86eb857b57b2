# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The conda_env_plan action: how it finds and reads environment files, and what each stage
returns or refuses. The decisions themselves are tested on module_utils.conda.env."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
from unittest import mock

import pytest

from conftest import read_conda, run_action
from ansible_collections.aistack.gpu_node.plugins.action.conda_env_plan import ActionModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import env as ce

ENV_FILE = 'name: demo\nchannels: [conda-forge]\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n    - six==1.17.0\n'


def test_preflight_reads_the_files_from_the_search_path(tmp_path):
    (tmp_path / 'files' / 'envs').mkdir(parents=True)
    (tmp_path / 'files' / 'envs' / 'demo.yml').write_text(ENV_FILE)
    result = run_action(ActionModule, dict(envs=[{'name': 'demo', 'file': 'envs/demo.yml'}], driver_version='580.159.04',
                                           gpu_present=True, conda_verified=True), search_path=tmp_path)
    assert not result.get('failed') and not result['changed']
    assert result['envs'][0]['spec']['dependencies'][2] == {'pip': ['six==1.17.0']}


def _preflight_on_node(tmp_path, conda_exists, check_mode=False, stat=None, **args):
    """The preflight stage with the node's stat of <conda_prefix>/bin/conda answered: (result, stat's calls)."""
    stat = stat or {'changed': False, 'stat': {'exists': True, 'path': '/opt/conda/bin/conda'} if conda_exists else {'exists': False}}
    with mock.patch.object(ActionModule, '_execute_module', return_value=stat) as node:
        result = run_action(ActionModule, dict(dict(envs=[{'name': 'demo', 'spec': {'dependencies': ['python=3.11']}}],
                                                    conda_prefix='/opt/conda'), **args),
                            search_path=tmp_path, task_vars={'ansible_check_mode': check_mode})
    return result, node.call_args_list


def test_preflight_looks_for_conda_unless_the_miniconda_role_ran_it(tmp_path):
    result, calls = _preflight_on_node(tmp_path, True)
    assert not result.get('failed') and result['conda_present'] is True
    assert [(c.kwargs['module_name'], c.kwargs['module_args']['path']) for c in calls] == [
        ('ansible.legacy.stat', '/opt/conda/bin/conda')]
    result, calls = _preflight_on_node(tmp_path, False, conda_verified=True)
    assert result['conda_present'] is True and calls == []
    result, calls = _preflight_on_node(tmp_path, None, stat={'failed': True, 'msg': 'Permission denied'})
    assert result['failed'] and result['msg'] == 'conda_env: /opt/conda/bin/conda cannot be looked for: Permission denied'


@pytest.mark.parametrize('check_mode, envs, refused', [(False, None, True), (True, None, False), (False, [], False)])
def test_preflight_stops_where_conda_is_missing_and_envs_are_declared(tmp_path, check_mode, envs, refused):
    """In check mode on a fresh node the miniconda role would install conda; with no env there is nothing to do."""
    result, _calls = _preflight_on_node(tmp_path, False, check_mode, **({} if envs is None else {'envs': envs}))
    if refused:
        assert result['failed'] and result['msg'] == (
            'conda_env: /opt/conda/bin/conda does not exist; install conda first (miniconda role) or set conda_env_conda_prefix.')
    else:
        assert not result.get('failed') and result['conda_present'] is False


def test_preflight_names_a_file_that_is_no_yaml_or_missing(tmp_path):
    (tmp_path / 'files').mkdir()
    (tmp_path / 'files' / 'bad.yml').write_text(u'dependencies: [python\n')
    result = run_action(ActionModule, dict(envs=[{'name': 'x', 'file': 'bad.yml'}]), search_path=tmp_path)
    assert result['failed'] and result['msg'].startswith('conda_env: bad.yml is not valid YAML: ')
    result = run_action(ActionModule, dict(envs=[{'name': 'x', 'file': 'nowhere.yml'}]), search_path=tmp_path)
    assert result['failed'] and result['msg'].startswith('conda_env: nowhere.yml cannot be read: ')


def test_preflight_refuses_every_env_at_fault(tmp_path):
    envs = [{'name': 'a', 'spec': {'dependencies': 'python'}}, {'name': 'b', 'spec': {'dependencies': ['python']}, 'blas': 'atlas'},
            {'name': 'c', 'spec': {'channels': ['conda-forge'], 'dependencies': ['numpy']}}]
    result = run_action(ActionModule, dict(envs=envs), search_path=tmp_path)
    assert result['failed'] and result['msg'] == 'conda_env: conda_env_envs[0].spec: dependencies must be a non-empty list'
    result = run_action(ActionModule, dict(envs=envs[1:]), search_path=tmp_path)
    assert result['msg'] == "conda_env: conda_env_envs[0].blas is 'atlas'; expected one of openblas, mkl, blis, netlib"


def test_preflight_refuses_a_torch_build_without_kernels_for_a_gpu_of_the_node(tmp_path):
    # The role passes ansible_facts.aistack_gpu.gpus: a V100 on R580 cannot run torch 2.11's cu130 build.
    spec = {'channels': ['conda-forge'], 'dependencies': ['python=3.11', 'pip', {'pip': ['torch==2.11.0+cu130']}]}
    v100 = {'index': 0, 'name': 'Tesla V100-SXM2-32GB', 'compute_capability': '7.0', 'compute_capability_from': 'driver'}
    result = run_action(ActionModule, dict(envs=[{'name': 'torch', 'spec': spec}], driver_version='580.95.05', gpu_present=True,
                                           gpus=[v100]), search_path=tmp_path)
    assert result['failed'] and result['msg'].startswith(
        'conda_env: conda_env_envs[0].spec: torch 2.11 cu130 wheels (torch 2.11.0+cu130) carry no kernels for GPU 0 '
        '(Tesla V100-SXM2-32GB, compute capability 7.0)')


def test_publish_returns_the_facts_or_the_variable_at_fault(tmp_path):
    result = run_action(ActionModule, dict(stage='publish', envs=[{'name': 'ml'}], conda_prefix='/opt/conda'), search_path=tmp_path)
    assert result['target']['prefix'] == '/opt/conda/envs/ml' and result['info']['ml']['state'] == 'present'
    result = run_action(ActionModule, dict(stage='publish', envs=[{'name': 'ml'}], env_prefix='venv'), search_path=tmp_path)
    assert result['failed'] and result['msg'] == "aistack_env_prefix must be an absolute path, got 'venv'"


def test_verify_names_each_lock_that_does_not_match(tmp_path):
    listed = read_conda('conda-list-explicit-md5.txt')
    env = {'name': 'ml', 'prefix': '/opt/conda/envs/ml', 'lock': {'explicit': '/l/ml.explicit.txt', 'sha256': ce.sha256_text(listed)}}
    lock = {'item': env, 'content': base64.b64encode(listed.encode('utf-8')).decode('ascii')}
    args = dict(stage='verify', locks=[lock, lock], listings=[{'stdout': listed}, {'stdout': listed + 'file:///x#0\n'}])
    result = run_action(ActionModule, args, search_path=tmp_path)
    assert result['failed'] and result['msg'] == ('conda_env: the lock /l/ml.explicit.txt does not match env '
                                                  '/opt/conda/envs/ml; run the role again')
    args['listings'] = [{'stdout': listed}] * 2
    assert not run_action(ActionModule, args, search_path=tmp_path).get('failed')
