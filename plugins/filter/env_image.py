# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The env_image role's input check, on the controller before anything is fetched or built; documented in
env_image_problems.yml beside this file."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.env_image import input_problems


def env_image_problems_filter(settings):
    try:
        return input_problems(settings)
    except KeyError as exc:
        raise AnsibleFilterError("env_image_problems: the settings lack %s" % exc)


class FilterModule(object):
    def filters(self):
        return {
            "env_image_problems": env_image_problems_filter,
        }
