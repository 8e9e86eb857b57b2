# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirrors_condarc_plan action: the .condarc of each candidate, whether the inputs hold a
secret, and the check of what real conda loads. The rules are tested on module_utils.conda.mirrors."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from conftest import read_conda, run_action
from ansible_collections.aistack.gpu_node.plugins.action.mirrors_condarc_plan import ActionModule

SHOW_SOURCES = read_conda('conda-config-show-sources.txt')


def test_plan_builds_each_candidate_and_finds_secrets(tmp_path):
    args = dict(mirrors=['http://a', 'http://b'], channels=['conda-forge'], distribution='miniforge', solver='classic',
                ssl_verify='/etc/t/ca.pem')
    result = run_action(ActionModule, args, tmp_path)
    assert not result.get('failed') and not result['changed'] and result['problem'] is None
    assert [c['channel_alias'] for c in result['condarcs']] == ['http://a', 'http://b']
    # A CA path is no credential even where it looks like a token's path.
    assert result['has_credentials'] is False
    args['custom_channels'] = {'internal': 'http://a/t/tk-0123'}
    assert run_action(ActionModule, args, tmp_path)['has_credentials'] is True


def test_plan_returns_the_policy_problem_without_failing(tmp_path):
    result = run_action(ActionModule, dict(mirrors=['http://a'], channels=['defaults'], distribution='miniforge'), tmp_path)
    assert not result.get('failed') and result['condarcs'] == []
    assert result['problem'].startswith('Miniforge takes no "defaults"')


def test_verify_accepts_what_real_conda_loaded(tmp_path):
    args = dict(stage='verify', distribution='miniconda', show_sources=SHOW_SOURCES, system_file='/home/ml/.condarc',
                condarc={'channel_alias': 'file:///srv/conda-mirror', 'channels': ['conda-forge']}, chosen='file:///srv/conda-mirror')
    result = run_action(ActionModule, args, tmp_path)
    assert not result.get('failed') and result['sources'] == ['/home/ml/.condarc'] and result['problems'] == []


def test_verify_names_the_file_and_the_problems(tmp_path):
    args = dict(stage='verify', distribution='miniforge', show_sources=SHOW_SOURCES, system_file='/opt/conda/.condarc',
                condarc={'channel_alias': 'http://a', 'channels': ['conda-forge']}, chosen='http://a/')
    result = run_action(ActionModule, args, tmp_path)
    assert result['failed'] and result['msg'].startswith(
        'mirrors_condarc: conda config --show-sources does not show /opt/conda/.condarc with the chosen mirror http://a/, '
        'or a loaded source breaks the channel policy: a loaded source: Miniforge takes no "defaults"')
    args['show_sources'] = '==> /x <==\nchannels: [a\n'
    assert run_action(ActionModule, args, tmp_path)['msg'].startswith(
        'mirrors_condarc: the section of /x in conda config --show-sources does not parse')


REFUSE = dict(stage='refuse', distribution='miniforge', conda='/opt/conda/bin/conda', system_file='/opt/conda/.condarc',
              solver='libmamba', users=['alice'], group='conda')
READ = dict(conda_present=True, solvers=['classic', 'libmamba'], unknown_users=[], group_members=None,
            probe=dict(chosen='http://a', message=None), show_sources=None)


def test_refuse_passes_a_sound_read_and_names_the_host(tmp_path):
    result = run_action(ActionModule, dict(REFUSE, node=READ), tmp_path, task_vars={'inventory_hostname': 'gpu1'})
    assert not result.get('failed') and not result['changed']
    result = run_action(ActionModule, dict(REFUSE, node=dict(READ, unknown_users=['zed'])), tmp_path,
                        task_vars={'inventory_hostname': 'gpu1'})
    assert result['failed'] and result['msg'].startswith('mirrors_condarc: mirrors_condarc_users names zed, no user on gpu1;')


def test_refuse_a_missing_conda_outside_check_mode_and_the_planned_group(tmp_path):
    missing = dict(READ, conda_present=False, solvers=[])
    vars_ = {'inventory_hostname': 'gpu1'}
    assert 'does not exist; install conda first' in run_action(ActionModule, dict(REFUSE, node=missing), tmp_path, task_vars=vars_)['msg']
    assert not run_action(ActionModule, dict(REFUSE, node=missing), tmp_path, check_mode=True, task_vars=vars_).get('failed')
    secret = dict(REFUSE, node=READ, has_credentials=True)
    assert 'The group conda does not exist' in run_action(ActionModule, secret, tmp_path, task_vars=vars_)['msg']
    planned = dict(secret, miniconda_result=dict(group='conda', group_members=['alice']))
    assert not run_action(ActionModule, planned, tmp_path, task_vars=vars_).get('failed')
