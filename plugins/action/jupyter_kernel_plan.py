# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The jupyter_kernel_plan module runs here, on the controller. Its input and kernel stages read
the role's settings from the task's variables (role_settings); the kernel stage reads the node
itself, once: the env's python runs the role's probe. The decisions are module_utils'
(decide/jupyter_kernel.py, decide/kernelspec.py, decide/jupyter_lab.py), so that the role runs
one task where it ran a command, an assert and a set_fact, and its YAML keeps only what it alone
knows (the kernelspec written, what the kernel reported)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import hashlib
import os

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import jupyter_kernel as jk
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import jupyter_lab, kernelspec
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.kernelspec import kernel_directory
from ansible_collections.aistack.gpu_node.plugins.plugin_utils import role_settings
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import PlanAction

ROLE = 'jupyter_kernel'
ARGUMENT_SPEC = dict(
    stage=dict(type='str', required=True, choices=['input', 'kernel', 'ran', 'lab']),
    plan=dict(type='dict'),
    ran=dict(type='raw'),
    spec_dir=dict(type='str'),
    lab_password_hash=dict(type='str', default='', no_log=True),
    lab_token=dict(type='str', default='', no_log=True),
    lab_verify_password=dict(type='str', default='', no_log=True),
    lab_ip=dict(type='str', default='127.0.0.1'),
    lab_port=dict(type='int', default=8888),
    lab_certfile=dict(type='str', default=''),
    lab_keyfile=dict(type='str', default=''),
    lab_allow_plain_http=dict(type='bool', default=False),
)


def _lab_problems(values):
    """The JupyterLab problems of ``values`` (the lab stage's options, or the role's settings: the same names)."""
    return jupyter_lab.lab_problems(
        password_hash=values['lab_password_hash'], token=values['lab_token'], ip=values['lab_ip'], port=values['lab_port'],
        certfile=values['lab_certfile'], keyfile=values['lab_keyfile'], allow_plain_http=values['lab_allow_plain_http'],
        verify_password=values['lab_verify_password'])


def _system_kernel_dir(settings, name):
    """The folder of a system kernel, where the probe reads kernel.json; None for a user kernel (its home is the
    node's to say), a prefix the module expands on the node, or a name it refuses: the module then looks itself."""
    prefix = settings['system_prefix']
    if settings['scope'] != 'system' or not prefix.startswith('/') or '$' in prefix:
        return None
    try:
        kernelspec.validate_name(name)
    except kernelspec.KernelspecError:
        return None
    return kernel_directory(name, 'system', prefix)


class ActionModule(PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    VALIDATION_RULES = dict(required_if=[('stage', 'ran', ('plan', 'spec_dir'))])
    ERRORS = (KeyError, TypeError, ValueError)
    # The kernel stage runs the env's python on the node.
    _requires_connection = True

    def decide(self, args, task_vars):
        return getattr(self, '_' + args['stage'])(args, task_vars)

    def _var(self, task_vars, name, default=None):
        """A variable of the task, templated; ``default`` when it is not defined."""
        return role_settings.template(self._templar, task_vars, name) if name in task_vars else default

    def _input(self, args, task_vars):
        """The role's variables alone, before it looks for its env: what is wrong fails the task (the
        variables' message first, then JupyterLab's, which never repeats a secret)."""
        settings = role_settings.read(self._templar, task_vars, ROLE)
        refusal = jk.input_problem(settings)
        if refusal is None and settings['lab']:
            facts = task_vars.get('ansible_facts') or {}
            refusal = jk.lab_refusal(task_vars['inventory_hostname'], _lab_problems(settings), facts.get('service_mgr'))
        return dict(failed=True, msg=refusal) if refusal else {}

    def _kernel(self, args, task_vars):
        """The kernel's names and the ipykernel install, then the env read with one run of its python:
        the env type, the kernel's variables, whether it must see CUDA, and whether the check recorded
        on the env's present state may stand."""
        settings = role_settings.read(self._templar, task_vars, ROLE)
        prefix = settings['env_prefix']
        name = settings['name'] or kernelspec.default_name(prefix, self._var(task_vars, 'conda_env_target') or {})
        try:
            conda_argv = kernelspec.conda_install_argv([settings['ipykernel_spec']], prefix, settings['conda_channels'],
                                                       settings['conda_executable'])
        except kernelspec.KernelspecError as error:
            return dict(failed=True, msg='jupyter_kernel: %s' % error)
        python = '%s/bin/python' % prefix
        # Kept in the env, so that it goes when the env goes.
        proof_path = '%s/etc/aistack/jupyter_kernel-%s-proof.json' % (prefix, name)
        spec_dir = _system_kernel_dir(settings, name)
        kernel_path = os.path.join(spec_dir, kernelspec.KERNEL_FILE) if spec_dir else ''
        run = self._execute_module(module_name='ansible.legacy.command', task_vars=task_vars, module_args=dict(argv=[
            python, '-c', self._var(task_vars, '__jupyter_kernel_probe_script'), prefix, jk.cuda_home(settings['cuda_home']),
            proof_path, python, kernel_path]))
        refusal = jk.probe_refusal(prefix, run)
        if refusal:
            return dict(failed=True, msg=refusal)
        reading = jk.probe_reading(run.get('stdout') or '')
        gpu = (task_vars.get('ansible_facts') or {}).get('aistack_gpu') or {}
        plan = jk.kernel_decision(settings, reading, gpu.get('gpu_count'))
        display_name = settings['display_name'] or kernelspec.display_name_for(name, prefix)
        # The jupyter_kernelspec module's options. A kernelspec the probe found as asked needs no run of it; what
        # the module would have said of it (its folder, the diff of the same text) is published from here.
        spec = dict(argv=[python, '-m', 'ipykernel_launcher', '-f', kernelspec.CONNECTION_FILE_PLACEHOLDER],
                    display_name=display_name, env=plan['env'], metadata={'debugger': True})
        try:
            kernel = kernelspec.build_kernel(**spec)
        except kernelspec.KernelspecError:
            # The module refuses these variables, naming them.
            kernel = None
        in_place = bool(kernel_path and kernel) and kernelspec.kernel_in_place(reading.get('kernel_file'), kernel)
        check_script = self._var(task_vars, '__jupyter_kernel_check_script')
        asked = jk.proof_asked(hashlib.sha256(check_script.encode('utf-8')).hexdigest(), name, display_name, python,
                               plan['env'], plan['require_cuda'], settings['scope'], settings['user'])
        plan.update(
            name=name, display_name=display_name, python=python, ipykernel=reading['ipykernel'],
            ipykernel_install_argv=jk.ipykernel_install_argv(plan['type'], reading['ipykernel'], python,
                                                             self._var(task_vars, '__jupyter_kernel_pip_args'),
                                                             settings['ipykernel_spec'], conda_argv),
            proof_path=proof_path, proof_asked=asked, proof=reading['proof'],
            proof_usable=jk.proof_usable(settings, bool(task_vars.get('ansible_check_mode')), reading, asked),
            kernelspec=spec, spec_in_place=in_place, spec_dir=spec_dir if in_place else None,
            spec_diff=kernelspec.render_diff(reading['kernel_file']['text'], kernel, kernel_path) if in_place else None)
        return plan

    @staticmethod
    def _ran(args, task_vars):
        """What ran in the kernel (this run's check, or the recorded one) judged against the plan."""
        plan, ran = args['plan'], args['ran']
        refusal = jk.ran_problem(plan['name'], ran, args['spec_dir'], plan['python'], plan['env'], plan['require_cuda'])
        if refusal:
            return dict(failed=True, msg=refusal)
        return dict(msg=jk.ran_summary(plan['name'], ran))

    @staticmethod
    def _lab(args, task_vars):
        # Only the problems come back: none of them repeats the password hash, the password or the token.
        return dict(lab_problems=_lab_problems(args))
