# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""decide/mirrors_condarc.py: the refusals of what the mirrors_condarc role's one read of the node found,
with the messages the role's fail and assert tasks gave, in their order."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.mirrors_condarc import node_refusal

CONDA = '/opt/conda/bin/conda'
SETTINGS = dict(conda=CONDA, solver='libmamba', users=['alice'], group='conda', has_credentials=False,
                system_file='/opt/conda/.condarc')
PROBED = dict(chosen='http://m', message=None)


def node(**read):
    found = dict(conda_present=True, solvers=['classic', 'libmamba'], unknown_users=[], group_members=None, probe=PROBED)
    found.update(read)
    return found


def refusal(found, check_mode=False, miniconda_result=None, **settings):
    return node_refusal(found, dict(SETTINGS, **settings), check_mode, 'gpu1', miniconda_result or {})


def test_a_sound_read_is_not_refused():
    assert refusal(node()) is None
    # A conda whose help names no solver gives nothing to judge.
    assert refusal(node(solvers=[]), solver='rattler') is None


def test_no_conda_is_refused_outside_check_mode_only():
    assert refusal(node(conda_present=False, solvers=[])) == (
        'mirrors_condarc: /opt/conda/bin/conda does not exist; install conda first (miniconda role) or set '
        'mirrors_condarc_conda_prefix.')
    assert refusal(node(conda_present=False, solvers=[]), check_mode=True) is None


def test_a_solver_conda_lacks():
    assert refusal(node(), solver='rattler') == (
        'mirrors_condarc: mirrors_condarc_solver is rattler, but /opt/conda/bin/conda has the solvers classic, libmamba '
        '(its create --help): with that .condarc every conda solve would fail. Set mirrors_condarc_solver to one of them, '
        'or install conda-libmamba-solver into the base. Nothing was changed.')


def test_users_without_an_account():
    assert refusal(node(unknown_users=['alcie', 'bo'])) == (
        'mirrors_condarc: mirrors_condarc_users names alcie, bo, no user on gpu1; create the account first or fix the name. '
        'Nothing was changed.')


def test_a_secret_needs_the_group_and_every_user_in_it():
    lead = ('mirrors_condarc: the settings hold a channel token or a proxy password, so /opt/conda/.condarc is readable by '
            'root and the group mirrors_condarc_group (conda) only, and conda refuses to run for anyone else. ')
    assert refusal(node(), has_credentials=True) == (
        lead + 'The group conda does not exist (the miniconda role creates miniconda_group). Nothing was changed.')
    assert refusal(node(group_members=['bob']), has_credentials=True, users=['alice', 'bob', 'carol']) == (
        lead + 'mirrors_condarc_users not in it: alice, carol; add them to the group (miniconda_group_members) or drop '
        'them from mirrors_condarc_users. Nothing was changed.')
    assert refusal(node(group_members=['alice']), has_credentials=True) is None
    # Without a secret the file is world-readable: no group needed.
    assert refusal(node(group_members=None)) is None


def test_the_group_the_miniconda_role_plans_counts_with_its_members():
    planned = dict(group='conda', group_members=['alice'])
    assert refusal(node(), has_credentials=True, miniconda_result=planned) is None
    assert refusal(node(group_members=[]), has_credentials=True, miniconda_result=dict(planned, group_members=[])).endswith(
        'mirrors_condarc_users not in it: alice; add them to the group (miniconda_group_members) or drop them from '
        'mirrors_condarc_users. Nothing was changed.')
    # Another group than the role's is no plan for it.
    assert 'The group conda does not exist' in refusal(node(), has_credentials=True, miniconda_result=dict(planned, group='other'))


def test_no_healthy_mirror_last():
    down = dict(chosen=None, message='no healthy mirror: http://m (connection refused)')
    assert refusal(node(probe=down)) == 'mirrors_condarc: no healthy mirror: http://m (connection refused)'
    # The refusals before it come first, as the role's tasks did.
    assert refusal(node(probe=down, unknown_users=['zed'])).startswith('mirrors_condarc: mirrors_condarc_users names zed')
