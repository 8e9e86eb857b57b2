# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The decisions of the jupyter_kernel role (module_utils.decide.jupyter_kernel): the input rules a
type cannot say, the refusals of a JupyterLab and of an env whose python does not run, what the env
probe's reading means for the kernel, when a recorded check stands, and the judgement of what ran."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml

from conftest import REPO_ROOT
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import jupyter_kernel as jk

GOOD = dict(env_prefix='/opt/env', name='', verify_timeout=120, require_cuda='auto', cuda_home='')
READING = dict(conda=False, ipykernel=True, cuda_home=True, env_state='s' * 64, proof=None)
SETTINGS = dict(numa_env={'OMP_NUM_THREADS': '8'}, cuda_home='', env={}, require_cuda='auto', env_type='auto',
                verify=True, verify_always=False)
PLANNED_ENV = {'OMP_NUM_THREADS': 8, 'CUDA_HOME': '/usr/local/cuda', 'LD_LIBRARY_PATH': '$CUDA_HOME/lib64'}
RAN = dict(resource_dir='/usr/local/share/jupyter/kernels/ml', executable='/opt/env/bin/python', torch='2.8.0',
           cuda_available=True, device='NVIDIA H100 80GB HBM3',
           env={'OMP_NUM_THREADS': '8', 'CUDA_HOME': '/usr/local/cuda', 'LD_LIBRARY_PATH': '/usr/local/cuda/lib64'})


def settings(**changes):
    return dict(SETTINGS, **changes)


# ---------------------------------------------------------------------------
# input
# ---------------------------------------------------------------------------

def test_the_bad_input_message_is_the_one_the_catalogue_and_users_know():
    with open(os.path.join(REPO_ROOT, 'tests', 'bad_inputs.yml')) as handle:
        cases = [case for case in yaml.safe_load(handle)['cases'] if case['target'] == 'jupyter_kernel'
                 and 'jupyter_kernel: bad input' in case['expect']]
    assert len(cases) == 6
    for case in cases:
        assert all(text in jk.BAD_INPUT for text in case['expect']), case['id']


@pytest.mark.parametrize('changes', [
    dict(env_prefix=''), dict(name='ml'), dict(name='torch-2.8_cu128.v1'), dict(verify_timeout=1), dict(require_cuda=True),
    dict(require_cuda=False), dict(cuda_home='/usr/local/cuda-12.8'),
])
def test_good_input_passes(changes):
    assert jk.input_problem(dict(GOOD, **changes)) is None


@pytest.mark.parametrize('changes', [
    dict(env_prefix='opt/env'), dict(env_prefix=None), dict(name='My Kernel'), dict(name='..'), dict(name='python'),
    dict(name='.hidden'), dict(name='Upper'), dict(verify_timeout=0), dict(verify_timeout=-1),
    dict(require_cuda='sometimes'), dict(require_cuda='true'), dict(cuda_home='usr/local/cuda'),
])
def test_bad_input_is_refused_with_the_one_message(changes):
    assert jk.input_problem(dict(GOOD, **changes)) == jk.BAD_INPUT


def test_a_lab_is_refused_with_its_problems_and_without_systemd():
    assert jk.lab_refusal('node1', [], 'systemd') is None
    assert jk.lab_refusal('node1', ['A.', 'B.'], 'systemd') == 'jupyter_kernel: refusing JupyterLab on node1. A. B.'
    assert jk.lab_refusal('node1', [], 'openrc') == (
        'jupyter_kernel: refusing JupyterLab on node1. It runs as a systemd service and the service manager here is '
        'openrc: set jupyter_kernel_lab=false on this node.')
    assert 'service manager here is unknown:' in jk.lab_refusal('node1', ['A.'], None)


# ---------------------------------------------------------------------------
# the env probe
# ---------------------------------------------------------------------------

def test_an_env_whose_python_does_not_run_is_refused_with_what_it_said():
    assert jk.probe_refusal('/opt/env', {'rc': 0, 'stdout': '{}'}) is None
    missing = {'rc': 2, 'failed': True, 'msg': "[Errno 2] No such file or directory: b'/opt/env/bin/python'", 'stderr': ''}
    assert jk.probe_refusal('/opt/env', missing) == (
        "jupyter_kernel: jupyter_kernel_env_prefix /opt/env has no bin/python that runs ([Errno 2] No such file or "
        "directory: b'/opt/env/bin/python'); create the env first.")
    crashed = {'rc': 1, 'msg': '', 'stderr': '  Traceback ... ' + 'word ' * 60 + '\n'}
    detail = jk.probe_refusal('/opt/env', crashed).split('runs (', 1)[1]
    # Jinja's truncate(200): whole words, then '...'.
    assert detail.startswith('Traceback ... word') and detail.endswith('word...); create the env first.')
    assert len(detail) <= 200 + len('); create the env first.')


def test_the_reading_is_the_last_json_line():
    assert jk.probe_reading('sitecustomize says hi\n{"conda": false}\n{"conda": true}\n') == {'conda': True}
    with pytest.raises(ValueError, match='printed no reading'):
        jk.probe_reading('nothing\n')


def test_the_kernel_env_has_the_thread_variables_the_cuda_home_found_and_the_given_ones_last():
    decided = jk.kernel_decision(settings(env={'OMP_NUM_THREADS': '4', 'X': 1}), READING, 8)
    assert decided == dict(type='venv', env={'OMP_NUM_THREADS': '4', 'CUDA_HOME': '/usr/local/cuda', 'X': 1}, require_cuda=True)
    decided = jk.kernel_decision(settings(cuda_home='/opt/cuda', env_type='conda'), dict(READING, cuda_home=False), 0)
    assert decided == dict(type='conda', env={'OMP_NUM_THREADS': '8'}, require_cuda=False)
    assert jk.kernel_decision(settings(numa_env=None), dict(READING, conda=True, cuda_home=True), None)['type'] == 'conda'
    assert jk.kernel_decision(settings(cuda_home='/opt/cuda'), READING, None)['env']['CUDA_HOME'] == '/opt/cuda'


@pytest.mark.parametrize('require_cuda, gpu_count, expected', [
    ('auto', 8, True), ('auto', 0, False), ('auto', None, False), (True, 0, True), (False, 8, False), (1, 0, True), (0, 8, False),
])
def test_whether_the_kernel_must_see_cuda(require_cuda, gpu_count, expected):
    assert jk.kernel_decision(settings(require_cuda=require_cuda), READING, gpu_count)['require_cuda'] is expected


def test_ipykernel_goes_in_with_the_envs_own_installer_only_when_missing():
    conda = ['conda', 'install', '--prefix', '/opt/env', '--yes', '--json', 'ipykernel']
    assert jk.ipykernel_install_argv('venv', True, '/opt/env/bin/python', [], 'ipykernel', conda) is None
    assert jk.ipykernel_install_argv('conda', False, '/opt/env/bin/python', [], 'ipykernel', conda) == conda
    assert jk.ipykernel_install_argv('venv', False, '/opt/env/bin/python', ['--no-index', '--find-links=/w'], 'ipykernel<7',
                                     conda) == ['/opt/env/bin/python', '-m', 'pip', 'install', '--disable-pip-version-check',
                                                '--no-index', '--find-links=/w', 'ipykernel<7']


# ---------------------------------------------------------------------------
# the recorded proof
# ---------------------------------------------------------------------------

ASKED = jk.proof_asked('a' * 64, 'ml', 'ML', '/opt/env/bin/python', {'OMP_NUM_THREADS': '8'}, True, 'system', None)


def test_a_recorded_proof_stands_only_for_a_real_verifying_run_asked_the_same():
    reading = dict(READING, proof={'asked': dict(ASKED), 'ran': RAN})
    assert jk.proof_usable(settings(), False, reading, ASKED)
    assert not jk.proof_usable(settings(), True, reading, ASKED)
    assert not jk.proof_usable(settings(verify=False), False, reading, ASKED)
    assert not jk.proof_usable(settings(verify_always=True), False, reading, ASKED)
    assert not jk.proof_usable(settings(), False, dict(reading, ipykernel=False), ASKED)
    assert not jk.proof_usable(settings(), False, READING, ASKED)
    for name, value in (('require_cuda', False), ('env', {}), ('user', 'alice'), ('script_sha256', 'b' * 64)):
        assert not jk.proof_usable(settings(), False, reading, dict(ASKED, **{name: value})), name


# ---------------------------------------------------------------------------
# what ran
# ---------------------------------------------------------------------------

def judge(ran=None, **changes):
    args = dict(name='ml', ran=RAN if ran is None else ran, spec_dir=RAN['resource_dir'], python='/opt/env/bin/python',
                env=PLANNED_ENV, require_cuda=True)
    args.update(changes)
    return jk.ran_problem(**args)


def test_the_kernel_planned_passes_its_variables_compared_as_text_and_a_var_by_name():
    assert judge() is None
    assert judge(dict(RAN, cuda_available=False), require_cuda=False) is None
    assert jk.ran_summary('ml', RAN) == 'kernel ml: /opt/env/bin/python, torch 2.8.0, CUDA True, NVIDIA H100 80GB HBM3'
    assert jk.ran_summary('ml', dict(RAN, torch=None, cuda_available=False, device=None)) == (
        'kernel ml: /opt/env/bin/python, torch not installed, CUDA False')


@pytest.mark.parametrize('ran', [
    dict(RAN, resource_dir='/root/.local/share/jupyter/kernels/ml'),
    dict(RAN, executable='/usr/bin/python3'),
    dict(RAN, cuda_available=False),
    dict(RAN, env=dict(RAN['env'], OMP_NUM_THREADS='64')),
    dict(RAN, env=dict(RAN['env'], EXTRA='1')),
    dict(RAN, env=dict((key, value) for key, value in RAN['env'].items() if key != 'LD_LIBRARY_PATH')),
    dict(RAN, env=None),
    None,
])
def test_another_kernel_fails_naming_what_ran_and_what_was_expected(ran):
    ran = ran if ran is not None else []
    assert judge(ran) == ("jupyter_kernel: the kernel ml ran %s; expected /opt/env/bin/python from "
                          "/usr/local/share/jupyter/kernels/ml with env %s and a CUDA device" % (ran, PLANNED_ENV))


def test_without_cuda_required_the_message_asks_for_none():
    assert judge(dict(RAN, executable='/usr/bin/python3'), require_cuda=False).endswith("with env %s" % (PLANNED_ENV,))
