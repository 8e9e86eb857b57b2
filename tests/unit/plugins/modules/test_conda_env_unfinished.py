# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The conda_env module around a conda call killed midway (SIGKILL: run_command's rc -9), with
conda's other answers replayed from real conda 26.7 recordings (test_conda_env.RecordedConda)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import shutil

from conftest import run_module
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import env as ce
from ansible_collections.aistack.gpu_node.plugins.modules import conda_env
from test_conda_env import SPEC, node  # noqa: F401  pylint: disable=unused-import

KILLED = (-9, '')
EDITED = dict(SPEC, dependencies=['python=3.11', 'pip', 'libfoo=1.0', {'pip': ['six==1.17.0']}])


def marker_of(envs):
    path = envs / 'demo-pip.in-progress.json'
    return json.loads(path.read_text()) if path.exists() else None


def test_killed_update_leaves_a_marker_that_check_mode_reports_and_the_next_run_clears(node, capsys):  # noqa: F811
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    lock_before = (envs / 'demo-pip.explicit.txt').read_text()
    fake.answers['env update'] = KILLED
    code, result = run_module(conda_env, dict(args, spec=EDITED), capsys)
    assert code == 1 and 'conda env update --prune' in result['msg'] and 'rc=-9' in result['msg']
    marker = marker_of(envs)
    assert marker['action'] == 'update' and marker['env'] == 'demo-pip' and marker['prefix'] == args['prefix']
    assert marker['command'].startswith('conda env update --prune -f ') and marker['started'].endswith('Z')
    assert (envs / 'demo-pip.explicit.txt').read_text() == lock_before, 'the old lock stays, and the marker says it is stale'

    fake.calls[:] = []
    marker_text = (envs / 'demo-pip.in-progress.json').read_text()
    code, result = run_module(conda_env, dict(args, spec=EDITED, _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True and result['interrupted'] == marker
    assert result['drift'][0] == 'an earlier change of env demo-pip (%s) started at %s did not finish; it is applied again' % (
        marker['command'], marker['started'])
    assert 'env update' not in fake.commands() and (envs / 'demo-pip.in-progress.json').read_text() == marker_text

    fake.answers['env update'] = (0, 'env-update-prune-drift.json')
    fake.calls[:] = []
    code, result = run_module(conda_env, dict(args, spec=EDITED), capsys)
    assert code == 0 and result['changed'] is True
    assert [c[:2] for c in fake.calls if c[0] in ('env', 'remove')] == [['env', 'update'], ['env', 'export']]
    assert marker_of(envs) is None and result['lock']['marker'] == str(envs / 'demo-pip.in-progress.json')


def test_a_marker_is_drift_even_when_the_packages_look_right(node, capsys):  # noqa: F811
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    fake.answers['env update'] = KILLED
    run_module(conda_env, dict(args, spec=EDITED), capsys)
    # Killed after its transaction: the env and the lock are as before, only the marker tells.
    fake.answers['env update'] = (0, 'env-update-prune.json')
    fake.calls[:] = []
    code, result = run_module(conda_env, dict(args, _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True and len(result['drift']) == 1
    assert result['drift'][0].endswith('did not finish; the env is removed and created again'), \
        'the killed update was towards another spec'
    code, result = run_module(conda_env, args, capsys)
    assert code == 0 and result['changed'] is True and marker_of(envs) is None
    assert [c[:3] for c in fake.calls if c[0] in ('env', 'remove')][-3:] == [
        ['remove', '-y', '--all'], ['env', 'create', '-f'], ['env', 'export', '--from-history']]
    fake.calls[:] = []
    code, result = run_module(conda_env, args, capsys)
    assert code == 0 and result['changed'] is False


def test_killed_create_with_partial_conda_meta_is_deleted_then_created(node, capsys):  # noqa: F811
    """conda writes conda-meta/history last and refuses a prefix without it, remove --all included."""
    fake, args, envs = node
    fake.answers['env create'] = KILLED
    code, result = run_module(conda_env, args, capsys)
    assert code == 1 and 'rc=-9' in result['msg']
    assert marker_of(envs)['action'] == 'create' and marker_of(envs)['prefix_is_ours'] is True
    os.makedirs(os.path.join(args['prefix'], 'conda-meta'))  # as far as conda got

    fake.answers['env create'] = (0, 'env-create-existing.json')
    fake.calls[:] = []
    code, result = run_module(conda_env, args, capsys)
    assert code == 0 and result['changed'] is True and marker_of(envs) is None
    assert result['drift'][0].endswith('did not finish; the env is removed and created again')
    assert result['drift'][1] == ce.not_an_env_reason(args['prefix'])
    assert result['commands'][0] == 'rm -rf %s' % args['prefix']
    assert result['commands'][1].startswith('conda env create -f ')
    called = [c[0] for c in fake.calls]
    assert 'list' not in called[:called.index('env')], 'conda refuses such a prefix: it is not asked'


def test_killed_unlink_is_damage_that_replaces_the_env(node, capsys):  # noqa: F811
    """A record whose files are gone and *.c~ backups: conda calls the env complete; it is replaced."""
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    meta = os.path.join(args['prefix'], 'conda-meta')
    with open(os.path.join(meta, 'libfoo-1.0.0-h4616a5c_0.json'), 'w') as handle:
        json.dump({'name': 'libfoo', 'version': '1.0.0', 'files': ['share/libfoo/VERSION']}, handle)
    os.makedirs(os.path.join(args['prefix'], 'share', 'libfoo'))
    open(os.path.join(args['prefix'], 'share', 'libfoo', 'VERSION.c~'), 'w').close()
    fake.calls[:] = []
    code, result = run_module(conda_env, dict(args, _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True and result['drift'][:2] == [
        'package libfoo 1.0.0 has 1 file(s) missing: share/libfoo/VERSION',
        '1 file(s) left as .c~ backups by an interrupted conda transaction: share/libfoo/VERSION.c~; '
        'the env is removed and created again']
    code, result = run_module(conda_env, args, capsys)
    assert code == 0 and result['commands'][0] == 'conda remove -y --all -p %s --json' % args['prefix']
    assert result['commands'][1].startswith('conda env create -f ')


def test_a_file_deleted_by_hand_is_repaired_by_reinstalling_its_package_alone(node, capsys):  # noqa: F811
    """A record whose file is gone, no backups: only that package is reinstalled; bytecode is no damage."""
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    meta = os.path.join(args['prefix'], 'conda-meta')
    with open(os.path.join(meta, 'pip-26.3-pyh4616a5c_0.json'), 'w') as handle:
        json.dump({'name': 'pip', 'version': '26.3', 'build': 'pyh4616a5c_0',
                   'files': ['lib/python3.11/site-packages/pip/__pycache__/__init__.cpython-311.pyc']}, handle)
    fake.calls[:] = []
    code, result = run_module(conda_env, dict(args, _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is False and 'repair' not in result, 'missing bytecode is no damage'
    with open(os.path.join(meta, 'libfoo-1.0.0-h4616a5c_0.json'), 'w') as handle:
        json.dump({'name': 'libfoo', 'version': '1.0.0', 'build': 'h4616a5c_0', 'files': ['share/libfoo/VERSION']}, handle)
    code, result = run_module(conda_env, dict(args, _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True and result['repair']['how'] == 'reinstall'
    assert 'install' not in fake.commands()[-1]
    fake.answers['install'] = (0, 'dryrun-upgrade-libfoo.json')
    fake.calls[:] = []
    code, result = run_module(conda_env, args, capsys)
    assert code == 0 and result['commands'] == [
        'conda install -y --force-reinstall -p %s --override-channels -c conda-forge libfoo==1.0.0=h4616a5c_0 --json'
        % args['prefix']], 'the spec is unchanged: no env update, no replacement'
    assert 'remove' not in fake.commands() and 'env update' not in fake.commands()
    assert marker_of(envs) is None


def test_killed_create_before_conda_meta_deletes_only_its_own_folder(node, capsys):  # noqa: F811
    fake, args, envs = node
    fake.answers['env create'] = KILLED
    run_module(conda_env, args, capsys)
    os.makedirs(os.path.join(args['prefix'], 'lib'))  # files linked, no record written yet
    fake.answers['env create'] = (0, 'env-create-existing.json')
    code, result = run_module(conda_env, args, capsys)
    assert code == 0 and result['commands'][0] == 'rm -rf %s' % args['prefix']
    assert not os.path.exists(os.path.join(args['prefix'], 'lib')) and marker_of(envs) is None


def test_a_folder_that_was_there_before_is_not_deleted(node, capsys):  # noqa: F811
    fake, args, envs = node
    os.makedirs(os.path.join(args['prefix'], 'notes'))
    fake.answers['env create'] = KILLED
    run_module(conda_env, args, capsys)
    assert marker_of(envs)['prefix_is_ours'] is False
    fake.answers['env create'] = (0, 'env-create-existing.json')
    code, result = run_module(conda_env, args, capsys)
    assert code == 0 and 'rm -rf' not in ' '.join(result['commands'])
    assert os.path.isdir(os.path.join(args['prefix'], 'notes'))


def test_killed_removal_is_finished_by_state_absent(node, capsys):  # noqa: F811
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    fake.answers['remove'] = KILLED
    code, result = run_module(conda_env, dict(args, state='absent'), capsys)
    assert code == 1 and marker_of(envs)['action'] == 'remove' and (envs / 'demo-pip.explicit.txt').exists()
    fake.answers['remove'] = (0, 'remove-env.json')
    code, result = run_module(conda_env, dict(args, state='absent', _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True and marker_of(envs) is not None
    assert result['drift'] == [
        'an earlier change of env demo-pip (conda remove -y --all -p %s) started at %s did not finish; '
        'what is left of the env is removed' % (args['prefix'], result['interrupted']['started']),
        'env %s exists' % args['prefix']]
    code, result = run_module(conda_env, dict(args, state='absent'), capsys)
    assert code == 0 and result['changed'] is True and os.listdir(str(envs)) == ['demo-pip']
    code, result = run_module(conda_env, dict(args, state='absent'), capsys)
    assert code == 0 and result['changed'] is False


def test_a_stray_marker_alone_is_cleared_by_state_absent(node, capsys):  # noqa: F811
    fake, args, envs = node
    (envs / 'demo-pip.in-progress.json').write_text('{"action": "upd')
    code, result = run_module(conda_env, dict(args, state='absent'), capsys)
    assert code == 0 and result['changed'] is True and result['interrupted']['action'] is None
    assert os.listdir(str(envs)) == [] and fake.commands() == ['config --show']


def test_killed_removal_that_got_past_conda_meta_deletes_the_folder(node, capsys):  # noqa: F811
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    fake.answers['remove'] = KILLED
    run_module(conda_env, dict(args, state='absent'), capsys)
    assert marker_of(envs)['command'] == 'conda remove -y --all -p %s' % args['prefix']
    shutil.rmtree(os.path.join(args['prefix'], 'conda-meta'))  # conda had got that far
    code, result = run_module(conda_env, dict(args, state='absent'), capsys)
    assert code == 0 and result['changed'] is True and result['commands'] == ['rm -rf %s' % args['prefix']]
    assert os.listdir(str(envs)) == []


def test_conda_meta_deleted_under_an_env_of_ours_is_drift_and_the_folder_is_replaced(node, capsys):  # noqa: F811
    """Creating over it would leave what the spec dropped importable (issue 36)."""
    fake, args, envs = node
    run_module(conda_env, args, capsys)
    shutil.rmtree(os.path.join(args['prefix'], 'conda-meta'))
    code, result = run_module(conda_env, dict(args, _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True and result['drift'] == [ce.meta_lost_reason(args['prefix'])]
    code, result = run_module(conda_env, args, capsys)
    assert code == 0 and result['commands'][0] == 'rm -rf %s' % args['prefix']
    assert result['commands'][1].startswith('conda env create -f ')
