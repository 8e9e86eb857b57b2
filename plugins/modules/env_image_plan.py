#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

# The module runs on the controller, as the action plugin of the same name; this file holds its documentation.

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: env_image_plan
short_description: Refuse bad settings of the env_image role before anything is fetched or built
version_added: 0.2.0
description:
  - The input check of the P(aistack.gpu_node.env_image#role) role, made on the controller. It reads the role's
    variables from the task's variables, templated and typed by the role's C(meta/argument_specs.yml), and names each
    problem the argument spec cannot (absolute paths on the build host, the installer and its sha256, an image name
    and tag, a registry without a scheme). It never reads or changes the node.
author: aistack.gpu_node contributors (@aistack)
options: {}
extends_documentation_fragment:
  - aistack.gpu_node.attributes.per_host
  - aistack.gpu_node.attributes.read_only
  - aistack.gpu_node.attributes.controller_plan
notes:
  - The role's variables are read by their names (C(env_image_*)); a task passes no options.
seealso:
  - module: aistack.gpu_node.env_image
'''

EXAMPLES = r'''
# In the env_image role: fails with "env_image: <each problem>" on bad settings.
- name: Refuse bad settings before anything is fetched or built
  aistack.gpu_node.env_image_plan:
'''

RETURN = r'''
problems:
  description: One sentence per problem, each naming its C(env_image_*) variable; empty when the settings are good.
  returned: always
  type: list
  elements: str
'''
