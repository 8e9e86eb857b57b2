# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What conda_env_plan decides before, and checks after, the conda_env module: each declared env's
refusals, the BLAS it asks for, the result facts and the lock check (module_utils.conda.env, conda.blas)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from conftest import read_conda
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import blas as cb
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import env as ce

TORCH_ENV = {'channels': ['conda-forge'], 'dependencies': ['python=3.11', 'pip', {'pip': ['torch==2.11.0']}]}


def test_blas_problems_name_the_declaration():
    env = {'channels': ['conda-forge'], 'dependencies': ['python=3.11', 'numpy', 'blas=*=openblas', {'pip': ['six']}]}
    assert cb.blas_problems(env, None, 'conda_env_envs[1]') == [] and cb.blas_problems(env, 'openblas', 'conda_env_envs[1]') == []
    assert cb.blas_problems(env, 'mkl', 'conda_env_envs[1]') == [
        'conda_env_envs[1].blas is mkl but the dependencies of conda_env_envs[1] select openblas (blas=*=openblas); '
        'make them agree']
    assert cb.blas_problems({}, 'atlas', 'conda_env_envs[0]') == [
        "conda_env_envs[0].blas is 'atlas'; expected one of openblas, mkl, blis, netlib"]
    assert cb.blas_problems({'dependencies': ['=bad']}, None, 'conda_env_envs[2]') == [
        'conda_env_envs[2]: dependency =bad is not a conda match spec']


def test_explicit_entries_ignore_the_header_that_names_conda():
    listed = read_conda('conda-list-explicit-md5.txt')
    assert listed.startswith('# This file may be used to create an environment')
    # The same env's lock written before conda was upgraded: only the created-by line differs.
    older = listed.replace('# created-by: conda 26.7', '# created-by: conda 26.5', 1)
    assert older != listed
    entries = ce.explicit_entries(listed)
    assert entries == ce.explicit_entries(older) and len(entries) > 1
    assert all(line.startswith(('https://', 'http://', 'file://')) and '#' in line for line in entries)
    # One package more or less is a difference.
    assert ce.explicit_entries(listed + entries[0].replace('libfoo', 'libbar') + '\n') != entries


def test_lock_mismatch_compares_packages_and_the_recorded_checksum():
    listed = read_conda('conda-list-explicit-md5.txt')
    lock = listed.replace('# created-by: conda 26.7', '# created-by: conda 26.5', 1)
    env = {'prefix': '/opt/conda/envs/ml', 'lock': {'explicit': '/opt/conda/envs/ml.explicit.txt', 'sha256': ce.sha256_text(lock)}}
    assert ce.lock_mismatch(env, lock, listed) is None
    assert ce.lock_mismatch(env, lock, listed + 'https://conda.anaconda.org/conda-forge/noarch/x-1-0.conda#0\n') == (
        'the lock /opt/conda/envs/ml.explicit.txt does not match env /opt/conda/envs/ml; run the role again')
    assert ce.lock_mismatch(dict(env, lock=dict(env['lock'], sha256='0' * 64)), lock, listed) is not None


def test_environment_problems_are_the_modules_refusals_named_by_declaration():
    problems = ce.environment_problems
    assert problems(TORCH_ENV, 'conda_env_envs[1].spec', '580.159.04') == []
    # Debian 12's 535 driver cannot run the cu130 wheels the spec asks for by name.
    refused = problems(TORCH_ENV, 'conda_env_envs[1].spec', '535.309.01', 'cu130')
    assert len(refused) == 1 and refused[0].startswith('conda_env_envs[1].spec: torch cu130 wheels (torch 2.11.0) need a '
                                                       "newer driver than this node's 535.309.01. Fix: use cu128")
    legacy = {'channels': ['pytorch', 'nvidia'], 'dependencies': ['pytorch=2.6', 'pytorch-cuda=12.4']}
    assert 'pytorch-cuda' in problems(legacy, 'envs/train.yml', '')[0] and problems(legacy, 'envs/train.yml')[0].startswith(
        'envs/train.yml: ')
    assert problems({'dependencies': 'python'}, 'conda_env_envs[0].spec') == [
        'conda_env_envs[0].spec: dependencies must be a non-empty list']


def files(**texts):
    """A load_file over parsed env files by path; a missing one raises like the action plugin."""
    def load_file(path):
        if path not in texts:
            raise ce.CondaEnvError('conda_env: %s cannot be read' % path)
        return texts[path]
    return load_file


def test_declared_envs_read_each_file_once_and_keep_the_rest():
    envs = [{'name': 'ml', 'file': 'envs/ml.yml', 'blas': 'openblas'}, {'name': 'inline', 'spec': TORCH_ENV},
            {'name': 'old', 'state': 'absent'}]
    declared, refusals = ce.declared_envs(envs, files(**{'envs/ml.yml': TORCH_ENV}), '580.159.04', True)
    assert refusals == []
    assert declared == [dict(envs[0], spec=TORCH_ENV), envs[1], dict(envs[2], spec={})]


def test_declared_envs_refuse_every_env_at_fault_naming_it():
    envs = [{'name': 'a', 'spec': {'dependencies': 'python'}}, {'name': 'b', 'file': 'envs/b.yml'},
            {'name': 'c', 'spec': TORCH_ENV, 'torch_cuda_variant': 'cu130'}]
    bad_file = {'channels': ['conda-forge'], 'dependencies': ['python', {'pip': ['six']}]}
    _declared, refusals = ce.declared_envs(envs, files(**{'envs/b.yml': bad_file}), '535.309.01', True)
    assert refusals[0] == 'conda_env_envs[0].spec: dependencies must be a non-empty list'
    assert refusals[1].startswith('envs/b.yml: the pip: section needs pip')
    assert refusals[2].startswith('conda_env_envs[2].spec: torch cu130 wheels')
    assert len(refusals) == 3


def test_declared_envs_check_the_blas_only_once_the_environments_are_sound():
    mkl = {'dependencies': ['python=3.11', 'numpy', 'blas=*=mkl']}
    envs = [{'name': 'a', 'spec': mkl, 'blas': 'openblas'}]
    assert ce.declared_envs(envs, files())[1] == [
        'conda_env_envs[0].blas is openblas but the dependencies of conda_env_envs[0] select mkl (blas=*=mkl); make them agree']
    envs.append({'name': 'b', 'spec': {'dependencies': []}})
    assert ce.declared_envs(envs, files())[1] == ['conda_env_envs[1].spec: dependencies must be a non-empty list']


def test_an_absent_env_is_checked_only_for_its_file():
    envs = [{'name': 'old', 'state': 'absent', 'file': 'envs/old.yml'}, {'name': 'gone', 'state': 'absent', 'spec': 'junk'}]
    assert ce.declared_envs(envs, files(**{'envs/old.yml': {'dependencies': ['python']}}), '535.309.01', True,
                            'cu130')[1] == []
    assert ce.declared_envs(envs[:1], files(**{'envs/old.yml': {}}))[1] == [
        'envs/old.yml: dependencies must be a non-empty list']
    with pytest.raises(ce.CondaEnvError, match='envs/old.yml cannot be read'):
        ce.declared_envs(envs, files())


def test_published_facts_and_the_variable_at_fault():
    declared = [{'name': 'train'}, {'name': 'eval', 'primary': True}]
    facts = ce.published(declared, '/opt/conda')
    assert sorted(facts['info']) == ['eval', 'train'] and facts['target']['name'] == 'eval'
    assert facts['target']['chosen_by'] == 'primary'
    assert ce.published(declared, '/opt/conda', env_prefix='/opt/torch/.venv')['target']['name'] == 'torch'
    with pytest.raises(ce.CondaEnvError, match="aistack_env_name: no environment 'nope'"):
        ce.published(declared, '/opt/conda', env_name='nope')
    # site.yml's preflight play publishes before any change: a name that climbs out is refused there.
    with pytest.raises(ce.CondaEnvError, match=r"^conda_env_envs\[1\]: name '\.\./escape' is not a usable environment name"):
        ce.published(declared[:1] + [{'name': '../escape'}], '/opt/conda')


def test_each_broken_rule_of_the_env_list_is_named_alone():
    spec = {'dependencies': ['python=3.11']}
    assert ce.entry_problems([{'name': 'torch', 'spec': spec}, {'name': 'old', 'state': 'absent'}]) == []
    assert ce.entry_problems([{'spec': spec}]) == ['conda_env_envs[0] has no name: every env needs one']
    assert ce.entry_problems([{'name': '../escape', 'spec': spec}]) == [
        "conda_env_envs[0]: name '../escape' is not a usable environment name: up to 100 letters, digits, \".\", \"_\" "
        "and \"-\", not \"base\" (the base prefix belongs to the miniconda role)"]
    assert ce.entry_problems([{'name': 'work', 'spec': spec}, {'name': 'work', 'spec': spec}]) == [
        "conda_env_envs[0] ('work') and conda_env_envs[1] ('work') are both named 'work': each env needs its own name"]
    assert ce.entry_problems([{'name': 'work', 'file': 'a.yml', 'spec': spec}, {'name': 'other'}]) == [
        "conda_env_envs[0] ('work') has both file and spec: an env to create needs exactly one of file and spec (or state: absent)",
        "conda_env_envs[1] ('other') has neither file nor spec: an env to create needs exactly one of file and spec (or state: absent)"]
    assert ce.entry_problems([{'name': 'work', 'spec': spec, 'torch_cuda_variant': 'cuda12'}], torch_cuda_variant='cu13',
                             torch_index='download.pytorch.org/whl') == [
        "conda_env_envs[0] ('work').torch_cuda_variant is 'cuda12': expected auto, none, cpu or a CUDA variant such as cu128",
        "conda_env_torch_cuda_variant is 'cu13': expected auto, none, cpu or a CUDA variant such as cu128",
        "conda_env_torch_index is 'download.pytorch.org/whl': expected an http(s):// or file:// URL"]


def test_two_entries_that_resolve_to_one_prefix_are_refused_naming_both():
    spec = {'dependencies': ['python=3.11']}
    # An explicit prefix equal to conda's default for the other name, written another way.
    envs = [{'name': 'torch', 'spec': spec}, {'name': 'train', 'spec': spec, 'prefix': '/opt/conda/envs/torch/'}]
    assert ce.entry_problems(envs, '/opt/conda') == [
        "conda_env_envs[0] ('torch') and conda_env_envs[1] ('train') both resolve to the prefix /opt/conda/envs/torch: "
        "each env needs its own prefix"]
    # Under another conda base the default prefixes differ, and so do explicit ones.
    assert ce.entry_problems(envs, '/srv/conda') == []
    assert ce.entry_problems([{'name': 'a', 'spec': spec, 'prefix': '/data/envs/a'}, {'name': 'b', 'spec': spec, 'prefix': '/data/envs/b'}]) == []
    # A broken list is refused before any environment file is read.
    read = []
    declared, refusals = ce.declared_envs(envs, read.append, conda_prefix='/opt/conda')
    assert declared == [] and read == [] and 'both resolve to the prefix /opt/conda/envs/torch' in refusals[0]
