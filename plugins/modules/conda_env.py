#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: conda_env
short_description: Declare a conda environment from an environment.yml spec, with drift detection and a lock
version_added: 0.1.0
description:
  - Makes a conda environment match a declared environment.yml spec, driving the conda CLI of an existing
    installation (C(<conda_prefix>/bin/conda)).
  - Creates a missing env with C(conda env create), and brings an existing one to the spec with
    C(conda env update --prune). It never runs C(conda env create) over an existing env, because conda
    then deletes and recreates it silently.
  - Before any change the conda part of the spec is solved with a dry run (C(conda create --dry-run)), so an
    unsolvable spec, a missing package or an unreachable channel fails with a named reason and the env unchanged.
  - C(nodefaults) in the channels (which conda 26 takes for a channel name and fails on) is removed; the dry
    run then uses C(--override-channels) so the spec must solve from its own channels alone.
  - "Drift is found these ways: declared conda packages and pip projects missing (or a pinned pip version
    differing) in C(conda list); the spec differing from the one applied last; the env's packages differing
    from the explicit lock written after the last change (a package removed by hand; read from the env's
    C(conda-meta) records as C(conda list --explicit --md5) prints them, and asked of conda only where they differ); an in-progress marker
    left by a change that did not finish; a prefix without C(conda-meta/history); packages whose files are missing (bytecode aside)
    and C(*.c~) backups left by an interrupted unlink."
  - After each change it writes, beside the env in O(lock_dir), C(<name>.environment.yml) (the spec applied),
    C(<name>.explicit.txt) (C(conda list --explicit --md5)), C(<name>.pip.txt) (the pip packages, C(name==version) a
    line, which neither conda lock records) and C(<name>.from-history.yml) (C(conda env export --from-history)), and
    returns the explicit lock's sha256.
  - "pip packages: C(conda env update --prune) never removes them, so a pip project this spec does not declare that the
    spec applied last declared, or that was installed after C(<name>.pip.txt) was written, is drift and is uninstalled
    (C(python -m pip uninstall -y)) after the update; any other difference from C(<name>.pip.txt) is drift too.
    The spec's C(variables:) are set by conda (C(conda-meta/state)); a declared one missing or set otherwise is drift,
    and one the spec applied last declared and this one does not is unset (C(conda env config vars unset)), as
    C(conda env update) never unsets any. Variables no spec of this module declared are left alone."
  - "After python's minor version changes (3.11 to 3.12), conda removes only the files it recorded: what pip installed
    for the older python stays in C(lib/python3.11). A C(lib/pythonX.Y) folder of another python than the env's that
    no conda record owns a file in is drift, and is deleted after the change."
  - "A folder without C(conda-meta) where this module applied a spec before (C(conda-meta) deleted by hand) is drift:
    it is deleted and the env created again, since creating over it would leave what the spec dropped importable. A
    folder this module never made an env in is created over, as conda does."
  - "An unsolvable spec (C(UnsatisfiableError), whose message names nothing with conda's classic solver at times) fails
    naming the declared specs that cannot be solved together, found by dry runs with one spec left out at a time."
  - Before it changes an env (create, update or removal) it writes an in-progress marker, C(<name>.in-progress.json) in
    O(lock_dir) (what is applied, when, the rendered spec's sha256), and removes it only after the new lock and export
    are written. A marker found later means a change was killed midway (conda keeps no record of that); it is drift
    even when the package list looks right (RV(interrupted)), and the lock beside it is not valid.
  - The spec being applied is written to a work folder of its own, C(.<name>.applying/) in O(lock_dir), because conda
    writes the pip section's C(condaenv.*.requirements.txt) beside the file it is given and leaves it there when it is
    killed; the folder is removed after each change, and before a repair.
  - "Repair of an unfinished change (O(state=present)): an update of the same spec is applied again with C(conda env update --prune)
    (conda works from the records in conda-meta: what it had unlinked is unlinked again, what it had not recorded yet is
    linked again). An unfinished create or removal, an update towards another spec, or an unreadable marker is
    removed (C(conda remove --all), or deleting the prefix folder when it holds no conda-meta and was this module's own)
    and created again: a half-created prefix holds files of packages whose records were never written, which an update
    would neither see nor remove."
  - The spec is given as data (O(spec)); the C(aistack.gpu_node.conda_env) role reads environment.yml files on
    the controller and passes them here.
  - "BLAS: when the spec selects one (C(blas=*=mkl) or C(blas=*=openblas) on Anaconda's channels,
    C(libblas=*=*mkl) or C(libblas=*=*openblas) on conda-forge) or O(blas) names one, numpy is asked inside the env,
    by the env's own python, which BLAS it really uses: after a matrix product the shared libraries mapped in the
    process (C(/proc/self/maps)) are classified (C(libmkl_*), C(libopenblas*) / C(libscipy_openblas*), C(libblis*),
    reference C(libblas)). Another BLAS, several, or numpy missing fail naming the env, the BLAS asked, the one
    found with its library path, and the fix. numpy's own build configuration is reported beside it, not trusted:
    a conda-forge numpy reports the generic C(blas) it was linked against whichever library is installed."
  - Envs that ask for no BLAS are not probed.
author: aistack.gpu_node contributors (@aistack)
options:
  name:
    description:
      - Environment name. The env lives at O(prefix), or C(<first envs_dirs entry>/<name>).
    type: str
    required: true
  state:
    description:
      - V(present) creates or updates the env; V(absent) removes it (C(conda remove --all)) and its lock files.
    type: str
    choices: [present, absent]
    default: present
  spec:
    description:
      - The environment.yml content as a mapping with C(channels), C(dependencies) (conda match specs and at
        most one C(pip:) list) and optional C(variables). C(name) and C(prefix) in it are ignored.
      - Required with O(state=present).
    type: dict
  conda_prefix:
    description:
      - Prefix of the conda installation whose C(bin/conda) is run.
    type: path
    default: /opt/conda
  prefix:
    description:
      - Full path of the env, overriding the location derived from O(name).
    type: path
  lock_dir:
    description:
      - Writable directory for the rendered spec and the lock files; defaults to the directory holding the env.
      - Conda writes the pip section's requirements file next to the spec, so this must be writable.
    type: path
  driver_version:
    description:
      - NVIDIA driver version of the node. It chooses the PyTorch wheel variant (C(cuXXX)) of a pip section that installs
        C(torch), C(torchvision) or C(torchaudio) (see O(torch_cuda_variant)), checks a variant the spec names itself, and
        names the fitting index when a spec asks for the retired PyTorch conda channel.
    type: str
  gpu_present:
    description:
      - Whether the node has an NVIDIA GPU (C(ansible_facts.aistack_gpu.state != 'no_gpu')). V(false) makes
        O(torch_cuda_variant=auto) install the CPU build of torch (variant C(cpu)); unset, only the driver version decides.
    type: bool
  gpus:
    description:
      - The node's GPUs, C(ansible_facts.aistack_gpu.gpus) (each with C(index), C(name) and C(compute_capability)).
      - A torch wheel variant is chosen, or accepted when the spec or O(torch_cuda_variant) names it, only when its wheels
        carry kernels for every GPU's compute capability (SASS, or PTX that the driver JIT-compiles), by the arch lists of
        the published wheels; else the module fails before any change, naming the GPU and what would fit.
      - Empty (no GPU known, for example an image build) leaves the choice to O(driver_version) alone.
    type: list
    elements: dict
    default: []
  torch_cuda_variant:
    description:
      - Which PyTorch wheel variant a pip section that installs PyTorch projects gets, unless the spec names one (an
        C(--index-url)/C(--extra-index-url) ending in C(/whl/cuXXX), or a pin such as C(torch==2.11.0+cu130)), which is kept
        and checked against O(driver_version).
      - V(auto) fits the pinned torch series to O(driver_version) and O(gpus) (the newest CUDA build the driver fully
        supports, else the newest it runs by minor-version compatibility, with a warning; of those, the first whose wheels
        carry kernels for every GPU) and puts C(--extra-index-url <torch_index><variant>)
        first in the section; the wheels' local label (C(+cu130)) makes pip prefer them to PyPI's build. Without a driver
        version nothing is added and a warning says so.
      - A variant (V(cu126), V(cpu), ...) must be published for the pinned series and run on the driver.
      - V(none) leaves the section as written.
    type: str
    default: auto
  torch_index:
    description:
      - Base URL of the PyTorch wheel indexes (a mirror of C(https://download.pytorch.org/whl/) for air-gapped sites);
        the variant is appended.
    type: str
    default: https://download.pytorch.org/whl/
  environment:
    description:
      - Extra environment variables for every conda call, for example C(CONDA_OVERRIDE_CUDA) or proxies.
    type: dict
    default: {}
  blas:
    description:
      - BLAS that numpy in the env must use, verified like a BLAS selected in the spec. It selects nothing itself;
        the spec's dependencies decide what is installed (a numpy from pip always bundles OpenBLAS).
      - Must agree with the spec's C(blas) / C(libblas) selector when it has one.
    type: str
    choices: [openblas, mkl, blis, netlib]
  pip_kept:
    description:
      - pip projects that other tools install into the env after this module, such as the C(apex) wheel of the
        C(aistack.gpu_node.apex_build) role. They are never uninstalled as undeclared and are left out of the pip drift
        checks and the pip lock comparison.
      - A project the spec declares is still checked as declared.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: partial
    description:
      - Reports whether the env would change, why (RV(drift)), and the package changes predicted by a dry-run solve.
    details:
      - A dry run does not run pip, so pip changes are predicted from the pins only (RV(pip_simulated) is false).
      - An unfinished earlier change is reported (RV(drift), RV(interrupted)) and its marker left in place.
      - The prediction is a fresh solve of the spec, as C(conda env update --prune) makes one (it leaves the installed
        packages and the history out), so an unpinned package is shown at the newest version that fits.
      - When the channels are unreachable (a node whose .condarc is not written yet, a channel gone from the mirror)
        nothing is predicted and RV(not_predicted) says why.
      - The BLAS is verified in check mode too, read-only (C(python -I -B)), when the env exists and would not change;
        otherwise RV(blas.not_probed) says why it was not.
  diff_mode:
    support: full
    description: The env's package list (conda and pip) before and after, one C(name==version=build) line each.
  platform:
    support: full
    platforms: posix
    description: Linux nodes with a conda installation (Miniconda or Miniforge, conda 23.10 or later).
seealso:
  - name: conda env update
    description: The command used on an existing env.
    link: https://docs.conda.io/projects/conda/en/stable/commands/env/update.html
notes:
  - "Only a prefix with C(conda-meta/history) is an env: conda writes that file last, and refuses any other prefix
    (C(DirectoryNotACondaEnvironmentError)) for every command, C(conda remove --all) included. A prefix with
    C(conda-meta/) and no C(history) (a create killed midway, by this module or outside it) is drift; it is deleted
    and created again (O(state=absent) deletes it)."
  - "A package whose files are missing while its record is intact (deleted by hand, or by a tool other than conda) is
    drift, and only that package is repaired: C(conda install --force-reinstall -p PREFIX name==version=build), at the
    version and build it had, then C(env update --prune) only if anything else differs. Bytecode (C(*.pyc),
    C(__pycache__/)) is no damage: conda lists the C(.pyc) files it compiled for noarch python packages in their records,
    and python writes them again on import. RV(repair) says what was done and why."
  - "An unlink killed midway leaves files renamed to C(*.c~) and, until the package's record is renamed last, a record
    whose files are gone; conda then calls the env complete. Both are drift here (every record's C(files) are checked
    and the prefix is searched for C(*.c~)), and such an env, like one with a record that cannot be read, is past repair
    in place: it is removed and created again, as C(env update --prune) and a reinstall work from records that no
    longer say what the env holds. The env is replaced in place, not built beside and swapped, because a conda env
    holds its own path in scripts and text files; the in-progress marker makes a killed replacement repaired by the
    next run."
  - A prefix whose conda-meta holds a history and no marker (an update killed outside this module) is an env; it is
    updated with C(conda env update --prune) unless the checks above find it damaged.
  - When the pip section fails, conda has already applied the conda part; the failure names pip's own error (which
    conda prints on stderr only) and the in-progress marker stays, so the env is drift until a run completes.
  - "Each package has one installer: a pip requirement that names a conda package of the env (declared, or linked as
    a dependency by the dry-run solve), C(numpy==2.4.5) beside conda's numpy or C(pip==25.3) beside conda's pip, is
    refused before any change, naming the package and the fix. pip would replace conda's files while conda keeps its
    record, so the two would disagree on the version and C(conda env export --from-history) would fail on it."
  - C(conda env create) and C(conda env update) accept no channel options, so with C(nodefaults) the apply step
    still sees the channels of .condarc after the spec's own; with C(channel_priority=strict) a package found in
    the spec's channels is never taken from them, and the dry run has proved the spec's channels suffice. The
    installed packages are checked too; an env that declares C(nodefaults) and holds conda packages from other
    channels (made elsewhere, or without strict priority) fails, naming them, before and after any change.
'''

EXAMPLES = r'''
- name: Torch env with a pip section
  aistack.gpu_node.conda_env:
    name: torch
    spec:
      channels: [conda-forge, nodefaults]
      dependencies:
        - python=3.11
        - pip
        - numpy
        - pip:
            - --index-url https://download.pytorch.org/whl/cu130
            - torch==2.11.0

- name: Remove an env
  aistack.gpu_node.conda_env:
    name: scratch
    state: absent
'''

RETURN = r'''
prefix:
  description: Path of the env.
  returned: always
  type: str
  sample: /opt/conda/envs/torch
drift:
  description: Why the env differs from its declaration; empty when it matches.
  returned: always
  type: list
  elements: str
  sample: ['declared conda packages not installed: hello-ansible']
package_changes:
  description: Packages added, removed and changed (conda and pip), done or, in check mode, predicted.
  returned: always
  type: dict
  sample: {added: ['rich==13.9.4=pypi_0'], removed: [], changed: ['libfoo 1.1.0=h4616a5c_0 -> 1.0.0=h4616a5c_0']}
pip_simulated:
  description: Whether pip changes were simulated; always false in check mode, where a dry run cannot run pip.
  returned: always
  type: bool
warnings_spec:
  description: Lint warnings about the spec, for example the PyTorch conda channel's last torch.
  returned: always
  type: list
  elements: str
lock:
  description:
    - Paths of the files written beside the env and the sha256 of the explicit lock.
    - C(marker) is the path of the in-progress marker, which exists only while a change runs or after one was killed;
      the lock is valid only while it does not exist.
  returned: when the env exists after the run
  type: dict
  sample:
    explicit: /opt/conda/envs/torch.explicit.txt
    from_history: /opt/conda/envs/torch.from-history.yml
    pip: /opt/conda/envs/torch.pip.txt
    spec: /opt/conda/envs/torch.environment.yml
    marker: /opt/conda/envs/torch.in-progress.json
    sha256: 9f2c...
torch_variant:
  description: The PyTorch wheel variant of the pip section, when it installs PyTorch projects and O(torch_cuda_variant) is
    not V(none) (null otherwise, or when the driver version is unknown).
  returned: always
  type: dict
  sample:
    variant: cu130
    series: "2.11"
    cuda: "13.0"
    support: full
    chosen_by: driver 580.159.04 and GPU 0 (NVIDIA H200, compute capability 9.0)
    index: https://download.pytorch.org/whl/cu130
interrupted:
  description:
    - The in-progress marker of an earlier change that did not finish, found at the start of this run; this run
      repairs it (in check mode, says it would).
    - C(action) is V(create), V(update) or V(remove), or null when the marker could not be read.
  returned: when an earlier change did not finish
  type: dict
  sample:
    env: torch
    prefix: /opt/conda/envs/torch
    action: update
    command: conda env update --prune -f /opt/conda/envs/.torch.applying/environment.yml -p /opt/conda/envs/torch
    started: '2026-12-02T22:10:00Z'
    spec_sha256: 5e1b...
    prefix_is_ours: false
repair:
  description:
    - How damaged packages of the env are repaired (in check mode, would be), and why that way.
    - C(how) is V(reinstall) (C(conda install --force-reinstall) of C(packages), each C(name==version=build)) or
      V(replace) (the env is removed and created again; C(packages) is empty).
  returned: when packages of the env have files missing, or an interrupted conda transaction left C(*.c~) backups
  type: dict
  sample:
    how: reinstall
    packages: [libfoo==1.0.0=h4616a5c_0]
    why: only files of libfoo are missing and their records are intact, so conda reinstalls those packages at the same
      version and build
not_predicted:
  description: Why check mode could not predict the package changes (the channels were unreachable, for example on a node
    whose .condarc is not written yet); the env is still reported as changed.
  returned: in check mode, when the dry-run solve could not reach the channels
  type: str
diff:
  description: The env's package list before and after (predicted in check mode), one V(name==version=build  (channel\)) line each.
  returned: always
  type: dict
  contains:
    before:
      description: Packages installed before the run.
      type: str
    after:
      description: Packages installed after the run.
      type: str
commands:
  description: The commands that changed the env, in order (C(rm -rf PREFIX) for a folder an unfinished create left).
  returned: always
  type: list
  elements: str
scrubbed:
  description:
    - The files conda wrote for the env and the package caches (conda's C(pkgs_dirs)) that held a URL with a
      user and password (a mirror URL from C(.condarc)), scrubbed of it after the run's transaction; in check mode,
      those that would be. Text files (conda-meta records and C(history), C(urls.txt), C(info/repodata_record.json),
      C(cache/*.info.json)) keep their owner and mode; C(cache/*.q), conda's pickled repodata parse, is deleted
      (conda rebuilds it). Any scrub counts as a change.
    - See docs/security.md for what it cannot reach.
  returned: always
  type: list
  elements: str
  sample: [/opt/conda/pkgs/urls.txt]
blas:
  description:
    - What numpy in the env uses, against the BLAS asked for; null when neither the spec nor O(blas) asks for one.
    - Also returned with the failure when the BLAS does not match.
  returned: with O(state=present)
  type: dict
  contains:
    requested:
      description: The BLAS asked for, one of V(openblas), V(mkl), V(blis), V(netlib).
      type: str
    requested_by:
      description: The spec line that selects it, or C(blas) for the option.
      type: str
    verified:
      description: Whether numpy loads exactly the BLAS asked for.
      type: bool
    found:
      description: The BLAS libraries numpy loaded, by kind.
      type: list
      elements: str
    libraries:
      description: Paths of those libraries.
      type: list
      elements: str
    numpy:
      description: numpy's version, null when it does not import.
      type: str
    numpy_build_blas:
      description: The BLAS numpy was built against, from C(numpy.show_config) with C(mode='dicts') (numpy 1.26 and later).
      type: dict
    problem:
      description: Why the BLAS does not match (the failure message), or null.
      type: str
    not_probed:
      description: Why numpy was not asked (check mode on an env that would change or does not exist yet).
      type: str
  sample:
    requested: openblas
    requested_by: blas=*=openblas
    verified: true
    found: [openblas]
    libraries: [/opt/conda/envs/demo-blas/lib/python3.11/site-packages/numpy.libs/libscipy_openblas64_-32a4b2a6.so]
    numpy: 2.4.6
    numpy_build_blas: {name: scipy-openblas, version: 0.3.31.188.0}
    problem: null
'''

import json
import os
import pwd
import shutil
import stat
import threading
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.node_access import read_file
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import blas as cb
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import env as ce


class Conda(object):
    """Runs ``<conda_prefix>/bin/conda`` and turns its failures into named errors."""

    def __init__(self, module):
        self.module = module
        self.executable = os.path.join(module.params['conda_prefix'], 'bin', 'conda')
        if not os.access(self.executable, os.X_OK):
            raise ce.CondaEnvError('conda_prefix %s has no executable bin/conda: install conda first (miniconda role)'
                                   % module.params['conda_prefix'])
        self.environ = dict((str(k), str(v)) for k, v in module.params['environment'].items())
        self._ahead = None

    def list_ahead(self, prefix):
        """Starts ``conda list -p prefix --json`` now, in a thread of its own, while the module asks conda where envs
        live and reads the env's files (each conda run is a conda start of its own): listed_ahead() hands its
        output to the module's first look at that prefix."""
        outcome = {}

        def run():
            try:
                outcome['run'] = self.module.run_command([self.executable, 'list', '-p', prefix, '--json'],
                                                         environ_update=self.environ, handle_exceptions=False)
            except (OSError, ValueError):
                pass
        thread = threading.Thread(target=run)
        thread.start()
        self._ahead = (prefix, thread, outcome)

    def listed_ahead(self, prefix):
        """What the listing started ahead printed, where it was of ``prefix`` and succeeded; else None. It is
        handed out once (a later look, after a change, asks conda again)."""
        if self._ahead is None:
            return None
        listed_prefix, thread, outcome = self._ahead
        thread.join()
        self._ahead = None
        rc, out, _err = outcome.get('run', (None, None, None))
        return out if listed_prefix == prefix and rc == 0 else None

    def run(self, *args):
        argv = [self.executable] + list(args)
        rc, out, err = self.module.run_command(argv, environ_update=self.environ)
        if rc != 0:
            raise ce.conda_failure(' '.join(['conda'] + list(args)), rc, out, err)
        return out

    def json(self, *args):
        return ce.parse_json(self.run(*(args + ('--json',))), ' '.join(('conda',) + args))


def write_text(module, path, text):
    directory = os.path.dirname(path)
    temporary = os.path.join(directory, '.%s.tmp' % os.path.basename(path))
    with open(temporary, 'w') as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    module.atomic_move(temporary, path)


def locate(envs_dirs, root, name, prefix):
    """The env's prefix: ``prefix``, else ``<first envs dir>/<name>``; never conda's base ``root``."""
    prefix = prefix or os.path.join(envs_dirs[0], name)
    if os.path.realpath(prefix) == os.path.realpath(root):
        raise ce.CondaEnvError('prefix %s is the base prefix; conda_env manages named envs only' % prefix)
    return prefix


def installed(conda, prefix, listed=None):
    """The env's packages, from ``listed`` (what conda list -p PREFIX --json printed) where given."""
    if listed is None:
        return ce.installed_packages(conda.json('list', '-p', prefix))
    return ce.installed_packages(ce.parse_json(listed, 'conda list -p %s' % prefix))


def explicit_entries(conda, prefix, records, stored_lock):
    """The env's package list as ``conda list --explicit --md5`` gives it, read from conda-meta's records
    (ce.recorded_explicit_entries); conda itself is asked only where that reading differs from the lock,
    so a URL conda would print otherwise is never taken for drift."""
    entries = ce.recorded_explicit_entries([record for _entry, record in records if record])
    if stored_lock is not None and entries != ce.explicit_entries(stored_lock):
        entries = ce.explicit_entries(conda.run('list', '--explicit', '--md5', '-p', prefix))
    return entries


def conflicting_specs(conda, environment, solve_prefix):
    """The declared conda specs that cannot be solved together, by dry runs with one spec left out at a
    time (kept out while the rest still cannot be solved): a set that fails whole and solves without any
    one of its specs. None when a dry run fails otherwise (a channel out of reach): no verdict."""
    conflicting = list(environment['conda'])
    for spec in environment['conda']:
        trial = [other for other in conflicting if other != spec]
        if not trial:
            break
        try:
            solve(conda, dict(environment, conda=trial), solve_prefix)
        except ce.CondaEnvError as error:
            if error.exception_name not in ce.UNSATISFIABLE:
                return None
            conflicting = trial
    return conflicting


def channel_args(environment):
    """The spec's channels as conda create/install take them (its own alone with nodefaults)."""
    args = ['--override-channels'] if environment['override_channels'] else []
    for channel in environment['channels']:
        args += ['-c', channel]
    return args


def solve(conda, environment, solve_prefix):
    """Dry-run solve of the spec's conda part into a prefix that does not exist: the env a create
    would make, and a named failure (unsolvable, missing, offline) before anything changes."""
    args = ['create', '--dry-run', '-p', solve_prefix] + channel_args(environment)
    return ce.transaction(conda.json(*(args + environment['conda'])))


def write_locks(module, conda, prefix, paths, spec_file, packages):
    module.atomic_move(spec_file, paths['spec'])
    explicit = conda.run('list', '--explicit', '--md5', '-p', prefix)
    write_text(module, paths['explicit'], explicit)
    write_text(module, paths['pip'], ce.pip_lock(packages))
    write_text(module, paths['from_history'], conda.run('env', 'export', '--from-history', '-p', prefix))
    return ce.sha256_text(explicit)


def read_marker(paths):
    text = read_file(paths['marker'])
    return ce.parse_marker(text) if text is not None else None


def start_change(module, paths, name, prefix, action, command, spec_sha256, prefix_is_ours):
    """Writes the in-progress marker; only the end of a successful change removes it."""
    write_text(module, paths['marker'], ce.render_marker(
        name, prefix, action, command, spec_sha256, time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()), prefix_is_ours))


def removal_command(prefix, removal):
    return {'conda': 'conda remove -y --all -p %s' % prefix, 'directory': 'rm -rf %s' % prefix}[removal]


def clear_prefix(conda, prefix, removal, commands):
    """Removes what an unfinished change left at the prefix: with conda when it is an env, else the
    folder (one of this module's own, or a conda-meta without history that conda refuses; see present_plan)."""
    if removal == 'conda':
        conda.json('remove', '-y', '--all', '-p', prefix)
        commands.append(removal_command(prefix, removal) + ' --json')
    elif removal == 'directory':
        shutil.rmtree(prefix)
        commands.append(removal_command(prefix, removal))


def prefix_kind(prefix):
    """What is at the prefix, as conda sees it: ``env`` only with conda-meta/history (ce.prefix_kind)."""
    meta = os.path.join(prefix, 'conda-meta')
    return ce.prefix_kind(os.path.isdir(prefix), os.path.isdir(meta), os.path.isfile(os.path.join(meta, ce.HISTORY)))


def read_records(prefix):
    """conda-meta's package records: ``[(file name, record, or None when it cannot be read)]``."""
    meta = os.path.join(prefix, 'conda-meta')
    records = []
    for entry in sorted(os.listdir(meta)):
        if not entry.endswith('.json'):
            continue
        try:
            with open(os.path.join(meta, entry)) as handle:
                record = json.load(handle)
            records.append((entry, record if isinstance(record, dict) else None))
        except ValueError:
            records.append((entry, None))
    return records


def damaged_packages(prefix, records):
    """What a killed unlink or a hand-deleted file left (ce.damage_repair): records whose files are gone,
    bytecode aside, and ``*.c~`` backups; None when nothing is damaged."""
    found = []
    for entry, record in records:
        unreadable = record is None
        files = ['conda-meta/%s (unreadable record)' % entry] if unreadable else record.get('files') or []
        record = record or {}
        found.append({'name': record.get('name', entry), 'version': record.get('version', '?'),
                      'build': record.get('build', ''), 'unreadable': unreadable,
                      'missing': [path for path in files if not ce.regenerated(path)
                                  and not os.path.lexists(os.path.join(prefix, path))]})
    backups = []
    for folder, _folders, names in os.walk(prefix):
        backups += [os.path.relpath(os.path.join(folder, n), prefix) for n in names if n.endswith(ce.UNLINK_BACKUP_SUFFIX)]
    return ce.damage_repair(found, backups)


def python_leftovers(prefix, records, packages):
    """``(folders, contents)``: the lib/pythonX.Y folders an earlier python left (ce.python_leftovers),
    with a few names of what their site-packages hold."""
    lib = os.path.join(prefix, 'lib')
    python = next((r['version'] for r in packages if r['name'] == 'python' and r['channel'] != ce.PIP_CHANNEL), None)
    if not python or not os.path.isdir(lib):
        return [], {}
    owned = set(path.split('/')[1] for _entry, record in records for path in (record or {}).get('files') or []
                if path.startswith('lib/python') and path.count('/') > 1)
    folders = ce.python_leftovers(python, os.listdir(lib), owned)
    contents = dict((name, sorted(os.listdir(os.path.join(lib, name, 'site-packages')))
                     if os.path.isdir(os.path.join(lib, name, 'site-packages')) else []) for name in folders)
    return folders, contents


def env_variables(prefix):
    """The env's variables as conda keeps them (conda-meta/state), unset ones included."""
    text = read_file(os.path.join(prefix, 'conda-meta', 'state'))
    try:
        state = json.loads(text) if text else {}
    except ValueError:
        raise ce.CondaEnvError('%s/conda-meta/state does not parse as JSON; conda keeps the env\'s variables there' % prefix)
    return dict(state.get('env_vars') or {}) if isinstance(state, dict) else {}


def lock_result(paths):
    explicit = read_file(paths['explicit'])
    return dict(paths, sha256=ce.sha256_text(explicit) if explicit is not None else None)


def probe_blas(module, name, prefix, requested, reason, packages):
    """Ask numpy, run by the env's own python, which BLAS it loads (read-only: no bytecode written)."""
    python = os.path.join(prefix, 'bin', 'python')
    if os.access(python, os.X_OK):
        rc, out, err = module.run_command([python, '-I', '-B', '-c', cb.PROBE], environ_update=cb.PROBE_ENVIRONMENT)
        if rc != 0:
            raise ce.CondaEnvError('env %s: %s -c <numpy BLAS probe> failed (rc=%s): %s'
                                   % (name, python, rc, ((err or '') + (out or '')).strip()[-800:]))
        probe = cb.parse_probe(out, python)
    else:
        probe = {'numpy': None, 'error': 'the env has no bin/python'}
    from_pip = any(r['name'] == 'numpy' and r['channel'] == ce.PIP_CHANNEL for r in packages)
    return cb.blas_report(name, prefix, requested, reason, probe, numpy_from_pip=from_pip)


def verified_blas(module, name, prefix, requested, reason, packages, result):
    """The BLAS report of an env that asks for one, None otherwise; a mismatch fails with ``result``
    (what was done before) and the report."""
    if requested is None:
        return None
    report = probe_blas(module, name, prefix, requested, reason, packages)
    if report['problem']:
        raise cb.BlasMismatch(report, result)
    return report


def uninstall_pip(module, name, prefix, projects, commands):
    """Removes pip packages the spec no longer declares (conda env update leaves them)."""
    argv = [os.path.join(prefix, 'bin', 'python'), '-m', 'pip', 'uninstall', '-y'] + projects
    rc, out, err = module.run_command(argv)
    if rc != 0:
        raise ce.CondaEnvError('env %s: %s failed (rc=%s): %s' % (name, ' '.join(argv), rc, ((err or '') + (out or '')).strip()[-800:]))
    commands.append(' '.join(argv))


def ensure_present(module, conda, name, prefix, lock_dir):
    params = module.params
    environment = ce.normalize_environment(params['spec'], source='spec of env %s' % name,
                                           driver_version=params['driver_version'],
                                           torch_variant=params['torch_cuda_variant'],
                                           torch_index=params['torch_index'].rstrip('/') + '/',
                                           gpu_present=params['gpu_present'], gpus=params['gpus'])
    requested, reason = cb.requested_blas(environment['conda'], params['blas'], source='spec of env %s' % name)
    rendered = ce.render_environment(name, environment)
    spec_sha256 = ce.sha256_text(rendered)
    paths = ce.env_files(lock_dir, name)
    marker = read_marker(paths)
    kind = prefix_kind(prefix)
    exists = kind == 'env'
    prefix_existed = kind != 'missing'
    stored_spec = read_file(paths['spec'])
    records = read_records(prefix) if exists else []
    repair = damaged_packages(prefix, records) if exists else None
    # conda-meta deleted by hand under an env this module made: the folder is deleted, never created over.
    meta_lost = kind == 'folder' and marker is None and stored_spec is not None
    action, removal = ce.present_plan(exists, prefix_existed, marker, spec_sha256, not_an_env=kind == 'not-an-env',
                                      damaged=bool(repair) and repair['how'] == 'replace', meta_lost=meta_lost)
    reinstall = repair['packages'] if repair and action == 'update' else []
    listed = conda.listed_ahead(prefix)
    before = installed(conda, prefix, listed) if exists else []
    kept = set(ce.normalize_pip_name(project) for project in params['pip_kept'])
    reasons = [ce.unfinished_change(name, marker, action, removal)] if marker else []
    other_drift, stale_variables, leftovers = [], [], []
    if exists:
        variable_reasons, stale_variables = ce.variable_drift(environment, env_variables(prefix), stored_spec)
        stored_lock = read_file(paths['explicit'])
        other_drift = ce.drift(environment, before, stored_spec, rendered, stored_lock,
                               explicit_entries(conda, prefix, records, stored_lock), read_file(paths['pip']), kept) \
            + variable_reasons
        leftovers, contents = python_leftovers(prefix, records, before)
        reasons += (repair['reasons'] if repair else []) + other_drift \
            + ([ce.leftovers_reason(leftovers, next(r['version'] for r in before if r['name'] == 'python'), contents)]
               if leftovers else [])
    elif kind == 'not-an-env':
        reasons.append(ce.not_an_env_reason(prefix))
    elif meta_lost:
        reasons.append(ce.meta_lost_reason(prefix))
    else:
        reasons.append('env %s does not exist' % prefix)
    result = dict(prefix=prefix, drift=reasons, pip_simulated=False, warnings_spec=environment['warnings'],
                  torch_variant=environment['torch_variant'],
                  commands=[], package_changes=ce.package_changes(before, before))
    if marker:
        result['interrupted'] = marker
    if repair:
        result['repair'] = dict((key, repair[key]) for key in ('how', 'packages', 'why'))
    foreign = ce.foreign_channel_problem(name, environment, before) if exists and not marker else None
    if foreign:
        raise ce.CondaEnvError(foreign)
    if not reasons:
        result.update(changed=False, lock=lock_result(paths), diff=diff_of(before, before),
                      blas=verified_blas(module, name, prefix, requested, reason, before, result))
        return result
    # Replaced by the probe after the change; what check mode reports.
    result['blas'] = cb.unverified(requested, reason, 'check mode: the env would be %s first'
                                   % ('updated' if exists else 'created')) if requested else None

    if not os.path.isdir(lock_dir):
        raise ce.CondaEnvError('lock_dir %s does not exist; it must be a writable directory' % lock_dir)
    solve_prefix = os.path.join(lock_dir, '.%s.solve-check' % name)
    try:
        planned = solve(conda, environment, solve_prefix)
    except ce.CondaEnvError as error:
        if requested and error.exception_name in cb.UNSOLVABLE:
            current = probe_blas(module, name, prefix, requested, reason, before) if exists else None
            raise ce.CondaEnvError(cb.unsolvable_message(name, requested, reason, str(error), current))
        if error.exception_name in ce.UNSATISFIABLE:
            raise ce.CondaEnvError(ce.conflict_message(str(error), conflicting_specs(conda, environment, solve_prefix)),
                                   exception_name=error.exception_name)
        # In check mode on a node whose .condarc is not written yet, or whose channel is gone, the channels are
        # out of reach: the run says it would change the env and why it cannot predict more, instead of failing.
        if not (module.check_mode and error.exception_name in ce.CHANNELS_UNREACHABLE):
            raise
        result.update(changed=True, diff=diff_of(before, before),
                      not_predicted='packages not predicted, the channels are unreachable: %s' % error)
        module.warn('env %s: %s' % (name, result['not_predicted']))
        return result
    both = ce.pip_over_conda(environment['pip'], dict((ce.normalize_pip_name(r['name']), '%s %s' % (r['name'], r['version']))
                                                      for r in planned['link']), solved=True)
    if both:
        raise ce.CondaEnvError('spec of env %s: %s. Nothing was changed' % (name, both))
    if module.check_mode:
        after = sorted(planned['link'] + ce.predicted_pip(before, environment, ce.stray_pip(stored_spec, read_file(paths['pip']), environment, before, kept)),
                       key=lambda r: r['name'])
        result.update(changed=True, package_changes=ce.package_changes(before, after), diff=diff_of(before, after))
        return result

    spec_file = os.path.join(paths['work'], 'environment.yml')
    commands = []
    if reinstall:
        # Only the damaged packages, at the version and build they had; the env update follows only
        # when something else differs too.
        commands.append(('install', '-y', '--force-reinstall', '-p', prefix) + tuple(channel_args(environment))
                        + tuple(reinstall))
    if action == 'update' and (marker or other_drift):
        commands.append(('env', 'update', '--prune', '-f', spec_file, '-p', prefix))
    if action == 'update' and stale_variables:
        commands.append(('env', 'config', 'vars', 'unset', '-p', prefix) + tuple(stale_variables))
    elif action == 'create':
        commands.append(('env', 'create', '-f', spec_file, '-p', prefix))
    start_change(module, paths, name, prefix, action, '; '.join(' '.join(('conda',) + command) for command in commands),
                 spec_sha256, ce.owns_prefix(action, removal, prefix_existed))
    # Made after the marker, so that it never exists without one. A killed change leaves it behind,
    # with conda's pip requirements file in it: start afresh.
    shutil.rmtree(paths['work'], ignore_errors=True)
    os.mkdir(paths['work'], 0o700)
    write_text(module, spec_file, rendered)
    clear_prefix(conda, prefix, removal, result['commands'])
    for command in commands:
        # conda env config vars prints no JSON, even with --json (cli/main_env_vars.py).
        quiet = command[:2] == ('env', 'config')
        try:
            conda.run(*command) if quiet else conda.json(*command)
        except ce.CondaEnvError as error:
            # conda may have applied part of the spec (its packages before a failed pip section): the
            # marker stays, so this env is drift until a run finishes, and its lock is refused meanwhile.
            raise ce.CondaEnvError('%s. env %s is left unfinished (%s): the next run reports it and applies the spec again'
                                   % (error, name, paths['marker']), exception_name=error.exception_name)
        result['commands'].append(' '.join(('conda',) + command + (() if quiet else ('--json',))))
    stray = ce.stray_pip(stored_spec, read_file(paths['pip']), environment, before, kept) if action == 'update' else []
    if stray:
        uninstall_pip(module, name, prefix, stray, result['commands'])
    after = installed(conda, prefix)
    # After the change: a python upgrade leaves the old python's folder only now.
    for folder in python_leftovers(prefix, read_records(prefix), after)[0]:
        shutil.rmtree(os.path.join(prefix, 'lib', folder))
        result['commands'].append('rm -rf %s' % os.path.join(prefix, 'lib', folder))
    result.update(changed=True, pip_simulated=True, package_changes=ce.package_changes(before, after),
                  diff=diff_of(before, after))
    write_locks(module, conda, prefix, paths, spec_file, after)
    shutil.rmtree(paths['work'])
    os.unlink(paths['marker'])
    result['lock'] = lock_result(paths)
    # After the locks, like the BLAS check: the env is what conda made, and fails now and on every run.
    foreign = ce.foreign_channel_problem(name, environment, after)
    if foreign:
        raise ce.CondaEnvError(foreign)
    # After the locks: an env whose numpy uses another BLAS fails now and on every run until fixed.
    result['blas'] = verified_blas(module, name, prefix, requested, reason, after, result)
    return result


def ensure_absent(module, conda, name, prefix, lock_dir):
    paths = ce.env_files(lock_dir, name)
    marker = read_marker(paths)
    kind = prefix_kind(prefix)
    exists = kind == 'env'
    meta_lost = kind == 'folder' and marker is None and os.path.isfile(paths['spec'])
    removal = ce.absent_plan(exists, kind != 'missing', marker, not_an_env=kind == 'not-an-env', meta_lost=meta_lost)
    listed = conda.listed_ahead(prefix)
    before = installed(conda, prefix, listed) if exists else []
    leftovers = [path for key, path in paths.items() if os.path.exists(path) and key not in ('marker', 'work')]
    reasons = [ce.unfinished_change(name, marker, 'remove', removal)] if marker else []
    reasons += ['env %s exists' % prefix] if exists else []
    reasons += ['prefix %s is left of a create that did not finish (conda-meta without history)' % prefix] \
        if kind == 'not-an-env' else []
    reasons += [ce.meta_lost_reason(prefix)] if meta_lost else []
    result = dict(prefix=prefix, drift=reasons, pip_simulated=False, warnings_spec=[], torch_variant=None, commands=[],
                  changed=bool(marker or removal or leftovers),
                  package_changes=ce.package_changes(before, []), diff=diff_of(before, []))
    if marker:
        result['interrupted'] = marker
    if module.check_mode or not result['changed']:
        return result
    if removal:
        start_change(module, paths, name, prefix, 'remove', removal_command(prefix, removal), None, True)
        clear_prefix(conda, prefix, removal, result['commands'])
    for path in leftovers:
        os.unlink(path)
    shutil.rmtree(paths['work'], ignore_errors=True)
    if os.path.exists(paths['marker']):
        os.unlink(paths['marker'])
    return result


def scrub_credentials(module, prefix, pkgs_dirs):
    """Removes the user:password of every URL from the files conda wrote for the env and the package
    caches (ce.credential_files), each file keeping its owner and mode; in check mode, only names
    them. Returns the paths scrubbed (or that would be)."""
    scrubbed = []
    for path, kind in ce.credential_files(prefix, pkgs_dirs, os.listdir, os.path.isfile):
        with open(path, 'rb') as handle:
            data = handle.read()
        text = data.decode('latin-1') if kind == 'pickle' else data.decode('utf-8', 'surrogateescape')
        clean, changed = ce.scrub_credentials(text)
        if not changed:
            continue
        scrubbed.append(path)
        if module.check_mode:
            continue
        if kind == 'pickle':
            os.unlink(path)
            continue
        status = os.stat(path)
        temporary = os.path.join(os.path.dirname(path), '.%s.scrub' % os.path.basename(path))
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, 'wb') as handle:
            handle.write(clean.encode('utf-8', 'surrogateescape'))
        os.chown(temporary, status.st_uid, status.st_gid)
        os.chmod(temporary, stat.S_IMODE(status.st_mode))
        os.replace(temporary, path)
    return scrubbed


def diff_of(before, after):
    return {'before': ce.render_packages(before), 'after': ce.render_packages(after)}


def refuse_foreign_prefix(name, prefix):
    """As root, never act on an env folder another user owns (see ce.foreign_owner_problem)."""
    if os.geteuid() != 0 or not os.path.lexists(prefix):
        return
    uid = os.lstat(prefix).st_uid
    if uid != 0:
        try:
            owner = pwd.getpwuid(uid).pw_name
        except KeyError:
            owner = 'uid %d' % uid
        raise ce.CondaEnvError(ce.foreign_owner_problem(name, prefix, owner))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type='str', required=True),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            spec=dict(type='dict'),
            conda_prefix=dict(type='path', default='/opt/conda'),
            prefix=dict(type='path'),
            lock_dir=dict(type='path'),
            driver_version=dict(type='str'),
            gpu_present=dict(type='bool'),
            gpus=dict(type='list', elements='dict', default=[]),
            torch_cuda_variant=dict(type='str', default='auto'),
            torch_index=dict(type='str', default=ce.PYTORCH_WHEEL_INDEX),
            environment=dict(type='dict', default={}),
            blas=dict(type='str', choices=list(cb.BLAS_VENDORS)),
            pip_kept=dict(type='list', elements='str', default=[]),
        ),
        required_if=[('state', 'present', ('spec',))],
        supports_check_mode=True,
    )
    params = module.params
    try:
        ce.validate_env_name(params['name'])
        conda = Conda(module)
        # Where the env most likely is (the given prefix, else the base's envs/): listed while conda says where
        # envs live. Only an env the module's user owns: another user's is refused before conda runs in it.
        likely = params['prefix'] or os.path.join(params['conda_prefix'], 'envs', params['name'])
        if prefix_kind(likely) == 'env' and os.lstat(likely).st_uid == os.geteuid():
            conda.list_ahead(likely)
        envs_dirs, pkgs_dirs, root = ce.conda_dirs(conda.json(*(('config', '--show') + ce.CONDA_DIRS)))
        prefix = locate(envs_dirs, root, params['name'], params['prefix'])
        refuse_foreign_prefix(params['name'], prefix)
        lock_dir = params['lock_dir'] or os.path.dirname(prefix.rstrip('/'))
        try:
            if params['state'] == 'present':
                result = ensure_present(module, conda, params['name'], prefix, lock_dir)
            else:
                result = ensure_absent(module, conda, params['name'], prefix, lock_dir)
        finally:
            # After every transaction, a failed one too (its downloads are cached): conda leaves the
            # mirror's password in world-readable files; see ce.scrub_credentials.
            scrubbed = scrub_credentials(module, prefix, pkgs_dirs)
        result.update(scrubbed=scrubbed, changed=result['changed'] or bool(scrubbed))
    # Every message is redacted (ce.redact): conda names channels with the password .condarc gives them.
    except cb.BlasMismatch as error:
        module.fail_json(msg=ce.redact(to_native(error)), **dict(error.result, blas=error.report))
    except ce.CondaEnvError as error:
        module.fail_json(msg=ce.redact(to_native(error)))
    except (IOError, OSError) as error:
        module.fail_json(msg=ce.redact('env %s: %s' % (params['name'], to_native(error))))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
