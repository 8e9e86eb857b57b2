# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every conda decision shares and builds on: the error a decision raises and a match spec's
package name. conda/env.py and conda/blas.py both import it, so neither imports the other's way back."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.conda.mirrors import redact

MATCHSPEC_NAME = re.compile(r'^(?:[^:\s]+::)?([A-Za-z0-9_][A-Za-z0-9_.-]*)')


class CondaEnvError(Exception):
    """Bad input or a failed conda call; the message names the file, option or command.
    ``exception_name`` is conda's own name for the failure, when conda gave one. Conda prints channel
    URLs as .condarc makes them, a mirror's password included: the message has them redacted."""

    def __init__(self, message, exception_name=None):
        super(CondaEnvError, self).__init__(redact(message))
        self.exception_name = exception_name


def matchspec_name(spec):
    """``"conda-forge::numpy >=1.26"`` -> ``"numpy"``."""
    match = MATCHSPEC_NAME.match(spec.strip())
    if not match:
        raise ValueError(spec)
    return match.group(1).lower()
