#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: miniconda_plan
short_description: Choose the conda installer and decide what the miniconda role does to the prefix
version_added: 0.1.0
description:
  - The decisions of the P(aistack.gpu_node.miniconda#role) role. Read-only, it never changes the node.
  - Chooses the installer (file name, URL, sha256 and where that checksum comes from) from the role's checksum table,
    the flavor, the version and the node's architecture.
  - Reads the prefix, its completion marker and whether its C(bin/conda) runs, and returns what the prefix needs,
    C(none), C(install), C(repair), C(upgrade) or C(refuse), with the reason.
  - The C(conda) that runs is asked C(config --show --json), of which only the root prefix and the activation setting
    come back (RV(conda_settings)). Where they are as the role sets them and the run changes nothing in the base, the
    role's verify step need not ask conda again.
  - Its action plugin first checks the role's variables (read from the task's variables, as the role's tasks see
    them) and Anaconda's terms, without reading the node; after the node is read, it fails the task on C(refuse) and
    on RV(missing_members). Each failure has the role's message.
  - An existing prefix is looked into before anything in it is run. A conda base (C(conda-meta/)), a folder with the
    completion marker and one whose record of a started install is in O(started_records) are decided on as above; an
    empty folder (or one with only C(lost+found)) is installed into; any other path is refused (C(refuse)), naming
    C(miniconda_prefix).
author: aistack.gpu_node contributors (@aistack)
options:
  installers:
    description:
      - The role's table of vendor checksums, per flavor C(base_url), C(filename), C(default_version) and
        C(versions) (version, then architecture, to C(sha256) and C(source)).
    type: dict
    required: true
  flavor:
    description: The role's C(miniconda_flavor).
    type: str
    required: true
  version:
    description: The role's C(miniconda_version); empty takes the flavor's pinned default.
    type: str
    default: ''
  architecture:
    description: C(ansible_facts.architecture); when omitted, the node's machine type.
    type: str
  sha256:
    description: The role's C(miniconda_installer_sha256).
    type: str
    default: ''
  url:
    description:
      - The role's C(miniconda_installer_url) without its user and password (the role strips them and downloads from
        C(miniconda_installer_url) itself); empty for the vendor's URL. A password given here anyway is masked in the
        returned C(installer.url).
    type: str
    default: ''
  prefix:
    description: The role's C(miniconda_prefix).
    type: path
    required: true
  marker:
    description: The completion marker (JSON) the role writes into the prefix after an install.
    type: path
    required: true
  started_records:
    description:
      - The folder of the role's records of the installs it started, one per prefix (RV(started_record)), written before
        the installer runs and removed once the base has C(conda-meta/). Kept outside the prefix, where the
        installer's C(-u) does not reach. A record counts only as a regular file of the user the module runs as
        (root) that no one else may write, naming the prefix.
    type: path
    required: true
  allow_downgrade:
    description: The role's C(miniconda_allow_downgrade).
    type: bool
    default: false
  group:
    description:
      - The role's C(miniconda_group); the module says whether the node has it (RV(group_exists)), so that a
        run that finds it need not ask the node again.
    type: str
  members:
    description:
      - The role's C(miniconda_group_members); the module returns those the node has no user for (RV(missing_members)),
        so that the role refuses them before any change instead of creating a login for a typo.
    type: list
    elements: str
    default: []
  auto_activate_base:
    description:
      - The role's C(miniconda_auto_activate_base); RV(conda_settings_in_place) says whether conda already shows it.
    type: bool
    default: false
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
attributes:
  action:
    support: full
    description:
      - An action plugin checks the role's variables on the controller, then runs the module on the node only when the
        task's registered plan does not have this run's RV(inputs_key); otherwise it hands that plan back (RV(reused)).
        It fails the task on C(refuse) and on RV(missing_members).
  platform:
    support: full
    platforms: posix
    description: Linux nodes; the installers the table knows are for Linux.
notes:
  - A bad flavor, version, architecture or checksum fails the module with a message naming the variable.
  - For the P(aistack.gpu_node.miniconda#role) role only, whose variables the action plugin reads.
'''

EXAMPLES = r'''
- name: Choose the installer and decide what the prefix needs
  aistack.gpu_node.miniconda_plan:
    installers: "{{ __miniconda_installers }}"
    flavor: miniforge
    prefix: /opt/conda
    marker: /opt/conda/.aistack-miniconda.json
    started_records: /var/lib/aistack/miniconda
  register: plan
'''

RETURN = r'''
inputs_key:
  description:
    - The sha256 of the arguments, check mode and the role's last C(miniconda_result) (a keyed decision). Its action
      plugin hands back the task's registered plan with the same key instead of reading the node again.
  returned: success
  type: str
reused:
  description: Whether the plan was handed back from the task's registered result (see RV(inputs_key)).
  returned: success
  type: bool
installer:
  description: The installer to use.
  returned: success
  type: dict
  contains:
    flavor: {description: The flavor., type: str}
    version: {description: The installer version., type: str}
    filename: {description: The installer's file name., type: str}
    url: {description: Where to download it (the mirror's URL when one is given)., type: str}
    sha256: {description: Its sha256., type: str}
    source: {description: Where that sha256 comes from., type: str}
  sample: {"flavor": "miniforge", "version": "25.3.0-3", "filename": "Miniforge3-25.3.0-3-Linux-x86_64.sh",
           "url": "https://github.com/conda-forge/miniforge/releases/download/25.3.0-3/Miniforge3-25.3.0-3-Linux-x86_64.sh",
           "sha256": "...", "source": "conda-forge release asset"}
action:
  description: What the prefix needs, C(none), C(install), C(repair), C(upgrade) or C(refuse).
  returned: success
  type: str
  sample: install
reason:
  description: Why, in one line.
  returned: success
  type: str
  sample: no conda prefix yet
prefix_exists:
  description: Whether a path is at O(prefix); the installer then runs with C(-u) (update in place), which it needs there.
  returned: success
  type: bool
  sample: false
started_record:
  description: The record of an install started at O(prefix), in O(started_records), whether it exists or not.
  returned: success
  type: str
  sample: /var/lib/aistack/miniconda/opt-conda.json
group_exists:
  description: Whether the group named by O(group) exists on the node; null without O(group).
  returned: success
  type: bool
  sample: true
missing_members:
  description: The names in O(members) that are no user on the node, in the order given.
  returned: success
  type: list
  elements: str
  sample: [alcie]
conda_settings:
  description:
    - What C(conda config --show --json) of the prefix's conda shows of the role's settings, read wherever the plan runs
      that conda (a conda base, or a folder the role made); null where it was not run, failed or did not answer JSON.
  returned: success
  type: dict
  contains:
    root_prefix: {description: conda's root prefix., type: str}
    auto_activate: {description: C(auto_activate) (C(auto_activate_base) in older conda releases)., type: bool}
  sample: {"root_prefix": "/opt/conda", "auto_activate": false}
conda_settings_in_place:
  description: Whether RV(conda_settings) has O(prefix) as the root prefix and O(auto_activate_base) as the activation setting.
  returned: success
  type: bool
  sample: true
'''

import grp
import json
import os
import platform
import pwd
import stat

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_access import read_json_file
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.miniconda import conda_settings, settings_in_place
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda.installer import (
    choose_installer,
    existing_prefix_action,
    install_action,
    started_record_name,
)


def read_started_record(path, prefix):
    """Whether ``path`` is the role's record of an install started at ``prefix``: a regular file of the user this
    runs as (root) that no one else may write, naming the prefix. Anything else proves nothing."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            return False
        with open(path) as handle:
            return json.load(handle).get('prefix') == prefix
    except (IOError, OSError, ValueError, AttributeError):
        return False


def folder_entries(path):
    """The names in folder ``path``; None when it is not a folder."""
    return os.listdir(path) if os.path.isdir(path) else None


def read_conda(module, prefix):
    """``(runs, settings)``: whether the prefix's conda runs, and what its ``config --show --json`` shows of the role's
    settings (None where it fails). One conda run where it answers, as on a converged node; where it fails (a broken
    .condarc), ``--version`` alone says whether conda runs, as before the settings were read here."""
    conda = os.path.join(prefix, 'bin', 'conda')
    if not os.access(conda, os.X_OK):
        return False, None
    rc, out, _err = module.run_command([conda, 'config', '--show', '--json'])
    if rc == 0:
        return True, conda_settings(out)
    rc, _out, _err = module.run_command([conda, '--version'])
    return rc == 0, None


def group_exists(name):
    """Whether the node knows group ``name`` (None when no group is asked about)."""
    if not name:
        return None
    try:
        grp.getgrnam(name)
    except KeyError:
        return False
    return True


def missing_users(names):
    """The names the node has no user for."""
    missing = []
    for name in names:
        try:
            pwd.getpwnam(name)
        except KeyError:
            missing.append(name)
    return missing


def main():
    module = AnsibleModule(
        argument_spec=dict(
            installers=dict(type='dict', required=True),
            flavor=dict(type='str', required=True),
            version=dict(type='str', default=''),
            architecture=dict(type='str'),
            sha256=dict(type='str', default=''),
            url=dict(type='str', default=''),
            prefix=dict(type='path', required=True),
            marker=dict(type='path', required=True),
            started_records=dict(type='path', required=True),
            allow_downgrade=dict(type='bool', default=False),
            group=dict(type='str'),
            members=dict(type='list', elements='str', default=[]),
            auto_activate_base=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    params = module.params
    try:
        installer = choose_installer(params['installers'], params['flavor'], params['version'],
                                     params['architecture'] or platform.machine(), sha256=params['sha256'], url=params['url'])
    except ValueError as error:
        module.fail_json(msg='miniconda: %s' % error)
    prefix = params['prefix']
    started_record = os.path.join(params['started_records'], started_record_name(prefix))
    exists = os.path.lexists(prefix)
    decision = None
    settings = None
    if exists:
        # Before its conda is run: a folder of someone else's is refused without running anything in it.
        try:
            decision = existing_prefix_action(folder_entries(prefix), read_started_record(started_record, prefix),
                                              os.path.basename(params['marker']))
        except OSError as error:
            module.fail_json(msg='miniconda: cannot read miniconda_prefix %s: %s' % (prefix, error), installer=installer)
    if decision is None:
        runs = False
        if exists:
            runs, settings = read_conda(module, prefix)
        try:
            decision = install_action(installer, exists, read_json_file(params['marker']) if exists else None,
                                      runs, allow_downgrade=params['allow_downgrade'])
        except ValueError as error:
            module.fail_json(msg='miniconda: the completion marker %s: %s' % (params['marker'], error), installer=installer)
    module.exit_json(changed=False, installer=installer, prefix_exists=exists, started_record=started_record,
                     group_exists=group_exists(params['group']), missing_members=missing_users(params['members']),
                     conda_settings=settings,
                     conda_settings_in_place=settings_in_place(settings, prefix, params['auto_activate_base']), **decision)


if __name__ == '__main__':
    main()
