# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure judgements of the miniconda role that need no node: its variables before the plan reads the node,
the plan's refusals, and whether what the plan read of conda already shows the settings the verify step
checks. The messages are the role's own, word for word, wherever the role's tasks gave them before."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import re

from ansible.module_utils.common.text.converters import to_text

# The variables the input check reads, without the role's prefix.
CHECKED = ('prefix', 'download_dir', 'profile_script', 'group', 'clean', 'installer_url', 'installer_src',
           'installer_remote_src', 'anaconda_tos_channels')
# As the role's assert tested them: ansible's match and search tests take the value as text.
_ABSOLUTE = re.compile(r'^/.+')
_WHITESPACE = re.compile(r'\s')
_DOT_PART = re.compile(r'/\.{1,2}/')
_TRAILING_SLASHES = re.compile(r'/+$')
_PROFILE_SCRIPT = re.compile(r'^/etc/profile\.d/.+\.sh$')
_HTTP_URL = re.compile(r'^https?://')
_ROOTED = re.compile(r'^/')


def _matches(pattern, value):
    return bool(pattern.match(to_text(value)))


def _sized(value):
    """Jinja's ``sequence`` test: anything with a length and items (a list, and also a mapping)."""
    try:
        len(value)
        value.__getitem__  # pylint: disable=pointless-statement
    except Exception:  # pylint: disable=broad-except
        return False
    return True


def _one_of(value, choices):
    try:
        return value in choices
    except TypeError:
        return False


def bad_input(settings, system_folders, clean_flags):
    """The role's input check: its message when a variable is bad, else None.

    ``settings``: the variables of :data:`CHECKED` by their short names, templated as the tasks see them (not typed:
    site.yml's preflight play reads them without the role's argument spec). ``system_folders``: the folders a prefix
    must not be (``__miniconda_system_folders``); ``clean_flags``: ``__miniconda_clean_flags``, whose keys are the
    choices of ``miniconda_clean``."""
    prefix = settings['prefix']
    good = (
        _matches(_ABSOLUTE, prefix) and not _WHITESPACE.search(to_text(prefix))
        and not _DOT_PART.search(to_text(prefix) + '/')
        and (_TRAILING_SLASHES.sub('', to_text(prefix)) or '/') not in system_folders
        and _matches(_ABSOLUTE, settings['download_dir'])
        and _matches(_PROFILE_SCRIPT, settings['profile_script'])
        and _sized(settings['group']) and len(settings['group']) > 0
        and _one_of(settings['clean'], clean_flags)
        and (settings['installer_url'] == '' or _matches(_HTTP_URL, settings['installer_url']))
        and (settings['installer_src'] == '' or _matches(_ROOTED, settings['installer_src']))
        and (settings['installer_remote_src'] == '' or _matches(_ROOTED, settings['installer_remote_src']))
        and _sized(settings['anaconda_tos_channels']) and not isinstance(settings['anaconda_tos_channels'], str)
    )
    if good:
        return None
    return ("miniconda: bad input. miniconda_prefix must be an absolute path without whitespace or '.'/'..' parts, and "
            "not a system folder (%s: the installer would take it over), miniconda_download_dir absolute, "
            "miniconda_profile_script a file /etc/profile.d/*.sh, miniconda_group not empty, miniconda_clean one of %s, "
            "miniconda_installer_url an http(s) URL, miniconda_installer_src and miniconda_installer_remote_src absolute "
            "paths." % (', '.join(system_folders), ', '.join(clean_flags)))


def terms_refusal(flavor, terms_accepted):
    """Miniconda's channels need Anaconda's terms accepted (``terms_accepted``: the variable as ``| bool`` reads it)."""
    if flavor == 'miniconda' and not terms_accepted:
        return ("miniconda: Miniconda's default channels (repo.anaconda.com) require Anaconda's terms of service "
                "(https://www.anaconda.com/legal). Read them and set miniconda_accept_anaconda_tos: true, or use "
                "miniconda_flavor: miniforge (conda-forge, no terms to accept).")
    return None


def plan_refusal(plan, prefix, group, host):
    """What the role refuses on the plan the node read (the miniconda_plan module's result): group members that are no
    user (ansible.builtin.user would create a login for a typo), then what it will not do to an existing prefix."""
    if plan.get('missing_members'):
        return ("miniconda: miniconda_group_members names %s, no user on %s. The role adds existing users to %s; it never "
                "creates one. Create the account first or fix the name. Nothing was changed."
                % (', '.join(plan['missing_members']), host, group))
    if plan.get('action') == 'refuse':
        return 'miniconda: %s: %s' % (prefix, plan['reason'])
    return None


def conda_settings(shown):
    """What the verify step checks of ``conda config --show --json``'s text: ``{root_prefix, auto_activate}``
    (``auto_activate_base`` in older conda releases), None when the text is no such JSON object. Nothing else is kept:
    the channels there can carry a mirror's password."""
    try:
        settings = json.loads(shown)
    except ValueError:
        return None
    if not isinstance(settings, dict):
        return None
    return {'root_prefix': settings.get('root_prefix'),
            'auto_activate': settings.get('auto_activate', settings.get('auto_activate_base'))}


def settings_in_place(settings, prefix, auto_activate_base):
    """Whether conda's ``settings`` (:func:`conda_settings`) are what the role's verify step asserts: the root prefix
    is ``prefix`` and the activation setting ``auto_activate_base``. Stricter than that assert (a boolean, not a value
    equal to one): a settings read this does not vouch for is only asked again, and judged by the assert."""
    return (isinstance(settings, dict) and settings.get('root_prefix') == prefix
            and settings.get('auto_activate') is bool(auto_activate_base))
