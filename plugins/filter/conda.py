# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Conda filters; each one is documented in the YAML file of its name beside this file."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import yaml

from ansible.errors import AnsibleFilterError
from ansible_collections.aistack.gpu_node.plugins.module_utils import conda_blas as cb
from ansible_collections.aistack.gpu_node.plugins.module_utils import conda_env as ce
from ansible_collections.aistack.gpu_node.plugins.module_utils import conda_mirrors as cm


def conda_condarc(primary, channels, distribution, default_channels=None, custom_channels=None, solver=None,
                  pkgs_dirs=None, envs_dirs=None, proxy_servers=None, ssl_verify=None, settings=None):
    try:
        return cm.build_condarc(primary, list(channels or []), distribution, default_channels, custom_channels, solver,
                                pkgs_dirs, envs_dirs, proxy_servers, ssl_verify, settings)
    except cm.MirrorError as error:
        raise AnsibleFilterError('conda_condarc: %s' % error)


def conda_config_sources(text):
    """``conda config --show-sources`` -> list of ``{source, settings}``."""
    sources = []
    for source, body in cm.parse_show_sources(text):
        try:
            settings = yaml.safe_load(body) or {}
        except yaml.YAMLError as error:
            raise AnsibleFilterError('conda_config_sources: the section of %s does not parse: %s' % (source, error))
        sources.append({'source': source, 'settings': settings})
    return sources


def conda_condarc_problems(condarc, distribution):
    return cm.policy_problems(condarc or {}, distribution)


def conda_environment_file(text, path='environment.yml'):
    """An environment.yml's text -> its mapping, checked, with the file named in any error."""
    try:
        spec = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise AnsibleFilterError('%s is not valid YAML: %s' % (path, error))
    try:
        ce.normalize_environment(spec, source=path)
    except ce.CondaEnvError as error:
        raise AnsibleFilterError(str(error))
    return spec


def conda_environment_problems(spec, where='env', driver_version=None, torch_variant='auto', torch_index=None,
                               gpu_present=None):
    """What the conda_env module would refuse in a declared environment (its structure, the
    PyTorch-channel lint, a torch CUDA variant the driver cannot run): a list of messages naming
    ``where``, empty when nothing is."""
    try:
        ce.normalize_environment(spec, source=where, driver_version=driver_version or None, torch_variant=torch_variant,
                                 torch_index=(torch_index or ce.PYTORCH_WHEEL_INDEX).rstrip('/') + '/',
                                 gpu_present=gpu_present)
    except ce.CondaEnvError as error:
        message = str(error)
        return [message if message.startswith(where) else '%s: %s' % (where, message)]
    return []


def conda_blas_problems(spec, blas=None, where='env'):
    """What is wrong with the BLAS an env asks for (``where.blas`` and the spec's selectors): a list
    of messages naming ``where``, empty when nothing is."""
    dependencies = spec.get('dependencies') if isinstance(spec, dict) else None
    conda_specs = [d for d in dependencies or [] if isinstance(d, str) and d.strip()]
    try:
        cb.requested_blas(conda_specs, blas, source=where, key='%s.blas' % where)
    except ce.CondaEnvError as error:
        return [str(error)]
    except ValueError as error:  # a dependency that is no match spec: the environment check names it
        return ['%s: dependency %s is not a conda match spec' % (where, error)]
    return []


def conda_explicit_entries(text):
    """``conda list --explicit --md5`` output -> its sorted package lines, without the header."""
    if not isinstance(text, str):
        raise AnsibleFilterError('conda_explicit_entries: expected the text of conda list --explicit, got %s'
                                 % type(text).__name__)
    return ce.explicit_entries(text)


def conda_has_credentials(value):
    return cm.has_credentials(value)


def conda_install_argv(packages, prefix, channels=None, conda="conda"):
    """argv of ``conda install`` into ``prefix`` from exactly ``channels``.

    ``nodefaults`` is a marker of environment.yml files, not a channel: conda fails on it, so it
    is dropped, and ``--override-channels`` keeps the ``defaults`` channels (and their terms of
    service) out whatever .condarc says.
    """
    if isinstance(packages, str):
        packages = [packages]
    if not packages or not all(isinstance(name, str) and name for name in packages):
        raise AnsibleFilterError("conda_install_argv: packages must be a non-empty list of package specs, got %r" % (packages,))
    if not isinstance(prefix, str) or not prefix.startswith("/"):
        raise AnsibleFilterError("conda_install_argv: prefix must be an absolute path, got %r" % (prefix,))
    argv = [conda, "install", "--prefix", prefix, "--yes", "--json"]
    wanted = [channel for channel in (channels or []) if channel != ce.NODEFAULTS]
    if wanted:
        argv.append("--override-channels")
        for channel in wanted:
            argv.extend(["--channel", channel])
    return argv + list(packages)


def conda_env_published(declared, conda_prefix, lock_dir=None, results=None, env_name='', env_prefix=''):
    """conda_env's result facts: ``{envs: {name: {...}}, target: {...} or None}`` (see the doc file)."""
    try:
        envs = ce.published_envs(declared or [], conda_prefix, lock_dir or None, results or [])
        return {'envs': envs, 'target': ce.target_env(envs, env_name or '', env_prefix or '')}
    except ce.CondaEnvError as error:
        raise AnsibleFilterError(str(error))


class FilterModule(object):
    def filters(self):
        return {
            'conda_env_published': conda_env_published,
            'conda_blas_problems': conda_blas_problems,
            'conda_condarc': conda_condarc,
            'conda_condarc_problems': conda_condarc_problems,
            'conda_config_sources': conda_config_sources,
            'conda_environment_file': conda_environment_file,
            'conda_environment_problems': conda_environment_problems,
            'conda_explicit_entries': conda_explicit_entries,
            'conda_has_credentials': conda_has_credentials,
            'conda_install_argv': conda_install_argv,
        }
