# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of a declared conda environment: the environment.yml it is declared by, what the
real conda CLI (26.x) prints about it, and the decisions taken from both. Nothing here runs
conda or writes; the conda_env module does.

Behaviours of real conda this relies on (recorded in tests/unit/fixtures/shared/fixtures/conda-26.7):
``--json`` transactions list ``actions.LINK/UNLINK``, or say "All requested packages already
installed."; failures print one JSON object with ``exception_name``; pip packages show in
``conda list --json`` with channel ``pypi``; ``nodefaults`` is taken as a channel name and fails.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import hashlib
import json
import os
import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.conda.blas import blas_problems
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda.mirrors import _USERINFO, redact
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda.spec import MATCHSPEC_NAME as _MATCHSPEC_NAME
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda.spec import CondaEnvError, matchspec_name
from ansible_collections.aistack.gpu_node.plugins.module_utils.cuda.checks import (
    best_wheel_for_node,
    gpus_label,
    torch_cuda_arch_list,
    torch_series,
    torch_series_known,
    torch_series_variants,
    torch_variant_for_node,
    torch_variant_support,
    wheel_kernel_gaps,
)
from ansible_collections.aistack.gpu_node.plugins.module_utils.versions import version_tuple

NODEFAULTS = 'nodefaults'
PIP_CHANNEL = 'pypi'
ENVIRONMENT_KEYS = ('name', 'channels', 'dependencies', 'variables')
# The last torch the pytorch conda channel published (pytorch/pytorch#138506).
PYTORCH_CHANNEL_LAST = '2.5.1'
PYTORCH_WHEEL_INDEX = 'https://download.pytorch.org/whl/'

# A conda MatchSpec's name: after an optional "channel::" and before the version or brackets.
_MATCHSPEC_BOUND = re.compile(r'(==|>=|>|=|~=)\s*([0-9][0-9.]*)')
_PIP_NAME = re.compile(r'^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$')
_PIP_PIN = re.compile(r'^==\s*([^\s,;]+)\s*(;.*)?$')
# A folder name: at most 100 characters (a filesystem takes 255, and the env's lock files add to it).
_ENV_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$')
# PyTorch's own projects, whose wheels come in one build per CUDA variant.
TORCH_PROJECTS = ('torch', 'torchvision', 'torchaudio')
TORCH_VARIANT_CHOICES = ('auto', 'none')
_INDEX_OPTION = re.compile(r'^(--index-url|--extra-index-url|-i)(?:\s+|=)(\S+)\s*$')
_WHEEL_VARIANT = re.compile(r'^(cu\d{3}|cpu)$')


# ---------------------------------------------------------------------------
# environment.yml
# ---------------------------------------------------------------------------

def validate_env_name(name):
    if not isinstance(name, str) or not _ENV_NAME.match(name) or name == 'base':
        shown = name if len(str(name)) <= 100 else str(name)[:40] + '...'
        raise CondaEnvError('name %r is not a usable environment name: up to 100 letters, digits, ".", "_" and "-", '
                            'not "base" (the base prefix belongs to the miniconda role)' % (shown,))


def normalize_pip_name(name):
    """PEP 503 normalised project name, the form pip and ``conda list`` names are compared in."""
    return re.sub(r'[-_.]+', '-', name).lower()


def pip_requirement(line):
    """``(name, pinned version or None)`` of a pip requirement line, or None for lines that name no
    project (options such as ``--index-url``, URLs, paths, ``-r`` files)."""
    line = line.strip()
    if not line or line.startswith(('-', '#', '.', '/')) or '://' in line or ' @ ' in line:
        return None
    match = _PIP_NAME.match(line)
    if not match:
        return None
    pin = _PIP_PIN.match(match.group(3).strip())
    return normalize_pip_name(match.group(1)), pin.group(1) if pin else None


def _torch_lint(conda_specs, channels, driver_version, gpus):
    """Refuse the dead PyTorch conda channel for a torch it never published; return warnings."""
    names = dict((matchspec_name(spec), spec) for spec in conda_specs)
    uses_channel = 'pytorch-cuda' in names or 'pytorch' in channels or any(s.startswith('pytorch::') for s in conda_specs)
    if not uses_channel:
        return []
    torch_spec = names.get('pytorch') or names.get('torch') or ''
    bounds = [version_tuple(version) for operator, version in _MATCHSPEC_BOUND.findall(torch_spec)]
    if bounds and max(bounds) > version_tuple(PYTORCH_CHANNEL_LAST):
        variant = best_wheel_for_node(driver_version, gpus) if driver_version else None
        index = PYTORCH_WHEEL_INDEX + (variant[1] if variant else 'cuXXX')
        raise CondaEnvError(
            'environment asks for %r through pytorch-cuda or the pytorch channel, which stopped at torch %s '
            '(pytorch/pytorch#138506). Fix: drop pytorch-cuda and the pytorch channel, then either install torch '
            'with pip from %s in the pip: section%s, or use conda-forge "pytorch" with "cuda-version"'
            % (torch_spec, PYTORCH_CHANNEL_LAST, index,
               ' (the CUDA variant that driver %s runs)' % driver_version if variant else ''))
    return ['pytorch-cuda / the pytorch channel give at most torch %s; newer torch comes from pip wheels or '
            'conda-forge "pytorch" with "cuda-version"' % PYTORCH_CHANNEL_LAST]


def _torch_pin(pip_lines):
    """Version ``torch==`` pins in a pip section (its local label, ``+cu130``, kept), or None."""
    for line in pip_lines:
        requirement = pip_requirement(line)
        if requirement and requirement[0] == 'torch':
            return requirement[1]
    return None


def _what_would_fit(series, driver_version, gpus, index_base):
    """The fix that names what fits ``driver_version`` and ``gpus``: another variant of torch
    ``series``, else the newest torch series with a variant that fits, else a build of one's own."""
    fits = 'driver %s%s' % (driver_version, ' and every GPU' if gpus else '')
    fit = torch_variant_for_node(series, driver_version, gpus) if series else None
    if fit and fit['variant']:
        return 'use %s, which fits %s (torch_cuda_variant: auto, or the index %s%s)' % (fit['variant'], fits, index_base, fit['variant'])
    best = best_wheel_for_node(driver_version, gpus)
    if best:
        return ('pin torch==%s.* in the pip section and leave torch_cuda_variant auto: torch %s %s fits %s'
                % (best[0], best[0], best[1], fits))
    return ('no torch in the wheel table (%s to %s) has a wheel that fits %s; upgrade the driver%s'
            % (torch_series_known()[0], torch_series_known()[-1], fits, ', or build torch with TORCH_CUDA_ARCH_LIST="%s" and '
               'set torch_cuda_variant none' % torch_cuda_arch_list(gpus) if gpus else ''))


def _series_installed(series, variant):
    """The torch series pip installs from ``variant``'s index: the pinned ``series``, else the newest
    that publishes the variant (None when none does)."""
    publishing = [known for known in torch_series_known() if variant in torch_series_variants(known)]
    return series or (publishing[-1] if publishing else None)


def _kernel_warnings(source, series, variant, unconfirmed):
    if not unconfirmed:
        return []
    return ['%s: torch %s %s wheels are not confirmed to carry kernels for %s (an unconfirmed wheel table entry, PTX '
            'or compute capability)' % (source, series, variant, gpus_label(unconfirmed))]


def choose_torch_index(pip_lines, source, driver_version=None, requested='auto', index_base=PYTORCH_WHEEL_INDEX,
                       gpu_present=None, gpus=None):
    """Fit the PyTorch wheel variant of a pip section to the node's driver and GPUs.

    Returns ``(pip_lines, choice, warnings)``. ``choice`` is None when the section installs no
    PyTorch project or ``requested`` is "none"; else ``{variant, series, support, chosen_by, index}``.
    A section that names its own download.pytorch.org variant, or a pin with a local label
    (``torch==2.11.0+cu128``), keeps it, checked against the driver and GPUs. Otherwise ("auto", or
    a variant such as "cu126" / "cpu") an ``--extra-index-url`` line for the variant goes first:
    its builds carry a local label, which pip ranks above PyPI's build of the same version.
    ``gpus`` (``aistack_gpu.gpus``) narrow the choice to wheels with kernels (SASS, or PTX the
    driver JIT-compiles) for every GPU's compute capability; without them the driver alone decides.
    A variant the driver or a GPU cannot run is refused before anything changes, naming what fits.
    ``gpu_present`` False (the node has no NVIDIA GPU) makes "auto" the CPU build: a CUDA build
    would only carry gigabytes of CUDA libraries that nothing on the node can use.
    """
    if not known_variant(requested):
        raise CondaEnvError('torch_cuda_variant %r: expected auto, none, cpu or a CUDA variant such as cu128' % (requested,))
    names = [r[0] for r in (pip_requirement(line) for line in pip_lines) if r]
    if requested == 'none' or not any(name in TORCH_PROJECTS for name in names):
        return list(pip_lines), None, []
    pin = _torch_pin(pip_lines)
    series = torch_series(pin)
    given = [match.group(2) for match in (_INDEX_OPTION.match(line) for line in pip_lines) if match]
    given_variants = [url.rstrip('/').rsplit('/', 1)[-1] for url in given if '/whl/' in url]
    label = pin.partition('+')[2] if pin and '+' in pin else None
    fixed = label or (given_variants[0] if given_variants else None)
    warnings = []
    if fixed or requested != 'auto':
        variant, chosen_by = (fixed, 'spec') if fixed else (requested, 'torch_cuda_variant')
        if not _WHEEL_VARIANT.match(variant):
            return list(pip_lines), {'variant': variant, 'series': series, 'support': None, 'chosen_by': chosen_by,
                                     'index': None}, ['%s: torch variant %s is not checked against the driver' % (source, variant)]
        published = torch_series_variants(series) if series else None
        if published and variant != 'cpu' and variant not in published:
            raise CondaEnvError('%s: torch %s has no %s wheels; its CUDA variants are %s'
                                % (source, series, variant, ', '.join(published)))
        support = 'cpu' if variant == 'cpu' else torch_variant_support(variant, driver_version) if driver_version else None
        if variant != 'cpu' and driver_version and support is None:
            raise CondaEnvError(
                '%s: torch %s wheels (%s) need a newer driver than this node\'s %s. Fix: %s, or upgrade the driver'
                % (source, variant, 'torch ' + pin if pin else 'torch', driver_version,
                   _what_would_fit(series, driver_version, gpus, index_base)))
        checked = _series_installed(series, variant)
        if checked and variant != 'cpu':
            missing, unconfirmed = wheel_kernel_gaps(checked, variant, gpus, driver_version)
            if missing:
                raise CondaEnvError(
                    '%s: torch %s %s wheels (%s) carry no kernels for %s; %s asks for %s. Fix: %s'
                    % (source, checked, variant, 'torch ' + pin if pin else 'torch, not pinned', gpus_label(missing),
                       'the spec (its torch pin or index URL)' if fixed else
                       "torch_cuda_variant (conda_env_torch_cuda_variant, or this env's torch_cuda_variant)", variant,
                       _what_would_fit(checked, driver_version, gpus, index_base)))
            warnings += _kernel_warnings(source, checked, variant, unconfirmed)
        if support == 'minor-compat':
            warnings.append('%s: the driver %s runs torch %s only by CUDA minor-version compatibility (no PTX JIT '
                            'of newer code)' % (source, driver_version, variant))
        lines = list(pip_lines) if fixed else ['--extra-index-url %s%s' % (index_base, variant)] + list(pip_lines)
        return lines, {'variant': variant, 'series': series, 'support': support, 'chosen_by': chosen_by,
                       'index': None if fixed else index_base + variant}, warnings
    if gpu_present is False:
        choice = {'variant': 'cpu', 'series': series, 'support': 'cpu', 'chosen_by': 'no NVIDIA GPU on the node',
                  'index': index_base + 'cpu'}
        return ['--extra-index-url %s' % choice['index']] + list(pip_lines), choice, warnings
    if not driver_version:
        return list(pip_lines), None, ['%s: the torch CUDA variant is not chosen, the driver version is unknown '
                                       '(gather aistack.gpu_node.gpu_facts or set the driver version)' % source]
    assumed = series is None
    if assumed:
        series = torch_series_known()[-1]
        warnings.append('%s: torch is not pinned (torch==X.Y.Z); the variant is chosen for torch %s' % (source, series))
    fit = torch_variant_for_node(series, driver_version, gpus)
    if fit is None:
        raise CondaEnvError('%s: torch %s is not in the wheel table (torch %s to %s); pin one of those, or name the '
                            'variant with torch_cuda_variant' % (source, series, torch_series_known()[0], torch_series_known()[-1]))
    if fit['variant'] is None and fit['without_kernels']:
        lacking = [gpu for gpu in gpus if any(gpu in missing for _variant, missing in fit['without_kernels'])]
        raise CondaEnvError('%s: torch %s%s has no wheel that driver %s runs with kernels for %s (%s checked). Fix: %s'
                            % (source, series, ' (assumed: torch is not pinned)' if assumed else '', driver_version,
                               gpus_label(lacking), ', '.join(variant for variant, _missing in fit['without_kernels']),
                               _what_would_fit(None, driver_version, gpus, index_base)))
    if fit['variant'] is None:
        raise CondaEnvError('%s: driver %s runs none of the CUDA builds of torch %s (%s). Fix: upgrade the driver, or '
                            'pin an older torch' % (source, driver_version, series, ', '.join(torch_series_variants(series))))
    if fit['support'] == 'minor-compat':
        warnings.append('%s: driver %s fully supports no CUDA build of torch %s; %s runs by CUDA minor-version '
                        'compatibility (no PTX JIT of newer code)' % (source, driver_version, series, fit['variant']))
    warnings += _kernel_warnings(source, series, fit['variant'], fit['unconfirmed'])
    choice = {'series': series, 'variant': fit['variant'], 'cuda': fit['cuda'], 'support': fit['support'],
              'chosen_by': 'driver %s' % driver_version + (' and %s' % gpus_label(gpus) if gpus else ''),
              'index': index_base + fit['variant']}
    return ['--extra-index-url %s' % choice['index']] + list(pip_lines), choice, warnings


def pip_over_conda(pip_lines, conda_packages, solved=False):
    """Why a pip requirement that names a conda package of the env is refused, or None. ``conda_packages``
    maps normalised names to the conda spec that declares them, or, ``solved``, to what the solve links.

    The pip section would replace conda's files while conda keeps its record: ``conda list`` shows
    conda's version and python imports pip's, ``conda env export --from-history`` fails on the package
    from the second run on, and every run changes the env again. So each package has one installer,
    refused before any change rather than converged by force."""
    for line in pip_lines:
        requirement = pip_requirement(line)
        if requirement is None or requirement[0] not in conda_packages:
            continue
        name, pin = requirement
        conda_side = conda_packages[name]
        where = ('conda installs it as a dependency of the declared conda packages (%s)' % conda_side if solved
                 else 'it is among the conda dependencies (%s)' % conda_side)
        if name == 'pip':
            fix = 'pin it among the conda dependencies (pip=%s) and take it out of the pip: section' % (pin or 'X.Y')
        elif solved:
            fix = ('declare it among the conda dependencies (%s=%s) and take it out of the pip: section, or drop the '
                   'conda package that needs it' % (name, pin or 'X.Y'))
        else:
            fix = ('keep it in one section: %s=%s among the conda dependencies, or drop %s from them and keep %s in the '
                   'pip: section' % (name, pin or 'X.Y', conda_side, line.strip()))
        return ('the pip: section asks for %s, but %s: pip would replace the files of conda\'s %s while conda keeps its '
                'record, and the env would never converge. Fix: %s' % (line.strip(), where, name, fix))
    return None


def normalize_environment(spec, source='spec', driver_version=None, torch_variant='auto', torch_index=PYTORCH_WHEEL_INDEX,
                          gpu_present=None, gpus=None):
    """Validate an environment.yml mapping and return it in the form the module works with:
    ``{channels, override_channels, conda, pip, variables, warnings}``. ``nodefaults`` is taken out
    of the channels (real conda 26.7 fails on it) and turns into ``override_channels``."""
    if not isinstance(spec, dict):
        raise CondaEnvError('%s: an environment must be a mapping with channels and dependencies, got %s'
                            % (source, type(spec).__name__))
    unknown = sorted(set(spec) - set(ENVIRONMENT_KEYS) - set(['prefix']))
    if unknown:
        raise CondaEnvError('%s: unknown key(s) %s; an environment.yml has %s'
                            % (source, ', '.join(unknown), ', '.join(ENVIRONMENT_KEYS)))
    channels = spec.get('channels') or []
    if not isinstance(channels, list) or not all(isinstance(c, str) and c.strip() for c in channels):
        raise CondaEnvError('%s: channels must be a list of channel names or URLs' % source)
    dependencies = spec.get('dependencies')
    if not isinstance(dependencies, list) or not dependencies:
        raise CondaEnvError('%s: dependencies must be a non-empty list' % source)
    conda_specs, pip_lines = [], None
    for entry in dependencies:
        if isinstance(entry, dict) and list(entry) == ['pip']:
            if pip_lines is not None:
                raise CondaEnvError('%s: more than one pip: section' % source)
            pip_lines = entry['pip']
            if not isinstance(pip_lines, list) or not all(isinstance(line, str) for line in pip_lines):
                raise CondaEnvError('%s: the pip: section must be a list of requirement lines' % source)
        elif isinstance(entry, str) and entry.strip() and _MATCHSPEC_NAME.match(entry.strip()):
            conda_specs.append(entry.strip())
        else:
            raise CondaEnvError('%s: dependency %r is neither a conda package spec nor a pip: section' % (source, entry))
    if pip_lines and 'pip' not in [matchspec_name(s) for s in conda_specs]:
        raise CondaEnvError('%s: the pip: section needs pip among the conda dependencies (conda runs it with the '
                            "env's own pip)" % source)
    both = pip_over_conda(pip_lines or [], dict((normalize_pip_name(matchspec_name(s)), s) for s in conda_specs))
    if both:
        raise CondaEnvError('%s: %s' % (source, both))
    variables = spec.get('variables') or {}
    if not isinstance(variables, dict):
        raise CondaEnvError('%s: variables must be a mapping of name to value' % source)
    warnings = _torch_lint(conda_specs, channels, driver_version, gpus)
    pip_lines, torch_choice, torch_warnings = choose_torch_index([line.strip() for line in pip_lines or []], source,
                                                                 driver_version, torch_variant, torch_index, gpu_present, gpus)
    return {
        'channels': [c.strip() for c in channels if c.strip() != NODEFAULTS],
        'override_channels': NODEFAULTS in [c.strip() for c in channels],
        'conda': conda_specs,
        'pip': pip_lines,
        'variables': dict((str(k), str(v)) for k, v in variables.items()),
        'warnings': warnings + torch_warnings,
        'torch_variant': torch_choice,
    }


def render_environment(name, environment):
    """The environment.yml given to conda, in a fixed layout so that equal specs render equal text.
    Scalars are written as JSON strings, which YAML reads as double-quoted scalars."""
    lines = ['# Written by aistack.gpu_node.conda_env; the declared spec last applied to this env.',
             'name: %s' % json.dumps(name), 'channels:']
    lines += ['  - %s' % json.dumps(c) for c in environment['channels']]
    lines.append('dependencies:')
    lines += ['  - %s' % json.dumps(s) for s in environment['conda']]
    if environment['pip']:
        lines.append('  - pip:')
        lines += ['      - %s' % json.dumps(line) for line in environment['pip']]
    if environment['variables']:
        lines.append('variables:')
        lines += ['  %s: %s' % (json.dumps(k), json.dumps(v)) for k, v in sorted(environment['variables'].items())]
    if not environment['channels']:
        lines[2] = 'channels: []'
    return '\n'.join(lines) + '\n'


# ---------------------------------------------------------------------------
# conda --json outputs
# ---------------------------------------------------------------------------

def env_files(lock_dir, name):
    """The files conda_env keeps in ``lock_dir`` for env ``name``: the spec applied, the explicit lock,
    the from-history export, the in-progress marker of a change and that change's work folder."""
    return {
        'spec': os.path.join(lock_dir, '%s.environment.yml' % name),
        'explicit': os.path.join(lock_dir, '%s.explicit.txt' % name),
        'from_history': os.path.join(lock_dir, '%s.from-history.yml' % name),
        'pip': os.path.join(lock_dir, '%s.pip.txt' % name),
        'marker': os.path.join(lock_dir, '%s.in-progress.json' % name),
        'work': os.path.join(lock_dir, '.%s.applying' % name),
    }


def published_envs(declared, conda_prefix, lock_dir=None, results=None):
    """conda_env's result fact: per declared env (``{name, prefix?, state?, primary?}``), by name,
    ``{name, prefix, python, state, primary, lock: {explicit, from_history, spec, marker, sha256}, blas,
    torch_variant, last_change}``. ``results`` are this run's module results (each with its ``item``);
    an env the module did not run on this time (its tag not selected, conda not there yet in check
    mode) gets conda's default prefix, ``<conda_prefix>/envs/<name>``, and null run details."""
    by_name = dict((r['item']['name'], r) for r in results or [] if isinstance(r, dict) and r.get('item'))
    envs = {}
    for entry in declared:
        name = entry['name']
        result = by_name.get(name, {})
        prefix = result.get('prefix') or entry.get('prefix') or os.path.join(conda_prefix, 'envs', name)
        files = env_files(lock_dir or os.path.dirname(prefix.rstrip('/')), name)
        ran = 'prefix' in result
        envs[name] = {
            'name': name,
            'prefix': prefix,
            'python': os.path.join(prefix, 'bin', 'python'),
            'state': entry.get('state', 'present'),
            'primary': bool(entry.get('primary', False)),
            'lock': dict([(key, files[key]) for key in ('explicit', 'from_history', 'spec', 'marker')]
                         + [('sha256', (result.get('lock') or {}).get('sha256'))]),
            'blas': result.get('blas') if ran else None,
            'torch_variant': result.get('torch_variant') if ran else None,
            'last_change': {'changed': bool(result.get('changed')), 'commands': result.get('commands', []),
                            'drift': result.get('drift', []), 'package_changes': result.get('package_changes')}
            if ran else None,
        }
    return envs


def env_name_from_prefix(prefix):
    """The name an env outside conda goes by: its folder's, or the parent's for a hidden folder
    (/opt/torch/.venv is torch); '' for an empty prefix or /."""
    parts = [part for part in (prefix or '').split('/') if part]
    while parts and parts[-1].startswith('.'):
        parts.pop()
    return parts[-1] if parts else ''


def target_env(envs, name='', prefix=''):
    """The one environment the env roles (apex_build, numa_tuning, jupyter_kernel, gpu_validate,
    node_manifest) work on: ``prefix`` (a user-named prefix, e.g. a venv), else the env ``name``,
    else the env marked primary, else the first present env; None when there is none.
    Raises CondaEnvError naming the variable at fault."""
    if prefix:
        if not os.path.isabs(prefix):
            raise CondaEnvError('aistack_env_prefix must be an absolute path, got %r' % prefix)
        prefix = prefix.rstrip('/') or '/'
        return {'name': env_name_from_prefix(prefix) or prefix, 'prefix': prefix, 'python': os.path.join(prefix, 'bin', 'python'),
                'conda': False, 'chosen_by': 'aistack_env_prefix'}
    present = [env for env in envs.values() if env['state'] == 'present']
    if name:
        if name not in envs or envs[name]['state'] != 'present':
            raise CondaEnvError('aistack_env_name: no environment %r among the present envs of conda_env_envs (%s)'
                                % (name, ', '.join(sorted(env['name'] for env in present)) or 'none'))
        chosen, chosen_by = envs[name], 'aistack_env_name'
    else:
        primaries = [env for env in present if env['primary']]
        if len(primaries) > 1:
            raise CondaEnvError('conda_env_envs: more than one env is marked primary (%s); mark one, or set aistack_env_name'
                                % ', '.join(sorted(env['name'] for env in primaries)))
        if not present:
            return None
        chosen, chosen_by = (primaries[0], 'primary') if primaries else (present[0], 'first env of conda_env_envs')
    return {'name': chosen['name'], 'prefix': chosen['prefix'], 'python': chosen['python'], 'conda': True,
            'chosen_by': chosen_by}


def environment_problems(spec, where, driver_version=None, torch_variant='auto', torch_index=PYTORCH_WHEEL_INDEX,
                         gpu_present=None, gpus=None):
    """What the conda_env module would refuse in a declared environment (its structure, the
    PyTorch-channel lint, a torch CUDA variant the driver or a GPU cannot run): a list of messages
    naming ``where``, empty when nothing is."""
    try:
        normalize_environment(spec, source=where, driver_version=driver_version or None, torch_variant=torch_variant,
                              torch_index=(torch_index or PYTORCH_WHEEL_INDEX).rstrip('/') + '/', gpu_present=gpu_present,
                              gpus=gpus)
    except CondaEnvError as error:
        message = str(error)
        return [message if message.startswith(where) else '%s: %s' % (where, message)]
    return []


def known_variant(variant):
    """Whether ``variant`` is a torch wheel variant setting conda_env takes: auto, none, cpu or cuXXX."""
    return variant in TORCH_VARIANT_CHOICES or bool(_WHEEL_VARIANT.match(str(variant or '')))


def _env_prefix(entry, conda_prefix):
    """Where an entry's env lives: its ``prefix``, else conda's default ``<conda_prefix>/envs/<name>``."""
    return os.path.normpath(entry.get('prefix') or os.path.join(conda_prefix, 'envs', str(entry['name'])))


def entry_problems(envs, conda_prefix='/opt/conda', torch_cuda_variant='auto', torch_index=PYTORCH_WHEEL_INDEX):
    """The structure of ``conda_env_envs`` and the role's torch settings, one message per broken rule,
    each naming the entries it concerns: a name, unique; one of ``file`` and ``spec`` for an env to
    create; one prefix per env (two entries that resolve to one prefix would each undo the other on
    every run); known torch wheel variants; a URL for the torch index."""
    problems = []

    def label(index):
        return 'conda_env_envs[%d]%s' % (index, " ('%s')" % envs[index]['name'] if envs[index].get('name') else '')

    for index, entry in enumerate(envs):
        if not entry.get('name'):
            problems.append('%s has no name: every env needs one' % label(index))
            continue
        try:
            validate_env_name(entry['name'])
        except CondaEnvError as error:
            problems.append('conda_env_envs[%d]: %s' % (index, error))
            continue
        if entry.get('state', 'present') == 'present' and ('file' in entry) == ('spec' in entry):
            problems.append('%s has %s: an env to create needs exactly one of file and spec (or state: absent)'
                            % (label(index), 'both file and spec' if 'file' in entry else 'neither file nor spec'))
        variant = entry.get('torch_cuda_variant')
        if variant is not None and not known_variant(variant):
            problems.append('%s.torch_cuda_variant is %r: expected auto, none, cpu or a CUDA variant such as cu128' % (label(index), variant))
    named = [(index, entry) for index, entry in enumerate(envs) if entry.get('name')]
    for field, key in (('name', lambda entry: entry['name']), ('prefix', lambda entry: _env_prefix(entry, conda_prefix))):
        seen = {}
        for index, entry in named:
            first = seen.setdefault(key(entry), index)
            if first != index and (field == 'name' or envs[first]['name'] != entry['name']):
                problems.append('%s and %s %s: each env needs its own %s' % (
                    label(first), label(index), "are both named '%s'" % entry['name'] if field == 'name'
                    else 'both resolve to the prefix %s' % key(entry), field))
    if not known_variant(torch_cuda_variant):
        problems.append('conda_env_torch_cuda_variant is %r: expected auto, none, cpu or a CUDA variant such as cu128' % (torch_cuda_variant,))
    if not re.match(r'^(https?|file)://', torch_index or ''):
        problems.append('conda_env_torch_index is %r: expected an http(s):// or file:// URL' % (torch_index,))
    return problems


def declared_envs(envs, load_file, driver_version=None, gpu_present=None, torch_variant='auto', torch_index=None, gpus=None,
                  conda_prefix='/opt/conda'):
    """The role's ``conda_env_envs`` checked before the first env changes: ``(declared, refusals)``.
    First their structure (entry_problems: when it is broken, nothing else is read).
    ``declared`` is each entry with its ``spec`` (an env's ``file`` read by ``load_file(path)``, which
    raises CondaEnvError for a file it cannot read); ``refusals`` one message per env at fault (its
    structure, the PyTorch-channel lint, a torch variant the driver or a GPU of ``gpus`` cannot run), or when none is,
    per env whose BLAS request is wrong. A file that cannot be read raises CondaEnvError at once."""
    broken = entry_problems(envs, conda_prefix, torch_variant, torch_index or PYTORCH_WHEEL_INDEX)
    if broken:
        return [], broken
    declared = [dict(entry, spec=load_file(entry['file']) if 'file' in entry else entry.get('spec', {})) for entry in envs]
    refusals = []
    for index, entry in enumerate(declared):
        where = entry.get('file', 'conda_env_envs[%d].spec' % index)
        if entry.get('state', 'present') == 'present':
            problems = environment_problems(entry['spec'], where, driver_version, entry.get('torch_cuda_variant', torch_variant),
                                            torch_index, gpu_present, gpus)
        elif 'file' in entry:  # the file is checked even for an env to remove
            problems = environment_problems(entry['spec'], where)
        else:
            problems = []
        if problems:
            refusals.append('; '.join(problems))
    if not refusals:
        refusals = ['; '.join(problems) for problems in
                    (blas_problems(entry['spec'], entry.get('blas'), 'conda_env_envs[%d]' % index) for index, entry in enumerate(declared))
                    if problems]
    return declared, refusals


def published(declared, conda_prefix, lock_dir=None, results=None, env_name='', env_prefix=''):
    """conda_env's result facts: ``{info: {name: {...}}, target: {...} or None}`` (published_envs,
    target_env). Raises CondaEnvError naming the variable at fault, an env name that is no plain folder
    name included: site.yml's preflight play publishes before any change."""
    for index, entry in enumerate(declared or []):
        try:
            validate_env_name(entry.get('name'))
        except CondaEnvError as error:
            raise CondaEnvError('conda_env_envs[%d]: %s' % (index, error))
    envs = published_envs(declared or [], conda_prefix, lock_dir or None, results or [])
    return {'info': envs, 'target': target_env(envs, env_name or '', env_prefix or '')}


def missing_conda(conda_prefix, present, check_mode, declared):
    """Why the role stops before any env: ``<conda_prefix>/bin/conda`` is not there and envs are
    declared; None otherwise. With no env declared the role has nothing to do, and check mode goes on
    (on a fresh node the miniconda role would install conda: the envs are then not converged)."""
    if present or check_mode or not declared:
        return None
    return ('conda_env: %s/bin/conda does not exist; install conda first (miniconda role) or set conda_env_conda_prefix.'
            % conda_prefix)


def lock_mismatch(env, lock_text, listing):
    """Why the lock written beside a converged env (``env``: its conda_env_info entry) is not valid
    for what ``conda list --explicit --md5`` lists now; None when it is. Packages only: the header
    names the conda version, which an upgrade of conda changes without changing the env."""
    if explicit_entries(lock_text) == explicit_entries(listing) and sha256_text(lock_text) == env['lock']['sha256']:
        return None
    return 'the lock %s does not match env %s; run the role again' % (env['lock']['explicit'], env['prefix'])


# What conda raises when the channels cannot be read, by exception_name: check mode reports them as
# unreachable instead of failing.
CHANNELS_UNREACHABLE = ('CondaHTTPError', 'UnavailableInvalidChannel')
UNSATISFIABLE = ('UnsatisfiableError', 'RattlerUnsatisfiableError', 'LibMambaUnsatisfiableError')


def conflict_message(error_text, conflicting):
    """An unsolvable spec's failure with the declared specs that conflict named (``conflicting``, found by
    dry runs of the spec with one spec left out at a time; None when those dry runs gave no verdict).
    conda's own message names them with the rattler solver, and often names nothing with the classic one."""
    if not conflicting:
        return error_text
    return ('%s. The declared specs that cannot be solved together: %s (without any one of them the others solve)'
            % (error_text, ', '.join(conflicting)))


def parse_json(stdout, command):
    """The JSON object or list conda printed. Progress or pip text may come first, so the JSON is
    the first line-start ``{`` or ``[`` from which the rest of the output parses."""
    text = stdout or ''
    starts = [0] + [i + 1 for i, char in enumerate(text) if char == '\n']
    candidates = [i for i in starts if text[i:].lstrip(' ')[:1] in ('{', '[')]
    if not candidates:
        raise CondaEnvError('%s printed no JSON: %s' % (command, text.strip()[:300] or '(nothing)'))
    for start in candidates:
        try:
            return json.loads(text[start:])
        except ValueError as error:
            last_error = error
    raise CondaEnvError('%s printed JSON that does not parse (%s): %s' % (command, last_error, text.strip()[:300]))


def _first_line(text):
    return (text or '').strip().splitlines()[0] if (text or '').strip() else ''


def conda_failure(command, rc, stdout, stderr):
    """CondaEnvError for a failed conda call, named as conda named it."""
    try:
        payload = parse_json(stdout, command)
    except CondaEnvError:
        payload = None
    name = payload.get('exception_name') if isinstance(payload, dict) else None
    return CondaEnvError(explain_failure(command, rc, stdout, stderr), exception_name=name)


def explain_failure(command, rc, stdout, stderr):
    """A one-paragraph reason for a failed conda call, from its error JSON when it printed one; a password
    or token in the channel URLs conda names is redacted."""
    try:
        payload = parse_json(stdout, command)
    except CondaEnvError:
        payload = None
    if not isinstance(payload, dict) or 'exception_name' not in payload:
        detail = (stderr or '').strip() or (stdout or '').strip() or 'no output'
        return redact('%s failed (rc=%s): %s' % (command, rc, detail[-800:]))
    name = payload['exception_name']
    message = (payload.get('message') or payload.get('error') or '').strip()
    if name == 'PackagesNotFoundInChannelsError':
        reason = 'packages not found in the channels: %s (searched %s)' % (
            ', '.join(payload.get('packages') or []), ', '.join(payload.get('channel_urls') or []) or 'the configured channels')
        if any(p.startswith('__cuda') for p in payload.get('packages') or []):
            reason += '; __cuda is a virtual package: the node shows no CUDA driver (CONDA_OVERRIDE_CUDA sets one)'
    elif name in ('UnsatisfiableError', 'RattlerUnsatisfiableError', 'LibMambaUnsatisfiableError'):
        reason = 'the spec cannot be solved: %s' % message
    elif name == 'UnavailableInvalidChannel':
        reason = 'channel %s is gone or not a channel: HTTP %s at %s' % (
            payload.get('channel_name', '?'), payload.get('status_code', '?'), payload.get('channel_url', '?'))
    elif name == 'CondaHTTPError':
        reason = 'channel unreachable: HTTP %s %s for %s' % (payload.get('status_code'), payload.get('reason', ''),
                                                             payload.get('url', '?'))
        if payload.get('status_code') == '000':
            reason += ' (no connection: check the mirror in .condarc, the proxy, or the network)'
    elif name == 'CondaEnvException' and message.startswith('Pip failed'):
        reason = "the pip section failed after conda's packages were applied: %s" % pip_error(stderr)
    elif name == 'CondaToSNonInteractiveError':
        reason = "the Anaconda channels' terms of service are not accepted: %s" % _first_line(message)
    else:
        reason = '%s: %s' % (name, message)
    return redact('%s failed (rc=%s, %s): %s' % (command, rc, name, reason))


def pip_error(stderr):
    """pip's own reason from conda's stderr: conda's JSON says only "Pip failed" and prints pip's
    stderr after "Pip subprocess error:"; its ERROR lines, else its tail."""
    text = (stderr or '').split('Pip subprocess error:', 1)[-1]
    errors = [line.strip() for line in text.splitlines() if line.strip().startswith('ERROR:')]
    return redact(' '.join(errors)[-800:] if errors else (text.strip()[-800:] or 'pip printed no error'))


def _record(entry):
    return {'name': entry['name'], 'version': entry['version'], 'build': entry.get('build_string', ''),
            'channel': entry.get('channel', '')}


def installed_packages(conda_list):
    """``conda list --json`` -> records sorted by name; pip-installed ones have channel ``pypi``."""
    if not isinstance(conda_list, list):
        raise CondaEnvError('conda list --json did not print a list of packages')
    records = [_record(entry) for entry in conda_list]
    for record in records:
        if record['channel'] == PIP_CHANNEL:
            record['name'] = normalize_pip_name(record['name'])
    return sorted(records, key=lambda r: r['name'])


def foreign_channel_problem(name, environment, installed):
    """With ``nodefaults`` the env's conda packages must all come from its own channels; a message
    naming the others and the fix, or None. ``conda env create/update`` take no ``--override-channels``
    (conda 26) and merge the channels of .condarc, so only the dry run is held to the spec's channels."""
    if not environment['override_channels']:
        return None
    allowed = set()
    for channel in environment['channels']:
        allowed.update([channel, channel.rstrip('/').rsplit('/', 1)[-1]])
    foreign = ['%s (%s)' % (r['name'], r['channel'] or 'unknown channel') for r in installed
               if r['channel'] != PIP_CHANNEL and r['channel'] not in allowed]
    if not foreign:
        return None
    return ('env %s declares nodefaults and channels %s, but has packages from other channels: %s. conda env update '
            'adds the channels of .condarc: keep defaults out of them (the mirrors_condarc role does), or recreate the '
            'env (state: absent, then present) if it was made elsewhere'
            % (name, ', '.join(environment['channels']), ', '.join(foreign)))


def transaction(payload):
    """A ``--json`` transaction -> ``{'link': [...], 'unlink': [...], 'pip': [...]}``; empty for
    "All requested packages already installed."."""
    if not isinstance(payload, dict) or payload.get('success') is not True:
        raise CondaEnvError('not a successful conda transaction: %s' % json.dumps(payload)[:300])
    actions = payload.get('actions') or {}
    return {
        'link': sorted((_record(e) for e in actions.get('LINK') or []), key=lambda r: r['name']),
        'unlink': sorted((_record(e) for e in actions.get('UNLINK') or []), key=lambda r: r['name']),
        'pip': list(actions.get('PIP') or []),
    }


def apply_transaction(installed, planned):
    """The package list after ``planned`` runs on ``installed``."""
    unlinked = set((r['name'], r['version'], r['build']) for r in planned['unlink'])
    kept = [r for r in installed if (r['name'], r['version'], r['build']) not in unlinked]
    linked = set(r['name'] for r in planned['link'])
    return sorted([r for r in kept if r['name'] not in linked] + planned['link'], key=lambda r: r['name'])


def _label(record):
    return '%s=%s' % (record['version'], record['build']) if record['build'] else record['version']


def package_changes(before, after):
    """``{'added': [...], 'removed': [...], 'changed': [...]}`` between two package lists, each entry a
    ``name==version=build`` text; ``changed`` entries read ``name old -> new``."""
    old = dict((r['name'], r) for r in before)
    new = dict((r['name'], r) for r in after)
    return {
        'added': ['%s==%s' % (n, _label(new[n])) for n in sorted(set(new) - set(old))],
        'removed': ['%s==%s' % (n, _label(old[n])) for n in sorted(set(old) - set(new))],
        'changed': ['%s %s -> %s' % (n, _label(old[n]), _label(new[n])) for n in sorted(set(old) & set(new))
                    if _label(old[n]) != _label(new[n]) or old[n]['channel'] != new[n]['channel']],
    }


def has_changes(changes):
    return any(changes[key] for key in ('added', 'removed', 'changed'))


def render_packages(packages):
    """One ``name==version=build  (channel)`` line per package, the text ``--diff`` compares."""
    return ''.join('%s==%s  (%s)\n' % (r['name'], _label(r), r['channel']) for r in packages)


def explicit_entries(text):
    """The package URLs (with ``#md5``) of ``conda list --explicit --md5``; the comment header
    names the conda version and is left out so an upgraded conda is not taken for drift."""
    return sorted(line.strip() for line in (text or '').splitlines()
                  if line.strip() and not line.startswith('#') and line.strip() != '@EXPLICIT')


# What conda's print_explicit (cli/main_list.py) leaves out of a record's URL: the anaconda.org token
# (common/url.py split_anaconda_token, its first match) and the user:password (remove_auth); and the
# channel it prints a comment for instead of a URL.
_ANACONDA_TOKEN = re.compile(r'/t/[a-zA-Z0-9-]*')
_URL_AUTH = re.compile(r'^([A-Za-z][A-Za-z0-9+.-]*://)[^/@]*@')
UNKNOWN_CHANNEL = '<unknown>'


def recorded_explicit_entries(records):
    """What explicit_entries reads from ``conda list --explicit --md5``, taken from the env's conda-meta
    records (the parsed ``.json`` files) as conda takes it: each record's URL without token or
    user:password, with ``#md5`` when recorded; a record without URL prints a comment, no entry. Read
    from conda-meta, the installed list costs no conda run."""
    entries = []
    for record in records:
        url = record.get('url')
        if not url or url.startswith(UNKNOWN_CHANNEL):
            continue
        url = _URL_AUTH.sub(r'\1', _ANACONDA_TOKEN.sub('', url, count=1))
        entries.append(url + ('#%s' % record['md5'] if record.get('md5') else ''))
    return sorted(entries)


def sha256_text(text):
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


# What the module reads of conda's configuration, with ``conda config --show <keys> --json``: conda info
# says the same and more at twice the cost (it detects the virtual packages, the CUDA driver's among
# them, and lists every env).
CONDA_DIRS = ('envs_dirs', 'pkgs_dirs', 'root_prefix')


def conda_dirs(shown):
    """``conda config --show envs_dirs pkgs_dirs root_prefix --json`` -> (envs dirs, package caches, root prefix)."""
    try:
        return list(shown['envs_dirs']), list(shown['pkgs_dirs']), shown['root_prefix']
    except (KeyError, TypeError):
        raise CondaEnvError('conda config --show %s --json lacks one of them' % ' '.join(CONDA_DIRS))


def scrub_credentials(text):
    """``text`` (a file conda wrote: a conda-meta or repodata record, urls.txt, a repodata cache's state,
    conda-meta/history) with the user:password of every URL in it removed, as conda's own remove_auth
    does (common/url.py), so that each URL still names the mirror and its package; and whether
    anything was removed. conda records the URL it downloaded with, credentials included, in the
    package cache (urls.txt, ``<pkg>/info/repodata_record.json``, ``cache/<md5>.info.json`` and the
    ``.q`` pickle), and conda before 24.11 in conda-meta too; these files are readable by all."""
    scrubbed = _USERINFO.sub('//', text)
    return scrubbed, scrubbed != text


def credential_files(prefix, pkgs_dirs, listdir, isfile):
    """The files of the env ``prefix`` and of the package caches ``pkgs_dirs`` (conda_dirs)
    where conda writes a package's URL, as (path, kind): ``text`` files are scrubbed in place,
    ``pickle`` files (the repodata cache's ``.q``, conda's pickled parse of a repodata, rebuilt from
    the ``.json`` beside it whenever missing) are deleted. ``listdir`` and ``isfile`` are os's."""
    def names(folder):
        try:
            return sorted(listdir(folder))
        except OSError:
            return []

    meta = os.path.join(prefix, 'conda-meta')
    found = [(os.path.join(meta, n), 'text') for n in names(meta) if n.endswith('.json') or n == 'history']
    for pkgs_dir in pkgs_dirs:
        found.append((os.path.join(pkgs_dir, 'urls.txt'), 'text'))
        found += [(os.path.join(pkgs_dir, n, 'info', 'repodata_record.json'), 'text') for n in names(pkgs_dir)]
        cache = os.path.join(pkgs_dir, 'cache')
        found += [(os.path.join(cache, n), 'text' if n.endswith('.info.json') else 'pickle') for n in names(cache)
                  if n.endswith(('.info.json', '.q'))]
    return [(path, kind) for path, kind in found if isfile(path)]


def pip_lock(installed):
    """The env's pip packages, one ``name==version`` line each: the lock of its pip part, which
    neither ``conda list --explicit`` nor ``conda env export --from-history`` records."""
    return ''.join('%s==%s\n' % (r['name'], r['version']) for r in installed if r['channel'] == PIP_CHANNEL)


def applied_pip_names(rendered_spec):
    """The pip projects of a spec written by render_environment (one JSON string a line)."""
    names, in_pip = [], False
    for line in (rendered_spec or '').splitlines():
        if line == '  - pip:':
            in_pip = True
        elif in_pip and line.startswith('      - '):
            requirement = pip_requirement(json.loads(line[len('      - '):]))
            names += [requirement[0]] if requirement else []
        else:
            in_pip = False
    return names


# conda keeps an env's variables in conda-meta/state ({"env_vars": {...}}); ``conda env config vars unset``
# leaves this value for a variable, so that activation unsets it (base/constants.py).
ENV_VARS_UNSET = '***unset***'


def applied_variables(rendered_spec):
    """The variables of a spec written by render_environment (``  "NAME": "value"`` lines)."""
    variables, inside = {}, False
    for line in (rendered_spec or '').splitlines():
        if line == 'variables:':
            inside = True
        elif inside and line.startswith('  "'):
            key, _sep, value = line[2:].partition(': ')
            variables[json.loads(key)] = json.loads(value)
        else:
            inside = False
    return variables


def variable_drift(environment, env_vars, stored_spec):
    """``(reasons, stale)`` for the env's variables (``env_vars``: conda-meta/state's, unset ones included):
    a declared variable missing or with another value; ``stale``, the variables the spec applied last
    declared and this one does not, still set (``conda env update`` sets the declared ones and never
    unsets any, so the module unsets them). Variables set by hand that no spec declared are left alone."""
    declared = environment['variables']
    current = dict((k, v) for k, v in (env_vars or {}).items() if v != ENV_VARS_UNSET)
    reasons = []
    for name in sorted(declared):
        if name not in current:
            reasons.append('variable %s is not set in the env, declared %s' % (name, json.dumps(declared[name])))
        elif current[name] != declared[name]:
            reasons.append('variable %s is %s in the env, declared %s' % (name, json.dumps(current[name]), json.dumps(declared[name])))
    stale = sorted(name for name in applied_variables(stored_spec) if name not in declared and name in current)
    if stale:
        reasons.append('variables the spec no longer declares are still set: %s (conda env update never unsets them; '
                       'they are unset)' % ', '.join(stale))
    return reasons, stale


def stray_pip(stored_spec, stored_pip_lock, environment, installed, kept=()):
    """Installed pip projects this spec does not declare that the spec applied last declared, or that
    came after the pip lock was written: ``conda env update --prune`` never removes pip packages, so
    the module uninstalls them (the dependencies of declared projects are in the lock, and kept).
    ``kept`` projects (normalised names) are installed by other tools after this module and never stray."""
    declared = set(r[0] for r in (pip_requirement(line) for line in environment['pip']) if r)
    present = set(r['name'] for r in installed if r['channel'] == PIP_CHANNEL and normalize_pip_name(r['name']) not in kept)
    locked = set(line.partition('==')[0] for line in _lock_lines(stored_pip_lock))
    added = present - locked if stored_pip_lock is not None else set()
    return sorted(((set(applied_pip_names(stored_spec)) | added) - declared) & present)


def _lock_lines(text, kept=()):
    lines = (line.strip() for line in (text or '').splitlines())
    return set(line for line in lines if line and normalize_pip_name(line.partition('==')[0]) not in kept)


def drift(environment, installed, stored_spec, rendered_spec, stored_lock, current_entries, stored_pip_lock=None, kept=()):
    """Why an existing env differs from its declaration; empty when it does not.

    Declared vs installed: every declared conda package and pip project is installed, pinned pip
    versions match. Declared vs last applied: the rendered spec equals the one stored after the
    last change, and the env's explicit package list (``current_entries``, as explicit_entries reads
    it) equals the lock written then, so a package removed or added by hand, or an update killed
    midway, is found; so is a pip package added or removed since the pip lock was written, or one the
    spec no longer declares. ``kept`` pip projects (normalised names), which other tools install after
    this module, are left out of the pip checks."""
    reasons = []
    conda_names = set(r['name'] for r in installed if r['channel'] != PIP_CHANNEL)
    pip_versions = dict((normalize_pip_name(r['name']), r['version']) for r in installed if r['channel'] == PIP_CHANNEL)
    missing = [s for s in environment['conda'] if matchspec_name(s) not in conda_names]
    if missing:
        reasons.append('declared conda packages not installed: %s' % ', '.join(missing))
    for line in environment['pip']:
        requirement = pip_requirement(line)
        if requirement is None:
            continue
        name, pinned = requirement
        if name not in pip_versions:
            reasons.append('declared pip package not installed: %s' % line)
        elif pinned and pip_versions[name] != pinned:
            reasons.append('pip package %s is %s, declared %s' % (name, pip_versions[name], line))
    stray = stray_pip(stored_spec, stored_pip_lock, environment, installed, kept)
    if stray:
        reasons.append('pip packages not declared are installed: %s (conda env update never removes them; they are '
                       'uninstalled)' % ', '.join(stray))
    now, then = _lock_lines(pip_lock(installed), kept), _lock_lines(stored_pip_lock, kept)
    if stored_pip_lock is not None and now != then:
        reasons.append('the pip packages differ from the pip lock written after the last change: added %s; removed %s'
                       % (', '.join(sorted(now - then)) or 'none', ', '.join(sorted(then - now)) or 'none'))
    if stored_spec is None:
        reasons.append('no record of a spec applied by this module (first run on an existing env)')
    elif stored_spec != rendered_spec:
        reasons.append('the declared spec changed since it was last applied')
    if stored_lock is not None and explicit_entries(stored_lock) != current_entries:
        reasons.append('the installed packages differ from the lock written after the last change')
    elif stored_lock is None and stored_spec is not None:
        reasons.append('the lock written after the last change is missing')
    return reasons


def predicted_pip(installed, environment, dropped=()):
    """Pip packages after the pip section runs, as far as it can be known without running pip:
    pinned requirements at their pin, unpinned ones at the installed version or ``?``; ``dropped``
    ones (stray_pip) gone."""
    current = dict((normalize_pip_name(r['name']), r) for r in installed if r['channel'] == PIP_CHANNEL)
    predicted = dict((name, record) for name, record in current.items() if name not in dropped)
    for line in environment['pip']:
        requirement = pip_requirement(line)
        if requirement is None:
            continue
        name, pinned = requirement
        version = pinned or (current[name]['version'] if name in current else '?')
        predicted[name] = {'name': name, 'version': version, 'build': 'pypi_0', 'channel': PIP_CHANNEL}
    return [predicted[name] for name in sorted(predicted)]


# ---------------------------------------------------------------------------
# Unfinished changes
# ---------------------------------------------------------------------------
# Before it changes an env the module writes an in-progress marker beside the lock, and removes it
# only once the new lock is written. A marker found later means a change was killed midway (conda
# itself keeps no such record: a SIGKILL mid-transaction leaves conda-meta partly rewritten and
# nothing that says so).

MARKER_ACTIONS = ('create', 'update', 'remove')


def render_marker(name, prefix, action, command, spec_sha256, started, prefix_is_ours):
    """The marker's text: what was being applied to which env, when, and whether the prefix
    folder is this module's to delete should the change not finish."""
    return json.dumps({'env': name, 'prefix': prefix, 'action': action, 'command': command,
                       'spec_sha256': spec_sha256, 'started': started, 'prefix_is_ours': prefix_is_ours},
                      indent=2, sort_keys=True) + '\n'


def parse_marker(text):
    """The marker's record. One that does not parse (it is written atomically, so a hand edit or a
    damaged disk) still says that a change did not finish, of an unknown kind."""
    try:
        record = json.loads(text)
    except ValueError:
        record = None
    if not isinstance(record, dict) or record.get('action') not in MARKER_ACTIONS:
        return {'action': None, 'command': None, 'started': None, 'spec_sha256': None, 'prefix_is_ours': False}
    return record


def owns_prefix(action, removal, prefix_existed):
    """Whether what the prefix folder holds is this module's doing if ``action`` stops midway: a
    removal's folder, and a create's when the folder was not there or was cleared for it."""
    if action == 'remove':
        return True
    return action == 'create' and (removal is not None or not prefix_existed)


def present_plan(env_exists, prefix_exists, marker, spec_sha256, not_an_env=False, damaged=False, meta_lost=False):
    """``(action, removal)`` for state=present: action ``create`` or ``update``, and how the prefix
    is cleared first: ``conda`` (``conda remove --all``), ``directory`` (a folder of ours without
    conda-meta) or None.

    An update killed midway is run again with the same spec: conda works from the records in
    conda-meta, so packages it had unlinked are unlinked again and those it had not yet recorded
    are linked again. Anything else unfinished (a create, a removal, an update towards another
    spec, an unreadable marker) is removed and created again: a half-created prefix holds files of
    packages whose records were never written, which ``env update --prune`` would neither see nor
    remove, and a half-unlinked package whose record is still there would be kept with files missing.

    ``not_an_env``: a prefix whose conda-meta holds no ``history`` (a create killed before conda wrote
    it last), which conda refuses for every command, ``remove --all`` included: its folder is deleted.
    ``meta_lost``: a folder without conda-meta where this module applied a spec before (meta_lost_reason):
    deleted, as conda-meta without history is.
    ``damaged``: an env past repair in place (damage_repair's ``replace``: ``*.c~`` backups of an unlink
    killed midway, or an unreadable record), which conda itself calls installed: it is removed and created
    again. Packages with files missing and intact records are reinstalled by the module within an update."""
    if not_an_env or meta_lost:
        return 'create', 'directory'
    if damaged and env_exists:
        return 'create', 'conda'
    if marker is None:
        return ('update' if env_exists else 'create'), None
    if marker['action'] == 'update' and marker.get('spec_sha256') == spec_sha256 and env_exists:
        return 'update', None
    if env_exists:
        return 'create', 'conda'
    if prefix_exists and marker.get('prefix_is_ours'):
        return 'create', 'directory'
    return 'create', None


def absent_plan(env_exists, prefix_exists, marker, not_an_env=False, meta_lost=False):
    """How the prefix is removed for state=absent: ``conda``, ``directory`` (a folder of ours left
    by an unfinished create or removal, without conda-meta, or a conda-meta without ``history``,
    which conda refuses to remove) or None."""
    if not_an_env or meta_lost:
        return 'directory'
    if env_exists:
        return 'conda'
    if prefix_exists and marker is not None and marker.get('prefix_is_ours'):
        return 'directory'
    return None


def unfinished_change(name, marker, action, removal):
    """The drift reason a marker gives, with what this run does about it."""
    if marker['action'] is None:
        what = 'an earlier change of env %s (unreadable in-progress marker) did not finish' % name
    else:
        what = 'an earlier change of env %s (%s) started at %s did not finish' % (
            name, marker.get('command') or marker['action'], marker.get('started') or 'an unknown time')
    if action == 'update':
        return what + '; it is applied again'
    if action == 'create':
        return what + ('; the env is removed and created again' if removal else '; the env is created again')
    return what + '; what is left of the env is removed'


# ---------------------------------------------------------------------------
# What a killed conda leaves in a prefix
# ---------------------------------------------------------------------------
# conda (26.x) writes conda-meta/history last, and only a prefix with that file is an environment
# to it (any other gets DirectoryNotACondaEnvironmentError). When it unlinks a package it renames
# each file, then the package's record, to ``<path>.c~`` and deletes those backups only at the end
# of the transaction: a SIGKILL in between leaves a record whose files are gone, or backups nobody
# deletes, while ``conda list`` and ``env update --prune`` call the env complete.

HISTORY = 'history'
UNLINK_BACKUP_SUFFIX = '.c~'
_LISTED_PATHS = 3


def prefix_kind(has_prefix, has_conda_meta, has_history):
    """``env``, ``not-an-env`` (conda-meta without history), ``folder`` or ``missing``."""
    if has_history:
        return 'env'
    if has_conda_meta:
        return 'not-an-env'
    return 'folder' if has_prefix else 'missing'


def foreign_owner_problem(name, prefix, owner):
    """An env folder another user owns (``owner``: a name, or the uid): root would run its python
    (verify, pip) and so run what that user put there; nor is the user's folder root's to replace."""
    return ('env %s: %s belongs to %s, not root: the role would run code from it as root. It is that user\'s '
            'environment (made when the conda base was group-writable); move it away or give the env another name. '
            'Nothing was changed' % (name, prefix, owner))


def python_leftovers(python_version, lib_folders, owned):
    """The ``lib/pythonX.Y`` folders of another python than the env's (``python_version``, from its conda
    record) that no conda record owns a file in (``owned``: the ``lib/pythonX.Y`` of every recorded file):
    conda unlinks only the files it recorded, so after python 3.11 -> 3.12 what pip installed for 3.11
    stays in lib/python3.11, unused. ``lib_folders``: the names in ``lib/``."""
    if not python_version:
        return []
    current = 'python%s' % '.'.join(python_version.split('.')[:2])
    return sorted(name for name in lib_folders
                  if re.match(r'^python\d+\.\d+$', name) and name != current and name not in owned)


def leftovers_reason(leftovers, python_version, contents):
    """``contents``: folder -> a few names found in its site-packages."""
    return ('%s left by an earlier python (the env has python %s; conda removes only the files it recorded): %s; '
            'deleted' % (', '.join('lib/%s' % name for name in leftovers), python_version,
                         '; '.join('lib/%s holds %s' % (name, _some(contents.get(name) or ['nothing conda recorded']))
                                   for name in leftovers)))


def meta_lost_reason(prefix):
    return ('prefix %s holds files but no conda-meta (deleted by hand?), while this module applied a spec there: '
            'conda no longer knows what is installed, and creating over it would leave what the spec dropped '
            'importable; the folder is deleted and the env created again' % prefix)


def not_an_env_reason(prefix):
    return ('prefix %s is not a conda environment: conda-meta/history is missing (a create that did not finish; '
            'conda refuses every command on it); the folder is deleted and the env created again' % prefix)


def _some(paths):
    listed = ', '.join(sorted(paths)[:_LISTED_PATHS])
    return listed + (' and %d more' % (len(paths) - _LISTED_PATHS) if len(paths) > _LISTED_PATHS else '')


def regenerated(path):
    """Whether a record's file is one conda or python makes again by itself: the bytecode conda compiles
    for noarch python packages (listed in the record) and python rewrites on import. Not damage."""
    return path.endswith('.pyc') or '__pycache__' in path.split('/')


def damage_repair(records, backups):
    """What an env with damaged packages needs, or None when none is damaged. ``records``: the conda-meta
    records as ``{name, version, build, missing, unreadable}`` (``missing``: the record's files not in the
    prefix, bytecode left out); ``backups``: ``*.c~`` paths found in the prefix, relative to it.

    Returns ``{how, packages, why, reasons}``: ``how`` is ``reinstall`` when every damaged package still has
    a readable record and no transaction was cut short (``conda install --force-reinstall`` relinks just
    those, ``packages`` as exact specs), else ``replace`` (the env is removed and created again): backups
    mean conda stopped between renaming files and renaming records, so the records no longer say what the
    env holds, and an unreadable record names nothing to reinstall."""
    damaged = [r for r in sorted(records, key=lambda r: r['name']) if r['missing']]
    reasons = ['package %s %s has %d file(s) missing: %s' % (r['name'], r['version'], len(r['missing']), _some(r['missing']))
               for r in damaged]
    if backups:
        reasons.append('%d file(s) left as %s backups by an interrupted conda transaction: %s'
                       % (len(backups), UNLINK_BACKUP_SUFFIX, _some(backups)))
    if not reasons:
        return None
    unreadable = [r['name'] for r in damaged if r.get('unreadable')]
    if backups:
        how, why = 'replace', ('an interrupted conda transaction left %s backups, so the records no longer say what '
                               'the env holds' % UNLINK_BACKUP_SUFFIX)
    elif unreadable:
        how, why = 'replace', 'conda cannot reinstall a package whose record it cannot read (%s)' % ', '.join(unreadable)
    else:
        how, why = 'reinstall', ('only files of %s are missing and their records are intact, so conda reinstalls those '
                                 'packages at the same version and build' % ', '.join(r['name'] for r in damaged))
    reasons[-1] += ('; the env is removed and created again' if how == 'replace' else
                    '; the damaged packages are reinstalled (conda install --force-reinstall)')
    packages = ['%s==%s=%s' % (r['name'], r['version'], r['build']) for r in damaged] if how == 'reinstall' else []
    return {'how': how, 'packages': packages, 'why': why, 'reasons': reasons}
