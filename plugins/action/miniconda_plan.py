# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""miniconda_plan reads the node only when the task has no registered plan that rests on the same
arguments and on the role's last published miniconda_result: the role's run right after site.yml's
preflight play gets the plan made there back (a keyed decision, plan_action)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import KeyedModuleAction


class ActionModule(KeyedModuleAction):

    RESTS_ON = 'miniconda_result'
