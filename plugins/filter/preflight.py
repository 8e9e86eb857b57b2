# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.aistack.gpu_node.plugins.module_utils.node_preflight import build_report


def preflight_report(facts, gpu=None, space=None, supported_platforms=None, min_python='3.8', paths=None,
                     require_systemd=False, container_types=None):
    if not isinstance(facts, dict):
        raise AnsibleFilterError('preflight_report expects ansible_facts (a mapping), got %s' % type(facts).__name__)
    return build_report(facts, gpu, space, supported_platforms or {}, min_python, paths or [],
                        require_systemd, container_types or [])


class FilterModule(object):
    def filters(self):
        return {'preflight_report': preflight_report}
