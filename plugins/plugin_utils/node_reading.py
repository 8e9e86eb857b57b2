# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The facts a planning action decides on, read from the node only where this run has not read them yet.

site.yml's preflight play reads them all (node_facts: setup's min and virtual subsets and the GPUs), so a
planner of a later play reads nothing; a role run alone lacks them, and its planner reads them in one
node_facts run instead of a setup task and a GPU task of its own."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.vars.clean import namespace_facts

NODE_FACTS = 'aistack.gpu_node.node_facts'


def facts_with_missing_read(action, task_vars, names):
    """``(facts, read)``: ansible_facts as the planner decides on it, and what was read now to publish as the task's
    ``ansible_facts`` (empty where nothing was missing). The node is read only where a fact of ``names`` (all of
    setup's min and virtual subsets) or ``aistack_gpu`` is missing; ValueError when that reading fails."""
    known = task_vars.get('ansible_facts') or {}
    read_gpu = 'aistack_gpu' not in known
    if not read_gpu and all(name in known for name in names):
        return known, {}
    reading = action._execute_module(module_name=NODE_FACTS, module_args=dict(gpu=read_gpu), task_vars=task_vars)
    if reading.get('failed'):
        raise ValueError('reading the node (node_facts: the OS facts and the GPUs) failed: %s' % reading.get('msg'))
    return dict(known, **namespace_facts(reading['ansible_facts'])['ansible_facts']), reading['ansible_facts']
