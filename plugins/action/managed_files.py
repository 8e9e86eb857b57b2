# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""managed_files: one read of the node for all the entries, then ansible.builtin.file or
ansible.builtin.copy for each entry that is not in place; with root_owned_tree, that read also walks
the tree, and the root_owned_tree module runs only where the walk found something or an entry was written."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.managed_files import (
    ENTRY_OPTIONS,
    TREE_OPTIONS,
    content_checksum,
    wanted_mode,
)

ARGUMENT_SPEC = dict(
    directories=dict(type='list', elements='dict', default=[], options=ENTRY_OPTIONS),
    files=dict(type='list', elements='dict', default=[],
               options=dict(ENTRY_OPTIONS, content=dict(type='str', required=True), backup=dict(type='bool', default=False))),
    root_owned_tree=dict(type='dict', options=TREE_OPTIONS),
)


def _attributes(entry):
    return dict((key, entry[key]) for key in ('owner', 'group', 'mode') if entry.get(key) not in (None, ''))


class ActionModule(ActionBase):

    # No temporary folder made up front: with pipelining the read of the node needs none, and the
    # copy action makes its own for a file it writes (without pipelining the module run makes one,
    # which run() removes). Made up front it cost three more commands on the node (find home, make,
    # remove) on every run, also on the runs that change nothing.
    TRANSFERS_FILES = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        for entry in args['directories'] + args['files']:
            try:
                wanted_mode(entry.get('mode'))
            except ValueError as error:
                return dict(result, failed=True, msg='managed_files: %s: %s' % (entry['path'], error))
        contents = dict((entry['path'], entry['content']) for entry in args['files'])
        probe_args = dict(directories=args['directories'],
                          files=[dict(_attributes(entry), path=entry['path'], checksum=content_checksum(entry['content']))
                                 for entry in args['files']])
        if args['root_owned_tree']:
            probe_args['root_owned_tree'] = args['root_owned_tree']
        probe = self._execute_module(module_name='aistack.gpu_node.managed_files', task_vars=task_vars, module_args=probe_args)
        if probe.get('failed'):
            return dict(result, **probe)
        written, diffs, backups = [], [], {}
        result.update(changed=False, entries=probe['entries'], written=written, backups=backups)
        unknown = [state for state in probe['entries'] if state['unknown_names']]
        if unknown and not self._task.check_mode:
            # Refused before any entry is written: the writing module would fail on it midway.
            return dict(result, failed=True, msg='managed_files: %s' % '; '.join(
                '%s: %s' % (state['path'], ', '.join(reason for reason in state['reasons'] if 'does not exist' in reason))
                for state in unknown))
        try:
            for state in probe['entries']:
                if state['in_place']:
                    continue
                if self._task.check_mode and (state['unknown_names'] or not state['parent_exists']):
                    # The writing module would fail on what an earlier task of this run only plans to create.
                    written.append(state['path'])
                    if state['kind'] == 'file':
                        diffs.append(dict(before='', after=contents[state['path']], before_header=state['path'],
                                          after_header=state['path']))
                    continue
                entry = dict(_attributes(self._entry(args, state)), path=state['path'])
                if state['kind'] == 'directory':
                    outcome = self._execute_module(module_name='ansible.legacy.file', task_vars=task_vars,
                                                   module_args=dict(entry, state='directory'))
                else:
                    outcome = self._copy(dict(entry, dest=entry.pop('path'), content=contents[state['path']],
                                              backup=self._entry(args, state)['backup']), task_vars)
                if outcome.get('failed'):
                    return dict(result, failed=True, msg='managed_files: %s: %s' % (state['path'], to_text(outcome.get('msg'))),
                                failed_entry=outcome)
                if outcome.get('backup_file'):
                    backups[state['path']] = outcome['backup_file']
                if outcome.get('changed'):
                    written.append(state['path'])
                    diff = outcome.get('diff') or []
                    diffs.extend(diff if isinstance(diff, list) else [diff])
            if args['root_owned_tree']:
                tree = self._root_owned_tree(args['root_owned_tree'], probe.get('root_owned_tree'), written, diffs, task_vars)
                if tree.get('failed'):
                    return dict(result, failed=True, msg=tree['msg'])
                result['root_owned_tree'] = tree
        finally:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        result['changed'] = bool(written) or result.get('root_owned_tree', {}).get('changed', False)
        if diffs:
            result['diff'] = diffs
        return result

    def _root_owned_tree(self, tree_args, walked, written, diffs, task_vars):
        """The probe's walk of the tree where it found nothing and nothing was written since (nothing to change);
        else the root_owned_tree module's result, which walks it after the writes and changes what it finds."""
        if walked is not None and not walked['found'] and not written:
            return dict(walked, changed=False)
        outcome = self._execute_module(module_name='aistack.gpu_node.root_owned_tree', module_args=tree_args,
                                       task_vars=task_vars)
        if outcome.get('failed'):
            return dict(failed=True, msg=to_text(outcome.get('msg')))
        if outcome.get('diff'):
            diffs.append(outcome['diff'])
        return dict((key, outcome[key]) for key in ('changed', 'found', 'entries', 'left_alone'))

    @staticmethod
    def _entry(args, state):
        return next(entry for entry in args['directories' if state['kind'] == 'directory' else 'files']
                    if entry['path'] == state['path'])

    def _copy(self, copy_args, task_vars):
        task = self._task.copy()
        task.args.clear()
        task.args.update(copy_args)
        copy_action = self._shared_loader_obj.action_loader.get(
            'ansible.legacy.copy', task=task, connection=self._connection, play_context=self._play_context,
            loader=self._loader, templar=self._templar, shared_loader_obj=self._shared_loader_obj)
        return copy_action.run(task_vars=task_vars)
