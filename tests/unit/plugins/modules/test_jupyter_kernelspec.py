# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import collections
import json
import os
import shutil
import stat

import pytest

from conftest import FIXTURES, run_module
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import kernelspec
from ansible_collections.aistack.gpu_node.plugins.modules import jupyter_kernelspec

ARGV = ['/opt/conda/envs/torch/bin/python', '-m', 'ipykernel_launcher', '-f', '{connection_file}']
IPYKERNEL_7 = os.path.join(FIXTURES, 'jupyter', 'ipykernel-7-kernel.json')


@pytest.fixture
def kernel_args(tmp_path):
    return {'name': 'torch', 'path': str(tmp_path / 'torch'), 'display_name': 'Python (torch)', 'argv': ARGV,
            'env': {'CUDA_HOME': '/usr/local/cuda', 'OMP_NUM_THREADS': 8}}


def read_kernel(directory):
    with open(os.path.join(str(directory), 'kernel.json')) as handle:
        return json.load(handle)


def test_creates_the_kernel_then_reports_no_change(capsys, tmp_path, kernel_args):
    code, result = run_module(jupyter_kernelspec, kernel_args, capsys)
    assert code == 0 and result['changed'] is True
    assert result['path'] == str(tmp_path / 'torch')
    expected = {'argv': ARGV, 'display_name': 'Python (torch)', 'language': 'python',
                'env': {'CUDA_HOME': '/usr/local/cuda', 'OMP_NUM_THREADS': '8'}}
    assert result['kernel'] == expected and read_kernel(tmp_path / 'torch') == expected
    assert result['diff']['before'] == '' and json.loads(result['diff']['after']) == expected
    assert stat.S_IMODE(os.stat(str(tmp_path / 'torch' / 'kernel.json')).st_mode) == 0o644
    assert os.listdir(str(tmp_path / 'torch')) == ['kernel.json']  # no temporary file left behind

    written_at = os.stat(str(tmp_path / 'torch' / 'kernel.json')).st_ino
    code, result = run_module(jupyter_kernelspec, kernel_args, capsys)
    assert code == 0 and result['changed'] is False
    assert result['diff']['before'] == result['diff']['after']
    assert os.stat(str(tmp_path / 'torch' / 'kernel.json')).st_ino == written_at


def test_system_scope_under_prefix(capsys, tmp_path, kernel_args):
    del kernel_args['path']
    code, result = run_module(jupyter_kernelspec, dict(kernel_args, prefix=str(tmp_path)), capsys)
    assert code == 0 and result['changed'] is True
    assert result['path'] == str(tmp_path / 'share' / 'jupyter' / 'kernels' / 'torch')
    assert read_kernel(result['path'])['display_name'] == 'Python (torch)'


def test_env_change_is_changed_with_diff(capsys, tmp_path, kernel_args):
    run_module(jupyter_kernelspec, kernel_args, capsys)
    code, result = run_module(jupyter_kernelspec, dict(kernel_args, env={'CUDA_HOME': '/usr/local/cuda-12.8'}, _ansible_diff=True), capsys)
    assert code == 0 and result['changed'] is True
    assert '"CUDA_HOME": "/usr/local/cuda"' in result['diff']['before']
    assert '"OMP_NUM_THREADS": "8"' in result['diff']['before']
    assert '"CUDA_HOME": "/usr/local/cuda-12.8"' in result['diff']['after']
    assert 'OMP_NUM_THREADS' not in result['diff']['after']
    assert read_kernel(tmp_path / 'torch')['env'] == {'CUDA_HOME': '/usr/local/cuda-12.8'}


def test_check_mode_reports_and_writes_nothing(capsys, tmp_path, kernel_args):
    code, result = run_module(jupyter_kernelspec, dict(kernel_args, _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True
    assert not (tmp_path / 'torch').exists()
    assert json.loads(result['diff']['after']) == result['kernel']

    run_module(jupyter_kernelspec, kernel_args, capsys)
    before = (tmp_path / 'torch' / 'kernel.json').read_text()
    code, result = run_module(jupyter_kernelspec, dict(kernel_args, display_name='Other', _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True
    assert (tmp_path / 'torch' / 'kernel.json').read_text() == before

    code, result = run_module(jupyter_kernelspec, dict(kernel_args, state='absent', _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True and (tmp_path / 'torch' / 'kernel.json').exists()


def test_absent_removes_the_directory_then_reports_no_change(capsys, tmp_path, kernel_args):
    run_module(jupyter_kernelspec, kernel_args, capsys)
    code, result = run_module(jupyter_kernelspec, {'name': 'torch', 'path': kernel_args['path'], 'state': 'absent'}, capsys)
    assert code == 0 and result['changed'] is True and result['kernel'] == {}
    assert result['diff']['after'] == '' and '"display_name": "Python (torch)"' in result['diff']['before']
    assert not (tmp_path / 'torch').exists()

    code, result = run_module(jupyter_kernelspec, {'name': 'torch', 'path': kernel_args['path'], 'state': 'absent'}, capsys)
    assert code == 0 and result['changed'] is False


def test_absent_refuses_a_directory_that_is_not_a_kernelspec(capsys, tmp_path):
    (tmp_path / 'data').mkdir()
    (tmp_path / 'data' / 'notes.txt').write_text('keep')
    code, result = run_module(jupyter_kernelspec, {'name': 'data', 'path': str(tmp_path / 'data'), 'state': 'absent'}, capsys)
    assert code == 1 and 'has no kernel.json; refusing to remove it' in result['msg']
    assert (tmp_path / 'data' / 'notes.txt').exists()


def test_refuses_upper_case_name(capsys, kernel_args):
    code, result = run_module(jupyter_kernelspec, dict(kernel_args, name='Torch'), capsys)
    assert code == 1 and result['msg'].startswith("name 'Torch' has upper-case letters")


def test_refuses_argv_without_connection_file(capsys, tmp_path, kernel_args):
    code, result = run_module(jupyter_kernelspec, dict(kernel_args, argv=['python', '-m', 'ipykernel_launcher']), capsys)
    assert code == 1 and result['msg'].startswith('argv must contain {connection_file}')
    assert not (tmp_path / 'torch').exists()


def test_present_needs_argv_and_display_name(capsys, tmp_path):
    code, result = run_module(jupyter_kernelspec, {'name': 'torch', 'path': str(tmp_path / 'torch')}, capsys)
    assert code == 1 and 'argv' in result['msg'] and 'display_name' in result['msg']


def test_resources_copied_and_recopied_only_when_sha256_differs(capsys, tmp_path, kernel_args):
    logo = tmp_path / 'logo-source.png'
    logo.write_bytes(b'\x89PNG first')
    args = dict(kernel_args, resources={'logo-64x64.png': str(logo)})
    code, result = run_module(jupyter_kernelspec, args, capsys)
    copied = tmp_path / 'torch' / 'logo-64x64.png'
    assert code == 0 and result['changed'] is True and copied.read_bytes() == b'\x89PNG first'
    assert stat.S_IMODE(os.stat(str(copied)).st_mode) == 0o644

    # Same content with a newer source mtime: compared by sha256, so nothing is copied.
    os.utime(str(logo), None)
    copied_inode = os.stat(str(copied)).st_ino
    code, result = run_module(jupyter_kernelspec, args, capsys)
    assert code == 0 and result['changed'] is False and os.stat(str(copied)).st_ino == copied_inode

    logo.write_bytes(b'\x89PNG second')
    code, result = run_module(jupyter_kernelspec, dict(args, _ansible_check_mode=True), capsys)
    assert code == 0 and result['changed'] is True and copied.read_bytes() == b'\x89PNG first'
    code, result = run_module(jupyter_kernelspec, args, capsys)
    assert code == 0 and result['changed'] is True and copied.read_bytes() == b'\x89PNG second'


def test_resources_with_missing_source_fail_before_writing(capsys, tmp_path, kernel_args):
    code, result = run_module(jupyter_kernelspec, dict(kernel_args, resources={'logo-64x64.png': str(tmp_path / 'missing.png')}), capsys)
    assert code == 1 and result['msg'].startswith('resources logo-64x64.png: source')
    assert not (tmp_path / 'torch').exists()


def test_resources_with_relative_source_fail_before_writing(capsys, tmp_path, kernel_args):
    code, result = run_module(jupyter_kernelspec, dict(kernel_args, resources={'logo-64x64.png': 'logo.png'}), capsys)
    assert code == 1
    assert result['msg'] == 'resources logo-64x64.png: source logo.png must be an absolute path on the node'
    assert not (tmp_path / 'torch').exists()


def test_mode_change_alone_is_changed(capsys, tmp_path, kernel_args):
    run_module(jupyter_kernelspec, kernel_args, capsys)
    code, result = run_module(jupyter_kernelspec, dict(kernel_args, mode='0600'), capsys)
    assert code == 0 and result['changed'] is True
    assert stat.S_IMODE(os.stat(str(tmp_path / 'torch' / 'kernel.json')).st_mode) == 0o600


def test_user_scope_path_from_patched_pwd(capsys, tmp_path, monkeypatch, kernel_args):
    entry = collections.namedtuple('Entry', 'pw_name pw_uid pw_gid pw_dir')(
        'alice', os.geteuid(), os.getegid(), str(tmp_path / 'home' / 'alice'))

    class FakePasswd(object):
        @staticmethod
        def getpwnam(name):
            if name != 'alice':
                raise KeyError(name)
            return entry

    monkeypatch.setattr(kernelspec, 'pwd', FakePasswd)
    del kernel_args['path']
    code, result = run_module(jupyter_kernelspec, dict(kernel_args, scope='user', user='alice'), capsys)
    assert code == 0 and result['changed'] is True
    assert result['path'] == str(tmp_path / 'home' / 'alice' / '.local' / 'share' / 'jupyter' / 'kernels' / 'torch')
    assert read_kernel(result['path'])['argv'] == ARGV

    code, result = run_module(jupyter_kernelspec, dict(kernel_args, scope='user', user='bob'), capsys)
    assert code == 1 and result['msg'] == "user 'bob' does not exist on this node"


def test_adopts_an_ipykernel_7_file_without_rewriting_it(capsys, tmp_path):
    directory = tmp_path / 'python3'
    directory.mkdir()
    shutil.copy(IPYKERNEL_7, str(directory / 'kernel.json'))
    os.chmod(str(directory / 'kernel.json'), 0o644)
    recorded_text = (directory / 'kernel.json').read_text()
    recorded = json.loads(recorded_text)
    args = {'name': 'python3', 'path': str(directory), 'argv': recorded['argv'],
            'display_name': 'Python 3 (ipykernel)', 'language': 'python',
            'metadata': {'debugger': True, 'supported_encryption': ['curve']},
            'kernel_protocol_version': '5.5', '_ansible_diff': True}
    code, result = run_module(jupyter_kernelspec, args, capsys)
    assert code == 0 and result['changed'] is False
    assert result['kernel'] == recorded
    assert (directory / 'kernel.json').read_text() == recorded_text  # ipykernel's own layout kept

    # Desired is exactly the options: leaving kernel_protocol_version out drops it on the next write.
    del args['kernel_protocol_version']
    code, result = run_module(jupyter_kernelspec, args, capsys)
    assert code == 0 and result['changed'] is True
    assert 'kernel_protocol_version' in result['diff']['before'] and 'kernel_protocol_version' not in result['diff']['after']
    assert 'kernel_protocol_version' not in read_kernel(directory)
