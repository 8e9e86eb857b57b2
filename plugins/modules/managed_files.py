#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: managed_files
short_description: A role's directories and files, checked in one round-trip and written only where they differ
version_added: 0.1.0
description:
  - Reads every directory and file of the list from the node at once (type, mode, owner, group and, for a file, the
    SHA-1 of its content) and leaves alone those that are already as asked.
  - Each one that differs is written the way its own task would write it, by M(ansible.builtin.file) for a directory
    and M(ansible.builtin.copy) for a file, in the order given (directories first), so check mode and C(--diff)
    report what those modules report.
  - A re-run that changes nothing costs one module round-trip however many entries there are, where one task per
    entry costs one (M(ansible.builtin.file)) or two (M(ansible.builtin.copy), M(ansible.builtin.template)) each.
  - Render a template with the P(ansible.builtin.template#lookup) lookup and give the text as O(files[].content).
  - A link, or an owner or group the node does not know, is never taken as in place; in check mode a file whose
    folder does not exist yet, or an entry whose owner or group does not exist yet (created earlier in the same
    run), is reported as changed without asking the writing module, which would fail there. Outside check mode an
    owner or group the node does not know fails the task, naming the entry, before anything is written.
author: aistack.gpu_node contributors (@aistack)
options:
  directories:
    description: Directories to have, created with their parents where missing.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: The directory.
        type: path
        required: true
      owner:
        description: Its owner, a name or a number; omitted leaves it as it is.
        type: str
      group:
        description: Its group, a name or a number; omitted leaves it as it is.
        type: str
      mode:
        description: Its mode as an octal string such as V(02775); omitted leaves it as it is.
        type: raw
  files:
    description: Files to have, with exactly this content.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: The file. Its folder must exist, or be among O(directories).
        type: path
        required: true
      content:
        description:
          - The whole content, as text written in UTF-8.
          - The action plugin replaces it by its checksum before the node is asked, so the text travels only to
            write it.
        type: str
      checksum:
        description: The SHA-1 of the content. Set by the action plugin; give O(files[].content) instead.
        type: str
      backup:
        description:
          - Before a file whose content differs is overwritten, keep a copy of it beside it, as
            M(ansible.builtin.copy) does with its C(backup) option (C(<file>.<pid>.<timestamp>~), same owner, group
            and mode); RV(backups) names it. A file rewritten only for its mode or owner, or a new one, gets none.
        type: bool
        default: false
      owner:
        description: Its owner, a name or a number; omitted leaves it as it is (a new file belongs to the connecting user).
        type: str
      group:
        description: Its group, a name or a number; omitted leaves it as it is.
        type: str
      mode:
        description: Its mode as an octal string such as V(0644); omitted leaves it as it is (a new file gets the umask's).
        type: raw
  root_owned_tree:
    description:
      - A folder tree that root runs code from, made changeable by root alone as M(aistack.gpu_node.root_owned_tree)
        does it, in the same task; RV(root_owned_tree) is what that module returns.
      - The tree is walked, read only, in the same module run that reads the entries. Only where that walk finds
        something, or an entry is written (its owner or mode may differ from root's alone), does
        M(aistack.gpu_node.root_owned_tree) run after the writes, walk the tree again and change it; a run that finds
        and writes nothing stays one module round-trip.
    type: dict
    suboptions:
      path:
        description: The top of the tree, an absolute path to a folder that exists by the time the entries are written.
        type: path
        required: true
      members_under:
        description: Folders, relative to O(root_owned_tree.path), whose entries that root does not own are left alone.
        type: list
        elements: str
        default: []
extends_documentation_fragment:
  - aistack.gpu_node.attributes.per_host
attributes:
  action:
    support: full
    description: The action plugin renders nothing itself; it asks the node once, then runs the writing modules for what differs.
  check_mode:
    support: full
    description: Nothing is written; what differs is reported as changed by the writing modules in check mode.
  diff_mode:
    support: full
    description: The diffs of M(ansible.builtin.copy) and M(ansible.builtin.file) for the entries that differ.
  platform:
    support: full
    platforms: posix
    description: Any POSIX node.
notes:
  - Use it where a role writes several small files it owns whole; a file other tools also edit belongs to
    C(ansible.builtin.lineinfile) or C(ansible.builtin.blockinfile).
seealso:
  - module: ansible.builtin.copy
  - module: ansible.builtin.file
'''

EXAMPLES = r'''
- name: The role's folders, settings and launcher
  aistack.gpu_node.managed_files:
    directories:
      - {path: /opt/conda/condarc.d, owner: root, group: conda, mode: "02775"}
    files:
      - path: /opt/conda/condarc.d/site.yml
        content: "auto_activate_base: false\n"
        owner: root
        group: conda
        mode: "0644"
      - path: /usr/local/bin/launch
        content: "{{ lookup('ansible.builtin.template', 'launch.j2') }}"
        mode: "0755"
'''

RETURN = r'''
entries:
  description: What the node showed for each entry before anything was written, directories first.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The entry's path.
      type: str
    kind:
      description: V(directory) or V(file).
      type: str
    in_place:
      description: Whether it was already as asked.
      type: bool
    reasons:
      description: Why not, such as V(missing), V(content differs), V(mode 0644, not 0755).
      type: list
      elements: str
  sample:
    - {path: /opt/conda/condarc.d, kind: directory, in_place: true, reasons: []}
    - {path: /opt/conda/condarc.d/site.yml, kind: file, in_place: false, reasons: [content differs]}
backups:
  description: The backup made of each file overwritten with O(files[].backup=true), by the file's path.
  returned: always
  type: dict
  sample: {/opt/conda/.condarc: /opt/conda/.condarc.4123.2026-12-06@17:20:11~}
written:
  description: The paths written (or, in check mode, that would be).
  returned: always
  type: list
  elements: str
  sample: [/opt/conda/condarc.d/site.yml]
root_owned_tree:
  description:
    - What the walk of O(root_owned_tree.path) found (and, in check mode, would change), as
      M(aistack.gpu_node.root_owned_tree) returns it; the task is changed where it changed anything.
  returned: when O(root_owned_tree) is given
  type: dict
  contains:
    changed: {description: "Whether the walk changed (in check mode, would change) anything.", type: bool}
    found: {description: How many entries were not root's alone., type: int}
    entries: {description: "The first ten of them, with why each was found.", type: list, elements: dict}
    left_alone: {description: Entries of the O(root_owned_tree.members_under) folders that root does not own., type: list,
                 elements: str}
  sample: {"changed": false, "found": 0, "entries": [], "left_alone": []}
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.managed_files import ENTRY_OPTIONS, TREE_OPTIONS, files_state
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.root_owned_tree import tree_state


def main():
    module = AnsibleModule(
        argument_spec=dict(
            directories=dict(type='list', elements='dict', default=[], options=ENTRY_OPTIONS),
            files=dict(type='list', elements='dict', default=[],
                       options=dict(ENTRY_OPTIONS, content=dict(type='str'), checksum=dict(type='str'),
                                    backup=dict(type='bool', default=False)),
                       mutually_exclusive=[('content', 'checksum')]),
            root_owned_tree=dict(type='dict', options=TREE_OPTIONS),
        ),
        supports_check_mode=True,
    )
    try:
        entries = files_state(module.params['directories'], module.params['files'])
    except ValueError as error:
        module.fail_json(msg='managed_files: %s' % error)
    result = dict(changed=False, entries=entries, written=[], backups={})
    tree = module.params['root_owned_tree']
    if tree:
        # Read only here: the action plugin runs root_owned_tree to change what this finds.
        result['root_owned_tree'] = tree_state(tree['path'], tree['members_under'])
    module.exit_json(**result)


if __name__ == '__main__':
    main()
