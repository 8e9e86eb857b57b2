# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a Jupyter kernelspec lives on the node (a user's home from the node's user database) and
the digest of a resource file there: what the jupyter_kernelspec module reads before it writes."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import hashlib
import os
import pwd

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.kernelspec import KernelspecError

DEFAULT_PREFIX = '/usr/local'


def home_of(user, passwd=pwd):
    """Home directory of ``user`` (name or uid), or of the effective user when ``user`` is None."""
    try:
        if user is None:
            return passwd.getpwuid(os.geteuid()).pw_dir
        return passwd.getpwnam(user).pw_dir
    except KeyError:
        raise KernelspecError('user %r does not exist on this node' % (user,))


def kernel_directory(name, scope='system', prefix=None, user=None, path=None, passwd=pwd):
    """Directory of the kernelspec: ``path`` when given, else the scope's standard Jupyter location."""
    if path:
        return os.path.normpath(path)
    if scope == 'system':
        return os.path.join(prefix or DEFAULT_PREFIX, 'share', 'jupyter', 'kernels', name)
    if scope == 'user':
        return os.path.join(home_of(user, passwd), '.local', 'share', 'jupyter', 'kernels', name)
    raise KernelspecError('scope must be system or user, got %r' % (scope,))


def sha256_of(path, chunk_size=1024 * 1024):
    """Hex sha256 of the file at ``path``, or None when there is no such file."""
    if not os.path.isfile(path):
        return None
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        for chunk in iter(lambda: handle.read(chunk_size), b''):
            digest.update(chunk)
    return digest.hexdigest()
