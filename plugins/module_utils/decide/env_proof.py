# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a proof recorded against a Python environment's state (probe/env_proof.py, which reads it
on the node) was made for what is asked now. Runs on the controller."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import hashlib
import json


def proof_key(inputs):
    """Key of what a proof was asked to show beyond the environment's state: 24 hex digits of the
    sha256 of ``inputs`` (the checks' options, the checking script's digest ...) as sorted JSON."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()[:24]


def proof_holds(proof, key):
    """Whether ``proof`` (the probe's, made on the environment's present state, or None) was made for
    ``key``."""
    return isinstance(proof, dict) and proof.get("proof_key") == key
