# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The mirrors_condarc_plan module runs here, on the controller: its decisions need only the role's
variables, what the role's one read of the node found (mirrors_condarc_probe) and the text conda
printed, so the node is not asked anything."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import yaml

from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import mirrors as cm
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import mirrors_condarc
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import PlanAction

ARGUMENT_SPEC = dict(
    stage=dict(type='str', choices=['plan', 'refuse', 'verify'], default='plan'),
    distribution=dict(type='str', required=True),
    mirrors=dict(type='list', elements='str', default=[]),
    channels=dict(type='list', elements='str', default=[]),
    default_channels=dict(type='raw'),
    custom_channels=dict(type='raw'),
    solver=dict(type='raw'),
    pkgs_dirs=dict(type='raw'),
    envs_dirs=dict(type='raw'),
    proxy_servers=dict(type='raw'),
    ssl_verify=dict(type='raw'),
    settings=dict(type='raw'),
    show_sources=dict(type='str', default=''),
    system_file=dict(type='str'),
    condarc=dict(type='dict'),
    chosen=dict(type='str', default=''),
    node=dict(type='dict'),
    conda=dict(type='str'),
    users=dict(type='list', elements='str', default=[]),
    group=dict(type='str'),
    has_credentials=dict(type='bool', default=False),
    miniconda_result=dict(type='dict', default={}),
)
CONDARC_OPTIONS = ('default_channels', 'custom_channels', 'solver', 'pkgs_dirs', 'envs_dirs', 'proxy_servers', 'ssl_verify',
                   'settings')


class ActionModule(PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    VALIDATION_RULES = dict(required_if=[('stage', 'verify', ('system_file', 'condarc')),
                                         ('stage', 'refuse', ('node', 'conda', 'system_file'))])

    def decide(self, args, task_vars):
        if args['stage'] == 'refuse':
            refusal = mirrors_condarc.node_refusal(args['node'], args, self._task.check_mode, task_vars['inventory_hostname'],
                                                   args['miniconda_result'])
            return dict(failed=True, msg=refusal) if refusal else {}
        return self.decide_stage(args)

    @staticmethod
    def _plan(args):
        options = dict((key, args[key]) for key in CONDARC_OPTIONS)
        # The inputs that reach the file as URLs; a path (ssl_verify, pkgs_dirs) is no credential.
        carriers = [args[key] for key in ('mirrors', 'channels', 'default_channels', 'custom_channels', 'proxy_servers', 'settings')]
        result = dict(has_credentials=cm.has_credentials(carriers), condarcs=[], problem=None)
        try:
            result['condarcs'] = cm.condarcs_for(args['mirrors'], args['channels'], args['distribution'], **options)
        except cm.MirrorError as error:
            result['problem'] = str(error)
        return result

    @staticmethod
    def _verify(args):
        sources = []
        for source, body in cm.parse_show_sources(args['show_sources']):
            try:
                settings = yaml.safe_load(body) or {}
            except yaml.YAMLError as error:
                return dict(failed=True, msg='mirrors_condarc: the section of %s in conda config --show-sources does not parse: %s'
                            % (source, error))
            sources.append({'source': source, 'settings': settings})
        sound, problems = cm.loaded_config_sound(sources, args['system_file'], args['condarc'], args['distribution'])
        result = dict(sources=[source['source'] for source in sources], problems=problems)
        if not sound:
            result.update(failed=True, msg='mirrors_condarc: conda config --show-sources does not show %s with the chosen mirror '
                          '%s, or a loaded source breaks the channel policy: %s'
                          % (args['system_file'], args['chosen'], '; '.join(problems)))
        return result
