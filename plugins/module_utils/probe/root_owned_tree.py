# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A folder tree that root runs or sources from, kept changeable by root alone.

Anything in such a tree that another user owns, or that a group or everyone may write, is a way
for that user or group to run code as root. The judgement is pure (``entry_problems``); the walk
reads only ``lstat``; ``make_root_owned`` changes what the walk found and nothing else.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import operator
import os
import stat
from collections import namedtuple

WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH

# One path that is not root's alone: its lstat owner and mode, and why.
Problem = namedtuple('Problem', ['path', 'uid', 'mode', 'reasons'])


def entry_problems(uid, mode):
    """Why a path with this owner and ``lstat`` mode is not root's alone: a list of short reasons.

    A symbolic link's own mode means nothing (it is always 0777); its owner still does.
    """
    problems = []
    if uid != 0:
        problems.append('owned by uid %d' % uid)
    if not stat.S_ISLNK(mode) and mode & WRITABLE_BY_OTHERS:
        problems.append('mode %04o writable by %s' % (
            stat.S_IMODE(mode), ' and '.join(
                who for who, bit in (('group', stat.S_IWGRP), ('others', stat.S_IWOTH)) if mode & bit)))
    return problems


def _entries(folder):
    """``folder``'s entries split as os.walk splits them (a link to a folder counts as a folder), each sorted by
    name; a folder that cannot be listed has none (os.walk's default)."""
    try:
        with os.scandir(folder) as listing:
            entries = list(listing)
    except OSError:
        return [], []
    folders, others = [], []
    for entry in entries:
        try:
            is_folder = entry.is_dir()
        except OSError:
            is_folder = False
        (folders if is_folder else others).append(entry)
    by_name = operator.attrgetter('name')
    return sorted(folders, key=by_name), sorted(others, key=by_name)


def scan(top, members_under=()):
    """Walk ``top`` without following links.

    Returns ``(problems, left_alone)``: the ``Problem`` entries in the order of ``os.walk(top)`` top-down with each
    folder's names sorted (a folder's subfolders, then its other entries, then each subfolder's tree); and
    the entries of the folders ``members_under`` (relative to ``top``, such as ``envs``) that root
    does not own, which are their owners' own (an environment a user made) and are not walked.
    The walk is one ``scandir`` and one ``lstat`` per entry: a conda base with a torch env holds tens of
    thousands of files, and every run of the miniconda role walks it.
    """
    members_dirs = set(os.path.join(top, relative) for relative in members_under)
    problems = []
    left_alone = []

    def judge(path, status):
        reasons = entry_problems(status.st_uid, status.st_mode)
        if reasons:
            problems.append(Problem(path, status.st_uid, status.st_mode, reasons))

    judge(top, os.lstat(top))
    pending = [top]
    while pending:
        folder = pending.pop()
        folders, others = _entries(folder)
        walk_into = []
        for entry in folders:
            status = entry.stat(follow_symlinks=False)
            if folder in members_dirs and status.st_uid != 0 and stat.S_ISDIR(status.st_mode):
                left_alone.append(entry.path)
                continue
            judge(entry.path, status)
            if not stat.S_ISLNK(status.st_mode):
                walk_into.append(entry.path)
        for entry in others:
            judge(entry.path, entry.stat(follow_symlinks=False))
        pending.extend(reversed(walk_into))
    return problems, left_alone


def make_root_owned(problems):
    """Give each problem path to root and take group and other write off it (never through a link)."""
    for problem in problems:
        if problem.uid != 0:
            os.lchown(problem.path, 0, -1)
        if not stat.S_ISLNK(problem.mode) and problem.mode & WRITABLE_BY_OTHERS:
            os.chmod(problem.path, stat.S_IMODE(problem.mode) & ~WRITABLE_BY_OTHERS)


def describe(problems, limit):
    """The first ``limit`` problems as the module returns them."""
    return [{'path': problem.path, 'reasons': problem.reasons} for problem in problems[:limit]]


def tree_state(top, members_under=(), limit=10):
    """What the root_owned_tree module would find at ``top``, read only: ``{found, entries, left_alone}``; None where
    ``top`` is no folder to walk (yet), which that module refuses."""
    if not os.path.isabs(top) or not os.path.isdir(top) or os.path.islink(top):
        return None
    problems, left_alone = scan(top, members_under)
    return {'found': len(problems), 'entries': describe(problems, limit), 'left_alone': left_alone}
