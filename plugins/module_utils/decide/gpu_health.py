# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU health from the kernel log: NVRM Xid and NVSwitch SXid events, classified.

Pure functions, no I/O: the gpu_health module reads the kernel log (and optionally runs
``dcgmi diag``) and hands the text here with the role's health catalogue
(``roles/gpu_validate/vars/health_catalogue.yml``). Each event gets a class from the catalogue,
each GPU or NVSwitch the worst class of its events and of its model's escalations, the node the
worst class of its devices.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

# The gpu_health module's options; its action plugin checks the same and fills in the catalogue
# the task leaves out (the gpu_validate role's own).
ARGUMENT_SPEC = dict(
    catalogue=dict(type='dict'),
    gpus=dict(type='list', elements='dict', default=[]),
    dcgm_diag_level=dict(type='int', default=0),
    dcgm_install_planned=dict(type='bool', default=False),
    fail_class=dict(type='str', default='REBOOT'),
    scan=dict(type='bool', default=True),
)

CLASSES = ('OK', 'MONITOR', 'RESET', 'REBOOT', 'ISOLATE')
# No kernel log could be read and no diagnostic ran: nothing is known, which is not OK.
UNKNOWN = 'UNKNOWN'
FAIL_NEVER = 'never'

# "NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus." Old drivers omit "PCI:"; MIG
# adds " GPU-I:05" inside the parentheses.
XID_LINE = re.compile(r'NVRM: Xid \((?:PCI:)?(?P<bus>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})[^)]*\): '
                      r'(?P<code>\d+),?\s*(?P<detail>.*)$')
# "nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data {...}"
SXID_LINE = re.compile(r'SXid \((?:PCI:)?(?P<bus>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\): '
                       r'(?P<code>\d+),?\s*(?P<detail>.*)$')
URL = re.compile(r'^https://\S+$')


def rank(name):
    """Position of a class, mildest first; -1 for UNKNOWN or anything else."""
    return CLASSES.index(name) if name in CLASSES else -1


def worst(names):
    """The worst of some classes; OK for none."""
    names = [name for name in names if name in CLASSES]
    return max(names, key=rank) if names else 'OK'


def device_key(bus_id):
    """``0000:2b:00`` (Xid), ``00000000:2B:00.0`` (nvidia-smi), ``0000:2b:00.0`` (sysfs) -> ``0000:2b:00``."""
    if not bus_id:
        return None
    parts = bus_id.strip().lower().split(':')
    if len(parts) != 3:
        return bus_id.strip().lower()
    domain, bus, device = parts
    return '%s:%s:%s' % (domain[-4:].rjust(4, '0'), bus, device.split('.')[0])


def parse_kernel_log(text):
    """Every Xid and SXid line of a kernel log (journalctl, dmesg or syslog; any timestamp prefix).

    Returns ``[{'kind': 'xid'|'sxid', 'code': int, 'device': '0000:2b:00', 'detail': str, 'line': str}]``.
    """
    events = []
    for line in (text or '').splitlines():
        for kind, pattern in (('xid', XID_LINE), ('sxid', SXID_LINE)):
            match = pattern.search(line)
            if match:
                events.append({'kind': kind, 'code': int(match.group('code')), 'device': device_key(match.group('bus')),
                               'detail': match.group('detail').strip(), 'line': line.strip()})
                break
    return events


def _entry(table, code):
    """A catalogue table's entry for a code; YAML keys arrive as ints, module arguments as strings."""
    table = table or {}
    entry = table.get(code)
    if entry is None:
        entry = table.get(str(code))
    return entry


def _is_fatal(detail):
    words = detail.lower().replace('-', '')
    return 'fatal' in words and 'nonfatal' not in words


def classify_event(event, catalogue):
    """``(class, why, source, name)`` of one event under the catalogue."""
    if event['kind'] == 'sxid':
        sxid = catalogue['sxid']
        entry = _entry(sxid.get('codes'), event['code'])
        if entry:
            return entry['class'], entry.get('why', ''), entry['source'], entry.get('name', '')
        if _is_fatal(event['detail']):
            return sxid['fatal_class'], 'the switch reports a fatal error', sxid['source'], ''
        return sxid['class'], 'an SXid not listed in this catalogue', sxid['source'], ''
    entry = _entry(catalogue['xid'], event['code'])
    if entry is None:
        unknown = catalogue['unknown_xid']
        return unknown['class'], unknown['why'], unknown['source'], ''
    why = entry.get('why', 'bucket %s' % entry.get('bucket'))
    if entry.get('recovery_actions'):
        detail = event['detail'].lower()
        # The action the driver changed *to* is the last one named on the line.
        found = [(detail.rfind(action['text']), action) for action in entry['recovery_actions']
                 if action['text'] in detail]
        if found:
            action = max(found, key=lambda item: item[0])[1]
            return action['class'], 'recovery action "%s"' % action['text'], entry['source'], entry['mnemonic']
        return entry['class'], 'no recovery action recognised on the line', entry['source'], entry['mnemonic']
    if entry.get('fatal_class') and _is_fatal(event['detail']):
        return entry['fatal_class'], 'the driver reports it fatal', entry['source'], entry['mnemonic']
    return entry['class'], why, entry['source'], entry['mnemonic']


def model_for(gpu_name, catalogue):
    """The catalogue's model entry whose ``match`` the GPU's product name contains, else the default."""
    for model in catalogue.get('models') or []:
        if gpu_name and model['match'].lower() in gpu_name.lower():
            return model
    return catalogue['default_model']


def _escalations(counts, model):
    """The model's escalations that the per-code counts reach."""
    reached = []
    for rule in model.get('escalations') or []:
        count = sum(counts.get(code, 0) for code in rule['xids'])
        if count >= rule['at_least']:
            reached.append({'class': rule['class'], 'xids': rule['xids'], 'count': count, 'at_least': rule['at_least'],
                            'why': rule['why'], 'basis': rule['basis'], 'source': rule['source']})
    return reached


def catalogue_problems(catalogue):
    """Every malformed entry of the health catalogue, each naming where it is and what was expected."""
    problems = []
    if not isinstance(catalogue, dict):
        return ['the health catalogue must be a mapping, got %r' % (catalogue,)]

    def check(where, entry, keys=('class', 'source')):
        if not isinstance(entry, dict):
            problems.append('%s must be a mapping, got %r' % (where, entry))
            return
        for key in keys:
            if key not in entry:
                problems.append('%s has no %s' % (where, key))
        for key in ('class', 'fatal_class'):
            if key in entry and entry[key] not in CLASSES:
                problems.append('%s.%s must be one of %s, got %r' % (where, key, ', '.join(CLASSES), entry[key]))
        if 'source' in entry and not URL.match(str(entry['source'])):
            problems.append('%s.source must be an https URL, got %r' % (where, entry['source']))

    names = [item.get('name') for item in catalogue.get('classes') or [] if isinstance(item, dict)]
    if tuple(names) != CLASSES:
        problems.append('classes must list %s in that order, got %r' % (', '.join(CLASSES), names))
    check('unknown_xid', catalogue.get('unknown_xid'), ('class', 'why', 'source'))
    for code, entry in sorted((catalogue.get('xid') or {}).items(), key=lambda item: int(item[0])):
        check('xid.%s' % code, entry, ('mnemonic', 'bucket', 'class', 'source'))
        for action in (entry or {}).get('recovery_actions') or []:
            check('xid.%s.recovery_actions[%r]' % (code, action.get('text')), action, ('text', 'class'))
    sxid = catalogue.get('sxid')
    check('sxid', sxid, ('class', 'fatal_class', 'source'))
    for code, entry in sorted(((sxid or {}).get('codes') or {}).items(), key=lambda item: int(item[0])):
        check('sxid.codes.%s' % code, entry)
    models = list(catalogue.get('models') or []) + [catalogue.get('default_model')]
    for model in models:
        if not isinstance(model, dict):
            problems.append('models entries and default_model must be mappings, got %r' % (model,))
            continue
        for index, rule in enumerate(model.get('escalations') or []):
            where = 'models[%s].escalations[%d]' % (model.get('name'), index)
            check(where, rule, ('xids', 'at_least', 'class', 'why', 'basis', 'source'))
            if not isinstance(rule.get('at_least'), int) or isinstance(rule.get('at_least'), bool) or rule.get('at_least') < 1:
                problems.append('%s.at_least must be a whole number of at least 1, got %r' % (where, rule.get('at_least')))
    dcgm = catalogue.get('dcgm')
    check('dcgm', dcgm, ('failed_class', 'warning_class', 'severities', 'source'))
    for key in ('failed_class', 'warning_class'):
        if (dcgm or {}).get(key) not in CLASSES:
            problems.append('dcgm.%s must be one of %s, got %r' % (key, ', '.join(CLASSES), (dcgm or {}).get(key)))
    for index, waiver in enumerate((dcgm or {}).get('waivers') or []):
        where = 'dcgm.waivers[%d]' % index
        check(where, waiver, ('versions', 'test', 'message', 'why', 'source'))
        if not isinstance(waiver, dict):
            continue
        versions = waiver.get('versions')
        if not isinstance(versions, list) or not versions or not all(re.match(r'^\d+\.\d+\.\d+$', str(v)) for v in versions):
            problems.append('%s.versions must list exact DCGM versions such as "4.5.0", got %r' % (where, versions))
        try:
            re.compile(str(waiver.get('message')))
        except re.error as error:
            problems.append('%s.message must be a regular expression: %s' % (where, error))
    return problems


def input_problems(dcgm_diag_level, fail_class):
    """The role's health variables, each bad one named."""
    problems = []
    if isinstance(dcgm_diag_level, bool) or dcgm_diag_level not in (0, 1, 2, 3):
        problems.append('gpu_validate_dcgm_diag_level must be 0 (off), 1, 2 or 3, got %r' % (dcgm_diag_level,))
    if fail_class not in CLASSES[1:] + (FAIL_NEVER,):
        problems.append('gpu_validate_health_fail_class must be one of %s or %s, got %r'
                        % (', '.join(CLASSES[1:]), FAIL_NEVER, fail_class))
    return problems


def dcgmi_missing_problem(dcgm_diag_level):
    """The refusal when a DCGM level is asked for on a node without ``dcgmi``."""
    return ('gpu_validate_dcgm_diag_level is %s but dcgmi is not installed on the node: install DCGM '
            '(datacenter-gpu-manager) or set gpu_validate_dcgm_diag_level: 0' % dcgm_diag_level)


def _dcgm_results(data):
    """``(test name, gpu id, status, [warning dicts])`` of DCGM 3.x and 4.x ``dcgmi diag -j`` JSON."""
    body = data.get('DCGM GPU Diagnostic') or data.get('DCGM Diagnostic') or data
    for category in body.get('test_categories') or [{'tests': body.get('tests') or []}]:
        for test in category.get('tests') or []:
            for result in test.get('results') or []:
                gpu = result.get('gpu_id', result.get('entity_id'))
                warnings = result.get('warnings') or result.get('errors') or []
                yield test.get('name'), gpu, result.get('status'), warnings


def waiver_for(finding, version, tests_run, waivers):
    """The catalogue's waiver of a known false diagnostic that covers this finding at this DCGM
    version, or None: the version is listed, the test is the waiver's, the test it follows ran in
    the same diagnostic, and every message of the finding matches."""
    for waiver in waivers or []:
        if version not in [str(listed) for listed in waiver.get('versions') or []]:
            continue
        if str(finding['test']).lower() != str(waiver['test']).lower():
            continue
        if waiver.get('after_test') and str(waiver['after_test']).lower() not in tests_run:
            continue
        pattern = re.compile(waiver['message'], re.I)
        if finding['messages'] and all(pattern.search(message) for message in finding['messages']):
            return waiver
    return None


def assess_dcgm(data, level, catalogue, version=None):
    """The verdict on ``dcgmi diag -r <level> -j`` output (parsed JSON) from DCGM ``version``: a
    finding that a waiver of the catalogue covers (a known false diagnostic of that version) is
    listed as waived and does not count."""
    rules = catalogue['dcgm']
    findings = []
    results = list(_dcgm_results(data if isinstance(data, dict) else {}))
    tests_run = set(str(name).lower() for name, _gpu, _status, _warnings in results)
    for name, gpu, status, warnings in results:
        state = str(status or '').lower()
        if state.startswith('fail'):
            classes = []
            for warning in warnings if isinstance(warnings, list) else []:
                severity = warning.get('error_severity', warning.get('severity')) if isinstance(warning, dict) else None
                severity = _entry(rules.get('severity_names'), severity) or severity
                classes.append(rules['severities'].get(severity, rules['failed_class']))
            found = worst(classes) if classes else rules['failed_class']
        elif state.startswith('warn'):
            found = rules['warning_class']
        else:
            continue
        messages = [str(w.get('warning', w.get('message', w)) if isinstance(w, dict) else w) for w in warnings or []]
        finding = {'test': name, 'gpu_id': gpu, 'status': status, 'class': found, 'messages': messages}
        waiver = waiver_for(finding, version, tests_run, rules.get('waivers'))
        if waiver:
            finding.update({'class': 'OK', 'waived': {'class': found, 'why': waiver['why'], 'source': waiver['source']}})
        findings.append(finding)
    counted = [finding for finding in findings if 'waived' not in finding]
    verdict = worst(finding['class'] for finding in counted)
    return {'level': level, 'version': version, 'status': 'failed' if counted else 'passed', 'class': verdict,
            'findings': findings, 'waived': len(findings) - len(counted), 'source': rules['source']}


def _group(events, catalogue):
    """Events grouped by device and code, each with its count, class and first and last line."""
    groups = {}
    for event in events:
        key = (event['device'], event['kind'], event['code'])
        found, why, source, name = classify_event(event, catalogue)
        group = groups.setdefault(key, {'device': event['device'], 'kind': event['kind'], 'code': event['code'],
                                        'name': name, 'class': found, 'why': why, 'source': source, 'count': 0,
                                        'first_line': event['line']})
        group['count'] += 1
        group['last_line'] = event['line']
        # Xid 154 and NVLink lines differ per occurrence: the group keeps the worst.
        if rank(found) > rank(group['class']):
            group['class'], group['why'] = found, why
    return sorted(groups.values(), key=lambda g: (g['device'], g['kind'], g['code']))


def _escalation_reason(rule, model_name):
    xids = '/'.join('Xid %d' % code for code in rule['xids'])
    values = (rule['class'], xids, rule['count'], rule['at_least'], model_name, rule['why'], rule['basis'])
    return '%s: %s x%d reaches %d for %s: %s (%s)' % values


def _label(kind, code):
    return '%s %d' % ('SXid' if kind == 'sxid' else 'Xid', code)


def assess(kernel_log, gpus, catalogue, fail_class='REBOOT', dcgm=None):
    """The health verdict of one node.

    ``kernel_log``: ``{'source': 'journalctl'|'dmesg'|'none', 'text': str, 'reason': str}``;
    ``gpus``: the gpu_facts GPUs (``index``, ``name``, ``pci_bus_id``); ``dcgm``: the result of
    :func:`assess_dcgm` or ``{'level': 0, 'status': 'off'}``. Returns the ``health`` mapping the
    module documents; ``fails`` says whether the verdict reaches ``fail_class``.
    """
    by_key = dict((device_key(gpu.get('pci_bus_id')), gpu) for gpu in gpus or [] if gpu.get('pci_bus_id'))
    readable = kernel_log.get('source') not in (None, 'none')
    events = parse_kernel_log(kernel_log.get('text')) if readable else []
    groups = _group(events, catalogue)
    devices = []
    for key in sorted(set(group['device'] for group in groups)):
        mine = [group for group in groups if group['device'] == key]
        gpu = by_key.get(key) or {}
        kind = 'nvswitch' if all(group['kind'] == 'sxid' for group in mine) else 'gpu'
        counts = dict((group['code'], group['count']) for group in mine if group['kind'] == 'xid')
        model = model_for(gpu.get('name'), catalogue) if kind == 'gpu' else {'name': 'NVSwitch', 'escalations': []}
        escalations = _escalations(counts, model)
        found = worst([group['class'] for group in mine] + [rule['class'] for rule in escalations])
        label = 'NVSwitch %s' % key if kind == 'nvswitch' else (
            'GPU %s %s (%s)' % (gpu.get('index'), gpu.get('name'), key) if gpu else 'GPU %s (not in the GPU list)' % key)
        reasons = ['%s x%d: %s (%s)' % (_label(g['kind'], g['code']), g['count'], g['class'], g['why'] or g['name'])
                   for g in mine]
        reasons += [_escalation_reason(rule, model['name']) for rule in escalations]
        devices.append({'device': key, 'kind': kind, 'label': label, 'gpu_index': gpu.get('index'),
                        'gpu_name': gpu.get('name'), 'model': model['name'], 'class': found, 'counts': counts,
                        'escalations': escalations, 'message': '%s: %s: %s' % (label, found, '; '.join(reasons))})
    dcgm = dcgm or {'level': 0, 'status': 'off'}
    classes = [device['class'] for device in devices]
    if dcgm.get('class'):
        classes.append(dcgm['class'])
    if not readable and dcgm.get('status') in ('off', 'skipped'):
        verdict = UNKNOWN
    else:
        verdict = worst(classes)
    actions = dict((item['name'], item['action']) for item in catalogue['classes'])
    messages = [device['message'] for device in devices if device['class'] != 'OK']
    messages += ['dcgmi diag -r %s %s on GPU %s: %s (%s)%s' % (
        dcgm['level'], f['test'], f['gpu_id'], f['class'], '; '.join(f['messages']) or f['status'],
        ' waived, a known false diagnostic of DCGM %s: %s (%s)' % (dcgm.get('version'), f['waived']['why'], f['waived']['source'])
        if f.get('waived') else '') for f in dcgm.get('findings') or []]
    fails = fail_class != FAIL_NEVER and rank(verdict) >= rank(fail_class)
    source = kernel_log.get('source') or 'none'
    if readable:
        scanned = '%d Xid/SXid events in the kernel log since boot (%s) on %d devices' % (len(events), source, len(devices))
    else:
        scanned = 'kernel log unreadable (%s)' % kernel_log.get('reason', 'no source')
    return {
        'verdict': verdict,
        'action': actions.get(verdict, 'Read the kernel log by hand: journalctl -k -b, or dmesg, as root.'),
        'fails': fails,
        'fail_class': fail_class,
        'kernel_log': {'source': source, 'reason': kernel_log.get('reason', ''), 'events': len(events)},
        'events': groups,
        'devices': devices,
        'dcgm': dcgm,
        'messages': messages,
        'summary': 'health %s: %s%s' % (verdict, scanned, '' if dcgm.get('status') == 'off'
                                        else '; dcgmi diag -r %s %s' % (dcgm.get('level'), dcgm.get('status'))),
    }


def journal_has_entries(text):
    """Whether ``journalctl -k -b`` printed kernel messages (not only ``-- No entries --`` or hints)."""
    return any(line.strip() and not line.startswith('-- ') for line in (text or '').splitlines())
