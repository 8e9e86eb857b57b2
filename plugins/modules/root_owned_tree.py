#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: root_owned_tree
short_description: A folder tree that root runs code from, changeable by root alone
version_added: 0.1.0
description:
  - Walks a folder tree without following links and finds every entry that root does not own, or that its group or
    everyone may write (the mode of a link is not judged, its owner is). Each such entry is a way for another user to
    plant code that root later runs or sources, such as a conda base's C(bin/conda), C(etc/profile.d/conda.sh),
    C(site-packages) or C(condarc.d).
  - Gives each one to root (its group is kept) and takes group and other write off it. Nothing else is changed;
    reading and running stay as they were.
  - Folders that users may fill with their own entries are named in O(members_under); an entry there that root
    does not own is its owner's (an environment a user made) and is left alone and returned, not walked.
author: aistack.gpu_node contributors (@aistack)
options:
  path:
    description: The top of the tree, an absolute path to an existing folder.
    type: path
    required: true
  members_under:
    description: Folders, relative to O(path), whose entries that root does not own are left alone.
    type: list
    elements: str
    default: []
  report_limit:
    description: How many of the entries found are returned in RV(entries); RV(found) counts them all.
    type: int
    default: 10
extends_documentation_fragment:
  - aistack.gpu_node.attributes.per_host
attributes:
  check_mode:
    support: full
    description: Walks the same tree and reports as changed what it would change; nothing is written.
  diff_mode:
    support: full
    description: Before and after list the entries of RV(entries), with why, and how many more there are.
  platform:
    support: full
    platforms: posix
    description: Any POSIX node; changing owners needs root.
notes:
  - A tree with tens of thousands of entries is walked in well under a second; a re-run that finds nothing is one
    module round-trip.
seealso:
  - module: ansible.builtin.file
'''

EXAMPLES = r'''
- name: Nobody but root changes what root runs from the conda base
  aistack.gpu_node.root_owned_tree:
    path: /opt/conda
    members_under: [envs]
  register: base_access

- name: Name the users' own environments left in the base
  ansible.builtin.debug:
    msg: "left alone: {{ base_access.left_alone }}"
  when: base_access.left_alone | length > 0
'''

RETURN = r'''
found:
  description: How many entries were not root's alone (and were, or in check mode would be, made so).
  returned: always
  type: int
  sample: 2
entries:
  description: The first O(report_limit) of those entries, in walk order, with why each was found.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The entry.
      type: str
    reasons:
      description: V(owned by uid N), V(mode NNNN writable by group and others), or both.
      type: list
      elements: str
  sample:
    - {path: /opt/conda/bin/conda, reasons: [mode 0775 writable by group]}
    - {path: /opt/conda/pkgs/urls.txt, reasons: [owned by uid 1001, mode 0664 writable by group]}
left_alone:
  description: Entries of the O(members_under) folders that root does not own, not walked and not changed.
  returned: always
  type: list
  elements: str
  sample: [/opt/conda/envs/alice-scratch]
'''

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.root_owned_tree import describe, make_root_owned, scan


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', required=True),
            members_under=dict(type='list', elements='str', default=[]),
            report_limit=dict(type='int', default=10),
        ),
        supports_check_mode=True,
    )
    top = module.params['path']
    if not os.path.isabs(top) or not os.path.isdir(top) or os.path.islink(top):
        module.fail_json(msg='path must be an existing folder given by an absolute path (not a link): %s' % top)
    problems, left_alone = scan(top, module.params['members_under'])
    entries = describe(problems, module.params['report_limit'])
    result = dict(changed=bool(problems), found=len(problems), entries=entries, left_alone=left_alone)
    if problems and module._diff:
        more = '(and %d more)\n' % (len(problems) - len(entries)) if len(problems) > len(entries) else ''
        result['diff'] = dict(
            before=''.join('%s: %s\n' % (entry['path'], ', '.join(entry['reasons'])) for entry in entries) + more,
            after=''.join('%s: root-owned, writable by root only\n' % entry['path'] for entry in entries) + more,
            before_header='%s: entries not root\'s alone' % top, after_header=top)
    if problems and not module.check_mode:
        make_root_owned(problems)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
