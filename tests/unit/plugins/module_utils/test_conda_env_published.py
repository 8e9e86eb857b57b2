# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""conda_env's result facts (conda_env_info) and the one environment the env roles work on (conda_env_target)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import env as ce

# What the module returned for env "train" in one run (trimmed to the keys the fact takes).
TRAIN_RESULT = {
    'item': {'name': 'train', 'spec': {}},
    'changed': True,
    'prefix': '/opt/conda/envs/train',
    'commands': ['conda env create -f /opt/conda/envs/.train.applying/environment.yml -p /opt/conda/envs/train --json'],
    'drift': ['env train does not exist'],
    'package_changes': {'added': ['numpy==2.3.4=py311h0_0'], 'removed': [], 'changed': []},
    'lock': {'explicit': '/opt/conda/envs/train.explicit.txt', 'sha256': 'ab' * 32},
    'blas': {'requested': 'openblas', 'verified': True},
    'torch_variant': {'variant': 'cpu', 'chosen_by': 'no NVIDIA GPU on the node'},
}
DECLARED = [{'name': 'train', 'spec': {}}, {'name': 'eval', 'prefix': '/srv/envs/eval', 'spec': {}},
            {'name': 'old', 'state': 'absent'}]


def test_an_env_converged_in_this_run_publishes_its_results():
    envs = ce.published_envs(DECLARED, '/opt/conda', results=[TRAIN_RESULT])
    assert envs['train'] == {
        'name': 'train', 'prefix': '/opt/conda/envs/train', 'python': '/opt/conda/envs/train/bin/python',
        'state': 'present', 'primary': False,
        'lock': {'explicit': '/opt/conda/envs/train.explicit.txt', 'from_history': '/opt/conda/envs/train.from-history.yml',
                 'spec': '/opt/conda/envs/train.environment.yml', 'marker': '/opt/conda/envs/train.in-progress.json',
                 'sha256': 'ab' * 32},
        'blas': {'requested': 'openblas', 'verified': True},
        'torch_variant': {'variant': 'cpu', 'chosen_by': 'no NVIDIA GPU on the node'},
        'last_change': {'changed': True, 'commands': TRAIN_RESULT['commands'], 'drift': ['env train does not exist'],
                        'package_changes': TRAIN_RESULT['package_changes']},
    }


def test_an_env_the_module_did_not_run_on_gets_conda_s_default_prefix_and_no_run_details():
    envs = ce.published_envs(DECLARED, '/opt/conda', lock_dir='/var/lib/aistack/locks')
    assert envs['eval']['prefix'] == '/srv/envs/eval' and envs['eval']['python'] == '/srv/envs/eval/bin/python'
    assert envs['eval']['lock']['explicit'] == '/var/lib/aistack/locks/eval.explicit.txt'
    assert envs['train']['prefix'] == '/opt/conda/envs/train'
    assert envs['train']['last_change'] is None and envs['train']['blas'] is None and envs['train']['lock']['sha256'] is None
    assert envs['old']['state'] == 'absent'


def test_the_files_are_the_ones_the_module_writes():
    assert ce.env_files('/opt/conda/envs', 'train') == {
        'spec': '/opt/conda/envs/train.environment.yml', 'explicit': '/opt/conda/envs/train.explicit.txt',
        'from_history': '/opt/conda/envs/train.from-history.yml', 'pip': '/opt/conda/envs/train.pip.txt',
        'marker': '/opt/conda/envs/train.in-progress.json', 'work': '/opt/conda/envs/.train.applying'}


@pytest.mark.parametrize('declared, name, prefix, expected', [
    (DECLARED, '', '', ('train', '/opt/conda/envs/train/bin/python', True, 'first env of conda_env_envs')),
    ([dict(DECLARED[0]), dict(DECLARED[1], primary=True)], '', '', ('eval', '/srv/envs/eval/bin/python', True, 'primary')),
    (DECLARED, 'eval', '', ('eval', '/srv/envs/eval/bin/python', True, 'aistack_env_name')),
    (DECLARED, 'eval', '/opt/venvs/torch/', ('torch', '/opt/venvs/torch/bin/python', False, 'aistack_env_prefix')),
    ([], '', '/opt/venvs/torch', ('torch', '/opt/venvs/torch/bin/python', False, 'aistack_env_prefix')),
    # a hidden venv folder goes by its parent's name (the GPU host's /opt/torch/.venv is torch)
    ([], '', '/opt/torch/.venv', ('torch', '/opt/torch/.venv/bin/python', False, 'aistack_env_prefix')),
])
def test_the_target_env_is_chosen_once(declared, name, prefix, expected):
    target = ce.target_env(ce.published_envs(declared, '/opt/conda'), name, prefix)
    assert (target['name'], target['python'], target['conda'], target['chosen_by']) == expected


def test_no_present_env_and_no_prefix_means_no_target():
    assert ce.target_env(ce.published_envs([{'name': 'old', 'state': 'absent'}], '/opt/conda')) is None


@pytest.mark.parametrize('declared, name, prefix, message', [
    (DECLARED, 'trian', '', "aistack_env_name: no environment 'trian' among the present envs of conda_env_envs (eval, train)"),
    (DECLARED, 'old', '', "aistack_env_name: no environment 'old'"),
    ([dict(DECLARED[0], primary=True), dict(DECLARED[1], primary=True)], '', '',
     'conda_env_envs: more than one env is marked primary (eval, train)'),
    (DECLARED, '', 'opt/venv', "aistack_env_prefix must be an absolute path, got 'opt/venv'"),
])
def test_a_wrong_choice_is_refused_naming_the_variable(declared, name, prefix, message):
    with pytest.raises(ce.CondaEnvError, match='^' + message.replace('(', r'\(').replace(')', r'\)')):
        ce.target_env(ce.published_envs(declared, '/opt/conda'), name, prefix)
