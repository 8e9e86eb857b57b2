# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mirror ranking, .condarc policy and show-sources parsing; conda's own outputs from fixtures/conda-26.7."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

import pytest
import yaml

from conftest import read_conda
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import mirrors as cm

REPODATA = json.dumps({'info': {'subdir': 'noarch'}, 'packages': {},
                       'packages.conda': {'libfoo-1.0.0-h4616a5c_0.conda': {'name': 'libfoo'}}})


def fetch(url, seconds, error=None):
    return dict({'url': url, 'seconds': seconds, 'bytes': 100}, **({'error': error} if error else {}))


def test_repodata_checked():
    assert cm.check_repodata(REPODATA.encode(), 'noarch') == 1
    with pytest.raises(cm.MirrorError, match='truncated or corrupt'):
        cm.check_repodata(REPODATA[:40].encode(), 'noarch')
    with pytest.raises(cm.MirrorError, match='no packages'):
        cm.check_repodata(b'{"info": {}}', 'noarch')
    with pytest.raises(cm.MirrorError, match='for subdir noarch, not linux-64'):
        cm.check_repodata(REPODATA, 'linux-64')
    with pytest.raises(cm.MirrorError, match='does not parse'):
        cm.check_repodata(b'\xff\xfe', 'noarch')


# REPODATA compressed by zstd 1.5.4 (zstd --check): one compressed block, a content checksum.
REPODATA_ZST = bytes.fromhex(
    '28b52ffd2477f5020022c5121980a93a2b6a5690081ed382a4b224cc80315ff68b4332195110dd7d76c8350315243a28501053'
    '4c3984b9296778ae652d0fd30f46c88226e208e8176a24ef31dd704b258e3f4ce7b6ee2f05004d076c21108ab29133801c6eea01ef6f60f7')


def test_zstd_frames_checked_on_what_was_read():
    assert cm.check_zstd_prefix(REPODATA_ZST, complete=True) == len(REPODATA_ZST)
    assert cm.check_zstd_prefix(REPODATA_ZST + REPODATA_ZST, complete=True) == 2 * len(REPODATA_ZST)
    # The first bytes of a bigger file: fine as far as they go.
    assert cm.check_zstd_prefix(REPODATA_ZST[:20], complete=False) == 20
    with pytest.raises(cm.MirrorError, match='ends inside a frame after 20 bytes: truncated'):
        cm.check_zstd_prefix(REPODATA_ZST[:20], complete=True)
    with pytest.raises(cm.MirrorError, match='not zstd data'):
        cm.check_zstd_prefix(b'<html><body>502 Bad Gateway</body></html>', complete=True)
    with pytest.raises(cm.MirrorError, match='reserved bit'):
        cm.check_zstd_prefix(REPODATA_ZST[:4] + bytes([REPODATA_ZST[4] | 0x08]) + REPODATA_ZST[5:], complete=True)
    # A block header of the reserved type 3
    header_end = 4 + 1 + 1  # magic, descriptor 0x24 (checksum, 1-byte FCS single segment), FCS
    corrupt = REPODATA_ZST[:header_end] + bytes([REPODATA_ZST[header_end] | 0x06]) + REPODATA_ZST[header_end + 1:]
    with pytest.raises(cm.MirrorError, match='invalid .type 3'):
        cm.check_zstd_prefix(corrupt, complete=False)
    with pytest.raises(cm.MirrorError, match='empty file'):
        cm.check_zstd_prefix(b'', complete=True)


def test_json_prefix_checked_and_whole_files_parsed():
    assert cm.check_json_prefix(REPODATA.encode()[:50], False, 'noarch') is None
    assert cm.check_json_prefix(REPODATA.encode(), True, 'noarch') == 1
    with pytest.raises(cm.MirrorError, match='does not start as a JSON object'):
        cm.check_json_prefix(b'<html>', False, 'noarch')
    with pytest.raises(cm.MirrorError, match='is not UTF-8'):
        cm.check_json_prefix(b'{"info": "\xff\xfe\xfd and more"}', False, 'noarch')
    with pytest.raises(cm.MirrorError, match='truncated or corrupt'):
        cm.check_json_prefix(REPODATA.encode()[:50], True, 'noarch')


@pytest.mark.parametrize('status, falls_back', [(404, True), (403, True), (416, False), (500, False), (503, False)])
def test_conda_falls_back_to_plain_json_on_4xx_but_416(status, falls_back):
    assert cm.falls_back(status) is falls_back


def test_rank_and_choose_the_fastest_healthy_with_fallbacks_in_order():
    results = [
        cm.summarize('http://down', [fetch('http://down/conda-forge/noarch/repodata.json', 0.01, 'connection refused')]),
        cm.summarize('http://slow', [fetch('http://slow/a', 0.9), fetch('http://slow/b', 0.8)]),
        cm.summarize('http://fast', [fetch('http://fast/a', 0.02), fetch('http://fast/b', 0.03)]),
        cm.summarize('http://corrupt', [fetch('http://corrupt/a', 0.01, 'repodata.json does not parse')]),
    ]
    ranked = cm.rank(results)
    assert [r['url'] for r in ranked] == ['http://fast', 'http://slow', 'http://down', 'http://corrupt']
    assert ranked[0]['latency_ms'] == 50 and ranked[1]['latency_ms'] == 1700
    assert cm.choose(ranked) == ('http://fast', ['http://slow'])
    # The mirror in use is kept within the margin, and dropped when it is much slower or down.
    assert cm.choose(ranked, current='http://slow/', margin_ms=2000) == ('http://slow', ['http://fast'])
    assert cm.choose(ranked, current='http://slow', margin_ms=200) == ('http://fast', ['http://slow'])
    assert cm.choose(ranked, current='http://down', margin_ms=10000)[0] == 'http://fast'
    with pytest.raises(cm.MirrorError) as error:
        cm.choose([r for r in ranked if not r['healthy']])
    assert 'http://down (http://down/conda-forge/noarch/repodata.json: connection refused)' in str(error.value)


def test_tokens_are_redacted():
    url = 'https://repo.example.com/t/ab-12cd/conda-forge'
    assert cm.redact(url) == 'https://repo.example.com/t/<token>/conda-forge' and cm.has_credentials(url)
    assert cm.summarize(url, [fetch(url + '/noarch/repodata.json', 0.1, 'HTTP 401')])['errors'] == [
        'https://repo.example.com/t/<token>/conda-forge/noarch/repodata.json: HTTP 401']
    assert cm.has_credentials(cm.build_condarc(url, ['conda-forge'], 'miniforge'))


def test_condarc_for_miniforge_matches_what_conda_loaded():
    condarc = cm.build_condarc('file:///srv/conda-mirror/', ['conda-forge'], 'miniforge', solver='classic',
                               pkgs_dirs=['/opt/conda/pkgs'], envs_dirs=['/opt/conda/envs'])
    # The recorded conda 26.7 run loaded this .condarc, but for the users' own folders that the role
    # has since added at the end of a configured list; every other key the role writes reads back the same.
    loaded = yaml.safe_load(cm.parse_show_sources(read_conda('conda-config-show-sources.txt'))[0][1])
    assert condarc['pkgs_dirs'] == loaded['pkgs_dirs'] + ['~/.conda/pkgs']
    assert condarc['envs_dirs'] == loaded['envs_dirs'] + ['~/.conda/envs']
    assert dict((k, loaded[k]) for k in condarc if not k.endswith('_dirs')) == dict(
        (k, v) for k, v in condarc.items() if not k.endswith('_dirs'))
    assert 'default_channels' not in condarc and not cm.has_credentials(condarc)


def test_a_configured_folder_list_ends_on_the_users_own_once():
    condarc = cm.build_condarc('https://mirror.example/', ['conda-forge'], 'miniforge',
                               pkgs_dirs=['/scratch/pkgs', '~/.conda/pkgs'], envs_dirs=['/scratch/envs'])
    assert condarc['pkgs_dirs'] == ['/scratch/pkgs', '~/.conda/pkgs']
    assert condarc['envs_dirs'] == ['/scratch/envs', '~/.conda/envs']
    assert 'pkgs_dirs' not in cm.build_condarc('https://mirror.example/', ['conda-forge'], 'miniforge')


def test_condarc_with_defaults_for_miniconda():
    condarc = cm.build_condarc('https://mirror.example/', ['defaults'], 'miniconda', default_channels=['pkgs/main'],
                               custom_channels={'internal': 'https://other.example/'},
                               proxy_servers={'https': 'http://proxy:3128'}, ssl_verify='/etc/ssl/certs/corp.pem',
                               settings={'remote_max_retries': 5})
    assert condarc == {'channels': ['defaults'], 'channel_alias': 'https://mirror.example', 'channel_priority': 'strict',
                       'default_channels': ['https://mirror.example/pkgs/main'],
                       'custom_channels': {'internal': 'https://other.example'},
                       'proxy_servers': {'https': 'http://proxy:3128'}, 'ssl_verify': '/etc/ssl/certs/corp.pem',
                       'remote_max_retries': 5}


@pytest.mark.parametrize('kwargs, message', [
    (dict(channels=['defaults'], distribution='miniforge'), 'Miniforge takes no "defaults"'),
    (dict(channels=['defaults', 'conda-forge'], distribution='miniconda'), 'served from the same mirror'),
    (dict(channels=[], distribution='miniforge'), 'channels must be a non-empty list'),
    (dict(channels=['conda forge'], distribution='miniforge'), "'conda forge' is not a channel name"),
    (dict(channels=['conda-forge'], distribution='anaconda'), 'distribution must be one of'),
    (dict(channels=['conda-forge'], distribution='miniforge', settings={'channel_priority': 'flexible'}),
     'settings.channel_priority is decided by the role'),
    (dict(channels=['conda-forge'], distribution='miniforge', custom_channels={'x': 'ftp://x'}), 'custom_channels.x'),
])
def test_policy_and_bad_input_refused(kwargs, message):
    with pytest.raises(cm.MirrorError) as error:
        cm.build_condarc('https://mirror.example', **kwargs)
    assert message in str(error.value)


def test_defaults_and_conda_forge_from_different_mirrors_pass():
    condarc = cm.build_condarc('https://anaconda-mirror.example', ['defaults', 'conda-forge'], 'miniconda',
                               custom_channels={'conda-forge': 'https://forge-mirror.example'})
    assert condarc['default_channels'][0].startswith('https://anaconda-mirror.example/')


def test_policy_of_a_loaded_condarc():
    assert cm.policy_problems({'solver': 'classic'}, 'miniforge') == []
    assert cm.policy_problems({'channels': ['conda-forge'], 'channel_priority': 'flexible'}, 'miniforge') == [
        'channel_priority must be strict (mixing channels per package breaks ABI compatibility)']


@pytest.mark.parametrize('url', ['mirror.example', 'file://', 'ftp://mirror', None])
def test_bad_mirror_urls(url):
    with pytest.raises(cm.MirrorError, match='mirrors: .* is not a mirror URL'):
        cm.validate_url(url, 'mirrors')


def test_show_sources_sections():
    text = ('==> /opt/conda/.condarc <==\nchannels:\n  - conda-forge\n\n'
            '==> /root/.condarc <==\nsolver: classic\n\n==> envvars <==\nofflinE: True\n')
    assert cm.parse_show_sources(text) == [('/opt/conda/.condarc', 'channels:\n  - conda-forge\n'),
                                           ('/root/.condarc', 'solver: classic\n'), ('envvars', 'offlinE: True\n')]
    assert cm.parse_show_sources('') == []
    assert cm.repodata_url('http://m', '/conda-forge/', 'noarch') == 'http://m/conda-forge/noarch/repodata.json'


@pytest.mark.parametrize('value, found', [
    (['https://mirror.example.com/conda'], False),
    (['https://mirror.example.com/t/tk-1234/conda'], True),
    ({'private': 'https://conda.example.com/t/abc'}, True),
    (['conda-forge', 'https://repo.example.com/t/tk-9/private-channel'], True),
    ({'https': 'http://ops:s3cret@proxy.example.com:3128'}, True),
    ({'https': 'http://proxy.example.com:3128'}, False),
    ({'remote_read_timeout_secs': 60, 'ssl_verify': '/etc/ssl/ca.pem'}, False),
    ([{'channel_alias': 'https://user:pw@mirror.example.com'}], True),
])
def test_credentials_are_found_wherever_they_ride(value, found):
    assert cm.has_credentials(value) is found


def test_a_condarc_for_each_candidate_mirror():
    condarcs = cm.condarcs_for(['http://a', 'http://b/'], ['conda-forge'], 'miniforge', solver='classic')
    assert [c['channel_alias'] for c in condarcs] == ['http://a', 'http://b'] and condarcs[0]['solver'] == 'classic'
    with pytest.raises(cm.MirrorError, match='Miniforge takes no "defaults"'):
        cm.condarcs_for(['http://a'], ['defaults'], 'miniforge')


def test_loaded_config_of_real_conda():
    settings = yaml.safe_load(cm.parse_show_sources(read_conda('conda-config-show-sources.txt'))[0][1])
    sources = [{'source': '/home/ml/.condarc', 'settings': settings}]
    condarc = {'channel_alias': settings['channel_alias'], 'channels': settings.get('channels', [])}
    assert cm.loaded_config_sound(sources, '/home/ml/.condarc', condarc, 'miniconda') == (True, [])
    # That recorded .condarc sets default_channels: fine for Miniconda, a stray "defaults" for Miniforge.
    sound, problems = cm.loaded_config_sound(sources, '/home/ml/.condarc', condarc, 'miniforge')
    assert not sound and problems[0].startswith('a loaded source: Miniforge takes no "defaults"')
    # Without the system file loaded it is not sound, and the one source's own channel settings are named.
    sound, problems = cm.loaded_config_sound(sources, '/opt/conda/.condarc', condarc, 'miniconda')
    assert not sound and problems == ['/home/ml/.condarc sets default_channels, channel_priority otherwise than '
                                      '/opt/conda/.condarc, and conda merges it in: remove it there, or set it through the role']
    assert not cm.loaded_config_sound(sources, '/home/ml/.condarc', dict(condarc, channel_alias='http://other'), 'miniconda')[0]


def test_another_source_that_sets_a_channel_key_otherwise_is_named():
    """A file the role did not write (condarc.d, /etc/conda, root's ~/.condarc) or a CONDA_* variable that
    redirects conda; a user's copy of the role's file, the same settings, is no problem."""
    condarc = cm.build_condarc('https://mirror.example/', ['conda-forge'], 'miniforge')
    system = {'source': '/opt/conda/.condarc', 'settings': dict(condarc)}
    copy = {'source': '/home/ml/.condarc', 'settings': dict(condarc)}
    dropin = {'source': '/opt/conda/condarc.d/zz.yml', 'settings': {'channel_alias': 'https://evil.example', 'always_yes': True}}
    env = {'source': 'envvars', 'settings': {'channels': ['conda-forge', 'bioconda']}}
    assert cm.loaded_config_sound([system, copy], '/opt/conda/.condarc', condarc, 'miniforge') == (True, [])
    sound, problems = cm.loaded_config_sound([system, copy, dropin, env], '/opt/conda/.condarc', condarc, 'miniforge')
    assert not sound and problems == [
        '/opt/conda/condarc.d/zz.yml sets channel_alias otherwise than /opt/conda/.condarc, and conda merges it in: '
        'remove it there, or set it through the role',
        'envvars sets channels otherwise than /opt/conda/.condarc, and conda merges it in: remove it there, or set it '
        'through the role']


@pytest.mark.parametrize('text, alias', [
    ('channels:\n  - conda-forge\nchannel_alias: http://m.example/conda\n', 'http://m.example/conda'),
    ("channel_alias: 'https://m.example:8443/t/tok/conda'  # the mirror\n", 'https://m.example:8443/t/tok/conda'),
    ('channel_alias: "http://m.example"\n', 'http://m.example'),
    ('custom_channels:\n  channel_alias: http://not-top-level\n', None),
    ('channel_alias:\n  http://on-the-next-line\n', None),
    ('', None),
])
def test_channel_alias_read_from_condarc_text(text, alias):
    assert cm.condarc_channel_alias(text) == alias
    if alias:
        assert yaml.safe_load(text)['channel_alias'] == alias  # as a YAML parser reads it


# Issue 35, item 3: a password in a mirror or proxy URL is never shown; the URL stays readable.
@pytest.mark.parametrize('text, shown', [
    ('https://user:s3cret@mirror.example/conda-forge', 'https://user:***@mirror.example/conda-forge'),
    ('http://ops:s3cret@proxy.example.com:3128', 'http://ops:***@proxy.example.com:3128'),
    ('https://:s3cret@mirror.example', 'https://:***@mirror.example'),
    # a password with an unescaped @ or : in it is still hidden whole
    ('https://user:s3@cr:et@mirror.example/conda-forge', 'https://user:***@mirror.example/conda-forge'),
    ('https://user:s3cret@mirror.example/t/tk-99/conda-forge', 'https://user:***@mirror.example/t/<token>/conda-forge'),
    # in running text, as conda and urllib print it, every URL is redacted
    ("CondaHTTPError: HTTP 401 UNAUTHORIZED for url <https://user:s3cret@mirror.example/conda-forge/noarch/"
     "repodata.json>\nElapsed: -\n'https://user:s3cret@mirror.example/conda-forge'",
     "CondaHTTPError: HTTP 401 UNAUTHORIZED for url <https://user:***@mirror.example/conda-forge/noarch/"
     "repodata.json>\nElapsed: -\n'https://user:***@mirror.example/conda-forge'"),
    # nothing secret: left as it is
    ('https://user@mirror.example/conda-forge', 'https://user@mirror.example/conda-forge'),
    ('https://mirror.example:8443/conda-forge', 'https://mirror.example:8443/conda-forge'),
    ('http://127.0.0.1:9/conda-forge/a@b', 'http://127.0.0.1:9/conda-forge/a@b'),
    ('conda-forge', 'conda-forge'),
])
def test_passwords_in_urls_are_redacted(text, shown):
    assert cm.redact(text) == shown
    assert 's3cret' not in cm.redact(text) and 's3@cr' not in cm.redact(text)


def test_no_password_in_a_probe_verdict_or_refusal():
    url = 'https://user:s3cret@mirror.example/conda-forge'
    verdict = cm.summarize(url, [fetch(url + '/noarch/repodata.json', 0.1,
                                       '<urlopen error [Errno 111] Connection refused> (%s/noarch)' % url)])
    assert verdict['url'] == 'https://user:***@mirror.example/conda-forge'
    assert verdict['errors'] == ['https://user:***@mirror.example/conda-forge/noarch/repodata.json: <urlopen error '
                                 '[Errno 111] Connection refused> (https://user:***@mirror.example/conda-forge/noarch)']
    with pytest.raises(cm.MirrorError) as error:
        cm.choose([verdict])
    assert 's3cret' not in str(error.value) and 'user:***@mirror.example' in str(error.value)
    with pytest.raises(cm.MirrorError) as error:
        cm.validate_url('ftp://user:s3cret@mirror.example', 'mirrors[0]')
    assert 's3cret' not in str(error.value)
    # the mirror in use, read back from .condarc with its password, is still recognized
    assert cm.choose([dict(verdict, healthy=True, errors=[])], current=url + '/')[0] == verdict['url']
