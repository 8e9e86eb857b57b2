# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The nvidia_driver_plan module runs here, on the controller. It reads the role's settings from the
task's variables (role_settings) and the facts from ansible_facts (those this run has not read yet, in a
role run alone, with one node_facts run, published), reads the node with the read-only
nvidia_driver_probe module (one round-trip, only in the stages that need the node), and decides with
the pure functions of module_utils.decide.nvidia_driver and module_utils.decide.fabric_manager. The
preflight stage refuses bad input before it reads the node, and fails the task on a problem the decision
names.

The preflight stage is a keyed decision: site.yml's preflight play decides; the role's own run right
after gets that decision back without reading the node, as long as the settings, the facts, the
record's path and the role's report (nvidia_driver_report) it rests on are the same."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import fabric_manager, node_preflight, nvidia_driver
from ansible_collections.aistack.gpu_node.plugins.plugin_utils import node_reading, role_settings
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import KeyedDecision, PlanAction

ROLE = 'nvidia_driver'
PROBE = 'aistack.gpu_node.nvidia_driver_probe'
# The settings the preflight decision rests on (without the role's prefix).
SETTINGS = ('mode', 'source', 'branch', 'version', 'flavour', 'precompiled', 'ubuntu_server', 'min_version', 'takeover',
            'install_without_gpu', 'refuse_eol', 'secure_boot_mok_enrolled')
# The facts it rests on, besides ansible_facts.aistack_gpu.
FACTS = ('distribution', 'distribution_version', 'architecture', 'pkg_mgr', 'virtualization_role', 'virtualization_type')
ARGUMENT_SPEC = dict(
    stage=dict(type='str', default='preflight', choices=['preflight', 'installed', 'works', 'fabric']),
    decision=dict(type='dict'),
    install=dict(type='dict'),
    installed=dict(type='dict'),
    fabric_state=dict(type='str'),
)
VALIDATION_RULES = dict(required_if=[
    ('stage', 'installed', ['decision', 'install']),
    ('stage', 'works', ['installed']),
    ('stage', 'fabric', ['fabric_state']),
])


class ActionModule(KeyedDecision, PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    VALIDATION_RULES = VALIDATION_RULES
    ERRORS = (KeyError, TypeError, ValueError)
    RESTS_ON = 'nvidia_driver_report'
    # The facts read for a role run alone are published once, never handed back with the decision.
    _NOT_DECISION = KeyedDecision._NOT_DECISION + ('ansible_facts',)
    # The preflight and installed stages read the node through nvidia_driver_probe.
    _requires_connection = True
    _vars = None
    _inputs = None
    _read = None

    def keyed_inputs(self, args, task_vars):
        """Only the preflight stage is keyed: on what it reads from the task's variables."""
        return self._preflight_inputs(task_vars) if args['stage'] == 'preflight' else None

    def decide(self, args, task_vars):
        self._vars = task_vars
        return getattr(self, '_' + args['stage'])(args)

    # -- what the stages read -------------------------------------------------

    def _facts(self):
        return self._vars.get('ansible_facts') or {}

    def _preflight_inputs(self, task_vars):
        """The settings, the facts and the record's path, read once per task."""
        if self._inputs is None:
            settings = role_settings.read(self._templar, task_vars, ROLE)
            # Before the node is read: what the argument spec cannot say.
            refusal = nvidia_driver.bad_input(settings)
            if refusal:
                raise ValueError(refusal)
            facts, self._read = node_reading.facts_with_missing_read(self, task_vars, FACTS)
            self._inputs = dict(
                settings=dict((name, settings[name]) for name in SETTINGS),
                gpu=facts.get('aistack_gpu') or {},
                facts=dict((name, facts.get(name)) for name in FACTS),
                record_path=role_settings.template(self._templar, task_vars, '__%s_record_path' % ROLE),
            )
        return self._inputs

    def _probe(self, **module_args):
        """The one read-only module run on the node; its failure (a record that is not JSON, dkms or dpkg
        failing) fails the task with its message."""
        # A choice left out is None to the action and unset to the module (None is no choice of its).
        module_args = dict((name, value) for name, value in module_args.items() if value is not None)
        reading = self._execute_module(module_name=PROBE, module_args=module_args, task_vars=self._vars)
        if reading.get('failed'):
            raise ValueError(reading.get('msg') or 'nvidia_driver_probe failed')
        return reading

    # -- the stages ---------------------------------------------------------------

    def _preflight(self, args):
        """Install, adopt or skip, the plan or the adopt report, and every problem, before any change."""
        inputs = self._preflight_inputs(self._vars)
        settings, facts = inputs['settings'], inputs['facts']
        node = self._probe(stage='preflight', record_path=inputs['record_path'], pkg_mgr=facts['pkg_mgr'])
        os_facts = dict((name, facts[name]) for name in ('distribution', 'distribution_version', 'architecture'))
        decision = nvidia_driver.decide(settings, inputs['gpu'], os_facts, node['record'], node['owners'], node['kernels'],
                                        switches=node['switches'], fabric_manager_version=node['fabric_manager_version'],
                                        packages=node['packages'])
        warnings = decision.pop('warnings')
        secure_boot = None
        if decision.pop('secure_boot_check'):
            secure_boot = node['secure_boot']
            decision['problems'] = nvidia_driver.secure_boot_problems(secure_boot, decision['plan']['build'],
                                                                      settings['secure_boot_mok_enrolled'])
        decision.update(secure_boot=secure_boot, record=node['record'], owners=node['owners'], kernels=node['kernels'],
                        packages=node['packages'],
                        boot_id=node['boot_id'],
                        container=node_preflight.is_container(facts['virtualization_role'], facts['virtualization_type']))
        if warnings:
            decision['warnings'] = warnings
        if decision['problems']:
            decision.update(failed=True, msg='nvidia_driver on %s%s: %s' % (
                self._vars['inventory_hostname'], ' (adopt)' if decision['adopt'] else '', ' | '.join(decision['problems'])))
        elif self._read:
            # Published for the tasks after it; a refused node runs none.
            decision['ansible_facts'] = self._read
        return decision

    def _installed(self, args):
        """After the packages: the installed version, DKMS, what to hold, and the reboot."""
        decision, install = args['decision'], args['install']
        if not decision.get('plan'):
            raise ValueError('nvidia_driver_plan: stage=installed needs decision, the registered result of '
                             'stage=preflight in install mode')
        settings = role_settings.read(self._templar, self._vars, ROLE)
        plan = decision['plan']
        changed, skipped = bool(install.get('changed')), bool(install.get('skipped'))
        # What the preflight read stands where apt or dnf did not run (every package there) or ran in check mode.
        package_list = plan['package_manager'] if not (skipped or self._task.check_mode) else None
        dkms_module = plan['dkms_module'] if nvidia_driver.dkms_checked(plan, bool(self._task.check_mode), changed,
                                                                        skipped) else None
        hold_list = plan['package_manager'] if settings['hold'] else None
        # Without DKMS, the hold or the packages to read, the node is not read: the role reboots only after this stage.
        node = dict(dkms_status=None, hold_list=None, packages=None, boot_id=decision.get('boot_id'))
        if dkms_module or hold_list or package_list:
            node = self._probe(stage='installed', dkms_module=dkms_module, hold_list=hold_list, package_list=package_list)
        packages = (decision.get('packages') or {}) if node['packages'] is None else node['packages']
        hold = nvidia_driver.hold_plan(plan, sorted(packages), node['hold_list']) if hold_list else None
        version = packages.get(plan['version_package'])
        result = nvidia_driver.check_install(decision, self._facts().get('aistack_gpu'), version, changed,
                                             settings['reboot_ok'], dkms_status=node['dkms_status'],
                                             boot_id=decision.get('boot_id'), hold=hold)
        result.update(boot_id=node['boot_id'], problems=result['dkms']['problems'])
        return result

    def _works(self, args):
        """After the install and the reboot, if any: the GPU facts read then against the installed version."""
        return dict(problems=nvidia_driver.works_problems(self._facts().get('aistack_gpu'), args['installed']))

    def _fabric(self, args):
        """The fabric state of nvidia-smi -q, and its problems."""
        states = fabric_manager.parse_fabric_state(args['fabric_state'])
        return dict(states=states, problems=fabric_manager.fabric_problems(states))
