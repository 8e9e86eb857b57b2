# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The jupyter_kernel_plan action: the role's settings read from the task's variables (its defaults
and vars/main.yml as the role has them), the node read once (counted) and only by the kernel stage,
the refusals it words, and the plan and judgement it hands back. The rules are tested on
module_utils.decide.jupyter_kernel, decide.kernelspec and decide.jupyter_lab."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import hashlib
import json
import os
from unittest import mock

import pytest

from conftest import REPO_ROOT
from ansible.errors import AnsibleActionFail
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.template import Templar
from ansible_collections.aistack.gpu_node.plugins.action.jupyter_kernel_plan import ActionModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.jupyter_kernel import BAD_INPUT

ROLE_PATH = os.path.join(REPO_ROOT, 'roles', 'jupyter_kernel')
# Loaded as Ansible loads a role's files, so that their templates are trusted as templates.
DEFAULTS = DataLoader().load_from_file(os.path.join(ROLE_PATH, 'defaults', 'main.yml'), trusted_as_template=True)
ROLE_VARS = DataLoader().load_from_file(os.path.join(ROLE_PATH, 'vars', 'main.yml'), trusted_as_template=True)
PREFIX = '/opt/conda/envs/train'
PYTHON = PREFIX + '/bin/python'
PROOF_PATH = PREFIX + '/etc/aistack/jupyter_kernel-train-proof.json'
READING = {'conda': True, 'ipykernel': True, 'cuda_home': True, 'env_state': 's' * 64, 'proof': None, 'kernel_file': None}
KERNEL_PATH = '/usr/local/share/jupyter/kernels/train/kernel.json'
TOKEN = '0123456789abcdef0123456789abcdef'


class Node(object):
    """The node as the action's module runs see it: the probe answers ``answer``; every call is kept."""

    def __init__(self, answer=None):
        self.answer = answer if answer is not None else {'rc': 0, 'stdout': json.dumps(READING) + '\n'}
        self.calls = []

    def __call__(self, module_name=None, module_args=None, task_vars=None):
        self.calls.append((module_name, module_args))
        return dict(self.answer)


def task_vars(**settings):
    values = dict(DEFAULTS, **ROLE_VARS)
    # The scripts' texts as plain strings: tests/integration/test_env_scripts.py runs the real ones.
    values.update(__jupyter_kernel_probe_script="print('probe')", __jupyter_kernel_check_script="print('check')")
    values.update(inventory_hostname='node1', conda_env_target={'name': 'train', 'prefix': PREFIX},
                  ansible_facts={'service_mgr': 'systemd', 'aistack_gpu': {'gpu_count': 8}},
                  numa_tuning_env={'OMP_NUM_THREADS': '8'})
    values.update(('jupyter_kernel_' + name, value) for name, value in settings.items())
    return values


def plan(args, node=None, variables=None, check_mode=False):
    """Run the action as a task with ``args`` on a host with ``variables``; (result, node)."""
    node = node or Node()
    variables = dict(variables if variables is not None else task_vars(), ansible_check_mode=check_mode)
    task = mock.MagicMock(args=args, async_val=0, check_mode=False, action='aistack.gpu_node.jupyter_kernel_plan')
    action = ActionModule(task, mock.MagicMock(), PlayContext(), DataLoader(), Templar(loader=DataLoader(), variables=variables),
                          mock.MagicMock())
    with mock.patch.object(ActionModule, '_execute_module', side_effect=node):
        return action.run(task_vars=variables), node


# ---------------------------------------------------------------------------
# input
# ---------------------------------------------------------------------------

def test_the_defaults_pass_without_reading_the_node():
    result, node = plan(dict(stage='input'))
    assert not result.get('failed') and not result['changed'] and node.calls == []


@pytest.mark.parametrize('settings', [
    dict(name='My Kernel'), dict(name='..'), dict(name='python'), dict(verify_timeout=-1), dict(require_cuda='sometimes'),
    dict(cuda_home='usr/local/cuda'), dict(env_prefix='opt/env'),
])
def test_bad_variables_fail_with_the_one_message_before_the_lab_is_looked_at(settings):
    result, node = plan(dict(stage='input'), variables=task_vars(lab=True, **settings))
    assert result['failed'] and result['msg'] == BAD_INPUT and node.calls == []


def test_the_variables_of_the_role_are_read_templated():
    variables = task_vars(name='{{ kernel_name }}')
    variables['kernel_name'] = 'Not A Name'
    result, _node = plan(dict(stage='input'), variables=variables)
    assert result['msg'] == BAD_INPUT


def test_a_lab_without_authentication_is_refused_naming_the_variables():
    result, node = plan(dict(stage='input'), variables=task_vars(lab=True, lab_ip='0.0.0.0', lab_password_hash='hunter2'))
    assert result['failed'] and node.calls == []
    assert result['msg'].startswith('jupyter_kernel: refusing JupyterLab on node1. jupyter_kernel_lab_password_hash is not a '
                                    'password hash')
    assert 'jupyter_kernel_lab_ip 0.0.0.0 is not a loopback address' in result['msg'] and 'hunter2' not in repr(result)


def test_a_lab_with_a_token_on_loopback_passes_and_is_refused_without_systemd():
    variables = task_vars(lab=True, lab_token=TOKEN)
    result, _node = plan(dict(stage='input'), variables=variables)
    assert not result.get('failed')
    variables['ansible_facts'] = {'service_mgr': 'openrc'}
    result, _node = plan(dict(stage='input'), variables=variables)
    assert result['msg'] == ('jupyter_kernel: refusing JupyterLab on node1. It runs as a systemd service and the service '
                             'manager here is openrc: set jupyter_kernel_lab=false on this node.')
    assert TOKEN not in repr(result)


def test_lab_settings_are_not_looked_at_without_the_lab():
    result, _node = plan(dict(stage='input'), variables=task_vars(lab_password_hash='hunter2'))
    assert not result.get('failed')


# ---------------------------------------------------------------------------
# kernel
# ---------------------------------------------------------------------------

def test_the_kernel_stage_reads_the_env_once_and_decides_the_kernel():
    result, node = plan(dict(stage='kernel'))
    assert not result.get('failed') and not result['changed']
    assert [name for name, _args in node.calls] == ['ansible.legacy.command']
    argv = node.calls[0][1]['argv']
    assert argv == [PYTHON, '-c', "print('probe')", PREFIX, '/usr/local/cuda', PROOF_PATH, PYTHON, KERNEL_PATH]
    assert (result['name'], result['display_name'], result['python'], result['type']) == (
        'train', 'Python (train, %s)' % PREFIX, PYTHON, 'conda')
    assert result['env'] == {'OMP_NUM_THREADS': '8', 'CUDA_HOME': '/usr/local/cuda'}
    assert result['require_cuda'] is True and result['ipykernel'] is True and result['ipykernel_install_argv'] is None
    assert result['proof_path'] == PROOF_PATH and result['proof'] is None and result['proof_usable'] is False
    assert result['proof_asked'] == {
        'script_sha256': hashlib.sha256(b"print('check')").hexdigest(), 'name': 'train', 'display_name': 'Python (train, %s)' % PREFIX,
        'python': PYTHON, 'env': result['env'], 'require_cuda': True, 'scope': 'system', 'user': None}


def test_an_env_without_ipykernel_gets_it_from_its_own_installer():
    reading = dict(READING, ipykernel=False)
    result, _node = plan(dict(stage='kernel'), Node({'rc': 0, 'stdout': json.dumps(reading)}),
                         task_vars(conda_channels=['conda-forge', 'nodefaults']))
    assert result['ipykernel_install_argv'] == ['conda', 'install', '--prefix', PREFIX, '--yes', '--json', '--override-channels',
                                                '--channel', 'conda-forge', 'ipykernel']
    reading = dict(READING, ipykernel=False, conda=False, cuda_home=False)
    result, _node = plan(dict(stage='kernel'), Node({'rc': 0, 'stdout': json.dumps(reading)}),
                         task_vars(env_prefix='/opt/torch/.venv', pip_no_index=True, pip_find_links=['/srv/wheels'],
                                   require_cuda=False, env={'HF_HOME': '/data/hf'}))
    assert (result['name'], result['type'], result['require_cuda']) == ('torch', 'venv', False)
    assert result['env'] == {'OMP_NUM_THREADS': '8', 'HF_HOME': '/data/hf'}
    assert result['ipykernel_install_argv'] == ['/opt/torch/.venv/bin/python', '-m', 'pip', 'install', '--disable-pip-version-check',
                                                '--no-index', '--find-links=/srv/wheels', 'ipykernel']


def test_given_names_are_kept():
    result, _node = plan(dict(stage='kernel'), variables=task_vars(name='ml', display_name='ML'))
    assert (result['name'], result['display_name']) == ('ml', 'ML')
    assert result['proof_path'] == PREFIX + '/etc/aistack/jupyter_kernel-ml-proof.json'


def test_bad_install_input_fails_naming_it_before_the_node_is_read():
    result, node = plan(dict(stage='kernel'), variables=task_vars(ipykernel_spec=''))
    assert result['failed'] and result['msg'].startswith('jupyter_kernel: packages must be a non-empty list') and node.calls == []


def test_an_env_whose_python_does_not_run_is_refused():
    node = Node({'rc': 2, 'failed': True, 'msg': "[Errno 2] No such file or directory: b'%s'" % PYTHON, 'stdout': '', 'stderr': ''})
    result, _node = plan(dict(stage='kernel'), node)
    assert result['failed'] and result['msg'] == (
        "jupyter_kernel: jupyter_kernel_env_prefix %s has no bin/python that runs ([Errno 2] No such file or directory: "
        "b'%s'); create the env first." % (PREFIX, PYTHON))


def test_the_recorded_proof_is_usable_only_when_asked_the_same_in_a_real_run():
    first, _node = plan(dict(stage='kernel'))
    proof = {'python': PYTHON, 'env_state': 's' * 64, 'asked': first['proof_asked'], 'recorded_at': '2026-12-07T03:00:00Z',
             'ran': {'executable': PYTHON}}
    node = Node({'rc': 0, 'stdout': json.dumps(dict(READING, proof=proof))})
    result, _node = plan(dict(stage='kernel'), node)
    assert result['proof_usable'] is True and result['proof'] == proof
    result, _node = plan(dict(stage='kernel'), node, check_mode=True)
    assert result['proof_usable'] is False
    result, _node = plan(dict(stage='kernel'), node, task_vars(verify_always=True))
    assert result['proof_usable'] is False
    # Another thread setting changes what the check is asked.
    variables = task_vars()
    variables['numa_tuning_env'] = {'OMP_NUM_THREADS': '4'}
    result, _node = plan(dict(stage='kernel'), node, variables)
    assert result['proof_usable'] is False


def kernel_file(**changes):
    """kernel.json as the module writes it for the default plan (indent 1, sorted keys), mode 0644."""
    kernel = {'argv': [PYTHON, '-m', 'ipykernel_launcher', '-f', '{connection_file}'], 'display_name': 'Python (train, %s)' % PREFIX,
              'language': 'python', 'env': {'OMP_NUM_THREADS': '8', 'CUDA_HOME': '/usr/local/cuda'}, 'metadata': {'debugger': True}}
    kernel.update(changes)
    return {'text': json.dumps(kernel, indent=1, sort_keys=True) + '\n', 'mode': 0o644}


def test_a_kernelspec_found_as_asked_needs_no_module_run_and_says_what_the_module_would():
    found = kernel_file()
    result, node = plan(dict(stage='kernel'), Node({'rc': 0, 'stdout': json.dumps(dict(READING, kernel_file=found))}))
    assert len(node.calls) == 1 and result['spec_in_place'] is True
    assert result['kernelspec'] == {'argv': [PYTHON, '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
                                    'display_name': 'Python (train, %s)' % PREFIX, 'env': result['env'], 'metadata': {'debugger': True}}
    # The jupyter_kernelspec module's path and diff for a kernelspec it leaves as it is.
    assert result['spec_dir'] == '/usr/local/share/jupyter/kernels/train'
    assert result['spec_diff'] == {'before': found['text'], 'after': found['text'], 'before_header': KERNEL_PATH,
                                   'after_header': KERNEL_PATH}


@pytest.mark.parametrize('found', [
    None,
    dict(kernel_file(), mode=0o600),
    kernel_file(display_name='Python (old)'),
    kernel_file(env={'OMP_NUM_THREADS': '4', 'CUDA_HOME': '/usr/local/cuda'}),
    dict(kernel_file(), text='{not json'),
], ids=['missing', 'mode', 'display-name', 'env', 'not-json'])
def test_a_kernelspec_not_as_asked_is_left_to_the_module(found):
    result, _node = plan(dict(stage='kernel'), Node({'rc': 0, 'stdout': json.dumps(dict(READING, kernel_file=found))}))
    assert (result['spec_in_place'], result['spec_dir'], result['spec_diff']) == (False, None, None)


@pytest.mark.parametrize('settings', [dict(scope='user', user='alice'), dict(system_prefix='$HOME/jupyter')],
                         ids=['user-scope', 'prefix-the-node-expands'])
def test_a_kernelspec_whose_folder_the_node_decides_is_not_read_and_left_to_the_module(settings):
    node = Node({'rc': 0, 'stdout': json.dumps(dict(READING, kernel_file=kernel_file()))})
    result, node = plan(dict(stage='kernel'), node, task_vars(**settings))
    assert node.calls[0][1]['argv'][-1] == '' and result['spec_in_place'] is False


def test_an_env_the_module_refuses_is_left_to_the_module():
    # normalize_env refuses a mapping as a value; the module says so, naming the variable.
    node = Node({'rc': 0, 'stdout': json.dumps(dict(READING, kernel_file=kernel_file()))})
    result, _node = plan(dict(stage='kernel'), node, task_vars(env={'BAD': {'nested': 1}}))
    assert not result.get('failed') and result['spec_in_place'] is False


def test_no_gpu_facts_no_cuda_required():
    variables = task_vars()
    variables['ansible_facts'] = {}
    result, _node = plan(dict(stage='kernel'), variables=variables)
    assert result['require_cuda'] is False


# ---------------------------------------------------------------------------
# ran
# ---------------------------------------------------------------------------

SPEC_DIR = '/usr/local/share/jupyter/kernels/train'
RAN = {'resource_dir': SPEC_DIR, 'executable': PYTHON, 'torch': '2.8.0', 'cuda_available': True, 'device': 'NVIDIA H100 80GB HBM3',
       'env': {'OMP_NUM_THREADS': '8', 'CUDA_HOME': '/usr/local/cuda'}, 'env_state': 's' * 64}


def test_what_ran_is_judged_against_the_plan_without_reading_the_node():
    kernel, _node = plan(dict(stage='kernel'))
    result, node = plan(dict(stage='ran', plan=kernel, ran=RAN, spec_dir=SPEC_DIR))
    assert not result.get('failed') and node.calls == []
    assert result['msg'] == 'kernel train: %s, torch 2.8.0, CUDA True, NVIDIA H100 80GB HBM3' % PYTHON
    ran = dict(RAN, cuda_available=False, device=None)
    result, _node = plan(dict(stage='ran', plan=kernel, ran=ran, spec_dir=SPEC_DIR))
    assert result['failed'] and result['msg'] == (
        'jupyter_kernel: the kernel train ran %s; expected %s from %s with env %s and a CUDA device' % (
            ran, PYTHON, SPEC_DIR, kernel['env']))


def test_the_ran_stage_needs_the_plan_and_the_kernelspec():
    with pytest.raises(AnsibleActionFail, match='spec_dir'):
        plan(dict(stage='ran', plan={}, ran=RAN))


# ---------------------------------------------------------------------------
# lab, the options given
# ---------------------------------------------------------------------------

def test_lab_stage_refuses_weak_authentication_without_an_env():
    result, node = plan(dict(stage='lab', lab_password_hash='hunter2', lab_token='a', lab_ip='0.0.0.0', lab_port=70000), variables={})
    assert not result.get('failed') and not result['changed'] and node.calls == []
    problems = result['lab_problems']
    assert [text.split(' ')[0] for text in problems] == [
        'jupyter_kernel_lab_password_hash', 'jupyter_kernel_lab_token', 'jupyter_kernel_lab_port', 'jupyter_kernel_lab_ip']
    assert not any('hunter2' in text for text in problems)


def test_lab_stage_accepts_a_long_token_on_loopback():
    result, _node = plan(dict(stage='lab', lab_token=TOKEN), variables={})
    assert result['lab_problems'] == []


def test_lab_stage_checks_the_verify_password_without_showing_it():
    # jupyter_server.auth.passwd('molecule-lab-password-7c1e', 'sha1')
    hashed = 'sha1:72e206f603c4:9e1e29bda98b4cd4a1dcdc74e572b56753184cab'
    result, _node = plan(dict(stage='lab', lab_password_hash=hashed, lab_verify_password='not-it-at-all'), variables={})
    assert result['lab_problems'] == ['jupyter_kernel_lab_verify_password is not the password that '
                                      'jupyter_kernel_lab_password_hash hashes (neither value is shown).']
    assert 'not-it-at-all' not in repr(result) and hashed not in repr(result)
    result, _node = plan(dict(stage='lab', lab_password_hash=hashed, lab_verify_password='molecule-lab-password-7c1e'),
                         variables={})
    assert result['lab_problems'] == []


def test_a_stage_must_be_named():
    with pytest.raises(AnsibleActionFail, match='stage'):
        plan(dict(), variables={})
