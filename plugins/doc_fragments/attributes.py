# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):

    # Modules that only read the node: check mode is the same run, and there is nothing to diff.
    READ_ONLY = r'''
attributes:
  check_mode:
    support: full
    description: Read-only; runs the same way in check mode.
  diff_mode:
    support: none
    description: Returns no diff.
'''

    # Modules run through an action plugin: once per host, never in the background.
    PER_HOST = r'''
attributes:
  async:
    support: none
    description: Not asynchronous.
  bypass_host_loop:
    support: none
    description: Runs once per host.
'''

    # Planning modules that run on the controller as an action plugin of the same name.
    CONTROLLER_PLAN = r'''
attributes:
  action:
    support: full
    description: Runs on the controller as an action plugin; the node is not contacted.
  platform:
    support: full
    platforms: posix
    description: Any controller; the decisions do not depend on the node's platform.
'''
