# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""conda_env's pure logic against outputs of real conda 26.7 (fixtures/conda-26.7, INDEX.tsv)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

import pytest
import yaml

from conftest import REPO_ROOT, read_conda
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import env as ce

# The environment.yml behind env-create-demo-pip.txt / env-export-full.yml.txt.
DEMO_PIP = {'name': 'demo-pip', 'channels': ['conda-forge'],
            'dependencies': ['python=3.11', 'pip', 'hello-ansible', 'libfoo=1.0', {'pip': ['six==1.17.0']}]}


def installed(name):
    return ce.installed_packages(json.loads(read_conda(name)))


def test_normalize_keeps_conda_and_pip_parts():
    env = ce.normalize_environment(DEMO_PIP)
    assert env['channels'] == ['conda-forge'] and env['override_channels'] is False
    assert env['conda'] == ['python=3.11', 'pip', 'hello-ansible', 'libfoo=1.0']
    assert env['pip'] == ['six==1.17.0'] and env['warnings'] == []


def test_nodefaults_is_stripped_into_override_channels():
    # Real conda 26.7 takes nodefaults for a channel name and fails (conda-26.7.1/env-create-nodefaults.txt).
    assert 'nodefaults' in read_conda('conda-26.7.1/env-create-nodefaults.txt.stderr.txt')
    env = ce.normalize_environment(dict(DEMO_PIP, channels=['conda-forge', 'nodefaults']))
    assert env['channels'] == ['conda-forge'] and env['override_channels'] is True
    assert 'nodefaults' not in ce.render_environment('demo-pip', env)


@pytest.mark.parametrize('spec, message', [
    (['python'], 'must be a mapping'),
    ({'dependencies': ['x'], 'channel': ['c']}, "unknown key(s) channel"),
    ({'dependencies': []}, 'dependencies must be a non-empty list'),
    ({'dependencies': ['x'], 'channels': 'conda-forge'}, 'channels must be a list'),
    ({'dependencies': [{'pip': ['six']}, 'python']}, 'needs pip among the conda dependencies'),
    ({'dependencies': ['pip', {'pip': ['a']}, {'pip': ['b']}]}, 'more than one pip: section'),
    ({'dependencies': ['pip', {'pip': 'six'}]}, 'pip: section must be a list'),
    ({'dependencies': [{'conda': ['x']}]}, 'neither a conda package spec nor a pip: section'),
    ({'dependencies': ['x'], 'variables': ['A=1']}, 'variables must be a mapping'),
])
def test_bad_environments_are_named(spec, message):
    with pytest.raises(ce.CondaEnvError) as error:
        ce.normalize_environment(spec, source='envs/bad.yml')
    assert message in str(error.value) and str(error.value).startswith('envs/bad.yml: ')


def test_dead_pytorch_channel_refused_with_the_fix_for_the_driver():
    spec = {'channels': ['pytorch', 'nvidia'], 'dependencies': ['pytorch=2.7', 'pytorch-cuda=12.4']}
    with pytest.raises(ce.CondaEnvError) as error:
        ce.normalize_environment(spec, driver_version='580.159.04')
    message = str(error.value)
    assert 'stopped at torch 2.5.1' in message and 'cuda-version' in message
    assert 'https://download.pytorch.org/whl/cu13' in message and 'driver 580.159.04' in message


def test_old_pytorch_channel_torch_is_allowed_with_a_warning():
    env = ce.normalize_environment({'channels': ['pytorch'], 'dependencies': ['pytorch=2.4', 'pytorch-cuda=12.1']})
    assert env['warnings'] and '2.5.1' in env['warnings'][0]
    assert ce.normalize_environment({'dependencies': ['conda-forge::pytorch>=2.6', 'cuda-version=12.6']})['warnings'] == []


def test_rendered_environment_is_yaml_conda_reads_and_stable():
    env = ce.normalize_environment(dict(DEMO_PIP, variables={'OMP_NUM_THREADS': 8}))
    text = ce.render_environment('demo-pip', env)
    assert yaml.safe_load(text) == {'name': 'demo-pip', 'channels': ['conda-forge'],
                                    'dependencies': DEMO_PIP['dependencies'], 'variables': {'OMP_NUM_THREADS': '8'}}
    assert text == ce.render_environment('demo-pip', ce.normalize_environment(dict(DEMO_PIP, variables={'OMP_NUM_THREADS': '8'})))
    assert yaml.safe_load(ce.render_environment('x', ce.normalize_environment({'dependencies': ['a']})))['channels'] == []


@pytest.mark.parametrize('spec, name', [
    ('python=3.11', 'python'), ('conda-forge::numpy >=1.26', 'numpy'), ('blas=*=mkl', 'blas'),
    ("libfoo[version='>=2']", 'libfoo'), ('PyYAML', 'pyyaml'), ('cuda-version 12.6.*', 'cuda-version'),
])
def test_matchspec_name(spec, name):
    assert ce.matchspec_name(spec) == name


@pytest.mark.parametrize('line, expected', [
    ('six==1.17.0', ('six', '1.17.0')), ('Typing_Extensions>=4', ('typing-extensions', None)),
    ('torch==2.11.0; python_version >= "3.10"', ('torch', '2.11.0')), ('requests[socks]==2.32.3', ('requests', '2.32.3')),
    ('--index-url https://download.pytorch.org/whl/cu130', None), ('--find-links /srv/wheels', None),
    ('git+https://github.com/NVIDIA/apex', None), ('apex @ file:///srv/apex.whl', None), ('-r extra.txt', None),
])
def test_pip_requirement(line, expected):
    assert ce.pip_requirement(line) == expected


def test_conda_list_marks_pip_packages_by_channel():
    packages = installed('conda-list-demo-pip.json')
    assert [p['name'] for p in packages] == ['hello-ansible', 'libfoo', 'pip', 'python', 'six']
    assert packages[-1] == {'name': 'six', 'version': '1.17.0', 'build': 'pypi_0', 'channel': 'pypi'}
    assert ce.render_packages(packages).splitlines()[3] == 'python==3.11.7=repack_pyenv_0  (conda-forge)'


def test_transaction_of_a_create_dry_run_is_the_new_env():
    planned = ce.transaction(json.loads(read_conda('dryrun-create-new.json')))
    assert [p['name'] for p in planned['link']] == ['hello-ansible', 'libfoo'] and planned['unlink'] == []
    assert ce.package_changes([], planned['link']) == {
        'added': ['hello-ansible==1.0.0=h4616a5c_0', 'libfoo==1.0.0=h4616a5c_0'], 'removed': [], 'changed': []}


def test_downgrade_dry_run_is_a_change():
    before = installed('conda-list-demo.json')
    after = ce.apply_transaction(before, ce.transaction(json.loads(read_conda('dryrun-downgrade-libfoo.json'))))
    assert ce.package_changes(before, after) == {
        'added': [], 'removed': [], 'changed': ['libfoo 1.1.0=h4616a5c_0 -> 1.0.0=h4616a5c_0']}


@pytest.mark.parametrize('name', ['install-noop.json', 'dryrun-upgrade-libfoo.json', 'env-update-prune.json'])
def test_already_installed_is_no_change(name):
    planned = ce.transaction(json.loads(read_conda(name)))
    before = installed('conda-list-demo.json')
    assert not ce.has_changes(ce.package_changes(before, ce.apply_transaction(before, planned)))


def test_prune_removal_and_pip_from_real_updates():
    before = installed('conda-list-demo-pip.json')
    after = ce.apply_transaction(before, ce.transaction(json.loads(read_conda('env-update-prune-drift.json'))))
    assert after == installed('conda-list-demo-pip-after-prune.json')
    assert ce.package_changes(before, after)['removed'] == ['hello-ansible==1.0.0=h4616a5c_0']
    assert ce.transaction(json.loads(read_conda('env-create-existing.json')))['pip'] == ['six-1.17.0']


def test_a_failed_transaction_is_not_taken_for_one():
    with pytest.raises(ce.CondaEnvError):
        ce.transaction(json.loads(read_conda('solve-fail-conflict.json')))


@pytest.mark.parametrize('name, rc, expected', [
    ('solve-fail-missing-pkg.json', 1, 'packages not found in the channels: no-such-package'),
    ('solve-fail-missing-dep.json', 1, "does-not-exist[version='>=9']"),
    ('solve-fail-conflict.json', 1, 'the spec cannot be solved: The following specifications'),
    ('rattler-solver-fail-missing.json', 1, 'RattlerUnsatisfiableError'),
    ('network-fail.json', 1, 'channel unreachable: HTTP 000 CONNECTION FAILED'),
    ('gpu-no-cuda.json', 1, '__cuda is a virtual package'),
])
def test_failures_are_explained_from_the_error_json(name, rc, expected):
    message = ce.explain_failure('conda create', rc, read_conda(name), '')
    assert expected in message and message.startswith('conda create failed (rc=1, ')


def test_failure_without_json_keeps_stderr():
    stderr = read_conda('default-solver-missing-libmamba.txt.stderr.txt')
    message = ce.explain_failure('conda create', 2, read_conda('default-solver-missing-libmamba.txt'), stderr)
    assert "invalid choice: 'libmamba'" in message and 'rc=2' in message


def test_parse_json_after_progress_text_and_garbage():
    assert ce.parse_json('Collecting package metadata\n{"success": true}', 'c') == {'success': True}
    with pytest.raises(ce.CondaEnvError, match='printed no JSON'):
        ce.parse_json(read_conda('compare-drift.txt'), 'conda compare')
    with pytest.raises(ce.CondaEnvError, match='does not parse'):
        ce.parse_json('{"success": tru', 'c')


def test_explicit_lock_entries_ignore_the_header():
    text = read_conda('conda-list-explicit-md5.txt')
    entries = ce.explicit_entries(text)
    assert len(entries) == 4 and all('.conda#' in e for e in entries)
    assert ce.explicit_entries(text.replace('26.7.2.dev56', '26.9.0')) == entries
    assert len(ce.sha256_text(text)) == 64


def _recorded_records():
    """conda-meta's records of the recorded demo-pip env: each conda package of its ``conda list --json``
    with the URL and md5 its ``conda list --explicit --md5`` printed."""
    urls = [line for line in read_conda('conda-list-explicit-md5.txt').splitlines() if '://' in line]
    records = []
    for package in json.loads(read_conda('conda-list-demo-pip.json')):
        if package['channel'] != 'pypi':
            url, _sep, md5 = next(u for u in urls if '/%s.' % package['dist_name'] in u).partition('#')
            records.append({'name': package['name'], 'version': package['version'], 'url': url, 'md5': md5})
    return records


def test_conda_meta_records_give_what_conda_list_explicit_lists():
    records = _recorded_records()
    assert ce.recorded_explicit_entries(records) == ce.explicit_entries(read_conda('conda-list-explicit-md5.txt'))
    # conda prints a record's URL without user:password and anaconda.org token, and no md5 it lacks.
    libfoo = dict(records[1], url='https://ml:s3cret@mirror.example/t/tk-123-456/conda-forge/noarch/libfoo-1.0.0-h4616a5c_0.conda')
    assert ce.recorded_explicit_entries([libfoo, dict(libfoo, md5=None, name='libbar')]) == [
        'https://mirror.example/conda-forge/noarch/libfoo-1.0.0-h4616a5c_0.conda',
        'https://mirror.example/conda-forge/noarch/libfoo-1.0.0-h4616a5c_0.conda#%s' % libfoo['md5']]
    # A record without URL, or from conda's unknown channel, is a comment line: no entry.
    assert ce.recorded_explicit_entries([dict(libfoo, url=None), dict(libfoo, url='<unknown>/libfoo-1.0.0-0.conda')]) == []


def test_conda_dirs_from_conda_config_say_what_conda_info_says():
    info = json.loads(read_conda('conda-info.json'))
    shown = json.loads(read_conda('conda-config-show.json'))
    assert ce.conda_dirs(shown) == (info['envs_dirs'], info['pkgs_dirs'], info['root_prefix'])
    assert ce.conda_dirs(shown) == (['/opt/conda/envs', '/opt/conda/envs', '/home/ml/.conda/envs'], ['/opt/conda/pkgs'], '/opt/conda')
    # The recorded conda config --show with keys prints those alone: a missing one is named.
    with pytest.raises(ce.CondaEnvError, match='conda config --show envs_dirs pkgs_dirs root_prefix --json lacks one'):
        ce.conda_dirs(json.loads(read_conda('config-show-channels.json')))


def _demo_drift(**overrides):
    env = ce.normalize_environment(DEMO_PIP)
    rendered = ce.render_environment('demo-pip', env)
    lock = read_conda('conda-list-explicit-md5.txt')
    args = dict(environment=env, installed=installed('conda-list-demo-pip.json'), stored_spec=rendered,
                rendered_spec=rendered, stored_lock=lock, current_entries=ce.explicit_entries(lock))
    args.update(overrides)
    return ce.drift(**args)


def test_no_drift_when_declared_applied_and_installed_agree():
    assert _demo_drift() == []


def test_drift_reasons():
    assert 'declared conda packages not installed: hello-ansible' in _demo_drift(
        installed=installed('conda-list-demo-pip-after-prune.json'))[0]
    assert _demo_drift(stored_spec='old') == ['the declared spec changed since it was last applied']
    assert _demo_drift(stored_spec=None) == ['no record of a spec applied by this module (first run on an existing env)']
    lock = read_conda('conda-list-explicit-md5.txt')
    removed = '\n'.join(line for line in lock.splitlines() if 'hello-ansible' not in line)
    assert _demo_drift(current_entries=ce.explicit_entries(removed)) == ['the installed packages differ from the lock written after the last change']
    assert _demo_drift(stored_lock=None) == ['the lock written after the last change is missing']
    env = ce.normalize_environment(dict(DEMO_PIP, dependencies=DEMO_PIP['dependencies'][:-1] + [{'pip': ['six==1.16.0', 'rich']}]))
    assert _demo_drift(environment=env) == ['pip package six is 1.17.0, declared six==1.16.0',
                                            'declared pip package not installed: rich']


def test_predicted_pip_uses_pins_and_keeps_undeclared():
    env = ce.normalize_environment(dict(DEMO_PIP, dependencies=DEMO_PIP['dependencies'][:-1] + [{'pip': ['rich', '--no-index']}]))
    predicted = ce.predicted_pip(installed('conda-list-demo-pip.json'), env)
    assert [(p['name'], p['version']) for p in predicted] == [('rich', '?'), ('six', '1.17.0')]


def test_validate_env_name():
    ce.validate_env_name('demo-pip')
    ce.validate_env_name('e' * 100)
    for bad in ('base', '../x', '', None):
        with pytest.raises(ce.CondaEnvError):
            ce.validate_env_name(bad)
    with pytest.raises(ce.CondaEnvError, match=r"^name 'eeee.*\.\.\.' is not a usable environment name: up to 100"):
        ce.validate_env_name('e' * 300)


def test_parse_json_skips_pip_text_with_brackets():
    out = "Ran pip subprocess with arguments:\n['/opt/conda/envs/x/bin/python', '-m']\n" + read_conda('env-create-existing.json')
    assert ce.parse_json(out, 'conda env create')['actions']['PIP'] == ['six-1.17.0']


LOCK_TEXT = '@EXPLICIT\nfile:///srv/conda-channel/noarch/libfoo-1.0.0-h4616a5c_0.conda\n'


def test_pip_lock_and_stray_pip_packages():
    """conda env update --prune never removes pip packages, and neither conda lock records them."""
    installed = ce.installed_packages(json.loads(read_conda('conda-list-demo-pip.json')))
    assert ce.pip_lock(installed) == 'six==1.17.0\n'
    with_six = ce.normalize_environment(DEMO_PIP)
    without_six = ce.normalize_environment(dict(DEMO_PIP, dependencies=DEMO_PIP['dependencies'][:-1]))
    applied = ce.render_environment('demo-pip', with_six)
    assert ce.applied_pip_names(applied) == ['six']
    # Declared by the spec applied last and not by this one: stray.
    assert ce.stray_pip(applied, 'six==1.17.0\n', without_six, installed) == ['six']
    assert ce.stray_pip(applied, 'six==1.17.0\n', with_six, installed) == []
    # Installed after the pip lock was written, and not declared: stray; no lock yet: nothing known.
    plain = ce.render_environment('demo-pip', without_six)
    assert ce.stray_pip(plain, '', without_six, installed) == ['six']
    assert ce.stray_pip(plain, None, without_six, installed) == []
    reasons = ce.drift(without_six, installed, plain, plain, LOCK_TEXT, ce.explicit_entries(LOCK_TEXT), stored_pip_lock='')
    assert reasons == ['pip packages not declared are installed: six (conda env update never removes them; they are '
                       'uninstalled)',
                       'the pip packages differ from the pip lock written after the last change: added six==1.17.0; '
                       'removed none']
    predicted = ce.predicted_pip(installed, without_six, ['six'])
    assert predicted == []


def test_kept_pip_projects_are_neither_stray_nor_drift():
    """A wheel another role installs after this module (apex_build's apex) is not uninstalled on the
    next run, and neither its arrival nor its removal is pip drift; without pip_kept it would be both."""
    installed = ce.installed_packages(json.loads(read_conda('conda-list-demo-pip.json')))
    without_six = ce.normalize_environment(dict(DEMO_PIP, dependencies=DEMO_PIP['dependencies'][:-1]))
    plain = ce.render_environment('demo-pip', without_six)
    kept = {ce.normalize_pip_name('Six')}
    assert ce.stray_pip(plain, '', without_six, installed, kept) == []
    assert ce.drift(without_six, installed, plain, plain, LOCK_TEXT, ce.explicit_entries(LOCK_TEXT), '', kept) == []
    # Recorded in the pip lock by an earlier update and uninstalled since: not drift either.
    conda_only = [r for r in installed if r['channel'] != ce.PIP_CHANNEL]
    assert ce.drift(without_six, conda_only, plain, plain, LOCK_TEXT, ce.explicit_entries(LOCK_TEXT), 'six==1.17.0\n', kept) == []
    assert ce.drift(without_six, conda_only, plain, plain, LOCK_TEXT, ce.explicit_entries(LOCK_TEXT), 'six==1.17.0\n') != []
    # Declared and kept: still checked as declared.
    with_six = ce.normalize_environment(DEMO_PIP)
    assert ce.drift(with_six, conda_only, ce.render_environment('demo-pip', with_six), ce.render_environment('demo-pip', with_six),
                    LOCK_TEXT, ce.explicit_entries(LOCK_TEXT), '', kept) == ['declared pip package not installed: six==1.17.0']


# Issue 35, item 3: conda prints a channel URL with the mirror password .condarc gives it; none of
# the module's messages repeats it.
SECRET = 'S3cretMirrorPw'
MIRROR = 'https://mirroruser:%s@mirror.example/conda-forge' % SECRET


def _with_mirror(name):
    return read_conda(name).replace('https://conda.anaconda.org/conda-forge', MIRROR)


@pytest.mark.parametrize('name', ['network-fail.json', 'solve-fail-missing-pkg.json'])
def test_conda_failures_name_the_mirror_without_its_password(name):
    text = _with_mirror(name)
    assert SECRET in text or name != 'network-fail.json'
    message = ce.explain_failure('conda create -c %s' % MIRROR, 1, text, 'stderr of %s' % MIRROR)
    assert SECRET not in message and 'mirroruser:***@mirror.example/conda-forge' in message
    error = ce.conda_failure('conda create -c %s' % MIRROR, 1, text, '')
    assert SECRET not in str(error)


def test_failures_without_json_and_unparsable_json_hide_the_password():
    message = ce.explain_failure('conda create', 2, '', 'CondaHTTPError: HTTP 401 for url <%s/noarch/repodata.json>' % MIRROR)
    assert SECRET not in message and 'mirroruser:***@' in message
    with pytest.raises(ce.CondaEnvError) as error:
        ce.parse_json('Collecting from %s\n{"broken": ' % MIRROR, 'conda create')
    assert SECRET not in str(error.value)
    stderr = 'Pip subprocess error:\nERROR: Could not fetch URL %s/simple/: 401' % MIRROR
    assert SECRET not in ce.pip_error(stderr)
    # any message of the module's own errors
    assert SECRET not in str(ce.CondaEnvError('channel %s refused' % MIRROR))


@pytest.mark.parametrize('conda, pip, named, fix', [
    (['python=3.11', 'pip', 'numpy'], ['numpy==2.4.5'], 'numpy==2.4.5, but it is among the conda dependencies (numpy)',
     'Fix: keep it in one section: numpy=2.4.5 among the conda dependencies, or drop numpy from them and keep numpy==2.4.5'),
    (['python=3.11', 'pip=26.3'], ['pip==25.3'], 'pip==25.3, but it is among the conda dependencies (pip=26.3)',
     'Fix: pin it among the conda dependencies (pip=25.3) and take it out of the pip: section'),
    (['python=3.11', 'pip', 'Py_Yaml'], ['py-yaml'], 'py-yaml, but it is among the conda dependencies (Py_Yaml)',
     'Fix: keep it in one section: py-yaml=X.Y')])
def test_a_package_in_both_sections_is_refused_naming_it_and_the_fix(conda, pip, named, fix):
    """Issue 36: pip over conda's numpy or pip never converged (conda's record kept, pip's files imported)."""
    with pytest.raises(ce.CondaEnvError) as error:
        ce.normalize_environment({'channels': ['conda-forge'], 'dependencies': conda + [{'pip': ['--no-index'] + pip}]},
                                 source='env.yml')
    assert str(error.value).startswith('env.yml: the pip: section asks for ' + named)
    assert fix in str(error.value)


def test_a_pip_line_for_a_package_conda_links_as_a_dependency_is_refused_after_the_solve():
    assert ce.pip_over_conda(['--no-index', 'six==1.17.0'], {'libfoo': 'libfoo 1.0.0'}, solved=True) is None
    message = ce.pip_over_conda(['libfoo==1.0.0'], {'libfoo': 'libfoo 1.0.0'}, solved=True)
    assert message.startswith('the pip: section asks for libfoo==1.0.0, but conda installs it as a dependency of the '
                              'declared conda packages (libfoo 1.0.0)')
    assert message.endswith('Fix: declare it among the conda dependencies (libfoo=1.0.0) and take it out of the pip: '
                            'section, or drop the conda package that needs it')


# What a conda-forge solve links for a declared `pip` on Pythons before 3.13: pip's run requirements
# still include setuptools and wheel there (dropped only for Python 3.13 and later: conda-forge news
# 2024-08-21 "sunsetting pip deps", conda/conda#15621). The test channel's pip has no such
# requirement, so the shipped specs are held to this solve here.
PIP_LINKS_BEFORE_PY313 = ('setuptools', 'wheel')
SHIPPED_SPECS = (('roles/conda_env/defaults/main.yml', 'conda_env_envs'),
                 ('inventories/gpu_cluster/group_vars/all/conda.yml', 'conda_env_envs'))


@pytest.mark.parametrize('path, variable', SHIPPED_SPECS)
def test_the_shipped_envs_are_not_refused_on_conda_forge(path, variable):
    """A pip line for a package conda-forge's pip links (setuptools) would refuse the shipped env on a
    real node's first run: the shipped specs declare such packages among the conda dependencies."""
    with open(os.path.join(REPO_ROOT, path)) as handle:
        envs = yaml.safe_load(handle)[variable]
    for env in envs:
        normalized = ce.normalize_environment(env['spec'], source=path)
        linked = dict((ce.normalize_pip_name(ce.matchspec_name(spec)), spec) for spec in normalized['conda'])
        linked.update((name, '%s (linked by pip)' % name) for name in PIP_LINKS_BEFORE_PY313)
        assert ce.pip_over_conda(normalized['pip'], linked, solved=True) is None, (path, env['name'])
