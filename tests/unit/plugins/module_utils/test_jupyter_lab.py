# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""JupyterLab is never reachable without real authentication (issue 35): the refusals of
module_utils.decide.jupyter_lab, each naming the role variable and what was expected."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import hashlib

import pytest

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import jupyter_lab

SALT = '8d2a1f6e4c3b'
# jupyter_server.auth.passwd('correct horse', 'sha1'): sha1(password + salt).
SHA1_REAL = 'sha1:%s:%s' % (SALT, hashlib.sha1(b'correct horse' + SALT.encode('ascii')).hexdigest())
# jupyter_server.auth.passwd('', 'sha1'): the hash of an empty password.
SHA1_EMPTY = 'sha1:%s:%s' % (SALT, hashlib.sha1(SALT.encode('ascii')).hexdigest())
ARGON2 = 'argon2:$argon2id$v=19$m=10240,t=10,p=8$qWzJ0ZtXf2SL9RdWrHvVyQ$B1ABmdZWfT5L7y3c6pN0m2ZFi1kXq4ZqvXcd1sZ2Ew8'
TOKEN = '0123456789abcdef0123456789abcdef'
# jupyter_server.auth.passwd('molecule-lab-password-7c1e', 'sha1') as jupyter_server 2.21.1 printed it
# (the hash the numa_jupyter scenario's lab checks the password login with is this password's argon2 one).
RECORDED_PASSWORD = 'molecule-lab-password-7c1e'
RECORDED_SHA1 = 'sha1:72e206f603c4:9e1e29bda98b4cd4a1dcdc74e572b56753184cab'


def problems(**kwargs):
    kwargs.setdefault('argon2_verify', None)
    return jupyter_lab.lab_problems(**kwargs)


def test_a_real_password_hash_or_token_on_loopback_passes():
    assert problems(password_hash=SHA1_REAL, verify_password='correct horse') == []
    assert problems(password_hash=ARGON2, verify_password='correct horse') == []
    assert problems(token=TOKEN) == []
    assert problems(password_hash=ARGON2, verify_password='correct horse', token=TOKEN, ip='::1', port=65535) == []
    assert problems(token=TOKEN, ip='localhost', port=1) == []


def test_no_authentication_is_refused():
    assert problems() == ['It would start without authentication: set jupyter_kernel_lab_password_hash (from '
                          'jupyter_server.auth.passwd(), vault it) or jupyter_kernel_lab_token (vault it).']


def test_the_hash_of_an_empty_password_is_refused():
    found = problems(password_hash=SHA1_EMPTY)
    assert len(found) == 1
    assert found[0].startswith('jupyter_kernel_lab_password_hash is the hash of an empty password')
    # The same hash with a wrong-case digest is not jupyter's: refused as malformed, not accepted.
    assert 'not a password hash' in problems(password_hash=SHA1_EMPTY.upper().replace('SHA1:', 'sha1:'))[0]


def test_an_argon2_hash_of_an_empty_password_is_refused_when_argon2_can_check_it():
    seen = []

    def verify(encoded, password):
        seen.append((encoded, password))
        return True
    found = problems(password_hash=ARGON2, argon2_verify=verify)
    assert seen == [(ARGON2[len('argon2:'):], '')]
    assert found[0].startswith('jupyter_kernel_lab_password_hash is the hash of an empty password')
    assert problems(password_hash=ARGON2, verify_password='x', argon2_verify=lambda encoded, password: password == 'x') == []


def test_a_password_hash_needs_the_password_the_verify_logs_in_with():
    assert problems(password_hash=SHA1_REAL, token=TOKEN) == [
        'jupyter_kernel_lab_password_hash needs jupyter_kernel_lab_verify_password, the password it hashes: after '
        'starting JupyterLab the role logs in with it over HTTP, and with a wrong one, to prove that the password gets '
        'in and nothing else does (vault it; it is never written to the node).']


def test_a_verify_password_the_hash_does_not_match_is_refused_without_showing_either():
    found = problems(password_hash=RECORDED_SHA1, verify_password=RECORDED_PASSWORD + 'x')
    assert found == ['jupyter_kernel_lab_verify_password is not the password that jupyter_kernel_lab_password_hash '
                     'hashes (neither value is shown).']
    assert problems(password_hash=RECORDED_SHA1, verify_password=RECORDED_PASSWORD) == []
    # argon2: checked by argon2-cffi when the controller has it, else left to the login over HTTP.
    assert 'is not the password' in problems(password_hash=ARGON2, verify_password='y',
                                             argon2_verify=lambda encoded, password: password == 'x')[0]
    assert problems(password_hash=ARGON2, verify_password='y', argon2_verify=None) == []


def test_a_verify_password_without_a_hash_is_refused():
    assert problems(token=TOKEN, verify_password=RECORDED_PASSWORD) == [
        'jupyter_kernel_lab_verify_password is set but jupyter_kernel_lab_password_hash is not: JupyterLab would '
        'have no password to log in with; set the hash of that password too, or drop it.']


def test_password_matches_is_jupyter_servers_check():
    assert jupyter_lab.password_matches(RECORDED_SHA1, RECORDED_PASSWORD) is True
    assert jupyter_lab.password_matches(RECORDED_SHA1, RECORDED_PASSWORD.upper()) is False
    assert jupyter_lab.password_matches(SHA1_REAL, 'correct horse') is True
    assert jupyter_lab.password_matches(ARGON2, 'correct horse', argon2_verify=None) is None
    assert jupyter_lab.password_matches('hunter2', 'hunter2') is None


@pytest.mark.parametrize('value', ['hunter2', 'correct horse battery staple', 'sha1:', 'sha1:abc', 'sha1::' + 'a' * 40,
                                   'sha256:%s:%s' % (SALT, 'a' * 64), 'argon2:', 'argon2:hunter2', '$argon2id$v=19$m=1,t=1,p=1$a$b',
                                   ' ' + SHA1_REAL])
def test_anything_but_an_argon2_or_sha1_hash_is_refused_without_showing_it(value):
    found = problems(password_hash=value)
    assert len(found) == 1
    assert found[0].startswith('jupyter_kernel_lab_password_hash is not a password hash: expected argon2:')
    assert 'sha1:<salt>:<40 hex digits>' in found[0]
    if len(value.strip()) > 8:  # the short ones are prefixes of the expected forms the message names
        assert value.strip() not in found[0]


@pytest.mark.parametrize('token, expected', [
    (' ', 'jupyter_kernel_lab_token is only whitespace'),
    ('\t\n', 'jupyter_kernel_lab_token is only whitespace'),
    ('a', 'jupyter_kernel_lab_token has 1 characters; expected at least 32'),
    (TOKEN[:31], 'jupyter_kernel_lab_token has 31 characters; expected at least 32'),
    (TOKEN + ' x', 'jupyter_kernel_lab_token contains whitespace'),
])
def test_weak_tokens_are_refused_without_showing_them(token, expected):
    found = problems(token=token, password_hash=SHA1_REAL, verify_password='correct horse')
    assert len(found) == 1 and found[0].startswith(expected)
    if len(token.strip()) > 1:
        assert token.strip() not in found[0]


@pytest.mark.parametrize('port', [0, -1, 65536, 70000])
def test_ports_outside_1_to_65535_are_refused(port):
    assert problems(token=TOKEN, port=port) == [
        'jupyter_kernel_lab_port must be a port number from 1 to 65535, got %d.' % port]


@pytest.mark.parametrize('ip', ['0.0.0.0', '::', '', '*', '10.1.2.3', '192.168.0.7', 'fe80::1', 'node1.example.org'])
def test_a_non_loopback_address_without_tls_is_refused(ip):
    found = problems(token=TOKEN, ip=ip)
    assert len(found) == 1
    assert found[0].startswith('jupyter_kernel_lab_ip %s is not a loopback address' % (ip or "''"))
    assert 'jupyter_kernel_lab_certfile and jupyter_kernel_lab_keyfile' in found[0]
    assert 'jupyter_kernel_lab_allow_plain_http: true' in found[0]
    assert problems(token=TOKEN, ip=ip, certfile='/etc/ssl/lab.pem', keyfile='/etc/ssl/private/lab.key') == []
    assert problems(token=TOKEN, ip=ip, allow_plain_http=True) == []


@pytest.mark.parametrize('ip', ['127.0.0.1', '127.1.2.3', '::1', 'localhost'])
def test_loopback_addresses_need_no_tls(ip):
    assert problems(token=TOKEN, ip=ip) == []


def test_tls_needs_both_files_as_absolute_paths():
    assert problems(token=TOKEN, certfile='/etc/ssl/lab.pem') == [
        'TLS needs both jupyter_kernel_lab_certfile and jupyter_kernel_lab_keyfile.']
    assert problems(token=TOKEN, certfile='lab.pem', keyfile='/etc/ssl/private/lab.key') == [
        'jupyter_kernel_lab_certfile and jupyter_kernel_lab_keyfile must be absolute paths on the node.']


def test_every_weak_input_on_0_0_0_0_is_reported_together():
    found = problems(password_hash='hunter2', token=' ', ip='0.0.0.0', port=70000)
    assert [text.split(' ')[0] for text in found] == [
        'jupyter_kernel_lab_password_hash', 'jupyter_kernel_lab_token', 'jupyter_kernel_lab_port', 'jupyter_kernel_lab_ip']


def test_sha1_empty_password_check_is_the_one_jupyter_server_makes():
    assert jupyter_lab.is_empty_password_hash(SHA1_EMPTY)
    assert not jupyter_lab.is_empty_password_hash(SHA1_REAL)
    # Without argon2-cffi on the controller an argon2 hash cannot be checked: not claimed empty.
    assert not jupyter_lab.is_empty_password_hash(ARGON2, argon2_verify=None)
