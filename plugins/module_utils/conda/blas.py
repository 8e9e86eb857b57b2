# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which BLAS a conda environment asks for, and which one its numpy really uses.

The request comes from the spec's BLAS selector (``blas=*=mkl`` on Anaconda's channels,
``libblas=*=*mkl`` on conda-forge) or from an explicit ``blas`` key. The answer comes from numpy
itself, run by the env's own python: after a matrix product, the shared libraries mapped into
the process (``/proc/self/maps``) name the BLAS really loaded. numpy's build configuration is
reported beside it but not trusted: a conda-forge numpy says ``blas`` 3.9.0 (the generic
interface it was linked against) whichever library the selector installed (intel/optimization-zone#36).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.conda.spec import CondaEnvError, matchspec_name

BLAS_VENDORS = ('openblas', 'mkl', 'blis', 'netlib')
SELECTORS = ('blas', 'libblas')
# conda's names for a spec that cannot be solved (conda_env.explain_failure).
UNSOLVABLE = ('UnsatisfiableError', 'RattlerUnsatisfiableError', 'LibMambaUnsatisfiableError',
              'PackagesNotFoundInChannelsError')


class BlasMismatch(CondaEnvError):
    """numpy in the env does not use the BLAS asked for; ``report`` is the blas_report, ``result``
    what the module did before it found out (the env may have just been changed)."""

    def __init__(self, report, result=None):
        super(BlasMismatch, self).__init__(report['problem'])
        self.report = report
        self.result = result or {}


# Run as ``<prefix>/bin/python -I -B -c PROBE``: no user site, no bytecode written. Prints one JSON
# object; a numpy that does not import is an answer ("numpy": null), not a crash.
PROBE = r'''
import json, sys
try:
    import numpy
except Exception as error:
    print(json.dumps({"numpy": None, "error": "%s: %s" % (type(error).__name__, error)}))
    sys.exit(0)
a = numpy.ones((64, 64))
product = float((a @ a).sum())
try:
    config = numpy.show_config(mode="dicts")
except TypeError:
    config = None
with open("/proc/self/maps") as maps:
    print(json.dumps({"numpy": numpy.__version__, "product": product, "config": config, "maps": maps.read()},
                     default=str))
'''
# Keep the probe cheap on a many-core node: one BLAS thread is enough for a 64x64 product.
PROBE_ENVIRONMENT = {'OPENBLAS_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1', 'OMP_NUM_THREADS': '1'}

# name=version=build, "name version build", or name[build=...]; the build part may be a glob.
_SELECTOR_BUILD = re.compile(r'^(?:[^:\s]+::)?[A-Za-z0-9_.-]+\s*(?:=\s*|\s+)[^=\s\[]+\s*(?:=\s*|\s+)([^\s\[]+)\s*$')
_BRACKET_BUILD = re.compile(r'\[[^\]]*\bbuild\s*=\s*["\']?([^"\',\]\s]+)')


def selector_vendor(spec):
    """The BLAS a ``blas`` / ``libblas`` match spec selects by its build string, '' for a spec that
    names no build (any BLAS), None for a build naming no known BLAS."""
    text = spec.strip()
    match = _BRACKET_BUILD.search(text) or _SELECTOR_BUILD.match(text)
    if not match:
        return ''
    build = match.group(1).strip('*').lower()
    if not build:
        return ''
    for vendor in BLAS_VENDORS:  # 'openblas' first: a build "*openblas" must not read as blas
        if build.endswith(vendor) or build.startswith(vendor):
            return vendor
    return None


def requested_blas(conda_specs, declared=None, source='spec', key='blas'):
    """``(vendor, reason)`` the env asks for: from the explicit ``declared`` value (option or
    variable ``key``) and the spec's selectors, which must agree; ``(None, None)`` when nothing
    asks for one. Raises CondaEnvError naming ``source`` or ``key`` for an unknown vendor or a
    contradiction."""
    if declared is not None and declared not in BLAS_VENDORS:
        raise CondaEnvError('%s is %r; expected one of %s' % (key, declared, ', '.join(BLAS_VENDORS)))
    selected = []
    for spec in conda_specs:
        if matchspec_name(spec) not in SELECTORS:
            continue
        vendor = selector_vendor(spec)
        if vendor is None:
            raise CondaEnvError('%s: %r selects a BLAS that cannot be verified; known: %s'
                                % (source, spec, ', '.join(BLAS_VENDORS)))
        if vendor:
            selected.append((vendor, spec))
    vendors = sorted(set(vendor for vendor, _spec in selected))
    if len(vendors) > 1:
        raise CondaEnvError('%s: the dependencies select different BLAS libraries: %s'
                            % (source, ', '.join(spec for _vendor, spec in selected)))
    if declared is not None and vendors and vendors[0] != declared:
        raise CondaEnvError('%s is %s but the dependencies of %s select %s (%s); make them agree'
                            % (key, declared, source, vendors[0], selected[0][1]))
    if declared is not None:
        return declared, key
    if selected:
        return selected[0]
    return None, None


def blas_problems(spec, blas=None, where='env'):
    """What is wrong with the BLAS an env asks for (``where.blas`` and the spec's selectors): a list
    of messages naming ``where``, empty when nothing is."""
    dependencies = spec.get('dependencies') if isinstance(spec, dict) else None
    conda_specs = [d for d in dependencies or [] if isinstance(d, str) and d.strip()]
    try:
        requested_blas(conda_specs, blas, source=where, key='%s.blas' % where)
    except CondaEnvError as error:
        return [str(error)]
    except ValueError as error:  # a dependency that is no match spec: the environment check names it
        return ['%s: dependency %s is not a conda match spec' % (where, error)]
    return []


def mapped_libraries(maps):
    """Paths of the shared objects mapped in a process, from the text of ``/proc/<pid>/maps``."""
    paths = set()
    for line in (maps or '').splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith('/') and '.so' in os.path.basename(fields[5]):
            paths.add(fields[5].replace(' (deleted)', ''))
    return sorted(paths)


def library_vendor(path):
    """The BLAS a shared library file is, by its name (and folder, for the ``libblas.so.3`` that
    Debian's alternatives and conda-forge's selectors point at several implementations), or None."""
    name = os.path.basename(path).lower()
    folder = os.path.basename(os.path.dirname(path)).lower()
    if name.startswith(('libmkl_', 'libmkl.')):
        return 'mkl'
    if name.startswith(('libopenblas', 'libscipy_openblas')):
        return 'openblas'
    if name.startswith('libblis'):
        return 'blis'
    if name.startswith(('libblas.so', 'libcblas.so')):
        for vendor in ('openblas', 'blis', 'mkl'):
            if folder.startswith(vendor):
                return vendor
        return 'netlib'
    return None


def classify_blas(paths):
    """``{vendor: [paths]}`` of the BLAS libraries among ``paths``."""
    found = {}
    for path in paths:
        vendor = library_vendor(path)
        if vendor:
            found.setdefault(vendor, []).append(path)
    return found


def build_blas(config):
    """``{name, version}`` of the BLAS numpy was built against (``show_config(mode='dicts')``)."""
    try:
        blas = config['Build Dependencies']['blas']
    except (KeyError, TypeError):
        return None
    return {'name': blas.get('name'), 'version': blas.get('version')}


def parse_probe(stdout, python):
    try:
        probe = json.loads((stdout or '').strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise CondaEnvError('%s -c <numpy BLAS probe> printed no JSON: %s' % (python, (stdout or '').strip()[:300]))
    if not isinstance(probe, dict) or 'numpy' not in probe:
        raise CondaEnvError('%s -c <numpy BLAS probe> printed an unexpected answer: %s' % (python, stdout.strip()[:300]))
    return probe


def _fix(requested, found, numpy_from_pip):
    selector = {'mkl': 'libblas=*=*mkl (conda-forge) or blas=*=mkl (defaults)',
                'openblas': 'libblas=*=*openblas (conda-forge) or blas=*=openblas (defaults)',
                'blis': 'libblas=*=*blis (conda-forge)', 'netlib': 'libblas=*=*netlib (conda-forge)'}[requested]
    if numpy_from_pip:
        return ('numpy comes from pip, and a PyPI numpy always bundles its own OpenBLAS: take numpy out of the pip: '
                'section, add it to the conda dependencies and select the BLAS with %s' % selector)
    return ('take numpy from a channel that builds it for %s and select it with %s, or ask for the BLAS this numpy '
            'uses (%s)' % (requested, selector, ', '.join(found) or 'none found'))


def blas_report(env, prefix, requested, reason, probe, numpy_from_pip=False):
    """Whether numpy in the env uses the BLAS asked for: ``{requested, requested_by, found,
    libraries, numpy, numpy_build_blas, verified, problem}``; ``problem`` is the named failure
    (env, asked BLAS, found BLAS and its library path, the fix) or None."""
    report = {'requested': requested, 'requested_by': reason, 'found': [], 'libraries': [], 'numpy': probe.get('numpy'),
              'numpy_build_blas': build_blas(probe.get('config')), 'verified': False, 'problem': None}
    asked = 'env %s asks for BLAS %s (%s)' % (env, requested, reason)
    if probe.get('numpy') is None:
        report['problem'] = ('%s, but numpy does not import in %s (%s). Fix: add numpy to the dependencies, or drop '
                             'the BLAS request' % (asked, prefix, probe.get('error') or 'no error given'))
        return report
    found = classify_blas(mapped_libraries(probe.get('maps')))
    report['found'] = sorted(found)
    report['libraries'] = sorted(path for paths in found.values() for path in paths)
    if set(found) == set([requested]):
        report['verified'] = True
        return report
    if not found:
        seen = 'no BLAS library it knows'
    else:
        seen = '; '.join('%s (%s)' % (vendor, ', '.join(found[vendor])) for vendor in sorted(found))
    report['problem'] = '%s, but numpy %s in %s loads %s. Fix: %s' % (
        asked, probe['numpy'], prefix, seen, _fix(requested, sorted(found), numpy_from_pip))
    return report


def unsolvable_message(env, requested, reason, solver_failure, current=None):
    """The failure of a spec that asks for a BLAS and cannot be solved, with what the env (when it
    exists) uses now: the usual cause is a numpy that the channels build for another BLAS only."""
    now = ''
    if current is not None:
        now = (' The env now uses %s (numpy %s: %s).' % (', '.join(current['found']) or 'no known BLAS',
                                                         current['numpy'], ', '.join(current['libraries']) or '-')
               if current['numpy'] else ' numpy does not import in the env now.')
    return ('env %s asks for BLAS %s (%s) and the spec cannot be solved; the env is unchanged.%s Fix: use channels '
            'whose numpy is built for %s (conda-forge: libblas=*=*%s; Anaconda: blas=*=%s), or ask for the BLAS that '
            'the channels\' numpy uses. The solver said: %s' % (env, requested, reason, now, requested, requested,
                                                                requested, solver_failure))


def unverified(requested, reason, why):
    """The report of an env whose BLAS was asked for but not probed (``why``)."""
    return {'requested': requested, 'requested_by': reason, 'found': [], 'libraries': [], 'numpy': None,
            'numpy_build_blas': None, 'verified': False, 'problem': None, 'not_probed': why}
