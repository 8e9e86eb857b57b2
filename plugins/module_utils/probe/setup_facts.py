# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fact subsets gathered with ansible-core's own collectors, called as ansible.builtin.setup calls them, so a
module that reads more of the node in the same run publishes the very keys and values setup would."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.module_utils.facts import ansible_collector, default_collectors
from ansible.module_utils.facts.namespace import PrefixFactNamespace

# setup's own minimal subset (ansible/modules/setup.py), which gather_subset ``min`` names.
MINIMAL_GATHER_SUBSET = frozenset(['apparmor', 'caps', 'cmdline', 'date_time', 'distribution', 'dns', 'env', 'fips', 'local',
                                   'lsb', 'pkg_mgr', 'platform', 'python', 'selinux', 'service_mgr', 'ssh_pub_keys', 'user'])
# setup's default gather_timeout, in seconds.
GATHER_TIMEOUT = 10


def gather(module, subsets):
    """The facts of ``subsets`` (setup's gather_subset values), keyed as setup returns them (``ansible_`` first).
    The ``local`` collector reads ``module.params['fact_path']``, as setup's does."""
    collector = ansible_collector.get_ansible_collector(
        all_collector_classes=default_collectors.collectors,
        namespace=PrefixFactNamespace(namespace_name='ansible', prefix='ansible_'),
        filter_spec=[], gather_subset=subsets, gather_timeout=GATHER_TIMEOUT, minimal_gather_subset=MINIMAL_GATHER_SUBSET)
    return collector.collect(module=module)
