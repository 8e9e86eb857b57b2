# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The conda_env module's decisions, with conda's answers replayed from real conda 26.7 recordings."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import shutil
import threading

import pytest

from conftest import FIXTURES, read_conda, run_module
from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aistack.gpu_node.plugins.modules import conda_env

SPEC = {'channels': ['conda-forge', 'nodefaults'],
        'dependencies': ['python=3.11', 'pip', 'hello-ansible', 'libfoo=1.0', {'pip': ['six==1.17.0']}]}
LOCK = read_conda('conda-list-explicit-md5.txt')


def write_records(prefix, listing):
    """conda-meta as conda leaves it after making the env of a recorded ``conda list --json`` (``listing``):
    one record a conda package, with the URL and md5 the recorded ``conda list --explicit --md5`` of that
    env prints for it, and the history conda writes last."""
    meta = os.path.join(prefix, 'conda-meta')
    if os.path.isdir(meta):
        shutil.rmtree(meta)
    os.makedirs(meta)
    urls = [line for line in LOCK.splitlines() if '://' in line]
    for package in json.loads(read_conda(listing)):
        if package['channel'] == 'pypi':
            continue
        url, _sep, md5 = next(u for u in urls if u.rsplit('/', 1)[1].startswith(package['dist_name'] + '.')).partition('#')
        record = {'name': package['name'], 'version': package['version'], 'build': package['build_string'],
                  'build_number': package['build_number'], 'channel': package['base_url'], 'subdir': package['platform'],
                  'fn': url.rsplit('/', 1)[1], 'url': url, 'md5': md5, 'files': []}
        with open(os.path.join(meta, package['dist_name'] + '.json'), 'w') as handle:
            json.dump(record, handle)
    open(os.path.join(meta, 'history'), 'w').close()


class RecordedConda(object):
    """Answers each conda call with a recorded real output; ``answers`` maps the subcommand to
    (rc, fixture name or text). Calls are recorded in order."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.calls = []
        self.list_after_update = None
        self.probe = None  # the env python's answer to the BLAS probe: a fixtures/blas file name
        self.answers = {
            'config --show': (0, 'conda-config-show.json'),
            'create --dry-run': (0, 'env-create-dryrun.json'),
            'env create': (0, 'env-create-existing.json'),
            'env update': (0, 'env-update-prune.json'),
            'list --json': (0, 'conda-list-demo-pip.json'),
            'list --explicit': (0, 'conda-list-explicit-md5.txt'),
            'env export': (0, 'env-export-from-history.yml.txt'),
            'remove': (0, 'remove-env.json'),
        }

    def answer(self, argv, environ_update=None, **kwargs):
        if argv[0] == os.path.join(self.prefix, 'bin', 'python'):
            self.calls.append(['python'] + argv[1:3])
            if isinstance(self.probe, tuple):  # (rc, stderr) of a python that crashed
                return self.probe[0], '', self.probe[1]
            with open(os.path.join(FIXTURES, 'blas', self.probe)) as handle:
                return 0, handle.read(), ''
        args = argv[1:]
        self.calls.append(args)
        key = next(k for k in self.answers if args[:len(k.split())] == k.split()
                   or (k.split()[0] == args[0] and k.split()[1] in args))
        rc, answer = self.answers[key]
        if key == 'env create' and rc == 0:
            write_records(self.prefix, self.answers['list --json'][1])
            os.makedirs(os.path.join(self.prefix, 'bin'))
            with open(os.path.join(self.prefix, 'bin', 'python'), 'w') as handle:
                handle.write('#!/bin/sh\nexit 99\n')
            os.chmod(os.path.join(self.prefix, 'bin', 'python'), 0o755)
        if key == 'env update' and rc == 0 and self.list_after_update:
            self.answers['list --json'] = (0, self.list_after_update)
            write_records(self.prefix, self.list_after_update)
        if key == 'remove' and rc == 0:
            shutil.rmtree(os.path.join(self.prefix, 'conda-meta'))
            shutil.rmtree(os.path.join(self.prefix, 'bin'), ignore_errors=True)
        text = read_conda(answer) if answer.endswith(('.json', '.txt')) else answer
        return rc, text, ''

    def commands(self):
        return [' '.join(call[:2]) for call in self.calls]


@pytest.fixture
def node(tmp_path, monkeypatch):
    conda_prefix = tmp_path / 'conda'
    (conda_prefix / 'bin').mkdir(parents=True)
    (conda_prefix / 'bin' / 'conda').write_text('#!/bin/sh\nexit 99\n')
    (conda_prefix / 'bin' / 'conda').chmod(0o755)
    (tmp_path / 'envs').mkdir()
    prefix = str(tmp_path / 'envs' / 'demo-pip')
    fake = RecordedConda(prefix)
    # Set on the class, a bound method of the fake stays bound to the fake: it sees argv only.
    monkeypatch.setattr(AnsibleModule, 'run_command', fake.answer)
    args = {'name': 'demo-pip', 'spec': SPEC, 'conda_prefix': str(conda_prefix), 'prefix': prefix,
            'environment': {'CONDA_OVERRIDE_CUDA': '12.4'}}
    return fake, args, tmp_path / 'envs'


def test_create_then_idempotent(node, capsys):
    fake, args, envs = node
    code, result = run_module(conda_env, args, capsys)
    assert code == 0 and result['changed'] is True, result
    assert fake.commands() == ['config --show', 'create --dry-run', 'env create', 'list -p', 'list --explicit',
                               'env export']
    # Where envs live, the package caches and the base: conda's configuration, not conda info (twice the time).
    assert fake.calls[0] == ['config', '--show', 'envs_dirs', 'pkgs_dirs', 'root_prefix', '--json']
    solve = fake.calls[1]
    assert '--override-channels' in solve and solve[solve.index('-c') + 1] == 'conda-forge' and 'nodefaults' not in solve
    assert fake.calls[2][:3] == ['env', 'create', '-f'] and fake.calls[2][3] == str(envs / '.demo-pip.applying' / 'environment.yml')
    assert result['drift'] == ['env %s does not exist' % args['prefix']]
    assert result['package_changes']['added'][-1] == 'six==1.17.0=pypi_0'
    assert result['diff']['before'] == '' and 'python==3.11.7=repack_pyenv_0  (conda-forge)' in result['diff']['after']
    assert result['lock']['sha256'] and (envs / 'demo-pip.explicit.txt').read_text() == LOCK
    assert 'nodefaults' not in (envs / 'demo-pip.environment.yml').read_text()
    assert (envs / 'demo-pip.from-history.yml').read_text().startswith('name: demo-pip')
    assert not (envs / '.demo-pip.applying').exists()

    fake.calls[:] = []
    code, result = run_module(conda_env, args, capsys)
    assert code == 0 and result['changed'] is False and result['drift'] == []
    # The installed list is read once: conda-meta's records say what conda list --explicit would. It is started
    # ahead, beside config --show (test_the_env_is_listed_while_conda_says_where_envs_live).
    assert sorted(fake.commands()) == ['config --show', 'list -p']


def test_spec_change_predicted_in_check_mode_then_updated_with_prune(node, capsys):
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    drifted = dict(SPEC, dependencies=['python=3.11', 'pip', 'libfoo=1.0', {'pip': ['six==1.17.0']}])
    # The recorded dry run solved hello-ansible and libfoo alone: the prediction is its LINK list.
    fake.answers['create --dry-run'] = (0, 'dryrun-create-new.json')
    fake.calls[:] = []
    code, result = run_module(conda_env, dict(args, spec=drifted, _ansible_check_mode=True, _ansible_diff=True), capsys)
    assert code == 0 and result['changed'] is True
    assert result['drift'] == ['the declared spec changed since it was last applied']
    assert result['pip_simulated'] is False
    assert 'env update' not in fake.commands() and 'env create' not in fake.commands()
    assert result['package_changes']['removed'] == ['pip==26.3=pyh4616a5c_0', 'python==3.11.7=repack_pyenv_0']
    spec_before = (envs / 'demo-pip.environment.yml').read_text()

    fake.answers['env update'] = (0, 'env-update-prune-drift.json')
    fake.list_after_update = 'conda-list-demo-pip-after-prune.json'
    fake.calls[:] = []
    code, result = run_module(conda_env, dict(args, spec=drifted), capsys)
    assert code == 0 and result['changed'] is True
    assert [c[:3] for c in fake.calls if c[0] == 'env'] == [['env', 'update', '--prune'], ['env', 'export', '--from-history']], \
        'an existing env is updated, never created again'
    assert result['package_changes'] == {'added': [], 'removed': ['hello-ansible==1.0.0=h4616a5c_0'], 'changed': []}
    assert (envs / 'demo-pip.environment.yml').read_text() != spec_before


def test_hand_removed_package_is_drift(node, capsys):
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    fake.answers['list --json'] = (0, 'conda-list-demo-pip-after-prune.json')
    fake.answers['list --explicit'] = (0, '\n'.join(line for line in LOCK.splitlines() if 'hello-ansible' not in line))
    os.unlink(os.path.join(args['prefix'], 'conda-meta', 'hello-ansible-1.0.0-h4616a5c_0.json'))
    fake.calls[:] = []
    code, result = run_module(conda_env, dict(args, _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True
    assert result['drift'] == ['declared conda packages not installed: hello-ansible',
                               'the installed packages differ from the lock written after the last change']
    assert sorted(fake.commands()[:2]) == ['config --show', 'list -p']
    assert fake.commands()[2] == 'list --explicit', 'conda confirms what conda-meta says'
    assert result['package_changes']['added'] == ['hello-ansible==1.0.0=h4616a5c_0']


@pytest.mark.parametrize('answer, expected', [
    ('solve-fail-conflict.json', 'the spec cannot be solved'),
    ('solve-fail-missing-pkg.json', 'packages not found in the channels: no-such-package'),
    ('network-fail.json', 'channel unreachable: HTTP 000'),
])
def test_unsolvable_spec_fails_before_any_change(node, capsys, answer, expected):
    fake, args, envs = node
    fake.answers['create --dry-run'] = (1, answer)
    code, result = run_module(conda_env, args, capsys)
    assert code == 1 and expected in result['msg']
    assert fake.commands()[:2] == ['config --show', 'create --dry-run'] and set(fake.commands()[2:]) <= {'create --dry-run'}
    assert os.listdir(str(envs)) == []


@pytest.mark.parametrize('conflict', [
    'solve-fail-conflict.json',
    # classic conda often names nothing (issue 36, F6)
    json.dumps({'exception_name': 'UnsatisfiableError', 'message': '', 'error': 'UnsatisfiableError: '})])
def test_an_unsolvable_spec_names_the_declared_specs_that_conflict(node, capsys, monkeypatch, conflict):
    """Dry runs with one spec left out at a time find the conflicting ones, whatever conda's message says."""
    fake, args, envs = node
    spec = dict(SPEC, dependencies=['python=3.11', 'pip', 'hello-ansible', 'libfoo>=2'])
    recorded = fake.answer

    def answer(argv, **kwargs):
        if argv[1:3] == ['create', '--dry-run'] and 'hello-ansible' in argv and 'libfoo>=2' in argv:
            fake.calls.append(argv[1:])
            return 1, read_conda(conflict) if conflict.endswith('.json') else conflict, ''
        return recorded(argv, **kwargs)

    monkeypatch.setattr(AnsibleModule, 'run_command', staticmethod(answer))
    code, result = run_module(conda_env, dict(args, spec=spec), capsys)
    assert code == 1 and result['msg'].endswith(
        'The declared specs that cannot be solved together: hello-ansible, libfoo>=2 (without any one of them the '
        'others solve)'), result['msg']
    assert fake.commands().count('create --dry-run') == 5 and os.listdir(str(envs)) == []


def test_failed_update_writes_no_lock(node, capsys):
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    lock_before = (envs / 'demo-pip.explicit.txt').read_text()
    fake.answers['env update'] = (1, 'solve-fail-conflict.json')
    code, result = run_module(conda_env, dict(args, spec=dict(SPEC, dependencies=SPEC['dependencies'] + ['libfoo>=2'])), capsys)
    assert code == 1 and 'conda env update --prune' in result['msg']
    assert (envs / 'demo-pip.explicit.txt').read_text() == lock_before
    assert 'libfoo>=2' not in (envs / 'demo-pip.environment.yml').read_text()


def test_work_folder_of_an_unfinished_change_is_cleared_by_the_repair_and_by_removal(node, capsys):
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    work = envs / '.demo-pip.applying'
    drifted = dict(SPEC, dependencies=SPEC['dependencies'] + ['libfoo>=2'])
    fake.answers['env update'] = (1, 'solve-fail-conflict.json')
    code, result = run_module(conda_env, dict(args, spec=drifted), capsys)
    assert code == 1 and (envs / 'demo-pip.in-progress.json').exists()
    # What real conda leaves there when it is killed while pip runs.
    (work / 'condaenv.k3j9x1.requirements.txt').write_text('six==1.17.0\n')
    assert sorted(os.listdir(str(work))) == ['condaenv.k3j9x1.requirements.txt', 'environment.yml']

    fake.answers['env update'] = (0, 'env-update-prune.json')
    code, result = run_module(conda_env, dict(args, spec=drifted), capsys)
    assert code == 0 and result['changed'] is True and result['interrupted']['action'] == 'update'
    assert not work.exists() and not (envs / 'demo-pip.in-progress.json').exists()
    assert 'libfoo>=2' in (envs / 'demo-pip.environment.yml').read_text()

    fake.answers['env update'] = (1, 'solve-fail-conflict.json')
    run_module(conda_env, dict(args, spec=SPEC), capsys)
    assert work.exists()
    code, result = run_module(conda_env, dict(args, state='absent'), capsys)
    assert code == 0 and os.listdir(str(envs)) == ['demo-pip']


def test_absent_removes_env_and_locks(node, capsys):
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    code, result = run_module(conda_env, dict(args, state='absent', _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True and os.path.isdir(args['prefix'] + '/conda-meta')
    assert result['package_changes']['removed'][0] == 'hello-ansible==1.0.0=h4616a5c_0'
    code, result = run_module(conda_env, dict(args, state='absent'), capsys)
    assert code == 0 and result['changed'] is True
    assert fake.calls[-1][:3] == ['remove', '-y', '--all'] and os.listdir(str(envs)) == ['demo-pip']
    fake.calls[:] = []
    code, result = run_module(conda_env, dict(args, state='absent'), capsys)
    assert code == 0 and result['changed'] is False


def test_refusals(node, capsys, tmp_path):
    fake, args, envs = node
    code, result = run_module(conda_env, dict(args, conda_prefix=str(tmp_path / 'none')), capsys)
    assert code == 1 and 'has no executable bin/conda' in result['msg']
    code, result = run_module(conda_env, dict(args, prefix='/opt/conda'), capsys)
    assert code == 1 and 'is the base prefix' in result['msg']
    code, result = run_module(conda_env, dict(args, name='base'), capsys)
    assert code == 1 and 'not a usable environment name' in result['msg']
    code, result = run_module(conda_env, dict(args, spec={'dependencies': 'python'}), capsys)
    assert code == 1 and result['msg'].startswith('spec of env demo-pip: dependencies must be a non-empty list')
    code, result = run_module(conda_env, dict(args, lock_dir=str(tmp_path / 'missing')), capsys)
    assert code == 1 and 'lock_dir' in result['msg']
    assert 'env create' not in fake.commands()


def test_check_mode_with_unreachable_channels_warns_instead_of_failing(node, capsys):
    fake, args, envs = node
    fake.answers['create --dry-run'] = (1, 'network-fail.json')
    code, result = run_module(conda_env, dict(args, _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True
    assert result['not_predicted'].startswith('packages not predicted, the channels are unreachable: conda create')
    assert os.listdir(str(envs)) == []


TORCH_SPEC = {'channels': ['conda-forge'], 'dependencies': ['python=3.11', 'pip', {'pip': ['torch==2.11.0']}]}


def test_torch_wheel_variant_is_fitted_to_the_driver_and_kept_in_the_applied_spec(node, capsys):
    fake, args, envs = node
    code, result = run_module(conda_env, dict(args, spec=TORCH_SPEC, driver_version='580.159.04'), capsys)
    assert code == 0 and result['torch_variant']['variant'] == 'cu130' and result['torch_variant']['support'] == 'full'
    assert '"--extra-index-url https://download.pytorch.org/whl/cu130"' in (envs / 'demo-pip.environment.yml').read_text()


def test_a_torch_variant_the_driver_cannot_run_is_refused_before_conda_runs(node, capsys):
    fake, args, envs = node
    pip_section = ['--index-url https://download.pytorch.org/whl/cu130', 'torch==2.11.0']
    spec = dict(TORCH_SPEC, dependencies=['python=3.11', 'pip', {'pip': pip_section}])
    code, result = run_module(conda_env, dict(args, spec=spec, driver_version='535.309.01'), capsys)
    assert code == 1 and "torch cu130 wheels (torch 2.11.0) need a newer driver than this node's 535.309.01" in result['msg']
    assert fake.commands() == ['config --show'] and os.listdir(str(envs)) == []


BLAS_SPEC = dict(SPEC, dependencies=SPEC['dependencies'] + ['numpy', 'blas=*=openblas'])
OPENBLAS = '/tmp/condablas/npvenv/lib/python3.11/site-packages/numpy.libs/libscipy_openblas64_-32a4b2a6.so'


def test_blas_verified_after_create_and_read_only_in_check_mode(node, capsys):
    fake, args, envs = node
    fake.probe = 'numpy-2.4.6-pypi-venv.json'
    code, result = run_module(conda_env, dict(args, spec=BLAS_SPEC), capsys)
    assert code == 0 and result['changed'] is True, result
    assert fake.commands()[-1] == 'python -I', 'numpy is asked after the locks are written'
    assert fake.calls[-1] == ['python', '-I', '-B']
    blas = result['blas']
    assert blas['verified'] is True and blas['requested'] == 'openblas' and blas['requested_by'] == 'blas=*=openblas'
    assert blas['libraries'] == [OPENBLAS] and blas['numpy_build_blas']['name'] == 'scipy-openblas'

    # The recorded package list is the demo-pip env's: the spec it was made from, with the BLAS key.
    run_module(conda_env, dict(args, blas='openblas'), capsys)
    fake.calls[:] = []
    code, result = run_module(conda_env, dict(args, blas='openblas', _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is False and result['blas']['verified'] is True
    assert sorted(fake.commands()[:2]) == ['config --show', 'list -p'] and fake.commands()[2:] == ['python -I']


def test_blas_not_probed_in_check_mode_before_the_env_exists_nor_without_a_request(node, capsys):
    fake, args, envs = node
    code, result = run_module(conda_env, dict(args, spec=BLAS_SPEC, _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True
    assert result['blas']['not_probed'] == 'check mode: the env would be created first'
    code, result = run_module(conda_env, args, capsys)
    assert code == 0 and result['blas'] is None and 'python -I' not in fake.commands()


def test_blas_mismatch_fails_naming_env_blas_library_and_fix(node, capsys):
    fake, args, envs = node
    fake.probe = 'numpy-2.4.6-pypi-venv.json'
    code, result = run_module(conda_env, dict(args, spec=BLAS_SPEC, blas='mkl'), capsys)
    assert code == 1 and 'make them agree' in result['msg'] and fake.commands() == ['config --show']

    code, result = run_module(conda_env, dict(args, blas='mkl'), capsys)
    assert code == 1
    assert result['msg'].startswith('env demo-pip asks for BLAS mkl (blas), but numpy 2.4.6 in %s loads openblas (%s). '
                                    'Fix: ' % (args['prefix'], OPENBLAS))
    assert result['changed'] is True and result['blas']['found'] == ['openblas'], 'the env was created, then checked'
    assert (envs / 'demo-pip.explicit.txt').exists(), 'the lock is written, so every later run checks again'

    code, result = run_module(conda_env, dict(args, blas='mkl'), capsys)
    assert code == 1 and 'asks for BLAS mkl' in result['msg'] and result.get('changed', False) is False


def test_numpy_missing_when_a_blas_is_asked_fails(node, capsys):
    fake, args, envs = node
    fake.probe = 'no-numpy-venv.json'
    code, result = run_module(conda_env, dict(args, blas='openblas'), capsys)
    assert code == 1 and "numpy does not import in %s (ModuleNotFoundError: No module named 'numpy')" % args['prefix'] \
        in result['msg']


def test_unsolvable_blas_request_names_the_blas_and_what_the_env_uses(node, capsys):
    fake, args, envs = node
    fake.probe = 'numpy-2.4.6-pypi-venv.json'
    run_module(conda_env, dict(args, spec=BLAS_SPEC), capsys)
    lock = (envs / 'demo-pip.explicit.txt').read_text()
    fake.answers['create --dry-run'] = (1, 'solve-fail-conflict.json')
    fake.calls[:] = []
    mkl = dict(SPEC, dependencies=SPEC['dependencies'] + ['numpy', 'blas=*=mkl'])
    code, result = run_module(conda_env, dict(args, spec=mkl), capsys)
    assert code == 1
    assert result['msg'].startswith('env demo-pip asks for BLAS mkl (blas=*=mkl) and the spec cannot be solved; the env is '
                                    'unchanged. The env now uses openblas (numpy 2.4.6: %s). Fix: ' % OPENBLAS)
    assert 'UnsatisfiableError' in result['msg']
    assert 'env update' not in fake.commands() and (envs / 'demo-pip.explicit.txt').read_text() == lock


def test_blas_probe_crash_and_env_without_python_are_named(node, capsys):
    fake, args, envs = node
    fake.probe = (132, 'Illegal instruction (core dumped)')
    code, result = run_module(conda_env, dict(args, blas='openblas'), capsys)
    assert code == 1 and result['msg'] == ('env demo-pip: %s/bin/python -c <numpy BLAS probe> failed (rc=132): '
                                           'Illegal instruction (core dumped)' % args['prefix'])
    os.unlink(os.path.join(args['prefix'], 'bin', 'python'))
    code, result = run_module(conda_env, dict(args, blas='openblas'), capsys)
    assert code == 1 and 'numpy does not import in %s (the env has no bin/python)' % args['prefix'] in result['msg']


def _list_with_libfoo_from(channel):
    """The recorded ``conda list --json`` of demo-pip, with libfoo as if it came from ``channel``."""
    records = json.loads(read_conda('conda-list-demo-pip.json'))
    for record in records:
        if record['name'] == 'libfoo':
            record['channel'] = channel
    return json.dumps(records)


def test_nodefaults_env_with_packages_from_another_channel_is_refused(node, capsys):
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    fake.answers['list --json'] = (0, _list_with_libfoo_from('pkgs/main'))
    fake.calls[:] = []
    code, result = run_module(conda_env, dict(args, _ansible_check_mode=True), capsys)
    assert code == 1 and result['msg'].startswith(
        'env demo-pip declares nodefaults and channels conda-forge, but has packages from other channels: '
        'libfoo (pkgs/main). conda env update adds the channels of .condarc')
    assert 'env update' not in fake.commands()
    # Without nodefaults the spec accepts what .condarc adds.
    spec = dict(SPEC, channels=['conda-forge'])
    fake.answers['list --json'] = (0, _list_with_libfoo_from('conda-forge'))
    run_module(conda_env, dict(args, spec=spec), capsys)
    fake.answers['list --json'] = (0, _list_with_libfoo_from('pkgs/main'))
    code, result = run_module(conda_env, dict(args, spec=spec), capsys)
    assert code == 0 and 'declares nodefaults' not in json.dumps(result)


def test_a_url_channel_allows_its_packages(node, capsys):
    fake, args, envs = node
    spec = dict(SPEC, channels=['file:///srv/conda-mirror/conda-forge/', 'nodefaults'])
    code, result = run_module(conda_env, dict(args, spec=spec), capsys)
    assert code == 0 and result['changed'] is True, result


def test_conda_error_with_the_mirror_password_is_redacted_in_msg(node, capsys):
    """Issue 35, item 3: conda expands channel_alias of .condarc, password included, in its errors."""
    fake, args, envs = node
    secret = 'S3cretMirrorPw'
    failure = read_conda('network-fail.json').replace(
        'https://conda.anaconda.org', 'https://mirroruser:%s@mirror.example' % secret)
    fake.answers['create --dry-run'] = (1, failure)
    code, result = run_module(conda_env, args, capsys)
    assert code == 1 and 'channel unreachable' in result['msg'], result
    assert secret not in json.dumps(result) and 'mirroruser:***@mirror.example' in result['msg']


@pytest.mark.parametrize('state', ['present', 'absent'])
def test_an_env_folder_another_user_owns_is_refused_before_conda_runs(node, capsys, state):
    """Left by the days when the conda base was group-writable: root must not run a user's env."""
    fake, args, envs = node
    os.makedirs(args['prefix'] + '/conda-meta')
    os.chown(args['prefix'], 65534, 65534)
    code, result = run_module(conda_env, dict(args, state=state), capsys)
    assert code == 1 and result['msg'] == (
        'env demo-pip: %s belongs to nobody, not root: the role would run code from it as root. It is that '
        "user's environment (made when the conda base was group-writable); move it away or give the env another "
        'name. Nothing was changed' % args['prefix'])
    assert fake.calls == [] or all(call[:2] == ['config', '--show'] for call in fake.calls)


def test_a_pip_line_for_what_the_solve_links_is_refused_before_any_change(node, capsys):
    """The recorded dry run links libfoo as hello-ansible's dependency; a pip line for it never converges."""
    fake, args, envs = node
    spec = dict(SPEC, dependencies=['python=3.11', 'pip', 'hello-ansible', {'pip': ['libfoo==1.0.0']}])
    code, result = run_module(conda_env, dict(args, spec=spec), capsys)
    assert code == 1 and result['msg'].startswith(
        'spec of env demo-pip: the pip: section asks for libfoo==1.0.0, but conda installs it as a dependency')
    assert result['msg'].endswith('Nothing was changed')
    assert fake.commands() == ['config --show', 'create --dry-run'] and os.listdir(str(envs)) == []


def test_a_gone_channel_in_check_mode_is_reported_not_failed(node, capsys):
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    gone = json.dumps({'exception_name': 'UnavailableInvalidChannel', 'channel_name': 'gone', 'status_code': 404,
                       'channel_url': 'http://mirror/gone', 'message': 'HTTP 404 NOT FOUND for channel gone'})
    fake.answers['create --dry-run'] = (1, gone)
    spec = dict(SPEC, channels=['conda-forge', 'gone', 'nodefaults'])
    code, result = run_module(conda_env, dict(args, spec=spec, _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True
    assert result['not_predicted'].endswith('channel gone is gone or not a channel: HTTP 404 at http://mirror/gone')
    code, result = run_module(conda_env, dict(args, spec=spec), capsys)
    assert code == 1 and 'channel gone is gone or not a channel' in result['msg']


def test_variables_are_drift_and_the_dropped_ones_unset(node, capsys):
    fake, args, envs = node
    run_module(conda_env, dict(args, spec=dict(SPEC, variables={'A': '1', 'B': '2'})), capsys)
    with open(os.path.join(args['prefix'], 'conda-meta', 'state'), 'w') as handle:
        json.dump({'env_vars': {'A': '1', 'B': '2'}}, handle)  # what conda env create wrote
    fake.answers['env config'] = (0, '')
    fake.calls[:] = []
    code, result = run_module(conda_env, dict(args, spec=dict(SPEC, variables={'A': '3'})), capsys)
    assert code == 0 and 'variable A is "1" in the env, declared "3"' in result['drift']
    assert result['commands'][-1] == 'conda env config vars unset -p %s B' % args['prefix']


def test_the_env_is_listed_while_conda_says_where_envs_live(node, capsys, monkeypatch):
    """Each conda run is a conda start of its own: the list of an env where it most likely is starts first."""
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    listing, answered = threading.Event(), []

    def answer(module, argv, **kwargs):
        if argv[1:3] == ['list', '-p']:
            listing.set()
        elif argv[1:3] == ['config', '--show']:
            answered.append(listing.wait(10))
        return fake.answer(argv, **kwargs)
    monkeypatch.setattr(AnsibleModule, 'run_command', answer)
    fake.calls[:] = []
    code, result = run_module(conda_env, args, capsys)
    assert code == 0 and result['changed'] is False and answered == [True]
    assert sorted(fake.commands()) == ['config --show', 'list -p'] and ['list', '-p', args['prefix'], '--json'] in fake.calls


def test_a_list_ahead_of_another_prefix_is_not_taken(node, capsys):
    """Where conda's envs_dirs put the env elsewhere than the base's envs/, conda lists the env it found."""
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    likely = os.path.join(args['conda_prefix'], 'envs', 'demo-pip')
    write_records(likely, 'conda-list-demo-pip-after-prune.json')
    shown = json.loads(read_conda('conda-config-show.json'))
    fake.answers['config --show'] = (0, json.dumps(dict(shown, envs_dirs=[str(envs)])))
    fake.calls[:] = []
    code, result = run_module(conda_env, dict(args, prefix=None), capsys)
    assert code == 0 and result['changed'] is False and result['prefix'] == args['prefix']
    assert sorted(call[2] for call in fake.calls if call[:2] == ['list', '-p']) == sorted([likely, args['prefix']])


def test_another_users_env_is_not_listed_ahead(node, capsys):
    fake, args, envs = node
    write_records(args['prefix'], 'conda-list-demo-pip.json')
    os.chown(args['prefix'], 65534, 65534)
    code, result = run_module(conda_env, args, capsys)
    assert code == 1 and 'belongs to nobody, not root' in result['msg']
    assert fake.commands() == ['config --show']
