# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Unknown variables: the names a user set (inventory, extra vars) that look like a role's variable
and are none. The preflight play runs it through the action plugin unknown_variables, which reads the
roles' meta/argument_specs.yml on the controller."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import difflib

MODES = ('fail', 'warn')

# The variables the roles publish (set_fact), by role: results a later play or role reads, never
# options. A user never sets them, but they are in a host's variables once a role ran, so they are
# known names. tests/unit/plugins/module_utils/test_known_variables.py checks this list against
# every set_fact and register of roles/*/tasks and playbooks/.
PUBLISHED = {
    'apex_build': ('apex_build_report',),
    'conda_env': ('conda_env_info', 'conda_env_target'),
    'container_toolkit': ('container_toolkit_report',),
    'dcgm': ('dcgm_install_planned', 'dcgm_result'),
    'env_image': ('env_image_report',),
    'gpu_validate': ('gpu_validate_result',),
    'jupyter_kernel': ('jupyter_kernel_result',),
    'miniconda': ('miniconda_result',),
    'mirrors_condarc': ('mirrors_condarc_backups', 'mirrors_condarc_chosen', 'mirrors_condarc_fallbacks', 'mirrors_condarc_ranked'),
    'node_manifest': ('node_manifest_recorded',),
    'node_probe': ('node_probe_env_ready',),
    'numa_tuning': ('numa_tuning_env', 'numa_tuning_host_result'),
    'nvidia_driver': ('nvidia_driver_reboot_needed', 'nvidia_driver_report', 'nvidia_driver_secure_boot'),
    'preflight': ('preflight_report',),
}

# How far the head of a name may be from a role's prefix to count as a misspelt prefix
# (jupyter_kernal_lab, conda_enviroment_x): one edit for a prefix up to 10 characters, two above.
SHORT_PREFIX = 10
# How close (difflib's ratio) a second suggestion must be to be named too.
SECOND_RATIO = 0.8


def prefix(role):
    return role + '_'


def _distance(first, second):
    """Levenshtein distance."""
    previous = list(range(len(second) + 1))
    for i, char in enumerate(first, 1):
        current = [i]
        for j, other in enumerate(second, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other)))
        previous = current
    return previous[-1]


def _near_prefix(name, role_prefix):
    """The head of name (a few characters either side of the prefix's length) that is within the
    allowed distance of the prefix, or None."""
    allowed = 1 if len(role_prefix) <= SHORT_PREFIX else 2
    best = None
    for length in range(len(role_prefix) - allowed, len(role_prefix) + allowed + 1):
        if length <= 0 or length > len(name):
            continue
        distance = _distance(name[:length], role_prefix)
        if distance <= allowed and (best is None or distance < best[0]):
            best = (distance, name[:length])
    return best


def role_of(name, roles):
    """(role, head) for a name that starts with a role's prefix (head is then the prefix) or nearly
    does; (None, None) for any other name."""
    if name.startswith('_'):
        return None, None
    starting = [role for role in roles if name.startswith(prefix(role))]
    if starting:
        role = max(starting, key=len)
        return role, prefix(role)
    near = []
    for role in roles:
        found = _near_prefix(name, prefix(role))
        if found:
            near.append((found[0], role, found[1]))
    if not near:
        return None, None
    _distance_found, role, head = min(near)
    return role, head


def unknown(names, options, published=None):
    """The problems of a list of variable names: one dict (name, role, suggestions) per name that
    belongs to a role by its prefix (or a near miss of it) and is neither an option of that role nor
    a name a role publishes. options maps each role to its options (any entry point)."""
    published = PUBLISHED if published is None else published
    known = set()
    for role in options:
        known.update(options[role])
        known.update(published.get(role, ()))
    problems = []
    for name in sorted(set(names)):
        if name in known:
            continue
        role, head = role_of(name, options)
        if role is None:
            continue
        problems.append(dict(name=name, role=role, suggestions=suggestions(name, head, role, options[role])))
    return problems


def suggestions(name, head, role, candidates):
    """The closest options (difflib), matched as if the prefix were spelt right: the closest one, and
    a second one that is nearly as close (conda_env_enviroments: conda_env_environment, conda_env_envs)."""
    corrected = prefix(role) + name[len(head):]
    matches = difflib.get_close_matches(corrected, sorted(candidates), n=2, cutoff=0.6)
    if len(matches) == 2 and (corrected == matches[0] or difflib.SequenceMatcher(None, corrected, matches[1]).ratio() < SECOND_RATIO):
        matches = matches[:1]
    return matches


def problem_text(problem):
    text = '%s: not a variable of the %s role' % (problem['name'], problem['role'])
    if problem['suggestions']:
        return text + '; did you mean %s?' % ' or '.join(problem['suggestions'])
    return text + '; its variables are listed in roles/%s/README.md' % problem['role']


def check(names_by_host, options, mode, published=None):
    """The decision of the preflight play: names_by_host maps each host to the names of the variables
    set for it in the inventory and as extra vars. Returns failed, msg, warnings and unknown (the
    problems, each with the hosts it concerns)."""
    if mode not in MODES:
        return dict(failed=True, unknown=[], warnings=[],
                    msg='site: bad input. aistack_unknown_variables must be fail or warn, got "%s".' % mode)
    by_name = {}
    for host in sorted(names_by_host):
        for problem in unknown(names_by_host[host], options, published):
            by_name.setdefault(problem['name'], dict(problem, hosts=[]))['hosts'].append(host)
    problems = [by_name[name] for name in sorted(by_name)]
    texts = []
    for problem in problems:
        text = problem_text(problem)
        if len(problem['hosts']) < len(names_by_host):
            text += ' (set for %s)' % ', '.join(problem['hosts'])
        texts.append(text)
    if not texts:
        return dict(failed=False, unknown=[], warnings=[], msg='no unknown variables')
    msg = ('site: unknown variables, set in the inventory or as extra vars (rename or remove them; '
           'aistack_unknown_variables: warn only warns): %s' % ' | '.join(texts))
    if mode == 'warn':
        return dict(failed=False, unknown=problems, warnings=texts, msg=msg)
    return dict(failed=True, unknown=problems, warnings=[], msg=msg)
