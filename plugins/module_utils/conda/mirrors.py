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
# Basic credentials in a URL (proxies, private mirrors): scheme://user:password@host. The password
# runs to the last "@" before the host, and conda also prints the URL as "https//user:password@host".
_USERINFO = re.compile(r'(//[^/@\s:"\'<>]*:)[^/\s"\'<>]*@')
_SOURCE_HEADER = re.compile(r'^==> (.+) <==$')
_CHANNEL_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._/-]*$')
SCHEMES = ('http://', 'https://', 'file://')
DEFAULTS = 'defaults'
CONDA_FORGE = 'conda-forge'
DISTRIBUTIONS = ('miniconda', 'miniforge')


class MirrorError(Exception):
    """Bad input, an unhealthy mirror or a policy violation; the message names what decides it."""


def redact(text):
    """``text`` (a URL, or any message that holds URLs: conda's, urllib's) safe to show and to write:
    a channel token becomes ``<token>`` and a password in a URL ``***``, the rest stays, so that the
    mirror is still named (``https://user:***@mirror.example/conda-forge``)."""
    return _USERINFO.sub(r'\1***@', _TOKEN.sub('/t/<token>', text))


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


# What conda 26 reads of a channel subdir, in this order (its repodata_fns): each name as <name>.zst
# first; a 4xx answer other than 416 makes it fall back to <name>, any other failure fails every solve.
# current_repodata.json may be missing altogether: conda then goes on to repodata.json.
REPODATA_NAMES = ('current_repodata.json', 'repodata.json')
OPTIONAL_NAMES = ('current_repodata.json',)
# Bytes read of each file: the start of what conda reads, whatever the repodata's size (conda-forge's
# linux-64 is 149 MB uncompressed); four files a channel stay under 2 MB.
PROBE_BYTES = 512 * 1024
ZSTD_MAGIC = b'\x28\xb5\x2f\xfd'
_ZSTD_MAX_BLOCK = 128 * 1024


def repodata_url(mirror, channel, subdir, name='repodata.json'):
    return '%s/%s/%s/%s' % (mirror, channel.strip('/'), subdir, name)


def falls_back(status):
    """Whether conda, given this HTTP status for ``<name>.zst``, fetches ``<name>`` instead."""
    return 400 <= status < 500 and status != 416


def _zstd_frame(data, offset):
    """(offset after the frame, or None when ``data`` ends inside it) of the zstd frame at ``offset``;
    raises MirrorError where the bytes are not a zstd frame (RFC 8878: header, then 3-byte block
    headers of type raw, RLE or compressed, at most 128 KiB each, then the optional checksum)."""
    if data[offset:offset + 4] != ZSTD_MAGIC[:len(data) - offset]:
        raise MirrorError('not zstd data (no zstd frame at byte %d)' % offset)
    if len(data) - offset < 6:
        return None
    descriptor = ord(data[offset + 4:offset + 5])
    if descriptor & 0x08:
        raise MirrorError('zstd frame header with its reserved bit set: corrupt')
    single_segment = descriptor & 0x20
    fcs_size = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
    position = offset + 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 0x03] + fcs_size
    while position + 3 <= len(data):
        header = ord(data[position:position + 1]) | ord(data[position + 1:position + 2]) << 8 | \
            ord(data[position + 2:position + 3]) << 16
        block_type, size = (header >> 1) & 0x03, header >> 3
        if block_type == 3 or size > _ZSTD_MAX_BLOCK:
            raise MirrorError('zstd block at byte %d is invalid (type %d, %d bytes): corrupt' % (position, block_type, size))
        position += 3 + (1 if block_type == 1 else size)
        if header & 0x01:
            position += 4 if descriptor & 0x04 else 0
            return position if position <= len(data) else None
    return None


def check_zstd_prefix(data, complete):
    """Checks the frames in ``data``, the first bytes of a ``.zst`` file (all of it when ``complete``);
    the bytes read are checked, nothing more is downloaded. A file that ends inside a frame is
    truncated. Raises MirrorError; returns the number of bytes checked."""
    offset = 0
    while offset < len(data):
        end = _zstd_frame(data, offset)
        if end is None:
            if complete:
                raise MirrorError('zstd data ends inside a frame after %d bytes: truncated' % len(data))
            return len(data)
        offset = end
    if not data:
        raise MirrorError('empty file')
    return len(data)


def check_json_prefix(data, complete, subdir):
    """Checks ``data``, the first bytes of a repodata JSON file (all of it when ``complete``, which is
    then parsed as repodata for ``subdir``). Raises MirrorError."""
    if complete:
        return check_repodata(data, subdir)
    text = data.lstrip()
    if not text.startswith(b'{'):
        raise MirrorError('does not start as a JSON object: corrupt')
    try:
        text[:-3].decode('utf-8')  # the last character may be cut by the read
    except UnicodeDecodeError as error:
        raise MirrorError('is not UTF-8 JSON (%s): corrupt' % error)
    return None


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
    """One mirror's verdict from its fetches, each ``{url, seconds, bytes, error (optional)}``. Its
    latency is the time all its reads took: the first bytes of each file, as conda asks for them."""
    errors = [redact('%s: %s' % (f['url'], f['error'])) for f in fetches if f.get('error')]
    return {
        'url': redact(mirror),
        'healthy': not errors,
        'latency_ms': int(round(sum(f['seconds'] for f in fetches) * 1000)),
        'bytes_read': sum(f.get('bytes', 0) for f in fetches),
        'errors': errors,
    }


def rank(results):
    """Healthy mirrors fastest first (ties keep the given order), then the unhealthy ones as given."""
    order = dict((id(r), i) for i, r in enumerate(results))
    healthy = sorted((r for r in results if r['healthy']), key=lambda r: (r['latency_ms'], order[id(r)]))
    return healthy + [r for r in results if not r['healthy']]


# A top-level channel_alias line: a plain, single- or double-quoted scalar, an optional comment after it.
_CHANNEL_ALIAS_LINE = re.compile(r"""^channel_alias:[ \t]*(?:'([^']*)'|"([^"]*)"|([^\s'"#][^#]*?))[ \t]*(?:#.*)?$""", re.M)


def condarc_channel_alias(text):
    """The top-level ``channel_alias`` of a .condarc's text, None without one. Read line by line (the
    node may have no YAML parser): a value written across lines is not read, and reads as none."""
    match = _CHANNEL_ALIAS_LINE.search(text or '')
    if not match:
        return None
    return [group for group in match.groups() if group is not None][0].strip() or None


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


# Where conda puts a user's package cache and environments when the base is not writable for that user.
USER_PKGS_DIR = '~/.conda/pkgs'
USER_ENVS_DIR = '~/.conda/envs'


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
    # The base is root's alone (the miniconda role): a configured list ends on each user's own folder
    # (conda expands ~ per user), so that a user who cannot write the others still has a cache and envs.
    pkgs_dirs, envs_dirs = [list(dict.fromkeys(list(folders) + [own])) if folders else folders
                            for folders, own in ((pkgs_dirs, USER_PKGS_DIR), (envs_dirs, USER_ENVS_DIR))]
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


def condarcs_for(mirrors, channels, distribution, **options):
    """The .condarc of each candidate mirror (build_condarc), in the order given; the policy does not
    depend on the mirror, so an error is the same for each. Raises MirrorError."""
    return [build_condarc(mirror, list(channels or []), distribution, **options) for mirror in mirrors]


# The settings that decide where conda fetches packages from, and in what order.
CHANNEL_KEYS = ('channels', 'channel_alias', 'default_channels', 'custom_channels', 'custom_multichannels',
                'channel_priority')


def loaded_config_sound(sources, system_file, condarc, distribution):
    """``(sound, problems)`` of what conda loads (``sources``: ``[{source, settings}]``, parsed
    ``conda config --show-sources``): sound when ``system_file`` is loaded with ``condarc``'s mirror
    and channels and no source breaks the channel policy; ``problems`` names those that do."""
    problems = ['a loaded source: %s' % problem for source in sources for problem in policy_problems(source['settings'], distribution)]
    # conda merges every source (lists joined, later scalars winning): any other file, or a CONDA_*
    # variable, that sets a channel key otherwise than the role sends conda elsewhere, unseen.
    for source in sources:
        if source['source'] == system_file:
            continue
        other = [key for key in CHANNEL_KEYS if key in source['settings'] and source['settings'][key] != condarc.get(key)]
        if other:
            problems.append('%s sets %s otherwise than %s, and conda merges it in: remove it there, or set it through '
                            'the role' % (source['source'], ', '.join(other), system_file))
    system = next((source['settings'] for source in sources if source['source'] == system_file), None)
    sound = (system is not None and system.get('channel_alias', '') == condarc.get('channel_alias')
             and system.get('channels', []) == condarc.get('channels') and not problems)
    return sound, problems


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


# conda create --help: "--solver {classic,libmamba}" (argparse prints a choice option's choices in braces).
_SOLVER_CHOICES = re.compile(r'--solver \{([^}]*)\}')


def create_help_solvers(text):
    """The solvers a conda has: the choices its ``create --help`` gives ``--solver`` (conda fails every solve
    when .condarc names another); empty when the help names none."""
    match = _SOLVER_CHOICES.search(text or '')
    return [name.strip() for name in match.group(1).split(',') if name.strip()] if match else []
