# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The mirrors_condarc role's refusals of what its one read of the node found (mirrors_condarc_probe:
conda, its solvers, the accounts, the conda group, the mirrors probed), taken on the controller
(mirrors_condarc_plan) before anything is written. Pure."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


def _secret_lockout(node, settings, miniconda_result):
    """With a secret the system .condarc is readable by root and the group only, and conda stops for anyone who
    cannot read it: a user given a .condarc of their own must be able to. The group is the node's, or the one
    the miniconda role gives the base in this run (in check mode on a fresh node it exists only in plan), with
    the members it adds."""
    group = settings['group']
    node_members = node['group_members']
    planned = (miniconda_result or {}).get('group') == group
    members = list(node_members or []) + (list(miniconda_result.get('group_members') or []) if planned else [])
    locked_out = [user for user in settings['users'] if user not in members]
    if node_members is None and not planned:
        detail = 'The group %s does not exist (the miniconda role creates miniconda_group)' % group
    elif locked_out:
        detail = ('mirrors_condarc_users not in it: %s; add them to the group (miniconda_group_members) or drop them '
                  'from mirrors_condarc_users' % ', '.join(locked_out))
    else:
        return None
    return ('mirrors_condarc: the settings hold a channel token or a proxy password, so %s is readable by root and the '
            'group mirrors_condarc_group (%s) only, and conda refuses to run for anyone else. %s. Nothing was changed.'
            % (settings['system_file'], group, detail))


def node_refusal(node, settings, check_mode, host, miniconda_result):
    """The message of the first refusal of ``node`` (mirrors_condarc_probe's result, its ``probe`` included), else
    None. ``settings``: conda, solver, users, group, has_credentials, system_file; ``miniconda_result`` as that role
    published it, if it ran."""
    conda = settings['conda']
    if not node['conda_present'] and not check_mode:
        return ('mirrors_condarc: %s does not exist; install conda first (miniconda role) or set '
                'mirrors_condarc_conda_prefix.' % conda)
    # conda fails every solve when .condarc names a solver it lacks ("You have chosen a non-default solver backend
    # ... but it was not recognized"): libmamba is a plugin (conda-libmamba-solver) that a conda installed otherwise
    # than by Miniconda or Miniforge may not have. Its --solver choices are the solvers it has.
    if node['solvers'] and settings['solver'] not in node['solvers']:
        return ('mirrors_condarc: mirrors_condarc_solver is %s, but %s has the solvers %s (its create --help): with that '
                '.condarc every conda solve would fail. Set mirrors_condarc_solver to one of them, or install '
                'conda-libmamba-solver into the base. Nothing was changed.' % (settings['solver'], conda, ', '.join(node['solvers'])))
    if node['unknown_users']:
        return ('mirrors_condarc: mirrors_condarc_users names %s, no user on %s; create the account first or fix the name. '
                'Nothing was changed.' % (', '.join(node['unknown_users']), host))
    if settings['has_credentials']:
        lockout = _secret_lockout(node, settings, miniconda_result)
        if lockout:
            return lockout
    if node['probe']['chosen'] is None:
        return 'mirrors_condarc: %s' % node['probe']['message']
    return None
