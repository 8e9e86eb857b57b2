# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""miniconda_plan checks the role's variables and Anaconda's terms here, on the controller, before the
node is read: those were tasks of their own, each a task on every run. It then reads the node only when
the task has no registered plan that rests on the same arguments and on the role's last published
miniconda_result: the role's run right after site.yml's preflight play gets the plan made there back (a
keyed decision, plan_action). Last, it refuses what the plan says the role must not do."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.template import trust_as_template
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import miniconda
from ansible_collections.aistack.gpu_node.plugins.plugin_utils import role_settings
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import KeyedModuleAction


class ActionModule(KeyedModuleAction):

    RESTS_ON = 'miniconda_result'

    def run(self, tmp=None, task_vars=None):
        # Checked on every run, a plan handed back included: they are not part of its key.
        try:
            problem = self._input_problem(task_vars)
        except ValueError as error:
            problem = 'miniconda: %s' % to_text(error)
        if problem:
            return dict(failed=True, changed=False, msg=problem)
        result = super(ActionModule, self).run(tmp, task_vars)
        if not result.get('failed'):
            refusal = miniconda.plan_refusal(result, self._task.args.get('prefix'), self._task.args.get('group'),
                                             task_vars.get('inventory_hostname'))
            if refusal:
                result.update(failed=True, msg=refusal)
        return result

    def _input_problem(self, task_vars):
        """The message of the role's input check, else of its refusal of Miniconda without Anaconda's terms."""
        def variable(name):
            return role_settings.template(self._templar, task_vars, name)
        settings = dict((name, variable('miniconda_' + name)) for name in miniconda.CHECKED)
        problem = miniconda.bad_input(settings, variable('__miniconda_system_folders'), variable('__miniconda_clean_flags'))
        if problem:
            return problem
        try:
            # As the role's tasks read it.
            terms_accepted = self._templar.evaluate_expression(trust_as_template('miniconda_accept_anaconda_tos | bool'))
        except AnsibleError as error:
            raise ValueError('miniconda_accept_anaconda_tos: %s' % to_text(error))
        return miniconda.terms_refusal(variable('miniconda_flavor'), terms_accepted)
