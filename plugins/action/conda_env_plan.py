# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The conda_env_plan module runs here, on the controller: its decisions need the role's variables and
its environment files, and, in preflight, whether the node has conda, which it looks for itself
(one stat) unless the miniconda role ran that conda in this run."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64

import yaml

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import env as ce
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import PlanAction

ARGUMENT_SPEC = dict(
    stage=dict(type='str', choices=['preflight', 'publish', 'verify'], default='preflight'),
    envs=dict(type='list', elements='dict', default=[]),
    driver_version=dict(type='str', default=''),
    gpu_present=dict(type='bool'),
    gpus=dict(type='list', elements='dict', default=[]),
    torch_cuda_variant=dict(type='str', default='auto'),
    torch_index=dict(type='str', default=ce.PYTORCH_WHEEL_INDEX),
    conda_prefix=dict(type='str', default='/opt/conda'),
    conda_verified=dict(type='bool', default=False),
    lock_dir=dict(type='str', default=''),
    results=dict(type='list', elements='dict', default=[]),
    env_name=dict(type='str', default=''),
    env_prefix=dict(type='str', default=''),
    locks=dict(type='list', elements='dict', default=[]),
    listings=dict(type='list', elements='dict', default=[]),
)


class ActionModule(PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    ERRORS = (ce.CondaEnvError,)
    # The preflight stage looks for conda on the node.
    _requires_connection = True
    _vars = None

    def decide(self, args, task_vars):
        self._vars = task_vars
        return self.decide_stage(args)

    def _read_environment_file(self, path):
        """An environment file found like the file lookup finds it (the role's files/, the playbook's),
        vault-encrypted or not."""
        try:
            real = self._loader.get_real_file(self._find_needle('files', path))
        except AnsibleError as error:
            raise ce.CondaEnvError('conda_env: %s cannot be read: %s' % (path, to_text(error)))
        try:
            with open(real, 'rb') as handle:
                text = to_text(handle.read())
        finally:
            self._loader.cleanup_tmp_file(real)
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise ce.CondaEnvError('conda_env: %s is not valid YAML: %s' % (path, error))

    def _preflight(self, args):
        declared, refusals = ce.declared_envs(args['envs'], self._read_environment_file, args['driver_version'],
                                              args['gpu_present'], args['torch_cuda_variant'], args['torch_index'], args['gpus'],
                                              args['conda_prefix'])
        if refusals:
            return dict(failed=True, msg=' | '.join('conda_env: %s' % refusal for refusal in refusals), refusals=refusals)
        present = args['conda_verified'] or self._conda_installed(args['conda_prefix'])
        problem = ce.missing_conda(args['conda_prefix'], present, self._vars.get('ansible_check_mode', False), args['envs'])
        if problem:
            return dict(failed=True, msg=problem)
        return dict(envs=declared, conda_present=present)

    def _conda_installed(self, conda_prefix):
        found = self._execute_module(module_name='ansible.legacy.stat', task_vars=self._vars,
                                     module_args=dict(path=conda_prefix + '/bin/conda', get_checksum=False))
        if found.get('failed'):
            raise ce.CondaEnvError('conda_env: %s/bin/conda cannot be looked for: %s' % (conda_prefix, found.get('msg')))
        return found['stat']['exists']

    @staticmethod
    def _publish(args):
        return ce.published(args['envs'], args['conda_prefix'], args['lock_dir'], args['results'], args['env_name'],
                            args['env_prefix'])

    @staticmethod
    def _verify(args):
        mismatches = []
        for lock, listing in zip(args['locks'], args['listings']):
            problem = ce.lock_mismatch(lock['item'], to_text(base64.b64decode(lock['content'])), listing['stdout'])
            if problem:
                mismatches.append(problem)
        if mismatches:
            return dict(failed=True, msg=' | '.join('conda_env: %s' % problem for problem in mismatches))
        return {}
