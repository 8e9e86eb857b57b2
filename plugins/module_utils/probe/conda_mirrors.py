# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Probing conda channel mirrors from the node, the way conda reads them (conda_mirror_probe, and
mirrors_condarc_probe in the same round-trip as its reads); the rules are in module_utils/conda/mirrors.py."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import time
from http.client import HTTPException
from urllib.error import HTTPError

from ansible.module_utils.common.text.converters import to_native
from ansible.module_utils.urls import ConnectionError as UrlConnectionError, open_url
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import mirrors as cm

# The probe's settings, as both modules take them.
ARGUMENT_SPEC = dict(
    mirrors=dict(type='list', elements='str', required=True),
    channels=dict(type='list', elements='str', default=['conda-forge']),
    subdirs=dict(type='list', elements='str', default=['noarch', 'linux-64']),
    current=dict(type='str'),
    current_condarc=dict(type='path'),
    switch_margin_ms=dict(type='int', default=200),
    timeout=dict(type='int', default=10),
    validate_certs=dict(type='bool', default=True),
    ca_path=dict(type='path'),
)

# The clock each read is timed with. The unit tests put a fake clock here that their mirrors advance,
# so that the ranking they check does not depend on how busy the machine running them is.
clock = time.monotonic


def read_start(settings, url):
    """``(status, first bytes, whether that is the whole file)`` of ``url``: a ranged request for
    cm.PROBE_BYTES, and never more read whatever the server sends."""
    try:
        response = open_url(url, timeout=settings['timeout'], validate_certs=settings['validate_certs'],
                            ca_path=settings['ca_path'], http_agent='aistack.gpu_node conda_mirror_probe',
                            headers={'Range': 'bytes=0-%d' % (cm.PROBE_BYTES - 1)})
    except HTTPError as error:
        return error.code, b'', True
    try:
        body = response.read(cm.PROBE_BYTES + 1)
        total = (response.headers.get('Content-Range') or '').rpartition('/')[2]
    finally:
        response.close()
    complete = len(body) <= cm.PROBE_BYTES and (not total.isdigit() or len(body) >= int(total))
    return response.getcode(), body[:cm.PROBE_BYTES], complete


def probe_file(settings, mirror, channel, subdir, name):
    """One file conda reads, the way it reads it (``<name>.zst``, then ``<name>`` after a 4xx):
    ``{url, seconds, bytes, error (optional)}``."""
    started = clock()
    url = cm.repodata_url(mirror, channel, subdir, name + '.zst')
    read = 0
    # Every way a fetch can fail is a verdict on the mirror: URLError and socket errors are OSError,
    # a body cut short is an HTTPException, a malformed URL a ValueError, TLS and proxy failures
    # ansible's own ConnectionError.
    try:
        status, body, complete = read_start(settings, url)
        read += len(body)
        if cm.falls_back(status):
            url = cm.repodata_url(mirror, channel, subdir, name)
            status, body, complete = read_start(settings, url)
            read += len(body)
            if status == 404 and name in cm.OPTIONAL_NAMES:
                return {'url': url, 'seconds': clock() - started, 'bytes': read}
        if status not in (200, 206):
            raise cm.MirrorError('HTTP %s (conda fails every solve on it)' % status)
        if url.endswith('.zst'):
            cm.check_zstd_prefix(body, complete)
        else:
            cm.check_json_prefix(body, complete, subdir)
        return {'url': url, 'seconds': clock() - started, 'bytes': read}
    except (cm.MirrorError, OSError, HTTPException, ValueError, UrlConnectionError) as error:
        return {'url': url, 'seconds': clock() - started, 'bytes': read, 'error': to_native(error)}


def current_mirror(settings):
    """The mirror in use now: ``current``, else the channel_alias of ``current_condarc``."""
    if settings['current'] or not settings['current_condarc']:
        return settings['current']
    try:
        with open(settings['current_condarc']) as handle:
            return cm.condarc_channel_alias(handle.read())
    except (IOError, OSError):
        return None


def probe_mirrors(settings):
    """Every mirror of ``settings`` (ARGUMENT_SPEC's keys) probed, ranked, and the one to use chosen:
    ``{ranked, candidates, chosen, chosen_index, fallbacks, fallback_indexes}``, with ``message`` when
    none is healthy. Raises cm.MirrorError on a malformed mirror or channel."""
    mirrors = [cm.validate_url(url, 'mirrors[%d]' % i) for i, url in enumerate(settings['mirrors'])]
    channels = [cm.validate_channel(c, 'channels') for c in settings['channels']]
    if not mirrors or not channels or not settings['subdirs']:
        raise cm.MirrorError('mirrors, channels and subdirs must each name at least one entry')
    results = []
    for mirror in mirrors:
        fetches = [probe_file(settings, mirror, channel, subdir, name)
                   for channel in channels for subdir in settings['subdirs'] for name in cm.REPODATA_NAMES]
        results.append(cm.summarize(mirror, fetches))
    ranked = cm.rank(results)
    redacted = [cm.redact(url) for url in mirrors]
    outcome = dict(ranked=ranked, candidates=redacted, chosen=None, chosen_index=None, fallbacks=[], fallback_indexes=[])
    try:
        chosen, fallbacks = cm.choose(ranked, current_mirror(settings), settings['switch_margin_ms'])
        outcome.update(chosen=chosen, chosen_index=redacted.index(chosen), fallbacks=fallbacks,
                       fallback_indexes=[redacted.index(url) for url in fallbacks])
    except cm.MirrorError as error:
        outcome['message'] = to_native(error)
    return outcome
