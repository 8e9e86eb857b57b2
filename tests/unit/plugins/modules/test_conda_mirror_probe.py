# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""conda_mirror_probe against real HTTP mirrors on loopback: healthy, slow, corrupt and down.

The reads are real; the time they take is not measured on this machine's clock, which a busy machine
stretches (a loopback read once measured 1041 ms here). The module's ``clock`` is a fake one that
only the slow mirror advances, by its delay, while it answers: the fast mirror's reads take 0 ms and
the slow one's its delay per repodata.json, whatever the load."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import run_module
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import conda_mirrors
from ansible_collections.aistack.gpu_node.plugins.modules import conda_mirror_probe


def repodata(subdir):
    return json.dumps({'info': {'subdir': subdir}, 'packages': {},
                       'packages.conda': {'libfoo-1.0.0-h4616a5c_0.conda': {'name': 'libfoo', 'version': '1.0.0'}}}).encode()


class FakeClock:
    """The clock the module times its reads with; advanced only by the mirrors' ``delay``. A mirror
    advances it before it answers, and the module reads it after the answer, so the order is fixed."""

    def __init__(self):
        self.now = 1000.0
        self.lock = threading.Lock()

    def __call__(self):
        with self.lock:
            return self.now

    def advance(self, seconds):
        with self.lock:
            self.now += seconds


def serve(clock, delay=0.0, corrupt=False):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            parts = self.path.strip('/').split('/')
            if len(parts) != 3 or parts[0] != 'conda-forge' or parts[2] != 'repodata.json':
                self.send_error(404)
                return
            clock.advance(delay)
            body = repodata(parts[1])
            body = body[:len(body) // 2] if corrupt else body
            self.send_response(200)
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True).start()
    return server, 'http://127.0.0.1:%d' % server.server_address[1]


@pytest.fixture
def mirrors(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(conda_mirrors, 'clock', clock)
    servers = [serve(clock), serve(clock, delay=0.3), serve(clock, corrupt=True)]
    closed = socket.socket()
    closed.bind(('127.0.0.1', 0))
    down = 'http://127.0.0.1:%d' % closed.getsockname()[1]
    closed.close()
    yield {'fast': servers[0][1], 'slow': servers[1][1], 'corrupt': servers[2][1], 'down': down}
    for server, _url in servers:
        server.shutdown()
        server.server_close()


def test_fastest_healthy_chosen_failures_explained(mirrors, capsys):
    order = [mirrors['down'], mirrors['slow'], mirrors['corrupt'], mirrors['fast']]
    code, result = run_module(conda_mirror_probe, {'mirrors': order, '_ansible_check_mode': True}, capsys)
    assert code == 0 and result['changed'] is False
    assert result['chosen'] == mirrors['fast'] and result['chosen_index'] == 3
    assert result['fallbacks'] == [mirrors['slow']] and result['fallback_indexes'] == [1]
    ranked = dict((r['url'], r) for r in result['ranked'])
    # 0.3 s for each of the two repodata.json reads (noarch, linux-64); the other reads are 404s, answered at once.
    assert ranked[mirrors['slow']]['latency_ms'] == 600 and ranked[mirrors['fast']]['latency_ms'] == 0
    assert [r['url'] for r in result['ranked']] == [mirrors['fast'], mirrors['slow'], mirrors['down'], mirrors['corrupt']]
    assert ranked[mirrors['fast']]['bytes_read'] == len(repodata('noarch')) + len(repodata('linux-64'))
    assert 'truncated or corrupt' in ranked[mirrors['corrupt']]['errors'][0]
    assert ranked[mirrors['down']]['healthy'] is False and 'refused' in ranked[mirrors['down']]['errors'][0].lower()


def test_mirror_in_use_kept_within_margin(mirrors, capsys):
    args = {'mirrors': [mirrors['fast'], mirrors['slow']], 'current': mirrors['slow'] + '/'}
    code, result = run_module(conda_mirror_probe, dict(args, switch_margin_ms=5000), capsys)
    assert result['chosen'] == mirrors['slow'] and result['fallbacks'] == [mirrors['fast']]
    code, result = run_module(conda_mirror_probe, dict(args, switch_margin_ms=0), capsys)
    assert result['chosen'] == mirrors['fast']


def test_none_healthy_is_reported(mirrors, capsys):
    code, result = run_module(conda_mirror_probe, {'mirrors': [mirrors['down'], mirrors['corrupt']], 'subdirs': ['noarch']}, capsys)
    assert code == 0 and result['chosen'] is None and result['chosen_index'] is None
    assert result['message'].startswith('no healthy mirror: %s (' % mirrors['down'])


def test_bad_input_named(capsys):
    code, result = run_module(conda_mirror_probe, {'mirrors': ['mirror.example']}, capsys)
    assert code == 1 and result['msg'].startswith("mirrors[0]: 'mirror.example' is not a mirror URL")
    code, result = run_module(conda_mirror_probe, {'mirrors': ['http://m'], 'subdirs': []}, capsys)
    assert code == 1 and 'at least one entry' in result['msg']


def test_mirror_in_use_read_from_the_condarc_the_role_wrote(mirrors, capsys, tmp_path):
    """The role hands the system .condarc's path: the module reads its channel_alias on the node."""
    import yaml
    from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import mirrors as cm
    condarc = tmp_path / '.condarc'
    condarc.write_text('# Managed by Ansible\n' + yaml.safe_dump(
        cm.build_condarc(mirrors['slow'], ['conda-forge'], 'miniforge'), sort_keys=False, indent=2))
    args = {'mirrors': [mirrors['fast'], mirrors['slow']], 'current_condarc': str(condarc), 'switch_margin_ms': 5000}
    assert run_module(conda_mirror_probe, args, capsys)[1]['chosen'] == mirrors['slow']
    condarc.unlink()
    assert run_module(conda_mirror_probe, args, capsys)[1]['chosen'] == mirrors['fast']
    code, result = run_module(conda_mirror_probe, dict(args, current=mirrors['slow']), capsys)
    assert code == 1 and 'mutually exclusive' in result['msg']


def test_no_password_in_anything_returned(mirrors, capsys):
    """Issue 35, item 3: the role shows RV(ranked) and writes RV(chosen) into .condarc's header; a
    mirror's password shows in neither, nor anywhere else the module returns."""
    secret = 'S3cretMirrorPw'
    fast = mirrors['fast'].replace('http://', 'http://mirroruser:%s@' % secret)
    down = mirrors['down'].replace('http://', 'http://mirroruser:%s@' % secret)
    code, result = run_module(conda_mirror_probe, {'mirrors': [down, fast], 'subdirs': ['noarch']}, capsys)
    result.pop('invocation', None)  # the module's own arguments, shown only at -vvv, where the role sets no_log
    assert code == 0 and result['chosen'] == mirrors['fast'].replace('http://', 'http://mirroruser:***@'), result
    assert result['chosen_index'] == 1 and result['candidates'] == [cm_redact(down), cm_redact(fast)]
    assert secret not in json.dumps(result), result
    code, result = run_module(conda_mirror_probe, {'mirrors': [down], 'subdirs': ['noarch']}, capsys)
    result.pop('invocation', None)
    assert result['chosen'] is None and secret not in json.dumps(result), result


def cm_redact(url):
    return url.replace('S3cretMirrorPw', '***')
