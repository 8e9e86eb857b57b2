# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The container_toolkit_plan module runs here, on the controller. It reads the role's settings from the
task's variables (role_settings) and the facts from ansible_facts (those this run has not read yet, in a
role run alone, with one node_facts run, published), refuses bad input before the node is probed, reads
the node with container_toolkit_probe (one round-trip; none where container_toolkit_install is false, nor
with auto where no container runtime is on the node by node_facts' reading) and decides with
decide/container_toolkit.py; the plan stage fails the task on a problem the decision names.

The plan stage is a keyed decision: site.yml's preflight play decides; the role's own run right after
gets that decision back without reading the node, as long as the settings, the facts and the role's
report (container_toolkit_report) it rests on are the same. The cdi stage reads the spec again after
nvidia-ctk made it, and judges it against the same driver and GPUs."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import yaml

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import container_toolkit as ct
from ansible_collections.aistack.gpu_node.plugins.plugin_utils import node_reading, role_settings
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import KeyedDecision, PlanAction

ROLE = 'container_toolkit'
PROBE = 'aistack.gpu_node.container_toolkit_probe'
# The facts the plan stage decides on, besides the GPUs (node_facts reads those of a role run alone).
FACTS = ('os_family', 'pkg_mgr')
ARGUMENT_SPEC = dict(
    stage=dict(type='str', default='plan', choices=['plan', 'cdi']),
)


class ActionModule(KeyedDecision, PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    ERRORS = (KeyError, TypeError, ValueError)
    RESTS_ON = 'container_toolkit_report'
    # The facts read for a role run alone are published once, never handed back with the decision.
    _NOT_DECISION = KeyedDecision._NOT_DECISION + ('ansible_facts',)
    # Both stages read the node through container_toolkit_probe.
    _requires_connection = True
    _inputs = None
    _read = None

    def keyed_inputs(self, args, task_vars):
        """Only the plan stage is keyed: on the settings and facts it reads from the task's variables."""
        return self._plan_inputs(task_vars) if args['stage'] == 'plan' else None

    def _plan_inputs(self, task_vars):
        if self._inputs is None:
            facts, self._read = node_reading.facts_with_missing_read(self, task_vars, FACTS)
            self._inputs = dict(
                settings=role_settings.read(self._templar, task_vars, ROLE),
                gpu=facts.get('aistack_gpu') or {},
                # The preflight's reading (node_facts); absent where the role runs without it.
                runtimes=facts.get('aistack_container_runtimes'),
                os_family=facts.get('os_family'),
                pkg_mgr=facts.get('pkg_mgr'),
                key_path=role_settings.template(self._templar, task_vars, '__%s_key_path' % ROLE),
            )
        return self._inputs

    def decide(self, args, task_vars):
        inputs = self._plan_inputs(task_vars)
        settings = inputs['settings']
        problems = ct.input_problems(settings)
        if problems:
            return dict(failed=True, msg='container_toolkit: bad input. %s.' % '; '.join(problems))
        if not ct.reads_the_node(settings, inputs['runtimes']):
            return self._published(ct.decide(settings, {}, inputs['gpu'], inputs['os_family']), task_vars)
        node = self._execute_module(module_name=PROBE, task_vars=task_vars, module_args=dict(
            pkg_mgr=inputs['pkg_mgr'], cdi_spec_path=settings['cdi_spec_path'], key_path=inputs['key_path']))
        if node.get('failed'):
            raise ValueError(node.get('msg') or 'container_toolkit_probe failed')
        node['cdi_summary'] = ct.spec_summary(node['cdi_spec'], yaml.safe_load)
        if args['stage'] == 'cdi':
            return self._judge_spec(node['cdi_summary'], inputs['gpu'], settings['cdi_spec_path'])
        decision = ct.decide(settings, node, inputs['gpu'], inputs['os_family'])
        decision['key_present'] = node['key_present']
        return self._published(decision, task_vars)

    def _published(self, decision, task_vars):
        """The decision failed on the problems it names, else with the facts read now (for the tasks after it)."""
        if decision['problems']:
            decision.update(failed=True, msg='container_toolkit on %s: %s' % (task_vars['inventory_hostname'],
                                                                              ' | '.join(decision['problems'])))
        elif self._read:
            decision['ansible_facts'] = self._read
        return decision

    @staticmethod
    def _judge_spec(summary, gpu, path):
        """The spec nvidia-ctk just made must fit the driver and GPUs the decision was made for."""
        cdi = ct.cdi_decision(True, path, summary, gpu)
        if cdi['generate']:
            return dict(cdi=cdi, failed=True, msg='container_toolkit: the CDI spec nvidia-ctk made does not fit the node: %s'
                        % '; '.join(cdi['reasons']))
        return dict(cdi=cdi)
