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
  - For each candidate mirror, fetches C(<mirror>/<channel>/<subdir>/repodata.json) for every channel and subdir
    from the managed node, times it, and checks that it parses as repodata for that subdir.
  - A mirror is healthy when every fetch succeeded; its latency is the time all its repodata took.
  - Returns the mirrors ranked (healthy ones fastest first, then the failed ones with each failure explained)
    and the one to use with its healthy fallbacks in order. The mirror in use now (O(current)) is kept while it
    is healthy and at most O(switch_margin_ms) slower than the fastest, so timing noise does not flip the choice.
  - Channel tokens in URLs (C(/t/<token>/)) are replaced by C(<token>) in everything returned.
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
    type: str
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
'''

EXAMPLES = r'''
- name: Rank the mirrors and pick one
  aistack.gpu_node.conda_mirror_probe:
    mirrors:
      - https://conda.mirror-a.example
      - https://conda.mirror-b.example
    channels: [conda-forge]
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
      description: Mirror root, token redacted.
      type: str
    healthy:
      description: Whether every repodata.json fetched and parsed.
      type: bool
    latency_ms:
      description: Time all the mirror's repodata took, in milliseconds.
      type: int
    packages:
      description: Packages listed in the fetched repodata.
      type: int
    errors:
      description: One line per failed fetch, with the URL and why.
      type: list
      elements: str
  sample:
    - {url: 'http://127.0.0.1:8302', healthy: true, latency_ms: 14, packages: 9, errors: []}
    - {url: 'http://127.0.0.1:8301', healthy: false, latency_ms: 3, packages: 0,
       errors: ['http://127.0.0.1:8301/conda-forge/noarch/repodata.json: <urlopen error [Errno 111] Connection refused>']}
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

import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible.module_utils.urls import open_url
from ansible_collections.aistack.gpu_node.plugins.module_utils import conda_mirrors as cm


def fetch(module, url, subdir):
    params = module.params
    started = time.monotonic()
    try:
        response = open_url(url, timeout=params['timeout'], validate_certs=params['validate_certs'],
                            ca_path=params['ca_path'], http_agent='aistack.gpu_node conda_mirror_probe')
        body = response.read()
        seconds = time.monotonic() - started
        return {'url': url, 'seconds': seconds, 'packages': cm.check_repodata(body, subdir)}
    except cm.MirrorError as error:
        return {'url': url, 'seconds': time.monotonic() - started, 'error': to_native(error)}
    except Exception as error:  # pylint: disable=broad-except  # every network failure is a verdict on the mirror
        return {'url': url, 'seconds': time.monotonic() - started, 'error': to_native(error)}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            mirrors=dict(type='list', elements='str', required=True),
            channels=dict(type='list', elements='str', default=['conda-forge']),
            subdirs=dict(type='list', elements='str', default=['noarch', 'linux-64']),
            current=dict(type='str'),
            switch_margin_ms=dict(type='int', default=200),
            timeout=dict(type='int', default=10),
            validate_certs=dict(type='bool', default=True),
            ca_path=dict(type='path'),
        ),
        supports_check_mode=True,
    )
    params = module.params
    try:
        mirrors = [cm.validate_url(url, 'mirrors[%d]' % i) for i, url in enumerate(params['mirrors'])]
        channels = [cm.validate_channel(c, 'channels') for c in params['channels']]
        if not mirrors or not channels or not params['subdirs']:
            raise cm.MirrorError('mirrors, channels and subdirs must each name at least one entry')
    except cm.MirrorError as error:
        module.fail_json(msg=to_native(error))

    results = []
    for mirror in mirrors:
        fetches = [fetch(module, cm.repodata_url(mirror, channel, subdir), subdir)
                   for channel in channels for subdir in params['subdirs']]
        results.append(cm.summarize(mirror, fetches))
    ranked = cm.rank(results)
    redacted = [cm.redact(url) for url in mirrors]
    outcome = dict(changed=False, ranked=ranked, chosen=None, chosen_index=None, fallbacks=[], fallback_indexes=[])
    try:
        chosen, fallbacks = cm.choose(ranked, params['current'], params['switch_margin_ms'])
        outcome.update(chosen=chosen, chosen_index=redacted.index(chosen), fallbacks=fallbacks,
                       fallback_indexes=[redacted.index(url) for url in fallbacks])
    except cm.MirrorError as error:
        outcome['message'] = to_native(error)
    module.exit_json(**outcome)


if __name__ == '__main__':
    main()
