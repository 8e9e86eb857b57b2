#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: mirrors_condarc_probe
short_description: Read what the mirrors_condarc role checks on a node before it writes, in one round-trip
version_added: 0.2.0
description:
  - Internal to the P(aistack.gpu_node.mirrors_condarc#role) role, which refuses what it reads wrong before anything
    is written. It reads, never changes, and decides nothing.
  - Whether O(conda) exists and, when it does, the solvers it has (the choices of its C(create --help) C(--solver)
    option). conda fails every solve when .condarc names a solver it lacks.
  - The accounts of O(users) (home, uid, gid; the node's account database, C(getent passwd)'s source), and which of
    them the node has no account for.
  - With O(group), the group's members, or null when the node has no such group.
  - With O(copy_header), the files in the homes of every other account (C(.condarc) and the backups of one,
    C(.condarc.*~)) whose first line starts with it, that is the role's copies left with a user no longer in O(users).
  - With O(show_sources), what C(conda config --show-sources) prints, before the role writes anything. Where the
    role's run then changes no file, that is what conda loads, and conda is not asked again. It runs beside
    C(create --help), so the read takes about as long as one conda start.
  - With O(probe), the candidate mirrors probed from the node as M(aistack.gpu_node.conda_mirror_probe) probes them,
    while conda runs, so that the role reads the node once before it writes.
author: aistack.gpu_node contributors (@aistack)
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
options:
  conda:
    description: The conda executable of the base the role configures.
    type: path
    required: true
  users:
    description: The users who get a .condarc of their own.
    type: list
    elements: str
    default: []
  group:
    description: The group whose members must be able to read a system .condarc that holds a secret.
    type: str
  copy_header:
    description: The first line of the role's .condarc, up to where it varies; empty looks for no copies.
    type: str
    default: ''
  show_sources:
    description:
      - Also run C(conda config --show-sources) (when O(conda) exists) and return what it printed.
      - Its output is the loaded settings, a channel token or a proxy password included; run the task with C(no_log)
        when they may hold one.
    type: bool
    default: false
  probe:
    description:
      - The options of M(aistack.gpu_node.conda_mirror_probe) (O(aistack.gpu_node.conda_mirror_probe#module:current) and
        O(aistack.gpu_node.conda_mirror_probe#module:current_condarc) exclusive); RV(probe) is what it returns.
      - A malformed mirror or channel fails the module, as it fails M(aistack.gpu_node.conda_mirror_probe).
    type: dict
    suboptions:
      mirrors:
        description: Candidate mirror roots, as M(aistack.gpu_node.conda_mirror_probe) takes them.
        type: list
        elements: str
        required: true
      channels:
        description: Channel names to fetch under each mirror.
        type: list
        elements: str
        default: [conda-forge]
      subdirs:
        description: Platform subdirs to fetch for each channel.
        type: list
        elements: str
        default: [noarch, linux-64]
      current:
        description: Mirror in use now. Mutually exclusive with O(probe.current_condarc).
        type: str
      current_condarc:
        description: A .condarc on the node whose top-level C(channel_alias) is the mirror in use now.
        type: path
      switch_margin_ms:
        description: How much faster another mirror must be before the one in use is replaced.
        type: int
        default: 200
      timeout:
        description: Seconds allowed for each fetch.
        type: int
        default: 10
      validate_certs:
        description: Verify HTTPS certificates.
        type: bool
        default: true
      ca_path:
        description: CA bundle to verify the mirrors with.
        type: path
attributes:
  platform:
    support: full
    platforms: posix
    description: Any POSIX node with a user and group database (the C(pwd) and C(grp) modules read it).
'''

EXAMPLES = r'''
- name: Read conda, its solvers and the accounts on the node
  aistack.gpu_node.mirrors_condarc_probe:
    conda: /opt/conda/bin/conda
    users: [alice]
    group: conda
    copy_header: "# Managed by aistack.gpu_node.mirrors_condarc;"
    show_sources: true
  register: node
'''

RETURN = r'''
conda_present:
  description: Whether O(conda) exists.
  returned: always
  type: bool
solvers:
  description: The solvers O(conda) has; empty when it is missing or its help names none.
  returned: always
  type: list
  elements: str
  sample: [classic, libmamba]
accounts:
  description: Each user of O(users) the node has an account for, with C(home), C(uid) and C(gid).
  returned: always
  type: dict
  sample: {alice: {home: /srv/users/alice, uid: 1000, gid: 1000}}
unknown_users:
  description: The users of O(users) the node has no account for, in the given order.
  returned: always
  type: list
  elements: str
group_members:
  description: The members of O(group); null when the node has no such group or O(group) is not given.
  returned: always
  type: list
  elements: str
dropped_copies:
  description: The role's copies (and backups of them) in the homes of accounts not in O(users), sorted.
  returned: always
  type: list
  elements: str
  sample: [/srv/users/bob/.condarc, /srv/users/bob/.condarc.4242.2026-12-06@10:00:00~]
show_sources:
  description:
    - What C(conda config --show-sources) printed; null when O(show_sources) is false, O(conda) is missing or the
      command failed (the caller asks conda itself then, to see why).
  returned: always
  type: str
probe:
  description:
    - What M(aistack.gpu_node.conda_mirror_probe) returns for O(probe) (C(ranked), C(candidates), C(chosen), C(chosen_index),
      C(fallbacks), C(fallback_indexes), and C(message) when no mirror is healthy); null without O(probe).
  returned: always
  type: dict
'''

import glob
import grp
import os
import pwd
import threading

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import mirrors as cm
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import conda_mirrors


def first_line(path):
    try:
        with open(path, 'rb') as handle:
            return handle.readline().decode('utf-8', 'replace')
    except (IOError, OSError):
        return ''


def role_copies(homes, header):
    """The files in ``homes`` (.condarc and its backups) whose first line starts with ``header``."""
    found = []
    for home in homes:
        for path in [os.path.join(home, '.condarc')] + glob.glob(os.path.join(glob.escape(home), '.condarc.*~')):
            if os.path.isfile(path) and first_line(path).startswith(header):
                found.append(path)
    return sorted(set(found))


def run_conda(module, conda, commands, meanwhile):
    """``{name: (rc, stdout, error)}`` of each ``commands`` entry (name -> conda's arguments), run side by side:
    each is a conda start of its own, and neither writes anything; ``meanwhile()`` runs here while they do.
    ``error`` is what stopped conda from running at all (an OSError), else None: run_command would fail the
    module from its thread."""
    outputs = {}

    def run(name, arguments):
        try:
            rc, out, _err = module.run_command([conda] + list(arguments), handle_exceptions=False)
            outputs[name] = (rc, out, None)
        except (OSError, ValueError) as error:
            outputs[name] = (None, '', error)
    threads = [threading.Thread(target=run, args=item) for item in sorted(commands.items())]
    for thread in threads:
        thread.start()
    try:
        meanwhile()
    finally:
        for thread in threads:
            thread.join()
    return outputs


def main():
    module = AnsibleModule(
        argument_spec=dict(
            conda=dict(type='path', required=True),
            users=dict(type='list', elements='str', default=[]),
            group=dict(type='str'),
            copy_header=dict(type='str', default=''),
            show_sources=dict(type='bool', default=False),
            probe=dict(type='dict', options=conda_mirrors.ARGUMENT_SPEC, mutually_exclusive=[('current', 'current_condarc')]),
        ),
        supports_check_mode=True,
    )
    params = module.params
    present = os.path.exists(params['conda'])
    solvers = []
    show_sources = None
    probed = {}

    def probe():
        probed['outcome'] = conda_mirrors.probe_mirrors(params['probe']) if params['probe'] is not None else None
    try:
        if present:
            commands = dict(create_help=('create', '--help'))
            if params['show_sources']:
                commands['show_sources'] = ('config', '--show-sources')
            outputs = run_conda(module, params['conda'], commands, probe)
            rc, out, error = outputs['create_help']
            if error is not None:
                # Once more here, where module.run_command fails the module as it always did on a conda that cannot start.
                rc, out, _err = module.run_command([params['conda'], 'create', '--help'])
            solvers = cm.create_help_solvers(out) if rc == 0 else []
            if 'show_sources' in outputs and outputs['show_sources'][0] == 0:
                show_sources = outputs['show_sources'][1]
        else:
            probe()
    except cm.MirrorError as error:
        module.fail_json(msg=to_native(error))
    accounts = dict((entry.pw_name, entry) for entry in pwd.getpwall())
    members = None
    if params['group']:
        try:
            members = list(grp.getgrnam(params['group']).gr_mem)
        except KeyError:
            members = None
    others = sorted(set(entry.pw_dir for name, entry in accounts.items() if name not in params['users'] and entry.pw_dir))
    module.exit_json(
        changed=False,
        conda_present=present,
        solvers=solvers,
        accounts=dict((user, dict(home=accounts[user].pw_dir, uid=accounts[user].pw_uid, gid=accounts[user].pw_gid))
                      for user in params['users'] if user in accounts),
        unknown_users=[user for user in params['users'] if user not in accounts],
        group_members=members,
        dropped_copies=role_copies(others, params['copy_header']) if params['copy_header'] else [],
        show_sources=show_sources,
        probe=probed['outcome'],
    )


if __name__ == '__main__':
    main()
