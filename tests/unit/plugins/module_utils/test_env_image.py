# -*- coding: utf-8 -*-
"""The env image's Containerfile: made from the locks alone, installed as listed, cleaned, the same text for the
same inputs."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import env_image as ei

SHA = 'ab' * 32
# As conda_env writes them (conda list --explicit --md5; the pip packages name==version).
EXPLICIT = ('# This file may be used to create an environment using:\n# $ conda create --name <env> --file <this file>\n'
            '# platform: linux-64\n@EXPLICIT\n'
            'http://127.0.0.1:8000/conda-forge/linux-64/python-3.11.7-h_repack_0.conda#0123456789abcdef0123456789abcdef\n'
            'http://127.0.0.1:8000/conda-forge/noarch/pip-26.3-pyh_0.conda#fedcba9876543210fedcba9876543210\n')
PIP = 'six==1.17.0\n'
PIP_HASHED = 'six==1.17.0 --hash=sha256:%s\n' % SHA


def build(**kwargs):
    args = dict(base_image='localhost/aistack-debian12-node:latest', conda_prefix='/opt/conda', env_name='torch',
                installer='Miniforge3-Linux-x86_64.sh', installer_sha256=SHA, pip_lock=PIP,
                image_labels=ei.labels(EXPLICIT, PIP, 'cpu', '1.2.3'))
    args.update(kwargs)
    return ei.containerfile(**args)


def run_lines(text):
    return [line for line in text.splitlines() if line.startswith('RUN ')]


def test_the_env_is_made_from_the_explicit_lock_without_a_solve():
    text = build()
    assert 'conda create -y -p /opt/conda/envs/torch --file /tmp/aistack-image/explicit.txt' in text
    assert 'env create' not in text and 'environment.yml' not in text and ' install -y' not in text
    # The installer is checked against its sha256 inside the build too, before it runs.
    assert ('RUN echo "%s  /tmp/aistack-image/Miniforge3-Linux-x86_64.sh" | sha256sum -c - && bash '
            '/tmp/aistack-image/Miniforge3-Linux-x86_64.sh -b -p /opt/conda' % SHA) in text


def test_pip_lock_without_hashes_installs_without_dependencies():
    pip_run = [line for line in run_lines(build(pip_wheel_dir='wheels')) if '-r /tmp/aistack-image/pip.txt' in line]
    assert len(pip_run) == 1
    assert '--no-deps' in pip_run[0] and '--require-hashes' not in pip_run[0]
    assert '--no-index --find-links /tmp/aistack-image/wheels' in pip_run[0]


def test_pip_lock_with_a_hash_on_every_line_requires_hashes():
    assert ei.pip_lock_hashed(PIP_HASHED) and not ei.pip_lock_hashed(PIP + PIP_HASHED) and not ei.pip_lock_hashed('')
    text = build(pip_lock=PIP_HASHED, pip_index_url='https://pypi.example/simple')
    assert '--no-deps --no-cache-dir --no-compile --disable-pip-version-check --require-hashes --index-url https://pypi.example/simple' in text


def test_no_pip_step_for_an_empty_pip_lock_and_apex_without_dependencies():
    text = build(pip_lock='# nothing\n', apex_wheel='apex-0.1-cp311-cp311-linux_x86_64.whl')
    assert 'pip.txt' not in text
    apex = [line for line in run_lines(text) if 'apex-0.1' in line]
    assert apex and '--no-deps' in apex[0] and '--no-index' in apex[0]
    assert 'apex' not in build()


def test_clean_up_in_its_own_stage_and_the_final_image_copies_the_cleaned_tree():
    text = build()
    stages = [line for line in text.splitlines() if line.startswith('FROM ')]
    assert stages == ['FROM localhost/aistack-debian12-node:latest AS unpacked', 'FROM unpacked AS cleaned',
                      'FROM localhost/aistack-debian12-node:latest']
    cleaned = text.split('FROM unpacked AS cleaned')[1].split('FROM localhost')[0]
    for step in ('conda clean -afy', '-name "*.a" -type f -delete', '-name "*.pyc"', '__pycache__', 'rm -rf "$HOME/.cache/pip"',
                 's/^==> .* <==$/==> 1970-01-01 00:00:00 <==/'):
        assert step in cleaned
    final = text.split('FROM localhost/aistack-debian12-node:latest\n')[1]
    assert 'COPY --from=cleaned /opt/conda /opt/conda' in final and 'RUN ' not in final
    assert ('ENV CONDA_DEFAULT_ENV="torch" CONDA_PREFIX="/opt/conda/envs/torch" '
            'PATH=/opt/conda/envs/torch/bin:/opt/conda/condabin:/usr/local/sbin:') in final


def test_same_inputs_same_text_and_labels_sorted():
    assert build() == build()
    label_lines = [line for line in build().splitlines() if line.startswith('LABEL ')]
    assert label_lines == sorted(label_lines) and len(label_lines) == 4
    assert 'LABEL org.aistack.gpu_node.explicit-lock.sha256="%s"' % ei.sha256_text(EXPLICIT) in label_lines
    assert 'LABEL org.aistack.gpu_node.cuda-variant="cpu"' in label_lines
    with_apex = ei.labels(EXPLICIT, PIP, 'cu130', '1.2.3', apex_wheel_sha256=SHA)
    assert with_apex['org.aistack.gpu_node.apex-wheel.sha256'] == SHA
    assert 'SOURCE_DATE_EPOCH=0' in build() and '1970-01-01 00:00:01' in build(source_date_epoch=1)


def test_explicit_lock_problems():
    assert ei.explicit_lock_problem(EXPLICIT) is None
    assert 'no @EXPLICIT' in ei.explicit_lock_problem('python=3.11\npip\n')
    assert ei.explicit_lock_problem('@EXPLICIT\n') == 'it lists no package'
    assert 'no package URLs: python=3.11' in ei.explicit_lock_problem('@EXPLICIT\npython=3.11\n')


def test_layer_differences_by_position():
    assert ei.layer_differences(['a', 'b'], ['a', 'b']) == []
    assert ei.layer_differences(['a', 'b'], ['a', 'c', 'd']) == [dict(index=1, first='b', second='c'),
                                                                 dict(index=2, first=None, second='d')]


def test_apex_wheel_file_names():
    assert ei.wheel_file_name_problem('apex-0.1-cp311-cp311-linux_x86_64.whl') is None
    assert ei.wheel_file_name_problem('torch-2.13.0-cp311-cp311-linux_x86_64.whl')
    assert ei.wheel_file_name_problem('../apex-0.1.whl')


SETTINGS = dict(explicit_lock='/opt/conda/envs/torch.explicit.txt', pip_lock='/opt/conda/envs/torch.pip.txt',
                work_dir='/var/tmp/aistack-env-image', conda_prefix='/opt/conda', installer_src='', installer_url='http://m/i.sh',
                installer_sha256=SHA, name='aistack-env-torch', tag='latest', env_name='torch', cuda_variant='cpu',
                pip_wheel_dir='', registry='')


def test_good_settings_have_no_problem():
    assert ei.input_problems(SETTINGS) == []
    assert ei.input_problems(dict(SETTINGS, registry='registry.example:5000/ml', pip_wheel_dir='/srv/wheels')) == []


def test_bad_settings_are_refused_naming_the_variable():
    cases = {
        'explicit_lock': ('torch.explicit.txt', 'env_image_explicit_lock must be an absolute path'),
        'installer_sha256': ('abc', 'env_image_installer_sha256 must be'),
        'name': ('Aistack/Env', 'env_image_name must be an image name'),
        'tag': ('a:b', 'env_image_tag must be an image tag'),
        'env_name': ('../x', 'env_image_env_name must name the env'),
        'cuda_variant': ('', 'env_image_cuda_variant must name'),
        'registry': ('https://registry.example/', 'env_image_registry must be a registry host'),
        'pip_wheel_dir': ('wheels', 'env_image_pip_wheel_dir must be an absolute path'),
    }
    for name, (value, message) in cases.items():
        problems = ei.input_problems(dict(SETTINGS, **{name: value}))
        assert len(problems) == 1 and problems[0].startswith(message), (name, problems)
    assert ei.input_problems(dict(SETTINGS, installer_url='')) == [
        'env_image_installer_src or env_image_installer_url must name the conda installer']


def test_apex_cache_entry_markers():
    assert ei.apex_entry_problem({'wheel': 'apex-0.1-py3-none-any.whl', 'wheel_sha256': SHA}) is None
    assert 'no wheel' in ei.apex_entry_problem({'wheel': '/tmp/apex-0.1.whl', 'wheel_sha256': SHA})
    assert ei.apex_entry_problem({'wheel': 'apex-0.1-py3-none-any.whl'}) == 'its marker has no wheel_sha256'
    assert ei.apex_entry_problem([]) == 'its aistack-apex.json is not a JSON object'


def test_file_differences_are_counted_and_cut():
    found = ei.file_differences({'changed': ['/opt/conda/b', '/opt/conda/a', '/opt/conda/c'], 'added': ['/x']}, limit=2)
    assert found == {'counts': {'changed': 3, 'added': 1, 'deleted': 0}, 'changed': ['/opt/conda/a', '/opt/conda/b'],
                     'added': ['/x'], 'deleted': []}
    assert ei.file_differences(None)['counts'] == {'changed': 0, 'added': 0, 'deleted': 0}
