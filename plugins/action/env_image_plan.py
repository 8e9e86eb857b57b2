# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The env_image_plan module runs here, on the controller: it reads the env_image role's settings from the
task's variables (role_settings) and refuses what the argument spec cannot say (decide/env_image.input_problems),
each problem naming its variable, before anything is fetched or built. The node is not asked anything."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.env_image import input_problems
from ansible_collections.aistack.gpu_node.plugins.plugin_utils import role_settings
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import PlanAction


class ActionModule(PlanAction):

    ERRORS = (KeyError, TypeError, ValueError)

    def decide(self, args, task_vars):
        problems = input_problems(role_settings.read(self._templar, task_vars, 'env_image'))
        if problems:
            return dict(failed=True, msg='env_image: %s' % '; '.join(problems), problems=problems)
        return dict(problems=[])
