# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import collections
import json
import os
import re

import pytest
import yaml

from conftest import FIXTURES, REPO_ROOT
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import kernelspec
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import kernelspec as kernelspec_node
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.kernelspec import KernelspecError

ARGV = ['/opt/conda/envs/torch/bin/python', '-m', 'ipykernel_launcher', '-f', '{connection_file}']
IPYKERNEL_7 = os.path.join(FIXTURES, 'jupyter', 'ipykernel-7-kernel.json')

PasswdEntry = collections.namedtuple('PasswdEntry', 'pw_name pw_uid pw_gid pw_dir')


class FakePasswd(object):
    def __init__(self, *entries):
        self.entries = entries

    def getpwnam(self, name):
        for entry in self.entries:
            if entry.pw_name == name:
                return entry
        raise KeyError(name)

    def getpwuid(self, uid):
        for entry in self.entries:
            if entry.pw_uid == uid:
                return entry
        raise KeyError(uid)


@pytest.mark.parametrize('name', ['python3', 'torch-2.5_cuda12', 'a.b'])
def test_accepts_jupyter_kernel_names(name):
    kernelspec.validate_name(name)


def test_refuses_upper_case_name_and_suggests_lower_case():
    with pytest.raises(KernelspecError, match=r"^name 'Torch' has upper-case letters.*'torch'"):
        kernelspec.validate_name('Torch')


def test_refuses_python_which_jupyter_client_maps_to_its_own_kernel():
    # Seen in CI: a kernelspec named 'python' was written, but the kernel that started was
    # ipykernel's python3, without the spec's env.
    with pytest.raises(KernelspecError, match=r"^name 'python' is taken by Jupyter: .*own python3 kernel"):
        kernelspec.validate_name('python')


@pytest.mark.parametrize('prefix, target, expected', [
    ('/opt/conda/envs/torch', {'name': 'torch', 'prefix': '/opt/conda/envs/torch'}, 'torch'),
    ('/opt/conda/envs/Torch 2', {'name': 'Torch 2', 'prefix': '/opt/conda/envs/Torch 2'}, 'torch-2'),
    ('/opt/venv', {'name': 'torch', 'prefix': '/opt/conda/envs/torch'}, 'venv'),
    ('/opt/torch/.venv/', None, 'torch'),
    ('/opt/python', {}, 'python-env'),
    ('', {'name': 'torch', 'prefix': ''}, 'aistack'),
    ('', None, 'aistack'),
])
def test_default_name_follows_the_env_the_kernel_runs_in(prefix, target, expected):
    name = kernelspec.default_name(prefix, target)
    assert name == expected
    kernelspec.validate_name(name)


@pytest.mark.parametrize('name', ['', 'my kernel', 'a/b', 'ümlaut'])
def test_refuses_other_characters(name):
    with pytest.raises(KernelspecError, match=r'^name .* is not a valid kernel name'):
        kernelspec.validate_name(name)


def test_argv_must_pass_the_connection_file():
    with pytest.raises(KernelspecError, match=r'^argv must contain \{connection_file\}'):
        kernelspec.validate_argv(['python', '-m', 'ipykernel_launcher'])
    kernelspec.validate_argv(['kernel', '--connection-file={connection_file}'])


def test_builds_only_the_keys_given():
    assert kernelspec.build_kernel(ARGV, 'Python (torch)') == {
        'argv': ARGV, 'display_name': 'Python (torch)', 'language': 'python'}
    kernel = kernelspec.build_kernel(ARGV, 'T', 'python', env={'OMP_NUM_THREADS': 8, 'CUDA_HOME': '/usr/local/cuda'},
                                     metadata={'debugger': True}, interrupt_mode='message',
                                     kernel_protocol_version='5.5')
    assert kernel['env'] == {'OMP_NUM_THREADS': '8', 'CUDA_HOME': '/usr/local/cuda'}
    assert kernel['metadata'] == {'debugger': True}
    assert kernel['interrupt_mode'] == 'message' and kernel['kernel_protocol_version'] == '5.5'


def test_refuses_env_values_that_are_not_scalars():
    with pytest.raises(KernelspecError, match='^env DEBUG must be a string, got bool'):
        kernelspec.build_kernel(ARGV, 'T', env={'DEBUG': True})


def test_system_directory_under_prefix(tmp_path):
    assert kernelspec_node.kernel_directory('torch') == '/usr/local/share/jupyter/kernels/torch'
    assert kernelspec_node.kernel_directory('torch', 'system', str(tmp_path)) == str(tmp_path / 'share/jupyter/kernels/torch')


def test_user_directory_from_the_password_database():
    passwd = FakePasswd(PasswdEntry('alice', 1001, 1001, '/home/alice'), PasswdEntry('root', os.geteuid(), 0, '/root'))
    assert kernelspec_node.kernel_directory('torch', 'user', user='alice', passwd=passwd) == \
        '/home/alice/.local/share/jupyter/kernels/torch'
    assert kernelspec_node.kernel_directory('torch', 'user', passwd=passwd) == '/root/.local/share/jupyter/kernels/torch'
    with pytest.raises(KernelspecError, match="^user 'bob' does not exist"):
        kernelspec_node.kernel_directory('torch', 'user', user='bob', passwd=passwd)


def test_explicit_path_wins_over_scope(tmp_path):
    assert kernelspec_node.kernel_directory('torch', 'user', user='nobody-here', path=str(tmp_path) + '/k/') == str(tmp_path / 'k')


def test_compares_parsed_json_not_text():
    desired = {'argv': ARGV, 'display_name': 'T', 'language': 'python'}
    reordered = json.dumps({'language': 'python', 'display_name': 'T', 'argv': ARGV})
    assert kernelspec.same_kernel(reordered, desired)
    assert not kernelspec.same_kernel(json.dumps(dict(desired, language='R')), desired)
    assert not kernelspec.same_kernel('{not json', desired)
    assert not kernelspec.same_kernel(None, desired)


def _ipykernel_7(**options):
    """The kernel.json ipykernel 7 wrote, and the kernel its own options build (kernel_protocol_version 5.5 unless
    given)."""
    with open(IPYKERNEL_7) as handle:
        text = handle.read()
    options.setdefault('kernel_protocol_version', '5.5')
    return text, kernelspec.build_kernel(json.loads(text)['argv'], 'Python 3 (ipykernel)', 'python',
                                         metadata={'debugger': True, 'supported_encryption': ['curve']}, **options)


def test_ipykernel_7_file_equals_the_same_options():
    text, desired = _ipykernel_7()
    assert kernelspec.same_kernel(text, desired)
    # Without kernel_protocol_version the options describe a different file: desired is exactly the options.
    _text, without_version = _ipykernel_7(kernel_protocol_version=None)
    assert not kernelspec.same_kernel(text, without_version)


def test_a_kernel_file_is_in_place_with_the_same_kernel_and_the_modules_default_mode():
    text, desired = _ipykernel_7()
    assert kernelspec.kernel_in_place({'text': text, 'mode': 0o644}, desired)
    assert not kernelspec.kernel_in_place({'text': text, 'mode': 0o664}, desired)
    assert not kernelspec.kernel_in_place({'text': text.replace('ipykernel', 'other'), 'mode': 0o644}, desired)
    assert not kernelspec.kernel_in_place(None, desired)


def test_the_kernel_file_mode_is_the_modules_default():
    with open(os.path.join(REPO_ROOT, 'plugins', 'modules', 'jupyter_kernelspec.py')) as handle:
        documentation = yaml.safe_load(re.search(r"DOCUMENTATION = r'''(.*?)'''", handle.read(), re.S).group(1))
    assert int(documentation['options']['mode']['default'], 8) == kernelspec.KERNEL_FILE_MODE


def test_diff_is_sorted_json_with_indent_1():
    diff = kernelspec.render_diff('{"language": "python", "argv": ["k"]}', {'argv': ['k'], 'language': 'R'}, '/k/kernel.json')
    assert diff['before'] == '{\n "argv": [\n  "k"\n ],\n "language": "python"\n}\n'
    assert diff['after'] == '{\n "argv": [\n  "k"\n ],\n "language": "R"\n}\n'
    assert diff['before_header'] == diff['after_header'] == '/k/kernel.json'


def test_diff_of_creation_removal_and_unparsable_file():
    assert kernelspec.render_diff(None, {'a': 1}, 'k')['before'] == ''
    assert kernelspec.render_diff('{"a": 1}', None, 'k')['after'] == ''
    assert kernelspec.render_diff('{broken', {'a': 1}, 'k')['before'] == '{broken'


@pytest.mark.parametrize('file_name', ['', '..', 'sub/logo.png', 'kernel.json'])
def test_refuses_resource_names_that_are_not_plain_files(file_name):
    with pytest.raises(KernelspecError, match='^resources'):
        kernelspec.validate_resource_name(file_name)


def test_sha256_of_file_and_missing_file(tmp_path):
    (tmp_path / 'logo.png').write_bytes(b'abc')
    assert kernelspec_node.sha256_of(str(tmp_path / 'logo.png')) == \
        'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    assert kernelspec_node.sha256_of(str(tmp_path / 'missing.png')) is None


def test_ipykernel_into_a_conda_env_from_conda_forge_only():
    argv = kernelspec.conda_install_argv(["ipykernel"], "/opt/conda/envs/ml", channels=["conda-forge", "nodefaults"])
    assert argv == ["conda", "install", "--prefix", "/opt/conda/envs/ml", "--yes", "--json",
                    "--override-channels", "--channel", "conda-forge", "ipykernel"]


def test_configured_channels_and_another_executable():
    assert kernelspec.conda_install_argv("ipykernel>=6", "/opt/env", conda="/opt/conda/bin/mamba") == [
        "/opt/conda/bin/mamba", "install", "--prefix", "/opt/env", "--yes", "--json", "ipykernel>=6"]


@pytest.mark.parametrize("packages, prefix", [([], "/opt/env"), ([""], "/opt/env"), (["ipykernel"], "envs/ml"), (["x"], None)])
def test_bad_install_input_is_named(packages, prefix):
    with pytest.raises(KernelspecError, match="^(packages|prefix) "):
        kernelspec.conda_install_argv(packages, prefix)


def test_display_name_names_the_kernel_and_its_env():
    assert kernelspec.display_name_for("torch", "/opt/torch/.venv") == "Python (torch, /opt/torch/.venv)"
