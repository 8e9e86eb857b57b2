# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The apex_build_plan module runs here, on the controller: it decides from the role's variables and
what the role read from the node, and reads the controller cache's marker itself."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import json
import os

from ansible.module_utils.common.text.converters import to_text
from ansible_collections.aistack.gpu_node.plugins.module_utils import apex_build as ab
from ansible_collections.aistack.gpu_node.plugins.module_utils import env_proof
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import PlanAction

ARGUMENT_SPEC = dict(
    stage=dict(type='str', required=True, choices=['gate', 'key', 'markers', 'action', 'source', 'entry']),
    version=dict(type='str', default=''),
    legacy_apis=dict(type='bool', default=False),
    tested_commit=dict(type='str', default=''),
    cpp_ext=dict(type='bool', default=True),
    cuda_ext=dict(type='bool', default=True),
    contrib_extensions=dict(type='list', elements='str', default=[]),
    gpu_state=dict(type='str', default=''),
    build_host=dict(type='bool', default=False),
    arch_list=dict(type='str', default=''),
    probe_output=dict(type='str', default=''),
    probe=dict(type='dict'),
    compat=dict(type='dict', default={}),
    source_type=dict(type='str', default='git', choices=['git', 'archive']),
    archive_sha256=dict(type='str', default=''),
    archive=dict(type='str', default=''),
    flags=dict(type='list', elements='str', default=[]),
    cache_dir=dict(type='str', default=''),
    work_dir=dict(type='str', default=''),
    cache_url=dict(type='str', default=''),
    key=dict(type='str', default=''),
    marker_name=dict(type='str', default='aistack-apex.json'),
    node_marker=dict(type='dict', default={}),
    url_marker=dict(type='dict', default={}),
    shared_marker=dict(type='dict', default={}),
    controller_cache_dir=dict(type='str', default=''),
    markers=dict(type='dict', default={}),
    node_wheel=dict(type='dict', default={}),
    node_entry=dict(type='dict'),
    is_builder=dict(type='bool', default=False),
    force_rebuild=dict(type='bool', default=False),
    cache_url_upload=dict(type='bool', default=False),
    overrides=dict(type='dict', default={}),
    mib_per_job=dict(type='int', default=ab.DEFAULT_MIB_PER_JOB),
    setup_py=dict(type='dict', default={}),
    cuda_home=dict(type='str', default=''),
    inputs=dict(type='dict', default={}),
    proof_inputs=dict(type='dict', default={}),
    proof_key=dict(type='str', default=''),
    verify_always=dict(type='bool', default=False),
)


def _slurped(result):
    """The text a registered slurp read, or None when it read nothing (skipped, or no such file)."""
    if 'content' not in result:
        return None
    return to_text(base64.b64decode(result['content']))


def _controller_archive_sha256(path):
    """The sha256 of the source archive on the controller, read here: no module round-trip."""
    try:
        return env_proof.file_digest(path)
    except (IOError, OSError) as error:
        raise ValueError('apex_build_archive: %s cannot be read on the controller (%s)' % (path, error.strerror or error))


def _url_marker_text(result):
    """The marker a registered uri GET fetched; a 404 (or no request at all) is no marker."""
    return to_text(result.get('content') or '') if result.get('status') == 200 else ''


class ActionModule(PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    ERRORS = (KeyError, TypeError, ValueError)

    def decide(self, args, task_vars):
        return self.decide_stage(args)

    @staticmethod
    def _gate(args):
        decision = ab.gate_decision(args['version'], args['legacy_apis'], args['tested_commit'],
                                    args['cpp_ext'], args['cuda_ext'], args['contrib_extensions'], args['gpu_state'],
                                    args['build_host'], args['arch_list'])
        inputs = dict(args['inputs'], cpp_ext=args['cpp_ext'], cuda_ext=args['cuda_ext'],
                      contrib_extensions=args['contrib_extensions'], arch_list=args['arch_list'], legacy_apis=args['legacy_apis'])
        decision['problems'] = ab.input_problems(inputs, decision['version'], decision['legacy_apis_ref'])
        return decision

    @staticmethod
    def _key(args):
        try:
            probe = json.loads(args['probe_output'])
        except ValueError as error:
            raise ValueError('apex_build: the environment probe printed no JSON (%s)' % error)
        cuda = args['cuda_ext'] or len(args['contrib_extensions']) > 0
        archive_sha256 = args['archive_sha256']
        if args['source_type'] == 'archive' and not archive_sha256 and args['archive']:
            archive_sha256 = _controller_archive_sha256(args['archive'])
        decision = ab.key_decision(probe, args['compat'], args['source_type'], args['version'], archive_sha256,
                                   args['arch_list'], cuda, args['flags'], args['cache_dir'], args['work_dir'],
                                   args['cache_url'])
        decision['probe'] = probe
        decision['proof_key'] = env_proof.proof_key(dict(args['proof_inputs'], cache_key=decision['key']))
        return decision

    @staticmethod
    def _controller_marker(args):
        """The controller cache's marker for the key; a missing one (or no controller cache) reads as none."""
        if not args['controller_cache_dir']:
            return ''
        try:
            with open(os.path.join(args['controller_cache_dir'], args['key'], args['marker_name']), 'rb') as handle:
                return to_text(handle.read())
        except (IOError, OSError):
            return ''

    def _markers(self, args):
        return dict(markers=ab.marker_states(args['key'], {
            'node': ab.node_entry_reading(args['probe'], args['key'], _slurped(args['node_marker']))[0],
            'controller': self._controller_marker(args),
            'url': _url_marker_text(args['url_marker']),
        }))

    @staticmethod
    def _action(args):
        probe = args['probe'] or {}
        node_wheel_sha256 = ab.node_entry_reading(probe, args['key'], None,
                                                  args['node_wheel'].get('stat', {}).get('checksum', ''))[1]
        decision = ab.action_decision(args['markers'], node_wheel_sha256,
                                      (probe.get('installed') or {}).get('wheel_sha256'), args['is_builder'],
                                      args['force_rebuild'], bool(args['controller_cache_dir']), args['cache_url_upload'])
        decision.update(ab.preflight_blockers(decision['action'], args['compat'], args['cuda_ext'], args['arch_list'],
                                              probe, args['overrides'], args['mib_per_job']))
        proof_holds = ab.proof_holds(decision['action'], probe.get('proof'), args['proof_key'])
        decision['proven'] = proof_holds and not args['verify_always']
        return decision

    @staticmethod
    def _source(args):
        return ab.source_decision(_slurped(args['setup_py']) or '', args['cpp_ext'], args['cuda_ext'],
                                  args['contrib_extensions'], args['probe'] or {}, args['compat'], args['cuda_home'],
                                  args['arch_list'], args['mib_per_job'], args['overrides'])

    def _entry(self, args):
        return ab.entry_decision(args['key'], _slurped(args['shared_marker']), args['node_entry'], args['force_rebuild'],
                                 self._controller_marker(args), _url_marker_text(args['url_marker']))
