# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""conda_env's scrub of a mirror's user:password from the files conda writes, fed with records of real
conda 26.7 (fixtures/conda-26.7: a PackageRecord as ``conda create --json`` dumps it, the same fields
repodata_record.json holds; ``conda list --explicit`` lines, the URLs urls.txt holds)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

from conftest import read_conda
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import env as ce

SECRET = 'S3cretMirrorPw'
MIRROR = 'file:///srv/conda-mirror'
WITH_PASSWORD = 'https://mirroruser:%s@mirror.example:8443/conda' % SECRET
PLAIN = 'https://mirror.example:8443/conda'


def recorded_record():
    """The gpu-only record real conda 26.7 printed, its URL and channel as a password mirror makes them:
    core/subdir_data.py joins the URL to ``base_url_w_credentials``; the channel is str(Channel), without."""
    record = json.loads(read_conda('gpu-override-cuda-12.4.json'))['actions']['FETCH'][0]
    return dict(record, url=record['url'].replace(MIRROR, WITH_PASSWORD), channel=record['channel'].replace(MIRROR, PLAIN))


def test_a_repodata_record_loses_the_password_and_nothing_else():
    record = recorded_record()
    assert SECRET in record['url']
    text = json.dumps(record, indent=2, sort_keys=True)

    scrubbed, changed = ce.scrub_credentials(text)

    assert changed is True and SECRET not in scrubbed and 'mirroruser' not in scrubbed
    assert json.loads(scrubbed) == dict(record, url=PLAIN + '/conda-forge/noarch/gpu-only-1.0.0-hfdb8d09_0.conda')


def test_a_scrubbed_record_scrubs_to_itself():
    once, _changed = ce.scrub_credentials(json.dumps(recorded_record(), indent=2))
    assert ce.scrub_credentials(once) == (once, False)


def test_urls_txt_lines_keep_their_package_and_md5_fragment():
    lines = [line for line in read_conda('conda-list-explicit-md5.txt').splitlines() if line.startswith(MIRROR)]
    assert lines
    text = ''.join(line.replace(MIRROR, WITH_PASSWORD) + '\n' for line in lines)
    scrubbed, changed = ce.scrub_credentials(text)
    assert changed is True
    assert scrubbed == ''.join(line.replace(MIRROR, PLAIN) + '\n' for line in lines)


def test_a_record_without_credentials_is_left_alone():
    """A record of real conda 26.7 as it wrote it (file:// mirror), and a conda-meta file list whose paths hold
    an @ and a colon: no URL userinfo, nothing to scrub."""
    text = json.dumps(dict(json.loads(read_conda('gpu-override-cuda-12.4.json'))['actions']['FETCH'][0],
                           files=['share/a:b/c@d.txt', 'lib/python3.11/site-packages/x/t/y.py']), indent=2)
    assert ce.scrub_credentials(text) == (text, False)


def test_the_user_only_and_an_encoded_password_are_removed_too():
    text = 'https://user:p%40ss%2Fw@mirror.example/conda-forge/noarch/x-1-0.conda\nhttp://u:@h/c\n'
    assert ce.scrub_credentials(text) == ('https://mirror.example/conda-forge/noarch/x-1-0.conda\nhttp://h/c\n', True)


def test_the_files_conda_writes_urls_into():
    tree = {
        '/opt/conda/envs/demo/conda-meta': ['history', 'libfoo-1.0.0-h4616a5c_0.json', 'state', 'created'],
        '/opt/conda/pkgs': ['urls.txt', 'libfoo-1.0.0-h4616a5c_0', 'libfoo-1.0.0-h4616a5c_0.conda', 'cache'],
        '/opt/conda/pkgs/cache': ['c8907373.json', 'c8907373.info.json', 'c8907373.q', 'repodata_shards.db'],
    }
    files = {'/opt/conda/envs/demo/conda-meta/history', '/opt/conda/envs/demo/conda-meta/libfoo-1.0.0-h4616a5c_0.json',
             '/opt/conda/pkgs/urls.txt', '/opt/conda/pkgs/libfoo-1.0.0-h4616a5c_0/info/repodata_record.json',
             '/opt/conda/pkgs/cache/c8907373.info.json', '/opt/conda/pkgs/cache/c8907373.q'}

    def listdir(folder):
        if folder not in tree:
            raise OSError(2, 'No such file or directory', folder)
        return tree[folder]

    found = ce.credential_files('/opt/conda/envs/demo', ['/opt/conda/pkgs', '/root/.conda/pkgs'], listdir, files.__contains__)
    assert found == [
        ('/opt/conda/envs/demo/conda-meta/history', 'text'),
        ('/opt/conda/envs/demo/conda-meta/libfoo-1.0.0-h4616a5c_0.json', 'text'),
        ('/opt/conda/pkgs/urls.txt', 'text'),
        ('/opt/conda/pkgs/libfoo-1.0.0-h4616a5c_0/info/repodata_record.json', 'text'),
        ('/opt/conda/pkgs/cache/c8907373.info.json', 'text'),
        ('/opt/conda/pkgs/cache/c8907373.q', 'pickle'),
    ]
    assert os.path.join('/opt/conda/pkgs', 'cache', 'c8907373.json') not in [path for path, _kind in found], \
        "the repodata as the mirror served it holds no credentials and may be hundreds of MB"
