# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of conda channel mirrors: what a healthy mirror serves, how probed mirrors rank,
which one a node should use, the .condarc that points conda at it, the policy that .condarc must
follow, and what ``conda config --show-sources`` says was loaded. Nothing here fetches or writes."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import re

# Anaconda.org-style tokens ride in the path: https://host/t/<token>/channel
_TOKEN = re.compile(r'/t/[^/]+')
# Basic credentials in a URL (proxies, private mirrors): scheme://user:password@host
_USERINFO = re.compile(r'(://[^/@\s"\']+:)[^/@\s"\']*@')
_SOURCE_HEADER = re.compile(r'^==> (.+) <==$')
_CHANNEL_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._/-]*$')
SCHEMES = ('http://', 'https://', 'file://')
DEFAULTS = 'defaults'
CONDA_FORGE = 'conda-forge'
DISTRIBUTIONS = ('miniconda', 'miniforge')


class MirrorError(Exception):
    """Bad input, an unhealthy mirror or a policy violation; the message names what decides it."""


def redact(url):
    """``url`` with any channel token replaced, safe to log."""
    return _TOKEN.sub('/t/<token>', url)


def validate_url(url, what):
    """A mirror base URL without its trailing slash; raises MirrorError naming ``what``."""
    if not isinstance(url, str) or not url.startswith(SCHEMES) or len(url.rstrip('/')) <= len('file://'):
        raise MirrorError('%s: %r is not a mirror URL; use http://, https:// or file:// followed by the mirror root'
                          % (what, redact(str(url))))
    return url.rstrip('/')


def validate_channel(name, what):
    if not isinstance(name, str) or not (_CHANNEL_NAME.match(name) or name.startswith(SCHEMES)):
        raise MirrorError('%s: %r is not a channel name or URL' % (what, name))
    return name


def repodata_url(mirror, channel, subdir):
    return '%s/%s/%s/repodata.json' % (mirror, channel.strip('/'), subdir)


def check_repodata(body, subdir):
    """Number of packages in a repodata.json body; MirrorError when it is not usable repodata."""
    try:
        data = json.loads(body.decode('utf-8') if isinstance(body, bytes) else body)
    except (ValueError, UnicodeDecodeError) as error:
        raise MirrorError('repodata.json does not parse (%s): truncated or corrupt' % error)
    if not isinstance(data, dict) or not any(isinstance(data.get(k), dict) for k in ('packages', 'packages.conda')):
        raise MirrorError('repodata.json has no packages / packages.conda mapping')
    info_subdir = (data.get('info') or {}).get('subdir')
    if info_subdir and info_subdir != subdir:
        raise MirrorError('repodata.json is for subdir %s, not %s' % (info_subdir, subdir))
    return len(data.get('packages') or {}) + len(data.get('packages.conda') or {})


def summarize(mirror, fetches):
    """One mirror's verdict from its fetches, each ``{url, seconds, error or packages}``. Its latency
    is the time all its repodata took, the wait conda itself would have."""
    errors = ['%s: %s' % (redact(f['url']), f['error']) for f in fetches if f.get('error')]
    return {
        'url': redact(mirror),
        'healthy': not errors,
        'latency_ms': int(round(sum(f['seconds'] for f in fetches) * 1000)),
        'packages': sum(f.get('packages', 0) for f in fetches),
        'errors': errors,
    }


def rank(results):
    """Healthy mirrors fastest first (ties keep the given order), then the unhealthy ones as given."""
    order = dict((id(r), i) for i, r in enumerate(results))
    healthy = sorted((r for r in results if r['healthy']), key=lambda r: (r['latency_ms'], order[id(r)]))
    return healthy + [r for r in results if not r['healthy']]


def choose(ranked, current=None, margin_ms=0):
    """The mirror to use and the healthy fallbacks after it, in order. The mirror in use now is kept
    while healthy and no more than ``margin_ms`` slower than the best, so that timing noise does not
    rewrite .condarc on every run."""
    healthy = [r for r in ranked if r['healthy']]
    if not healthy:
        raise MirrorError('no healthy mirror: %s' % '; '.join(
            '%s (%s)' % (r['url'], ', '.join(r['errors'])) for r in ranked) or 'no mirrors given')
    chosen = healthy[0]
    if current:
        kept = [r for r in healthy if r['url'] == redact(current.rstrip('/'))]
        if kept and kept[0]['latency_ms'] <= chosen['latency_ms'] + margin_ms:
            chosen = kept[0]
    return chosen['url'], [r['url'] for r in healthy if r is not chosen]


def build_condarc(primary, channels, distribution, default_channels=None, custom_channels=None, solver=None,
                  pkgs_dirs=None, envs_dirs=None, proxy_servers=None, ssl_verify=None, settings=None):
    """The .condarc mapping that points conda at ``primary``; ``channels`` are names resolved through
    ``channel_alias`` (or ``custom_channels``), ``default_channels`` paths on the mirror used for
    ``defaults`` (Miniconda only). Raises MirrorError on bad input or a policy violation."""
    primary = validate_url(primary, 'primary mirror')
    if distribution not in DISTRIBUTIONS:
        raise MirrorError('distribution must be one of %s, got %r' % (', '.join(DISTRIBUTIONS), distribution))
    if not isinstance(channels, list) or not channels:
        raise MirrorError('channels must be a non-empty list of channel names')
    channels = [validate_channel(c, 'channels') for c in channels]
    custom = dict((validate_channel(k, 'custom_channels'), validate_url(v, 'custom_channels.%s' % k))
                  for k, v in (custom_channels or {}).items())
    condarc = {'channels': channels, 'channel_alias': primary, 'channel_priority': 'strict'}
    if DEFAULTS in channels:
        paths = default_channels or ['pkgs/main', 'pkgs/r']
        condarc['default_channels'] = ['%s/%s' % (primary, validate_channel(p, 'default_channels').strip('/'))
                                       for p in paths]
    if custom:
        condarc['custom_channels'] = custom
    optional = (('solver', solver), ('pkgs_dirs', pkgs_dirs), ('envs_dirs', envs_dirs),
                ('proxy_servers', proxy_servers), ('ssl_verify', ssl_verify))
    condarc.update((key, value) for key, value in optional if value not in (None, [], {}))
    for key, value in (settings or {}).items():
        if key in condarc:
            raise MirrorError('settings.%s is decided by the role; set it through its own variable' % key)
        condarc[key] = value
    problems = policy_problems(condarc, distribution)
    if problems:
        raise MirrorError('; '.join(problems))
    return condarc


def _channel_base(condarc, channel):
    """The mirror root conda would fetch ``channel`` from."""
    if channel.startswith(SCHEMES):
        return channel.rsplit('/', 1)[0]
    return (condarc.get('custom_channels') or {}).get(channel, condarc.get('channel_alias'))


def policy_problems(condarc, distribution):
    """What a .condarc mapping (all of it, or one loaded source) breaks of the collection's channel policy."""
    problems = []
    channels = condarc.get('channels') or []
    if condarc.get('channel_priority', 'strict') != 'strict':
        problems.append('channel_priority must be strict (mixing channels per package breaks ABI compatibility)')
    if distribution == 'miniforge' and (DEFAULTS in channels or condarc.get('default_channels')):
        problems.append('Miniforge takes no "defaults" channel (Anaconda terms and ABI mixing): remove defaults '
                        'from channels and default_channels')
    if DEFAULTS in channels and CONDA_FORGE in channels:
        forge = _channel_base(condarc, CONDA_FORGE)
        for url in condarc.get('default_channels') or []:
            if forge and url.startswith(forge + '/'):
                problems.append('defaults (%s) and conda-forge are served from the same mirror %s: never mix them '
                                'from one mirror' % (redact(url), redact(forge)))
                break
    return problems


def has_credentials(value):
    """Does ``value`` (a URL, or any structure of them: a .condarc, the role's inputs) hold a channel
    token or a password in a URL?"""
    text = json.dumps(value, default=str)
    return bool(_TOKEN.search(text) or _USERINFO.search(text))


def parse_show_sources(text):
    """``conda config --show-sources`` -> ``[(source, body text)]`` in conda's precedence order
    (lowest first). Sources are file paths, or ``envvars`` / ``cmd_line``."""
    sources, current, body = [], None, []
    for line in (text or '').splitlines():
        header = _SOURCE_HEADER.match(line.strip())
        if header:
            if current is not None:
                sources.append((current, '\n'.join(body).strip() + '\n'))
            current, body = header.group(1), []
        elif current is not None:
            body.append(line)
    if current is not None:
        sources.append((current, '\n'.join(body).strip() + '\n'))
    return sources
