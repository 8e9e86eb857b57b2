# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of the JupyterLab service of the jupyter_kernel role: whether its inputs give a
server that is never reachable without real authentication. Each problem names the role variable
and what was expected; no problem repeats a password hash or a token."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import hashlib
import ipaddress
import re

MIN_TOKEN_LENGTH = 32
# jupyter_server.auth.passwd() prints one of these: argon2 (its default) holds argon2-cffi's
# encoded hash, sha1 holds the salt and sha1(password + salt) in hex.
_ARGON2 = re.compile(r'^argon2:\$argon2(?:id|i|d)\$(?:v=[0-9]+\$)?m=[0-9]+,t=[0-9]+,p=[0-9]+'
                     r'\$[A-Za-z0-9+/]+={0,2}\$[A-Za-z0-9+/]+={0,2}$')
_SHA1 = re.compile(r'^sha1:(?P<salt>[!-9;-~]+):(?P<digest>[0-9a-f]{40})$')
# What jupyter_server binds to all interfaces with.
_ALL_INTERFACES = ('', '*')


def _argon2_verifier():
    """argon2-cffi's verify(encoded, password) when it is installed here, else None."""
    try:
        import argon2  # pylint: disable=import-outside-toplevel
        import argon2.exceptions  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    hasher = argon2.PasswordHasher()

    def verify(encoded, password):
        try:
            return hasher.verify(encoded, password)
        except (argon2.exceptions.VerificationError, argon2.exceptions.InvalidHash):
            return False
    return verify


ARGON2_VERIFY = _argon2_verifier()


def is_password_hash(value):
    """Whether ``value`` has the form of a hash that jupyter_server.auth.passwd() makes (argon2 or sha1)."""
    return bool(_ARGON2.match(value) or _SHA1.match(value))


def password_matches(value, password, argon2_verify=ARGON2_VERIFY):
    """Whether ``password`` logs in against the hash ``value``, checked the way jupyter_server's
    passwd_check() checks a login: sha1(password + salt) against the digest, or argon2-cffi's
    verify(). None when that cannot be told here: an argon2 hash without ``argon2_verify``
    (argon2-cffi not installed on the controller), or a value that is no hash."""
    sha1 = _SHA1.match(value)
    if sha1:
        digest = hashlib.sha1(password.encode('utf-8') + sha1.group('salt').encode('ascii')).hexdigest()
        return digest == sha1.group('digest')
    if _ARGON2.match(value) and argon2_verify is not None:
        return bool(argon2_verify(value[len('argon2:'):], password))
    return None


def is_empty_password_hash(value, argon2_verify=ARGON2_VERIFY):
    """Whether ``value`` is the hash of an empty password (an argon2 hash only when ``argon2_verify``
    is given; without it the answer is False)."""
    return password_matches(value, '', argon2_verify) is True


def is_loopback(ip):
    """Whether JupyterLab listening on ``ip`` is reachable from this host only."""
    if ip == 'localhost':
        return True
    if ip in _ALL_INTERFACES:
        return False
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        # A host name other than localhost may resolve to any address.
        return False


def _password_hash_problems(password_hash, verify_password, argon2_verify):
    if not password_hash:
        if verify_password:
            return ['jupyter_kernel_lab_verify_password is set but jupyter_kernel_lab_password_hash is not: JupyterLab '
                    'would have no password to log in with; set the hash of that password too, or drop it.']
        return []
    if not is_password_hash(password_hash):
        return ['jupyter_kernel_lab_password_hash is not a password hash: expected argon2:$argon2id$... or '
                'sha1:<salt>:<40 hex digits>, as jupyter_server.auth.passwd() prints them (a plain password there is '
                'refused; the value is not shown).']
    if is_empty_password_hash(password_hash, argon2_verify):
        return ['jupyter_kernel_lab_password_hash is the hash of an empty password, which lets anyone log in: '
                'hash a real password with jupyter_server.auth.passwd().']
    if not verify_password:
        return ['jupyter_kernel_lab_password_hash needs jupyter_kernel_lab_verify_password, the password it hashes: '
                'after starting JupyterLab the role logs in with it over HTTP, and with a wrong one, to prove that the '
                'password gets in and nothing else does (vault it; it is never written to the node).']
    if password_matches(password_hash, verify_password, argon2_verify) is False:
        return ['jupyter_kernel_lab_verify_password is not the password that jupyter_kernel_lab_password_hash hashes '
                '(neither value is shown).']
    return []


def _token_problems(token):
    if not token:
        return []
    if not token.strip():
        return ['jupyter_kernel_lab_token is only whitespace, which is no secret: expected at least %d characters '
                'without whitespace (openssl rand -hex 32 makes one).' % MIN_TOKEN_LENGTH]
    if any(character.isspace() for character in token):
        return ['jupyter_kernel_lab_token contains whitespace: expected at least %d characters without whitespace '
                '(openssl rand -hex 32 makes one).' % MIN_TOKEN_LENGTH]
    if len(token) < MIN_TOKEN_LENGTH:
        return ['jupyter_kernel_lab_token has %d characters; expected at least %d without whitespace '
                '(openssl rand -hex 32 makes one).' % (len(token), MIN_TOKEN_LENGTH)]
    return []


def lab_problems(password_hash='', token='', ip='127.0.0.1', port=8888, certfile='', keyfile='',
                 allow_plain_http=False, verify_password='', argon2_verify=ARGON2_VERIFY):
    """What is wrong with the JupyterLab inputs, in the role's variable names: [] when the server
    would accept only a real password or a real token, on a loopback address or over TLS (or
    plain HTTP explicitly allowed), on a valid port, and a password hash comes with the password
    the role's verify logs in with."""
    password_hash = password_hash or ''
    verify_password = verify_password or ''
    token = token or ''
    ip = '' if ip is None else str(ip)
    problems = []
    if not password_hash and not token:
        problems.append('It would start without authentication: set jupyter_kernel_lab_password_hash (from '
                        'jupyter_server.auth.passwd(), vault it) or jupyter_kernel_lab_token (vault it).')
    problems.extend(_password_hash_problems(password_hash, verify_password, argon2_verify))
    problems.extend(_token_problems(token))
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        problems.append('jupyter_kernel_lab_port must be a port number from 1 to 65535, got %s.' % (port,))
    tls = bool(certfile) and bool(keyfile)
    if bool(certfile) != bool(keyfile):
        problems.append('TLS needs both jupyter_kernel_lab_certfile and jupyter_kernel_lab_keyfile.')
    elif tls and not (certfile.startswith('/') and keyfile.startswith('/')):
        problems.append('jupyter_kernel_lab_certfile and jupyter_kernel_lab_keyfile must be absolute paths on the node.')
    if not is_loopback(ip) and not tls and not allow_plain_http:
        problems.append(
            "jupyter_kernel_lab_ip %s is not a loopback address and JupyterLab would serve plain HTTP there, where the "
            "password or token crosses the network in clear: set jupyter_kernel_lab_certfile and "
            "jupyter_kernel_lab_keyfile (TLS), listen on 127.0.0.1 (and reach it through ssh -L), or set "
            "jupyter_kernel_lab_allow_plain_http: true to accept that risk." % (ip or "''"))
    return problems
