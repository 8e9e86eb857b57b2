# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Proofs recorded against the state of a Python environment.

A role that proves something by running the environment's Python (APEX's kernels load and compute
right, a Jupyter kernel starts and sees the GPU) records the proof in the environment with a digest
of its state and of the NVIDIA driver and GPUs it ran on. A later run hands the proof over only while
that digest and what was asked (the proof's key) are the same; any change proves again.

``env_state`` and ``recorded_proof`` run in the target environment's Python: the roles run this
file's text with ``python -c`` ahead of their own script, which imports them as ``aistack_env_proof``.
So this file uses the standard library only. ``file_digest`` runs on either side (and in the
managed_files module). Whether a recorded proof holds is decided on the controller (decide/env_proof.py).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import email.parser
import hashlib
import json
import os
import sys

# The name a role's script imports this file's functions by when both run as one python -c text.
SCRIPT_MODULE = "aistack_env_proof"


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def file_digest(path, algorithm="sha256"):
    """The hex digest of a file's bytes, read in blocks; raises OSError when it cannot be read."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def nvidia_state(root="/proc/driver/nvidia"):
    """The loaded NVIDIA kernel module's version line and each GPU's information (model, UUID, bus),
    as the driver shows them; empty without a driver."""
    try:
        gpus = sorted(os.listdir(os.path.join(root, "gpus")))
    except OSError:
        gpus = []
    return {"version": _read(os.path.join(root, "version")),
            "gpus": dict((gpu, _read(os.path.join(root, "gpus", gpu, "information"))) for gpu in gpus)}


def _name_and_version(dist):
    """``name==version`` from the distribution's metadata headers, read once. ``dist.metadata`` parses the
    whole file, the long description included, and ``dist.version`` parses it again: in an environment
    of a hundred distributions (torch, CUDA wheels, Jupyter) that was most of a probe's time."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or dist.read_text("") or ""
    headers = email.parser.HeaderParser().parsestr(text.split("\n\n", 1)[0] + "\n")
    return "%s==%s" % ((headers["Name"] or "").lower(), headers["Version"])


def env_state(watched=(), nvidia_root="/proc/driver/nvidia"):
    """Digest of what imports and kernels in this environment depend on: the interpreter, every
    installed distribution's name and version, the size and mtime of each file of the ``watched``
    distributions (compiled kernels), conda's history, and the NVIDIA driver and GPUs. Any pip or
    conda change, a watched file replaced by hand, another driver or GPU changes it. The working
    directory that ``python -c`` puts on the path does not count."""
    from importlib import metadata
    distributions = sorted(_name_and_version(dist)
                           for dist in metadata.distributions(path=[entry for entry in sys.path if entry]))
    files = []
    for name in watched:
        try:
            paths = metadata.distribution(name).files or []
        except metadata.PackageNotFoundError:
            paths = []
        for path in paths:
            if path.suffix == ".pyc":  # rewritten by imports, never by an install change alone
                continue
            try:
                stat = os.stat(str(path.locate()))
                files.append([name, str(path), stat.st_size, stat.st_mtime_ns])
            except OSError:
                files.append([name, str(path), None, None])
    try:
        stat = os.stat(os.path.join(sys.prefix, "conda-meta", "history"))
        conda_history = [stat.st_size, stat.st_mtime_ns]
    except OSError:
        conda_history = None
    state = {"interpreter": os.path.realpath(sys.executable), "python": sys.version, "distributions": distributions,
             "watched_files": sorted(files), "conda_history": conda_history, "nvidia": nvidia_state(nvidia_root)}
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode("utf-8")).hexdigest()


def recorded_proof(path, python, state):
    """The proof recorded at ``path`` when it was made by ``python`` on this very ``state``, else None."""
    try:
        proof = json.loads(_read(path) or "null")
    except ValueError:
        return None
    if not isinstance(proof, dict) or [proof.get("python"), proof.get("env_state")] != [python, state]:
        return None
    return proof


if __name__ == "__main__":
    # Run as the head of a role's python -c text: the script after it imports these functions.
    sys.modules[SCRIPT_MODULE] = sys.modules["__main__"]
