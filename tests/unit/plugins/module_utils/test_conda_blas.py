# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The BLAS an env asks for, and the one its numpy loads: a real probe of PyPI numpy 2.4.6
(fixtures/blas, recorded here) and public threadpoolctl outputs (fixtures/public) for MKL."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import re

import pytest

from conftest import FIXTURES, read_public
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import blas as cb
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda.env import CondaEnvError

VENV = '/tmp/condablas/npvenv'
OPENBLAS = VENV + '/lib/python3.11/site-packages/numpy.libs/libscipy_openblas64_-32a4b2a6.so'


def read_probe(name):
    with open(os.path.join(FIXTURES, 'blas', name)) as handle:
        return handle.read()


def threadpoolctl_paths(name):
    """The library paths a public threadpoolctl/strace output names."""
    text = read_public(name)
    return re.findall(r"'filepath': '([^']+)'", text) + re.findall(r'openat\([^"]*"([^"]+)"', text)


@pytest.mark.parametrize('spec, vendor', [
    ('blas=*=mkl', 'mkl'),
    ('blas=*=openblas', 'openblas'),
    ('blas=1.0=mkl', 'mkl'),
    ('blas * openblas', 'openblas'),
    ('defaults::blas=*=mkl', 'mkl'),
    ('libblas=*=*mkl', 'mkl'),
    ('libblas=*=*openblas', 'openblas'),
    ('libblas=3.9.0=31_h59b9bed_openblas', 'openblas'),
    ('libblas=*=*_blis', 'blis'),
    ('libblas=*=*netlib', 'netlib'),
    ('libblas[build=*mkl]', 'mkl'),
    ("blas[build='openblas']", 'openblas'),
    ('blas', ''),
    ('libblas>=3.9', ''),
    ('blas=1.0', ''),
    ('libblas=*=*', ''),
    ('blas=*=accelerate', None),
])
def test_selector_vendor(spec, vendor):
    assert cb.selector_vendor(spec) == vendor


def test_requested_blas_from_the_spec_or_the_key():
    assert cb.requested_blas(['python=3.11', 'numpy', 'blas=*=openblas']) == ('openblas', 'blas=*=openblas')
    assert cb.requested_blas(['numpy', 'libblas=*=*mkl', 'blas=*=mkl']) == ('mkl', 'libblas=*=*mkl')
    assert cb.requested_blas(['numpy', 'mkl', 'blas']) == (None, None)
    assert cb.requested_blas(['numpy'], 'mkl', key='conda_env_envs[1].blas') == ('mkl', 'conda_env_envs[1].blas')
    assert cb.requested_blas(['numpy', 'blas=*=mkl'], 'mkl') == ('mkl', 'blas')


@pytest.mark.parametrize('specs, declared, message', [
    (['numpy'], 'atlas', "conda_env_envs[0].blas is 'atlas'; expected one of openblas, mkl, blis, netlib"),
    (['numpy', 'blas=*=openblas'], 'mkl',
     'conda_env_envs[0].blas is mkl but the dependencies of conda_env_envs[0] select openblas (blas=*=openblas)'),
    (['blas=*=mkl', 'libblas=*=*openblas'], None, 'select different BLAS libraries: blas=*=mkl, libblas=*=*openblas'),
    (['blas=*=accelerate'], None, "'blas=*=accelerate' selects a BLAS that cannot be verified"),
])
def test_requested_blas_refusals_name_the_declaration(specs, declared, message):
    with pytest.raises(CondaEnvError) as error:
        cb.requested_blas(specs, declared, source='conda_env_envs[0]', key='conda_env_envs[0].blas')
    assert message in str(error.value)


def test_real_pypi_numpy_maps_one_openblas():
    probe = cb.parse_probe(read_probe('numpy-2.4.6-pypi-venv.json'), VENV + '/bin/python')
    assert probe['numpy'] == '2.4.6' and probe['product'] == 64 * 64 * 64
    libraries = cb.mapped_libraries(probe['maps'])
    assert OPENBLAS in libraries and VENV + '/lib/python3.11/site-packages/numpy.libs/libgfortran-040039e1-0352e75f.so.5.0.0' in libraries
    assert all(path.startswith('/') and '.so' in path for path in libraries)
    assert len(libraries) == len(set(libraries))
    assert cb.classify_blas(libraries) == {'openblas': [OPENBLAS]}
    assert cb.build_blas(probe['config']) == {'name': 'scipy-openblas', 'version': '0.3.31.188.0'}


def test_openblas_numpy_verified_for_openblas():
    probe = json.loads(read_probe('numpy-2.4.6-pypi-venv.json'))
    report = cb.blas_report('demo-blas', VENV, 'openblas', 'blas=*=openblas', probe)
    assert report['verified'] is True and report['problem'] is None
    assert report['found'] == ['openblas'] and report['libraries'] == [OPENBLAS] and report['numpy'] == '2.4.6'


def test_mkl_asked_of_an_openblas_numpy_names_env_blas_library_and_fix():
    probe = json.loads(read_probe('numpy-2.4.6-pypi-venv.json'))
    report = cb.blas_report('demo-blas', VENV, 'mkl', 'libblas=*=*mkl', probe)
    assert report['verified'] is False and report['found'] == ['openblas']
    problem = report['problem']
    assert problem.startswith('env demo-blas asks for BLAS mkl (libblas=*=*mkl), but numpy 2.4.6 in %s loads openblas (%s)'
                              % (VENV, OPENBLAS))
    assert 'Fix: take numpy from a channel that builds it for mkl and select it with libblas=*=*mkl' in problem
    from_pip = cb.blas_report('demo-blas', VENV, 'mkl', 'blas', probe, numpy_from_pip=True)['problem']
    assert 'numpy comes from pip, and a PyPI numpy always bundles its own OpenBLAS' in from_pip


def test_numpy_missing_when_a_blas_is_asked():
    probe = cb.parse_probe(read_probe('no-numpy-venv.json'), '/x/bin/python')
    report = cb.blas_report('demo-blas', '/x', 'openblas', 'blas=*=openblas', probe)
    assert report['verified'] is False and report['numpy'] is None
    assert report['problem'] == ("env demo-blas asks for BLAS openblas (blas=*=openblas), but numpy does not import in /x "
                                 "(ModuleNotFoundError: No module named 'numpy'). Fix: add numpy to the dependencies, "
                                 "or drop the BLAS request")


def test_no_blas_library_mapped_is_a_failure():
    maps = '\n'.join(line for line in json.loads(read_probe('numpy-2.4.6-pypi-venv.json'))['maps'].splitlines()
                     if 'openblas' not in line)
    report = cb.blas_report('e', '/p', 'openblas', 'blas', {'numpy': '2.4.6', 'maps': maps, 'config': None})
    assert report['verified'] is False and 'loads no BLAS library it knows' in report['problem']
    assert report['numpy_build_blas'] is None


def test_mkl_recognised_by_file_name_in_a_public_threadpoolctl_output():
    # No MKL numpy can be recorded here: its library names come from a public output.
    paths = threadpoolctl_paths('threadpoolctl-info-mkl-conda.txt')
    assert paths[0] == '/home/ogrisel/miniconda3/envs/mkl-threading-layer/lib/libmkl_rt.so'
    found = cb.classify_blas(paths)
    assert sorted(found) == ['mkl'] and len(found['mkl']) == 2  # libmkl_rt, libmkl_tbb_thread; not libtbb
    maps = ''.join('7f00-7f01 r-xp 00000000 fe:00 1  %s\n' % path for path in paths)
    probe = {'numpy': '1.17.2', 'maps': maps}
    assert cb.blas_report('mkl-env', '/p', 'mkl', 'blas=*=mkl', probe)['verified'] is True
    problem = cb.blas_report('mkl-env', '/p', 'openblas', 'blas=*=openblas', probe)['problem']
    assert 'loads mkl (/home/ogrisel/miniconda3/envs/mkl-threading-layer/lib/libmkl_rt.so' in problem


def test_old_pypi_openblas_names_and_two_blas_at_once():
    paths = threadpoolctl_paths('threadpoolctl-info-openblas-pip.txt')
    found = cb.classify_blas(paths)
    assert sorted(found) == ['openblas'] and len(found['openblas']) == 2  # numpy's and scipy's; libgomp is no BLAS
    mixed = cb.classify_blas(paths + threadpoolctl_paths('threadpoolctl-info-mkl-conda.txt'))
    maps = ''.join('7f00-7f01 r-xp 00000000 fe:00 1  %s\n' % p for vendor in mixed for p in mixed[vendor])
    report = cb.blas_report('e', '/p', 'openblas', 'blas', {'numpy': '1.17.2', 'maps': maps})
    assert report['verified'] is False and report['found'] == ['mkl', 'openblas']


@pytest.mark.parametrize('path, vendor', [
    # Debian's alternatives: the libblas.so.3 of each implementation lives in a folder named after it.
    ('/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3', 'openblas'),
    ('/usr/lib/x86_64-linux-gnu/blis-openmp/libblas.so.3', 'blis'),
    ('/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0', 'netlib'),
    ('/opt/conda/envs/x/lib/libcblas.so.3', 'netlib'),
    ('/opt/conda/envs/x/lib/libopenblasp-r0.3.28.so', 'openblas'),
    ('/opt/conda/envs/x/lib/libblis.so.4.0.0', 'blis'),
    ('/opt/conda/envs/x/lib/libmkl_core.so.2', 'mkl'),
    ('/opt/conda/envs/x/lib/libgomp.so.1.0.0', None),
    ('/opt/conda/envs/x/lib/liblapack.so.3', None),
])
def test_library_vendor_by_name(path, vendor):
    assert cb.library_vendor(path) == vendor


def test_maps_lines_without_a_file_are_skipped():
    maps = ('7ffd-7ffe rw-p 00000000 00:00 0                          [stack]\n'
            '7f00-7f01 r--p 00000000 00:00 0\n'
            '7f01-7f02 r-xp 00000000 fe:00 7  /opt/x/lib/libopenblas.so.0 (deleted)\n'
            '7f02-7f03 r--p 00000000 fe:00 8  /usr/lib/locale/C.utf8/LC_CTYPE\n')
    assert cb.mapped_libraries(maps) == ['/opt/x/lib/libopenblas.so.0']


def test_probe_answers_that_are_not_json_are_named():
    with pytest.raises(CondaEnvError) as error:
        cb.parse_probe('Illegal instruction\n', '/p/bin/python')
    assert '/p/bin/python -c <numpy BLAS probe> printed no JSON: Illegal instruction' in str(error.value)
    with pytest.raises(CondaEnvError):
        cb.parse_probe('[1, 2]\n', '/p/bin/python')


def test_unsolvable_blas_request_says_what_the_env_uses_now():
    current = cb.blas_report('demo-blas', VENV, 'mkl', 'blas=*=mkl', json.loads(read_probe('numpy-2.4.6-pypi-venv.json')))
    message = cb.unsolvable_message('demo-blas', 'mkl', 'blas=*=mkl', 'conda create --dry-run ... failed', current)
    assert message.startswith('env demo-blas asks for BLAS mkl (blas=*=mkl) and the spec cannot be solved; the env is '
                              'unchanged. The env now uses openblas (numpy 2.4.6: %s). Fix: ' % OPENBLAS)
    assert message.endswith('The solver said: conda create --dry-run ... failed')
    assert 'numpy does not import' in cb.unsolvable_message('e', 'mkl', 'blas', 'x', {'numpy': None})
    assert 'now' not in cb.unsolvable_message('e', 'mkl', 'blas', 'x')


def test_probe_is_the_recorded_one_and_valid_python():
    compile(cb.PROBE, '<probe>', 'exec')
    assert '/proc/self/maps' in cb.PROBE and 'show_config(mode="dicts")' in cb.PROBE


def test_unverified_report():
    report = cb.unverified('mkl', 'blas=*=mkl', 'check mode: the env would be created first')
    assert report['verified'] is False and report['not_probed'].startswith('check mode') and report['problem'] is None
