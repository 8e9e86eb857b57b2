#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: conda_mirror_probe
short_description: Probe conda channel mirrors from the node and rank them by measured latency
version_added: 0.1.0
description:
  - For each candidate mirror, channel and subdir, reads from the managed node what conda 26 reads first, the way it
    reads it - C(current_repodata.json) then C(repodata.json), each as C(<name>.zst) first and C(<name>) only after a
    4xx answer other than 416 (C(current_repodata.json) may be missing) - and checks what it read.
  - Only the first 512 KiB of each file are asked for (an HTTP C(Range) request) and read, so a probe reads at most
    2 MiB a channel whatever the repodata's size. Of a C(.zst) file the zstd frame structure read is checked (frame
    header, block headers, and the end of the frame when the whole file was read, so a truncated file fails); of a
    JSON file, that it starts as a JSON object, and when it was read whole, that it parses as repodata for that subdir.
  - Any other answer fails the mirror, as it fails every solve in conda (an HTTP 500 on C(*.json.zst) included).
  - A mirror is healthy when every read succeeded; its latency is the time all its reads took.
  - Returns the mirrors ranked (healthy ones fastest first, then the failed ones with each failure explained)
    and the one to use with its healthy fallbacks in order. The mirror in use now (O(current)) is kept while it
    is healthy and at most O(switch_margin_ms) slower than the fastest, so timing noise does not flip the choice.
  - Credentials in URLs are redacted in everything returned, messages included, the mirror still named by the rest
    of its URL. A channel token (C(/t/<token>/)) becomes C(<token>), a password (C(user:password@host)) C(***).
    RV(chosen_index) and RV(fallback_indexes) lead back to the URLs as given.
author: aistack.gpu_node contributors (@aistack)
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
options:
  mirrors:
    description:
      - Candidate mirror roots, in order of preference for equal latency, for example C(https://conda.example.com).
    type: list
    elements: str
    required: true
  channels:
    description:
      - Channel names to fetch under each mirror.
    type: list
    elements: str
    default: [conda-forge]
  subdirs:
    description:
      - Platform subdirs to fetch for each channel.
    type: list
    elements: str
    default: [noarch, linux-64]
  current:
    description:
      - Mirror in use now (for example C(channel_alias) of the existing .condarc).
      - Mutually exclusive with O(current_condarc).
    type: str
  current_condarc:
    description:
      - A .condarc on the node whose top-level C(channel_alias) is the mirror in use now; a missing file, or one without
        that line, means none.
      - Mutually exclusive with O(current).
    type: path
  switch_margin_ms:
    description:
      - How much faster another mirror must be before the one in use is replaced.
    type: int
    default: 200
  timeout:
    description:
      - Seconds allowed for each fetch.
    type: int
    default: 10
  validate_certs:
    description:
      - Verify HTTPS certificates. The node's proxy environment variables are honoured.
    type: bool
    default: true
  ca_path:
    description:
      - CA bundle to verify the mirrors with, for a mirror behind an internal CA.
    type: path
attributes:
  platform:
    support: full
    platforms: posix
    description: Any POSIX node that can reach the mirrors; the fetches run there, through its proxy settings.
'''

EXAMPLES = r'''
- name: Rank the mirrors and pick one
  aistack.gpu_node.conda_mirror_probe:
    mirrors:
      - https://conda.mirror-a.example
      - https://conda.mirror-b.example
    channels: [conda-forge]
    # Kept while healthy and within switch_margin_ms of the fastest.
    current_condarc: /opt/conda/.condarc
  register: probe

- name: Show the choice
  ansible.builtin.debug:
    msg: "{{ probe.chosen }} then {{ probe.fallbacks }}"
'''

RETURN = r'''
ranked:
  description: Every mirror, healthy ones fastest first, then the failed ones in the given order.
  returned: always
  type: list
  elements: dict
  contains:
    url:
      description: Mirror root, token and password redacted.
      type: str
    healthy:
      description: Whether every file conda reads first answered and checked out.
      type: bool
    latency_ms:
      description: Time all the mirror's reads took, in milliseconds.
      type: int
    bytes_read:
      description: Bytes read from the mirror.
      type: int
    errors:
      description: One line per failed fetch, with the URL and why.
      type: list
      elements: str
  sample:
    - {url: 'http://127.0.0.1:8302', healthy: true, latency_ms: 14, bytes_read: 1048576, errors: []}
    - {url: 'http://127.0.0.1:8301', healthy: false, latency_ms: 3, bytes_read: 0,
       errors: ['http://127.0.0.1:8301/conda-forge/noarch/current_repodata.json.zst: [Errno 111] Connection refused']}
candidates:
  description: O(mirrors) in the order given, token and password redacted, to be shown or written in a comment.
  returned: always
  type: list
  elements: str
  sample: ['https://mirroruser:***@mirror.example.com/conda', 'https://conda.anaconda.org']
chosen:
  description: Mirror to use (the index of it in O(mirrors) is RV(chosen_index)); null when none is healthy.
  returned: always
  type: str
chosen_index:
  description: Position of RV(chosen) in O(mirrors), so the caller can take the unredacted URL; null when none is healthy.
  returned: always
  type: int
fallbacks:
  description: The other healthy mirrors, fastest first.
  returned: always
  type: list
  elements: str
fallback_indexes:
  description: Positions of RV(fallbacks) in O(mirrors).
  returned: always
  type: list
  elements: int
message:
  description: Why no mirror can be used, when none is healthy.
  returned: when no mirror is healthy
  type: str
'''

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import mirrors as cm
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import conda_mirrors


def main():
    module = AnsibleModule(
        argument_spec=conda_mirrors.ARGUMENT_SPEC,
        mutually_exclusive=[('current', 'current_condarc')],
        supports_check_mode=True,
    )
    try:
        outcome = conda_mirrors.probe_mirrors(module.params)
    except cm.MirrorError as error:
        module.fail_json(msg=to_native(error))
    module.exit_json(changed=False, **outcome)


if __name__ == '__main__':
    main()
