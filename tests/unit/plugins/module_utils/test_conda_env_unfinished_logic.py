# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""conda_env's decisions about a change that did not finish (its in-progress marker)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

import pytest

from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import env as ce

SHA = 'a' * 64


def marker(action='update', spec_sha256=SHA, prefix_is_ours=False):
    return ce.parse_marker(ce.render_marker(
        'demo-pip', '/opt/conda/envs/demo-pip', action,
        'conda env update --prune -f /opt/conda/envs/.demo-pip.applying.yml -p /opt/conda/envs/demo-pip',
        spec_sha256, '2026-12-02T22:10:00Z', prefix_is_ours))


def test_marker_round_trip_says_what_when_and_which_spec():
    record = marker()
    assert record == {'env': 'demo-pip', 'prefix': '/opt/conda/envs/demo-pip', 'action': 'update',
                      'command': 'conda env update --prune -f /opt/conda/envs/.demo-pip.applying.yml -p /opt/conda/envs/demo-pip',
                      'spec_sha256': SHA, 'started': '2026-12-02T22:10:00Z', 'prefix_is_ours': False}


@pytest.mark.parametrize('text', ['', '{"action": "upd', '[]', json.dumps({'action': 'reinstall'})])
def test_unreadable_marker_is_an_unfinished_change_of_unknown_kind(text):
    record = ce.parse_marker(text)
    assert record['action'] is None and record['prefix_is_ours'] is False
    assert ce.unfinished_change('demo-pip', record, 'create', 'conda') == (
        'an earlier change of env demo-pip (unreadable in-progress marker) did not finish; '
        'the env is removed and created again')


def test_no_marker_keeps_the_usual_choice():
    assert ce.present_plan(True, True, None, SHA) == ('update', None)
    assert ce.present_plan(False, False, None, SHA) == ('create', None)
    # A folder that is no env and no leftover of ours is left to conda, as before.
    assert ce.present_plan(False, True, None, SHA) == ('create', None)


def test_killed_update_of_the_same_spec_is_applied_again():
    record = marker()
    assert ce.present_plan(True, True, record, SHA) == ('update', None)
    assert ce.unfinished_change('demo-pip', record, 'update', None) == (
        'an earlier change of env demo-pip (conda env update --prune -f /opt/conda/envs/.demo-pip.applying.yml '
        '-p /opt/conda/envs/demo-pip) started at 2026-12-02T22:10:00Z did not finish; it is applied again')


def test_killed_update_towards_another_spec_is_rebuilt():
    # A package conda had half unlinked keeps its record: a new spec that keeps it would keep it broken.
    assert ce.present_plan(True, True, marker(spec_sha256='b' * 64), SHA) == ('create', 'conda')


@pytest.mark.parametrize('action', ['create', 'remove'])
def test_killed_create_or_removal_is_removed_and_created_again(action):
    # conda-meta partly written: conda itself removes what it knows of and deletes the folder.
    assert ce.present_plan(True, True, marker(action, prefix_is_ours=True), SHA) == ('create', 'conda')
    # No conda-meta yet (or any more), a folder of ours: deleted before the create.
    assert ce.present_plan(False, True, marker(action, prefix_is_ours=True), SHA) == ('create', 'directory')
    # Nothing left.
    assert ce.present_plan(False, False, marker(action, prefix_is_ours=True), SHA) == ('create', None)


def test_a_folder_that_was_there_before_the_create_is_never_deleted():
    assert ce.present_plan(False, True, marker('create', prefix_is_ours=False), SHA) == ('create', None)
    assert ce.absent_plan(False, True, marker('create', prefix_is_ours=False)) is None


def test_absent_plan():
    assert ce.absent_plan(True, True, None) == 'conda'
    assert ce.absent_plan(False, True, None) is None
    assert ce.absent_plan(False, True, marker('remove', prefix_is_ours=True)) == 'directory'
    assert ce.absent_plan(False, False, marker('remove', prefix_is_ours=True)) is None


def test_owns_prefix():
    assert ce.owns_prefix('remove', 'conda', True) is True
    assert ce.owns_prefix('create', None, False) is True
    assert ce.owns_prefix('create', 'conda', True) is True
    assert ce.owns_prefix('create', None, True) is False
    assert ce.owns_prefix('update', None, True) is False


def test_unfinished_change_wording_per_outcome():
    record = marker('create', prefix_is_ours=True)
    assert ce.unfinished_change('demo-pip', record, 'create', None).endswith('did not finish; the env is created again')
    assert ce.unfinished_change('demo-pip', record, 'remove', 'conda').endswith(
        'did not finish; what is left of the env is removed')


@pytest.mark.parametrize('has, kind', [
    ((True, True, True), 'env'), ((True, True, False), 'not-an-env'), ((True, False, False), 'folder'),
    ((False, False, False), 'missing')])
def test_only_conda_meta_history_makes_an_env(has, kind):
    """conda's own test (it writes history last and refuses any other prefix)."""
    assert ce.prefix_kind(*has) == kind


@pytest.mark.parametrize('record', [None, marker(), marker('create', prefix_is_ours=True), marker(spec_sha256='b' * 64)])
def test_a_prefix_conda_refuses_is_deleted_then_created_with_or_without_marker(record):
    assert ce.present_plan(False, True, record, SHA, not_an_env=True) == ('create', 'directory')
    assert ce.absent_plan(False, True, record, not_an_env=True) == 'directory'


@pytest.mark.parametrize('record', [None, marker()])
def test_a_damaged_env_is_removed_then_created_even_for_the_same_spec(record):
    assert ce.present_plan(True, True, record, SHA, damaged=True) == ('create', 'conda')


def test_damage_names_packages_with_missing_files_and_backups_and_is_past_repair_with_backups():
    records = [{'name': 'numpy', 'version': '2.4.6', 'build': 'py311_0', 'missing': ['lib/a.py', 'lib/b.py', 'lib/c.py', 'lib/d.py']},
               {'name': 'libfoo', 'version': '1.0.0', 'build': 'h4616a5c_0', 'missing': []}]
    repair = ce.damage_repair(records, ['lib/a.py.c~', 'conda-meta/x.json.c~'])
    assert repair['reasons'] == [
        'package numpy 2.4.6 has 4 file(s) missing: lib/a.py, lib/b.py, lib/c.py and 1 more',
        '2 file(s) left as .c~ backups by an interrupted conda transaction: conda-meta/x.json.c~, lib/a.py.c~; '
        'the env is removed and created again']
    assert repair['how'] == 'replace' and repair['packages'] == [] and 'interrupted conda transaction' in repair['why']
    assert ce.damage_repair([records[1]], []) is None


def test_packages_with_files_missing_and_intact_records_are_reinstalled_alone():
    records = [{'name': 'numpy', 'version': '2.4.6', 'build': 'py311_0', 'missing': ['lib/a.py']},
               {'name': 'libfoo', 'version': '1.0.0', 'build': 'h4616a5c_0', 'missing': ['share/libfoo/VERSION']},
               {'name': 'six', 'version': '1.17.0', 'build': 'pyh_0', 'missing': []}]
    repair = ce.damage_repair(records, [])
    assert repair == {
        'how': 'reinstall', 'packages': ['libfoo==1.0.0=h4616a5c_0', 'numpy==2.4.6=py311_0'],
        'why': 'only files of libfoo, numpy are missing and their records are intact, so conda reinstalls those packages '
               'at the same version and build',
        'reasons': ['package libfoo 1.0.0 has 1 file(s) missing: share/libfoo/VERSION',
                    'package numpy 2.4.6 has 1 file(s) missing: lib/a.py; the damaged packages are reinstalled '
                    '(conda install --force-reinstall)']}


def test_an_unreadable_record_is_past_repair():
    records = [{'name': 'x.json', 'version': '?', 'build': '', 'unreadable': True,
                'missing': ['conda-meta/x.json (unreadable record)']}]
    repair = ce.damage_repair(records, [])
    assert repair['how'] == 'replace' and repair['why'] == 'conda cannot reinstall a package whose record it cannot read (x.json)'


@pytest.mark.parametrize('path, made_again', [
    ('lib/python3.11/site-packages/pip/__pycache__/__init__.cpython-311.pyc', True),
    ('lib/python3.11/site-packages/pip/__pycache__', True),
    ('lib/python2.7/site-packages/six.pyc', True),
    ('lib/python3.11/site-packages/pip/__init__.py', False),
    ('share/pycache_notes.txt', False)])
def test_bytecode_is_what_conda_and_python_make_again(path, made_again):
    assert ce.regenerated(path) is made_again


def test_failed_pip_section_is_named_by_pips_own_error():
    """conda's JSON says only "Pip failed" (env/pip_util.py); pip's reason is on stderr."""
    stdout = json.dumps({'exception_name': 'CondaEnvException', 'message': 'Pip failed', 'error': 'CondaEnvException: Pip failed'})
    stderr = ('Pip subprocess error:\nLooking in links: /srv/wheels\n'
              'ERROR: Could not find a version that satisfies the requirement six==9.9.9 (from versions: 1.17.0)\n'
              'ERROR: No matching distribution found for six==9.9.9\n')
    assert ce.explain_failure('conda env update', 1, stdout, stderr) == (
        "conda env update failed (rc=1, CondaEnvException): the pip section failed after conda's packages were applied: "
        'ERROR: Could not find a version that satisfies the requirement six==9.9.9 (from versions: 1.17.0) '
        'ERROR: No matching distribution found for six==9.9.9')
    assert ce.pip_error('Pip subprocess error:\nKilled\n') == 'Killed'
    assert ce.pip_error('') == 'pip printed no error'


def test_a_folder_whose_conda_meta_was_deleted_under_an_env_of_ours_is_deleted_then_created():
    assert ce.present_plan(False, True, None, SHA, meta_lost=True) == ('create', 'directory')
    assert ce.absent_plan(False, True, None, meta_lost=True) == 'directory'
    assert ce.present_plan(False, True, None, SHA) == ('create', None), 'a folder that was never ours is created over'
    assert ce.meta_lost_reason('/opt/conda/envs/x').startswith('prefix /opt/conda/envs/x holds files but no conda-meta')


def test_an_older_pythons_folder_that_no_record_owns_is_left_over():
    folders = ['python3.10', 'python3.11', 'python3.12', 'libfoo.so', 'pythonx']
    assert ce.python_leftovers('3.12.1', folders, owned={'python3.12', 'python3.10'}) == ['python3.11']
    assert ce.python_leftovers(None, folders, owned=set()) == []
    assert ce.leftovers_reason(['python3.11'], '3.12.1', {'python3.11': ['six-1.17.0.dist-info', 'six.py']}) == (
        'lib/python3.11 left by an earlier python (the env has python 3.12.1; conda removes only the files it recorded): '
        'lib/python3.11 holds six-1.17.0.dist-info, six.py; deleted')


def test_variables_drift_and_the_ones_the_spec_dropped_are_unset():
    applied = ce.render_environment('demo', {'channels': [], 'conda': ['python'], 'pip': [],
                                             'variables': {'OMP_NUM_THREADS': '4', 'DEMO_OLD': 'x'}})
    assert ce.applied_variables(applied) == {'OMP_NUM_THREADS': '4', 'DEMO_OLD': 'x'}
    declared = {'variables': {'OMP_NUM_THREADS': '8', 'NEW': 'y'}}
    reasons, stale = ce.variable_drift(declared, {'OMP_NUM_THREADS': '4', 'DEMO_OLD': 'x', 'BY_HAND': 'z'}, applied)
    assert reasons == ['variable NEW is not set in the env, declared "y"',
                       'variable OMP_NUM_THREADS is "4" in the env, declared "8"',
                       'variables the spec no longer declares are still set: DEMO_OLD (conda env update never unsets '
                       'them; they are unset)']
    assert stale == ['DEMO_OLD'], 'a variable no spec of ours declared (BY_HAND) is left alone'
    # conda env config vars unset leaves ***unset***, which is not set
    assert ce.variable_drift({'variables': {}}, {'DEMO_OLD': ce.ENV_VARS_UNSET}, applied) == ([], [])


def test_a_gone_channel_is_named_and_an_unsolvable_spec_names_the_conflicting_specs():
    payload = json.dumps({'exception_name': 'UnavailableInvalidChannel', 'channel_name': 'gone', 'status_code': 404,
                          'channel_url': 'http://mirror/gone', 'message': 'HTTP 404 NOT FOUND for channel gone'})
    assert ce.explain_failure('conda create', 1, payload, '').endswith(
        'channel gone is gone or not a channel: HTTP 404 at http://mirror/gone')
    assert 'UnavailableInvalidChannel' in ce.CHANNELS_UNREACHABLE
    assert ce.conflict_message('unsolvable', ['a', 'b>=2']) == (
        'unsolvable. The declared specs that cannot be solved together: a, b>=2 (without any one of them the others solve)')
    assert ce.conflict_message('unsolvable', None) == 'unsolvable'
