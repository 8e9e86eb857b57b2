# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Whether a role's directories and files are already as the role writes them: type, content,
mode, owner and group, read from the node in one pass. Anything this cannot vouch for (a link, a
name that does not resolve) is reported as not in place, so the writing task decides."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import grp
import hashlib
import os
import pwd
import stat

from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.env_proof import file_digest

# What a directory and a file have in common; the module and its action plugin take the same.
ENTRY_OPTIONS = dict(
    path=dict(type='path', required=True),
    owner=dict(type='str'),
    group=dict(type='str'),
    mode=dict(type='raw'),
)
# A tree to make root's alone in the same round-trip (the root_owned_tree module's options).
TREE_OPTIONS = dict(
    path=dict(type='path', required=True),
    members_under=dict(type='list', elements='str', default=[]),
)


def content_checksum(content):
    """The SHA-1 that ansible.builtin.copy compares, of text written as UTF-8."""
    return hashlib.sha1(content.encode('utf-8')).hexdigest()


def file_checksum(path):
    """The SHA-1 of a file's bytes, as ansible.builtin.copy compares it."""
    return file_digest(path, 'sha1')


def wanted_mode(mode):
    """A mode as the file module takes it: an octal string (V(0644), V(02775)) or an int already read
    as octal by YAML. None means the role does not set it."""
    if mode is None or mode == '':
        return None
    if isinstance(mode, int):
        return mode
    text = str(mode)
    if not text.isdigit():
        raise ValueError('mode %r is not an octal number such as 0644' % (mode,))
    return int(text, 8)


def _resolve(name, lookup, field):
    """A user or group name (or a number) as an id, None when the node does not know it."""
    if name is None or name == '':
        return None
    if str(name).isdigit():
        return int(name)
    try:
        return getattr(lookup(name), field)
    except KeyError:
        return -1


def entry_state(entry, kind, lstat=os.lstat, checksum=file_checksum,
                uid_of=lambda name: _resolve(name, pwd.getpwnam, 'pw_uid'),
                gid_of=lambda name: _resolve(name, grp.getgrnam, 'gr_gid')):
    """One entry ({path, owner, group, mode, checksum}) of the given kind (directory or file):
    {path, kind, in_place, reasons, parent_exists, unknown_names}."""
    path = entry['path']
    reasons = []
    unknown = []
    state = dict(path=path, kind=kind, parent_exists=os.path.isdir(os.path.dirname(path.rstrip('/')) or '/'))
    uid = uid_of(entry.get('owner'))
    gid = gid_of(entry.get('group'))
    for field, wanted in (('owner', uid), ('group', gid)):
        if wanted == -1:
            unknown.append(entry[field])
            reasons.append('%s %s does not exist on the node' % (field, entry[field]))
    try:
        found = lstat(path)
    except OSError:
        reasons.insert(0, 'missing')
        return dict(state, in_place=False, reasons=reasons, unknown_names=unknown)
    want_type = stat.S_ISDIR if kind == 'directory' else stat.S_ISREG
    if not want_type(found.st_mode):
        reasons.insert(0, 'not a %s' % ('directory' if kind == 'directory' else 'regular file'))
        return dict(state, in_place=False, reasons=reasons, unknown_names=unknown)
    mode = wanted_mode(entry.get('mode'))
    if mode is not None and stat.S_IMODE(found.st_mode) != mode:
        reasons.append('mode %04o, not %04o' % (stat.S_IMODE(found.st_mode), mode))
    if uid not in (None, -1) and found.st_uid != uid:
        reasons.append('owner uid %d, not %s' % (found.st_uid, entry['owner']))
    if gid not in (None, -1) and found.st_gid != gid:
        reasons.append('group gid %d, not %s' % (found.st_gid, entry['group']))
    if kind == 'file' and entry.get('checksum') and checksum(path) != entry['checksum']:
        reasons.append('content differs')
    return dict(state, in_place=not reasons, reasons=reasons, unknown_names=unknown)


def files_state(directories, files, **probes):
    """Every directory, then every file, in the order given."""
    states = [entry_state(entry, 'directory', **probes) for entry in directories]
    for entry in files:
        if entry.get('content') is not None:
            entry = dict(entry, checksum=content_checksum(entry['content']))
        states.append(entry_state(entry, 'file', **probes))
    return states
