# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The jupyter_kernel_plan action: the kernel's names and the ipykernel install into a conda env.
The rules are tested on module_utils.decide.kernelspec."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest
from ansible.errors import AnsibleActionFail

from conftest import run_action
from ansible_collections.aistack.gpu_node.plugins.action.jupyter_kernel_plan import ActionModule


def test_names_derived_from_the_env_the_kernel_runs_in(tmp_path):
    target = {'name': 'Train', 'prefix': '/opt/conda/envs/train'}
    result = run_action(ActionModule, dict(env_prefix='/opt/conda/envs/train', target=target, conda_channels=['conda-forge']), tmp_path)
    assert (result['name'], result['display_name']) == ('train', 'Python (train, /opt/conda/envs/train)')
    assert result['conda_install_argv'] == ['conda', 'install', '--prefix', '/opt/conda/envs/train', '--yes', '--json',
                                            '--override-channels', '--channel', 'conda-forge', 'ipykernel']
    assert not result['changed']
    result = run_action(ActionModule, dict(env_prefix='/opt/torch/.venv', target=None), tmp_path)
    assert result['name'] == 'torch'


def test_given_names_are_kept(tmp_path):
    result = run_action(ActionModule, dict(env_prefix='/opt/env', name='ml', display_name='ML'), tmp_path)
    assert (result['name'], result['display_name']) == ('ml', 'ML')


def test_bad_install_input_fails_naming_it(tmp_path):
    result = run_action(ActionModule, dict(env_prefix='/opt/env', ipykernel_spec=''), tmp_path)
    assert result['failed'] and result['msg'].startswith('jupyter_kernel: packages must be a non-empty list')


def test_lab_stage_refuses_weak_authentication_without_an_env(tmp_path):
    result = run_action(ActionModule, dict(stage='lab', lab_password_hash='hunter2', lab_token='a', lab_ip='0.0.0.0',
                                           lab_port=70000), tmp_path)
    assert not result.get('failed') and not result['changed']
    problems = result['lab_problems']
    assert [text.split(' ')[0] for text in problems] == [
        'jupyter_kernel_lab_password_hash', 'jupyter_kernel_lab_token', 'jupyter_kernel_lab_port', 'jupyter_kernel_lab_ip']
    assert not any('hunter2' in text for text in problems)


def test_lab_stage_accepts_a_long_token_on_loopback(tmp_path):
    result = run_action(ActionModule, dict(stage='lab', lab_token='0123456789abcdef0123456789abcdef'), tmp_path)
    assert result['lab_problems'] == []


def test_the_kernel_stage_still_needs_the_env(tmp_path):
    with pytest.raises(AnsibleActionFail, match='env_prefix'):
        run_action(ActionModule, dict(name='ml'), tmp_path)


def test_lab_stage_checks_the_verify_password_without_showing_it(tmp_path):
    # jupyter_server.auth.passwd('molecule-lab-password-7c1e', 'sha1')
    hashed = 'sha1:72e206f603c4:9e1e29bda98b4cd4a1dcdc74e572b56753184cab'
    result = run_action(ActionModule, dict(stage='lab', lab_password_hash=hashed, lab_verify_password='not-it-at-all'), tmp_path)
    assert result['lab_problems'] == ['jupyter_kernel_lab_verify_password is not the password that '
                                      'jupyter_kernel_lab_password_hash hashes (neither value is shown).']
    assert 'not-it-at-all' not in repr(result) and hashed not in repr(result)
    result = run_action(ActionModule, dict(stage='lab', lab_password_hash=hashed, lab_verify_password='molecule-lab-password-7c1e'),
                        tmp_path)
    assert result['lab_problems'] == []
