# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The apex_build_plan module runs here, on the controller. It reads the role's settings from the
task's variables (role_settings), reads the node itself with the same read-only modules the role's
tasks used to run (one round-trip each, only where one is needed) and the controller cache's marker,
and decides. Each stage returns the plan so far with its own keys added: a task hands the next stage
the registered plan, and YAML keeps only what it alone knows (the builder elected across the hosts,
the result of the build)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import datetime
import hashlib
import json
import os

from ansible.module_utils.common.text.converters import to_text
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import apex_build as ab
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.env_proof import proof_key
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.env_proof import file_digest
from ansible_collections.aistack.gpu_node.plugins.plugin_utils import role_settings
from ansible_collections.aistack.gpu_node.plugins.plugin_utils.plan_action import PlanAction

ROLE = 'apex_build'
ARGUMENT_SPEC = dict(
    stage=dict(type='str', required=True, choices=['before', 'decide', 'source', 'entry']),
    probe=dict(type='bool'),
    plan=dict(type='dict'),
    builder=dict(type='str'),
    build=dict(type='dict'),
)
VALIDATION_RULES = dict(required_if=[
    ('stage', 'before', ['probe']),
    ('stage', 'decide', ['plan', 'builder']),
    ('stage', 'source', ['plan']),
    ('stage', 'entry', ['plan']),
])
# cuda_compat's code, relative to the collection's plugins folder: its verdict on the same readings
# changes only with it (and the date), so a report it recorded is keyed on its digest.
_CUDA_CHECKS_CODE = ('modules/cuda_compat.py', 'module_utils/cuda/checks.py', 'module_utils/cuda/tables.py',
                     'module_utils/probe/toolchain.py', 'module_utils/probe/nvidia_parsers.py', 'module_utils/versions.py')
_PLUGINS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Keys of a registered result that are no part of the plan handed to the next stage.
_RESULT_KEYS = ('changed', 'failed', 'msg', 'skipped', 'warnings', 'deprecations', 'invocation')


class StageFailed(Exception):
    """A refusal: the stage stops the host with this message."""


def _slurped(result):
    """The text a slurp read, or None when it read nothing (no such file)."""
    if 'content' not in result:
        return None
    return to_text(base64.b64decode(result['content']))


def _controller_archive_sha256(path):
    """The sha256 of the source archive on the controller, read here: no module round-trip."""
    try:
        return file_digest(path)
    except (IOError, OSError) as error:
        raise ValueError('apex_build_archive: %s cannot be read on the controller (%s)' % (path, error.strerror or error))


def _cuda_checks_sha256():
    digest = hashlib.sha256()
    for path in _CUDA_CHECKS_CODE:
        digest.update(file_digest(os.path.join(_PLUGINS, path)).encode('ascii'))
    return digest.hexdigest()


def _controller_marker(controller_cache_dir, key, marker_name):
    """The controller cache's marker for the key; a missing one (or no controller cache) reads as none."""
    if not controller_cache_dir:
        return ''
    try:
        with open(os.path.join(controller_cache_dir, key, marker_name), 'rb') as handle:
            return to_text(handle.read())
    except (IOError, OSError):
        return ''


class ActionModule(PlanAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    VALIDATION_RULES = VALIDATION_RULES
    ERRORS = (KeyError, TypeError, ValueError)
    # The stages read the node (the environment probe, cuda_compat, markers, wheels) themselves.
    _requires_connection = True
    # Set by decide() for the stage it runs.
    _vars = None
    _settings = None
    _warnings = None

    def decide(self, args, task_vars):
        self._vars = task_vars
        self._settings = role_settings.read(self._templar, task_vars, ROLE)
        self._warnings = []
        plan = dict((name, value) for name, value in (args['plan'] or {}).items()
                    if name not in _RESULT_KEYS and not name.startswith('_ansible'))
        try:
            plan.update(getattr(self, '_' + args['stage'])(args, plan))
        except StageFailed as refusal:
            return dict(failed=True, msg=str(refusal))
        if self._warnings:
            plan['warnings'] = self._warnings
        return plan

    # -- what the stages share ------------------------------------------------

    @property
    def _host(self):
        return self._vars['inventory_hostname']

    def _private(self, name):
        """A private variable of the role (vars/main.yml), templated."""
        return role_settings.template(self._templar, self._vars, '__%s_%s' % (ROLE, name))

    def _python(self):
        return '%s/bin/python' % self._settings['env_prefix']

    def _node(self, module, **module_args):
        """One read-only module run on the node."""
        return self._execute_module(module_name=module, module_args=module_args, task_vars=self._vars)

    def _url_marker(self, url_entry, marker_name):
        """GET the marker at the cache URL from the node (it is the node that downloads the wheel);
        404 is no entry, anything else but 200 stops the host with the URL named."""
        settings = self._settings
        url = '%s/%s' % (url_entry, marker_name)
        auth = dict((option, settings['cache_' + option]) for option in ('url_username', 'url_password') if settings['cache_' + option])
        result = self._node('ansible.legacy.uri', url=url, return_content=True, status_code=[200, 404],
                            force_basic_auth=bool(settings['cache_url_username']),
                            validate_certs=settings['cache_url_validate_certs'], **auth)
        refusal = ab.url_marker_refusal(url, result, self._host)
        if refusal:
            raise StageFailed(refusal)
        return to_text(result.get('content') or '') if result.get('status') == 200 else ''

    # -- the stages ---------------------------------------------------------------

    def _before(self, args, plan):
        """The inputs and the gate (unless the plan handed in has them: the gate pass's), then, with
        probe on a node that gets APEX, the environment probe, the CUDA chain, the cache key and the
        markers of the node, the controller and the URL."""
        decision = {} if 'run' in plan else self._gate()
        done = dict(plan, **decision)
        decision['probed'] = done['run'] and args['probe']
        if decision['probed']:
            decision.update(self._read_environment(done))
            decision.update(self._read_markers(dict(done, **decision)))
        return decision

    def _gpu(self):
        return (self._vars.get('ansible_facts') or {}).get('aistack_gpu') or {}

    def _gate(self):
        """The version, the flags, whether the node gets APEX; what is wrong with the inputs fails the host."""
        settings = self._settings
        decision = ab.gate_decision(settings['version'], settings['legacy_apis'], self._private('tested_commit'),
                                    settings['cpp_ext'], settings['cuda_ext'], settings['contrib_extensions'],
                                    self._gpu().get('state', ''), self._host in settings['build_hosts'],
                                    settings['arch_list'])
        problems = ab.input_problems(settings, decision['version'], decision['legacy_apis_ref'])
        if problems:
            raise StageFailed('apex_build: bad input on %s: %s' % (self._host, ' '.join(problems)))
        if settings['legacy_apis']:
            self._warnings.append(ab.legacy_apis_warning(decision['version'], decision['legacy_apis_ref']))
        gate = decision.pop('gate')
        decision.update(run=gate['run'], reason=gate['reason'], key=None)
        return decision

    def _read_environment(self, decision):
        settings, python = self._settings, self._python()
        marker_name = self._private('marker_name')
        script = self._private('env_script')
        run = self._node('ansible.legacy.command', chdir='/', argv=[
            python, '-c', script, 'probe', self._private('proof_path'), python, settings['cache_dir'], marker_name,
            settings['cuda_home']])
        if run.get('rc') != 0:
            raise StageFailed(ab.probe_refusal(python, run))
        try:
            probe = json.loads(run['stdout'])
        except ValueError as error:
            raise ValueError('apex_build: the environment probe printed no JSON (%s)' % error)
        chain_key = ab.cuda_chain_key(python, settings['cuda_home'], self._gpu(), probe.get('toolkit'),
                                      _cuda_checks_sha256(), datetime.date.today().strftime('%Y-%m'))
        compat = ab.recorded_cuda_report(probe.get('proof'), chain_key) or self._cuda_compat(probe.get('proof'))
        archive_sha256 = ''
        if settings['source_type'] == 'archive':
            if settings['archive_on_node']:
                archive = self._node('ansible.legacy.stat', path=settings['archive'], checksum_algorithm='sha256')
                if not archive.get('stat', {}).get('exists'):
                    raise StageFailed('apex_build_archive: %s does not exist on the node.' % settings['archive'])
                archive_sha256 = archive['stat']['checksum']
            else:
                archive_sha256 = _controller_archive_sha256(settings['archive'])
        cuda = settings['cuda_ext'] or len(settings['contrib_extensions']) > 0
        keyed = ab.key_decision(probe, compat, settings['source_type'], decision['version'], archive_sha256,
                                settings['arch_list'], cuda, decision['flags'], settings['cache_dir'],
                                settings['work_dir'], settings['cache_url'])
        keyed.update(probe=probe, compat=compat, cuda_chain_key=chain_key, marker_name=marker_name, proof_key=proof_key(dict(
            verify=self._private('verify_options'), cache_key=keyed['key'],
            script_sha256=hashlib.sha256(script.encode('utf-8')).hexdigest())))
        refusal = ab.torch_refusal(python, compat)
        if refusal:
            raise StageFailed(refusal)
        return keyed

    def _cuda_compat(self, proof):
        """cuda_compat's report on the environment; a recorded proof's, made on the environment as it
        is, spares it a torch import."""
        python = self._python()
        compat_args = dict(python=python, cuda_home=self._settings['cuda_home'], apex=True, fail_on='never',
                           gpu_facts=self._gpu())
        if (proof or {}).get('cuda_report'):
            compat_args['reading'] = proof['cuda_report']
        chain = self._node('aistack.gpu_node.cuda_compat', **compat_args)
        if chain.get('failed'):
            raise ValueError('apex_build: cuda_compat failed on %s: %s' % (python, chain.get('msg')))
        return chain['report']

    def _read_markers(self, plan):
        """The markers for the key; the probe already read a node entry whose marker names the installed wheel."""
        settings, key, marker_name = self._settings, plan['key'], plan['marker_name']
        read_by_probe = key in (plan['probe'].get('cache_entries') or {})
        node_text = None
        if not read_by_probe:
            node_text = _slurped(self._node('ansible.legacy.slurp', src='%s/%s' % (plan['entry'], marker_name)))
        markers = ab.marker_states(key, {
            'node': ab.node_entry_reading(plan['probe'], key, node_text)[0],
            'controller': _controller_marker(settings['controller_cache_dir'], key, marker_name),
            'url': self._url_marker(plan['url_entry'], marker_name) if settings['cache_url'] else '',
        })
        self._warnings.extend(ab.marker_warnings(markers, key))
        wheel_sha256 = ''
        node_entry = markers['node']['entry']
        if node_entry is not None and not read_by_probe:
            wheel = self._node('ansible.legacy.stat', path='%s/%s' % (plan['entry'], node_entry['wheel']),
                               checksum_algorithm='sha256')
            wheel_sha256 = wheel.get('stat', {}).get('checksum', '')
        return dict(markers=markers, node_wheel_sha256=ab.node_entry_reading(plan['probe'], key, None, wheel_sha256)[1])

    def _decide(self, args, plan):
        """What this host does, with the builder the role elected among the hosts of its cache key."""
        settings, probe = self._settings, plan['probe']
        travels = ab.wheel_travels(settings['cache_shared'], settings['controller_cache_dir'], settings['cache_url_upload'])
        builder = args['builder'] if travels else self._host
        decision = ab.action_decision(plan['markers'], plan['node_wheel_sha256'],
                                      (probe.get('installed') or {}).get('wheel_sha256'), builder == self._host,
                                      settings['force_rebuild'], bool(settings['controller_cache_dir']),
                                      settings['cache_url_upload'])
        overrides = dict((name, settings[name]) for name in ('max_jobs', 'parallel_build', 'nvcc_threads'))
        stops = ab.preflight_blockers(decision['action'], plan['compat'], settings['cuda_ext'], plan['arch_list'], probe,
                                      overrides, settings['mib_per_job'])
        if stops['blockers']:
            raise StageFailed(ab.chain_refusal(
                'APEX %s' % plan['version'], 'in %s on %s' % (settings['env_prefix'], self._host), plan['compat'],
                settings['cuda_home'], stops['blockers']))
        if stops['overrides_problem']:
            raise StageFailed('apex_build on %s: %s' % (self._host, stops['overrides_problem']))
        if decision['action'] == 'build' and not probe['build_tools'].get('ninja'):
            self._warnings.append(ab.ninja_warning(settings['env_prefix']))
        proven = ab.proof_holds(decision['action'], probe.get('proof'), plan['proof_key'])
        decision.update(builder=builder, entry_meta=decision['node_entry'],
                        proven=proven and not settings['verify_always'])
        return decision

    def _source(self, args, plan):
        """The build of the checked-out source's setup.py (read, never run), sized for the node."""
        settings = self._settings
        found = self._node('ansible.legacy.find', paths='%s/src' % plan['tree_root'], patterns='setup.py', recurse=True,
                           depth=2)
        paths = [item['path'] for item in found.get('files') or []]
        if not paths:
            raise StageFailed('apex_build: no setup.py in the top two levels of the APEX source (%s %s).' % (
                settings['source_type'], settings['archive'] or settings['git_url']))
        setup_py = ab.top_setup_py(paths, plan['tree_root'])
        text = _slurped(self._node('ansible.legacy.slurp', src=setup_py)) or ''
        overrides = dict((name, settings[name]) for name in ('max_jobs', 'parallel_build', 'nvcc_threads'))
        decision = ab.source_decision(text, settings['cpp_ext'], settings['cuda_ext'], settings['contrib_extensions'],
                                      plan['probe'], plan['compat'], settings['cuda_home'], plan['arch_list'],
                                      settings['mib_per_job'], overrides)
        if decision['blockers']:
            raise StageFailed(ab.chain_refusal(
                ' '.join(decision['plan']['flags']), 'on %s' % self._host, plan['compat'], settings['cuda_home'],
                decision['blockers']))
        return dict(setup_py=setup_py, build_plan=decision['plan'], build_settings=decision['settings'])

    def _entry(self, args, plan):
        """The verified entry this host installs: the wheel it built (with build, the registered
        result of the build), else one a builder made, re-read where the builder may have put it
        since the markers were read (a shared cache folder, the URL)."""
        if args['build'] is not None:
            return self._built_entry(args['build'], plan)
        settings, key, marker_name = self._settings, plan['key'], plan['marker_name']
        shared = None
        if settings['cache_shared'] and (plan['node_entry'] is None or settings['force_rebuild']):
            shared = _slurped(self._node('ansible.legacy.slurp', src='%s/%s' % (plan['entry'], marker_name)))
        url = ''
        if settings['cache_url_upload'] and (not plan['url_has_entry'] or settings['force_rebuild']):
            url = self._url_marker(plan['url_entry'], marker_name)
        elif plan['url_has_entry']:
            url = json.dumps(plan['markers']['url']['entry'])
        found = ab.entry_decision(key, shared, plan['node_entry'], settings['force_rebuild'],
                                  _controller_marker(settings['controller_cache_dir'], key, marker_name), url)
        if found['entry_meta'] is None:
            raise StageFailed(
                'No verified APEX wheel for cache key %s on %s, on a shared apex_build_cache_dir, in '
                'apex_build_controller_cache_dir or at apex_build_cache_url; its builder %s did not make one (see its '
                'errors above).' % (key, self._host, plan['builder']))
        return found

    def _built_entry(self, build, plan):
        refusal = ab.build_failure(build, self._host, plan['tree_root'])
        if refusal:
            raise StageFailed(refusal)
        dist = '%s/dist' % plan['tree_root']
        wheels = [item['path'] for item in self._node('ansible.legacy.find', paths=dist, patterns='apex-*.whl').get('files') or []]
        if len(wheels) != 1:
            raise StageFailed('apex_build: expected one apex-*.whl in %s, found %s.' % (dist, wheels))
        wheel = self._node('ansible.legacy.stat', path=wheels[0], checksum_algorithm='sha256')['stat']
        entry = ab.built_entry(plan['key'], plan['key_inputs'], wheels[0], wheel, plan['build_plan'],
                               plan['build_settings']['env'], self._host, build)
        return dict(entry_meta=entry, entry_source='build', wheel_path=wheels[0])
