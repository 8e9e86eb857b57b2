# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The numa_tuning_plan module runs here, on the controller. It reads the role's settings from the
task's variables (role_settings), reads the node with numa_facts (one round-trip, only where the
role needs it) and decides with decide/numa_tuning.py: one task where the role ran one module and
six asserts and facts. The check stage runs the activation and launcher check in one round-trip
and judges it; the host stage judges the knobs after numa_host_tuning."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import numa_tuning as nt
from ansible_collections.aistack.gpu_node.plugins.plugin_utils import role_settings
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import PlanAction

ROLE = 'numa_tuning'
ARGUMENT_SPEC = dict(
    stage=dict(type='str', choices=['plan', 'check', 'host'], default='plan'),
    env_ready=dict(type='bool', default=False),
    check=dict(type='dict'),
    host=dict(type='dict'),
    result=dict(type='dict'),
)
VALIDATION_RULES = dict(required_if=[('stage', 'check', ['check']), ('stage', 'host', ['host', 'result'])])


class ActionModule(PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    VALIDATION_RULES = VALIDATION_RULES
    ERRORS = (KeyError, TypeError, ValueError)
    # The stages run numa_facts or the check on the node.
    _requires_connection = True

    def decide(self, args, task_vars):
        return getattr(self, '_' + args['stage'])(args, task_vars)

    def _node(self, task_vars, module, **module_args):
        return self._execute_module(module_name=module, module_args=module_args, task_vars=task_vars)

    def _plan(self, args, task_vars):
        """The input, then, where there is an env or host knobs to tune, the node and every decision on it."""
        settings = role_settings.read(self._templar, task_vars, ROLE)
        problem = nt.input_problem(settings)
        if problem:
            return dict(failed=True, msg=problem)
        if not (args['env_ready'] or settings['host']):
            return {}
        private = dict((name, role_settings.template(self._templar, task_vars, '__%s_%s' % (ROLE, name)))
                       for name in ('conda_script', 'hook', 'proof_path'))
        prefix = settings['env_prefix']
        facts_args = dict(threads_per_gpu=settings['threads_per_gpu'], session_affinity=settings['env_affinity'])
        if args['env_ready']:
            facts_args.update(env_prefix=prefix, proof_path=private['proof_path'])
        read = self._node(task_vars, 'aistack.gpu_node.numa_facts', **facts_args)
        if not args['env_ready'] and read.get('failed'):
            return dict(failed=True, msg=read.get('msg'))
        refusal = nt.unread_refusal(prefix, read) if args['env_ready'] else None
        if refusal:
            return dict(failed=True, msg=refusal)
        facts = read['ansible_facts']['aistack_numa']
        decision = dict(ansible_facts=dict(aistack_numa=facts))
        if settings['host']:
            # numa_facts runs again with the same arguments to read the knobs back after a write.
            decision['host'] = dict(writable=nt.host_writable(settings['host_writable'], facts['host']), facts_args=facts_args)
        if args['env_ready']:
            decision.update(self._env(settings, private, facts, read.get('proof') or {}, task_vars))
        return decision

    @staticmethod
    def _env(settings, private, facts, proof, task_vars):
        prefix, requested = settings['env_prefix'], settings['env_type']
        refusal = nt.threads_refusal(settings['threads_per_gpu'], facts, task_vars['inventory_hostname'])
        kind = nt.env_type(requested, facts)
        refusal = refusal or nt.env_refusal(prefix, requested, kind, facts)
        if refusal:
            raise ValueError(refusal)
        env = nt.session_env(facts, settings['env_extra'])
        check = nt.check_plan(env, facts, prefix, kind, private['conda_script'], private['hook'],
                              settings['launcher_path'] if settings['launcher'] else None)
        proven = nt.proof_holds(check, proof.get('recorded'), proof.get('state'))
        return dict(type=kind, env=env, lines=nt.plan_lines(facts, env), check=check, proven=proven,
                    proven_launcher=proof['recorded'].get('launcher', '') if proven else None)

    def _check(self, args, task_vars):
        """The check's shell on the node, judged; what it found the node to be, for the record."""
        check = args['check']
        ran = self._node(task_vars, 'ansible.legacy.command', argv=['bash', '-c', check['script']])
        if ran.get('failed'):
            return dict((key, value) for key, value in ran.items() if not key.startswith('_ansible') and key != 'invocation')
        lines, errors = ran['stdout'].splitlines(), ran['stderr'].splitlines()
        refusal = nt.check_failure(check, lines, ran['stderr'])
        if refusal:
            return dict(failed=True, msg=refusal, stdout_lines=lines, stderr_lines=errors)
        launcher = nt.launcher_shown(lines, errors) if check['launcher'] else ''
        return dict(launcher=launcher,
                    proof=dict(key=check['key'], state=nt.check_state(lines, check['launcher']), launcher=launcher))

    def _host(self, args, task_vars):
        """After a write the knobs are read back; the kernel must hold each value the module reports."""
        settings = role_settings.read(self._templar, task_vars, ROLE)
        host, result = args['host'], args['result']
        decision = {}
        facts = (task_vars.get('ansible_facts') or {}).get('aistack_numa') or {}
        if host['writable'] and not self._task.check_mode:
            if result.get('changed'):
                read = self._node(task_vars, 'aistack.gpu_node.numa_facts', **host['facts_args'])
                if read.get('failed'):
                    return dict(failed=True, msg=read.get('msg'))
                facts = read['ansible_facts']['aistack_numa']
                decision['ansible_facts'] = dict(aistack_numa=facts)
            failures = nt.host_failures(result.get('knobs') or {}, facts['host'], settings['host_state'])
            if failures:
                return dict(decision, failed=True, msg=failures)
        decision['published'] = dict(
            applied=bool(host['writable']), state=settings['host_state'],
            reason=None if host['writable'] else 'the kernel knobs are read-only here (a container)',
            changed=bool(result.get('changed')), knobs=result.get('knobs') or {}, left_alone=result.get('left_alone') or {})
        return decision
