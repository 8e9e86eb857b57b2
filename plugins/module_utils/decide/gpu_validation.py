# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU acceptance gate: figures measured by ``validate_gpu.py`` against thresholds.

Pure functions, no I/O: the role feeds them the script's JSON and its variables.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

# Per-GPU figures the gate compares with the reference table, and which way is better.
PER_GPU_METRICS = (
    ('gemm_bf16_tflops', 'higher', 'TFLOP/s'),
    ('gemm_fp16_tflops', 'higher', 'TFLOP/s'),
    ('copy_gbps', 'higher', 'GB/s'),
    ('fused_adamw_ms', 'lower', 'ms'),
)
METRIC_NAMES = tuple(name for name, _direction, _unit in PER_GPU_METRICS)


def as_number(value):
    """``value`` as a float when it is a number or a numeric string (``-e`` passes strings), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


UNKNOWN_GPU_POLICIES = ('warn', 'fail')
EXPECT_KEYS = ('count', 'model', 'memory_gb', 'mig_mode')
# A GPU reports less memory than its marketed size (the driver's reserve, ECC on GDDR parts: a
# 16 GB T4 with ECC shows 15,109 MiB); an expected size is met at this share of it.
MEMORY_SHARE_REPORTED = 0.9


def _positive(value):
    number = as_number(value)
    return number is not None and number > 0


def _reference_problems(reference):
    if not isinstance(reference, dict):
        return ['gpu_validate_reference must be a mapping of GPU name to reference figures, got %r' % (reference,)]
    problems = []
    for gpu, figures in sorted(reference.items()):
        if not isinstance(figures, dict):
            problems.append('gpu_validate_reference[%r] must be a mapping of metric to number, got %r' % (gpu, figures))
            continue
        for name in sorted(set(figures) - set(METRIC_NAMES)):
            problems.append('gpu_validate_reference[%r].%s is not a metric (expected one of %s)'
                            % (gpu, name, ', '.join(METRIC_NAMES)))
        for name in METRIC_NAMES:
            if name in figures and not _positive(figures[name]):
                problems.append('gpu_validate_reference[%r].%s must be a positive number, got %r'
                                % (gpu, name, figures[name]))
    return problems


def _whole(value):
    """A whole number given as an int or as digits (``-e`` and templates may give strings), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.strip().isdigit() else None


def expect_problems(expect):
    """Every bad entry of gpu_validate_expect, each naming its key and what was expected."""
    if not isinstance(expect, dict):
        return ['gpu_validate_expect must be a mapping (count, model, memory_gb, mig_mode), got %r'
                % (expect,)]
    problems = ['gpu_validate_expect.%s is not an expectation (expected one of %s)' % (key, ', '.join(EXPECT_KEYS))
                for key in sorted(set(expect) - set(EXPECT_KEYS))]
    count = expect.get('count')
    if count is not None and (_whole(count) is None or _whole(count) < 1):
        problems.append('gpu_validate_expect.count must be a whole number of at least 1, got %r' % (count,))
    if expect.get('memory_gb') is not None and not _positive(expect['memory_gb']):
        problems.append('gpu_validate_expect.memory_gb must be a positive number (GB per GPU, as sold), got %r'
                        % (expect['memory_gb'],))
    model = expect.get('model')
    if model is not None:
        try:
            re.compile(model if isinstance(model, str) else None)
        except (re.error, TypeError) as exc:
            problems.append('gpu_validate_expect.model must be a regular expression the GPU name is searched with, '
                            'got %r (%s)' % (model, exc))
    if expect.get('mig_mode') not in (None, 'enabled', 'disabled'):
        problems.append('gpu_validate_expect.mig_mode must be enabled or disabled, got %r' % (expect['mig_mode'],))
    return problems


def input_problems(min_fraction, min_amp_samples_per_s, min_allreduce_busbw_gbps, reference,
                   catalogue=None, unknown_gpu='warn', expect=None):
    """Every bad threshold, reference entry or expectation, each naming its variable and what was expected."""
    problems = []
    if not isinstance(min_fraction, dict):
        problems.append('gpu_validate_min_fraction must be a mapping of %s to numbers, got %r'
                        % (', '.join(METRIC_NAMES), min_fraction))
    else:
        for name in sorted(set(min_fraction) - set(METRIC_NAMES)):
            problems.append('gpu_validate_min_fraction.%s is not a metric (expected one of %s)'
                            % (name, ', '.join(METRIC_NAMES)))
        for name in METRIC_NAMES:
            number = as_number(min_fraction.get(name))
            if number is None or not 0 < number <= 1.5:
                problems.append('gpu_validate_min_fraction.%s must be a number above 0 and at most 1.5 '
                                '(a fraction of the reference figure), got %r' % (name, min_fraction.get(name)))
    for variable, value in (('gpu_validate_min_amp_samples_per_s', min_amp_samples_per_s),
                            ('gpu_validate_min_allreduce_busbw_gbps', min_allreduce_busbw_gbps)):
        number = as_number(value)
        if number is None or number < 0:
            problems.append('%s must be a number of at least 0, got %r' % (variable, value))
    problems.extend(_reference_problems(reference))
    if unknown_gpu not in UNKNOWN_GPU_POLICIES:
        problems.append('gpu_validate_unknown_gpu must be one of %s, got %r' % (', '.join(UNKNOWN_GPU_POLICIES), unknown_gpu))
    problems.extend(expect_problems({} if expect is None else expect))
    problems.extend(catalogue_problems(catalogue) if catalogue is not None else [])
    return problems


def _jinja_int(value):
    """``value | int`` as Jinja's int filter reads it: a whole number, else the whole part of a number, else 0."""
    try:
        return int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError, OverflowError):
            return 0


def interpreter_problems(python):
    """What is wrong with the interpreter the figures would be measured with: absolute or empty (None reads
    as empty, as the measurement does)."""
    if python in ('', None) or str(python).startswith('/'):
        return []
    return ['gpu_validate_python must be an absolute path or empty, got %s' % python]


def measurement_problems(python, dataloader):
    """What is wrong with how the figures would be measured: the interpreter (absolute or empty; None reads as
    empty, as the measurement does) and the DataLoader, which must have workers. Each names its variable."""
    problems = interpreter_problems(python)
    workers = (dataloader if isinstance(dataloader, dict) else {}).get('num_workers', 0)
    if not _jinja_int(workers) > 0:
        problems.append('gpu_validate_dataloader.num_workers must be at least 1: the step checks a DataLoader with workers')
    return problems


def refusal(problems):
    """The role's refusal of bad input, every problem named; None when there is none."""
    return 'gpu_validate: bad input: %s' % ' | '.join(problems) if problems else None


# Datasheet figure each measured metric is judged against, and how a share of it becomes a reference.
DATASHEET_FIGURE = {
    'gemm_bf16_tflops': 'dense_bf16_tflops',
    'gemm_fp16_tflops': 'dense_fp16_tflops',
    'copy_gbps': 'memory_bandwidth_gbps',
    'fused_adamw_ms': 'memory_bandwidth_gbps',
}


def catalogue_problems(catalogue):
    """What is wrong with the shipped GPU catalogue (vars/gpu_catalogue.yml): every SKU and figure needs its source."""
    if not isinstance(catalogue, dict) or not isinstance(catalogue.get('skus'), list):
        return ['the GPU catalogue must be a mapping with a list of skus, got %r' % (catalogue,)]
    problems = []
    if not _positive(catalogue.get('adamw_bytes_per_parameter')) or not _positive(catalogue.get('adamw_parameters_millions')):
        problems.append('the GPU catalogue needs adamw_bytes_per_parameter and adamw_parameters_millions')
    seen = {}
    for sku in catalogue['skus']:
        model = sku.get('model') if isinstance(sku, dict) else None
        if not model or not isinstance(sku.get('names'), list) or not sku['names']:
            problems.append('GPU catalogue entry %r needs a model and the names the GPU reports' % (sku,))
            continue
        for name in sku['names']:
            if name in seen:
                problems.append('GPU catalogue: %r is named by both %s and %s' % (name, seen[name], model))
            seen[name] = model
        datasheet = sku.get('datasheet') or {}
        if not datasheet.get('source'):
            problems.append('GPU catalogue %s: datasheet figures need a source' % model)
        if not _positive(datasheet.get('memory_bandwidth_gbps')):
            problems.append('GPU catalogue %s: datasheet memory_bandwidth_gbps must be a positive number' % model)
        measured = sku.get('measured')
        if measured is not None and (not measured.get('source')
                                     or not all(_positive(measured.get(name)) for name in METRIC_NAMES)):
            problems.append('GPU catalogue %s: measured figures need every metric and a source' % model)
    return problems


def achievable_shares(catalogue):
    """Per metric, the share of the datasheet figure a healthy card reaches: the lowest measured / datasheet ratio.

    Returns ``{metric: {'share': float, 'from': [model, ...]}}``; a metric no SKU measured is left out.
    """
    shares = {}
    for sku in catalogue['skus']:
        measured, datasheet = sku.get('measured'), sku.get('datasheet') or {}
        if not measured:
            continue
        for metric in METRIC_NAMES:
            peak = as_number(datasheet.get(DATASHEET_FIGURE[metric]))
            if not peak:
                continue
            if metric == 'fused_adamw_ms':
                ratio = _adamw_bytes(catalogue, catalogue['adamw_parameters_millions']) / (float(measured[metric]) / 1e3) / (peak * 1e9)
            else:
                ratio = float(measured[metric]) / peak
            entry = shares.setdefault(metric, {'share': ratio, 'from': []})
            entry['share'] = min(entry['share'], ratio)
            entry['from'].append(sku['model'])
    return shares


def _adamw_bytes(catalogue, parameters_millions):
    return float(catalogue['adamw_bytes_per_parameter']) * float(parameters_millions) * (1 << 20)


def _from_datasheet(metric, peak, share, catalogue, parameters_millions):
    if metric == 'fused_adamw_ms':
        return _adamw_bytes(catalogue, parameters_millions) / (peak * 1e9 * share) * 1e3
    return peak * share


def _sku_for(name, catalogue):
    for sku in catalogue['skus']:
        if name in sku['names']:
            return sku
    return None


def _estimated_peaks(gpu, catalogue):
    """Datasheet-like peaks of a GPU the catalogue does not know, from what it reports; None where it cannot tell."""
    rates = catalogue['estimate']['dense_flop_per_clock_per_sm'].get(str(gpu.get('compute_capability')))
    sms, clock = as_number(gpu.get('sm_count')), as_number(gpu.get('sm_clock_max_mhz'))
    mem_clock, bus = as_number(gpu.get('memory_clock_max_mhz')), as_number(gpu.get('memory_bus_width_bits'))
    peaks = {'memory_bandwidth_gbps': mem_clock * 1e6 * 2 * bus / 8 / 1e9 if mem_clock and bus else None}
    for precision in ('bf16', 'fp16'):
        rate = (rates or {}).get(precision)
        peaks['dense_%s_tflops' % precision] = rate * sms * clock * 1e6 / 1e12 if rate and sms and clock else None
    return peaks, rates


def reference_for(gpu, catalogue, site_reference, parameters_millions):
    """Reference figures for one measured GPU, and where each came from.

    Returns ``{'basis': site|measured|datasheet|estimate, 'figures': {metric: number|None}, 'how': {metric: text}}``;
    ``basis`` is that of the GPU as a whole (``estimate`` for a GPU the catalogue does not know).
    """
    name = gpu.get('name')
    sku = _sku_for(name, catalogue)
    shares = achievable_shares(catalogue)
    figures, how = {}, {}
    if sku and sku.get('measured'):
        basis = 'measured'
        scale = float(parameters_millions) / float(catalogue['adamw_parameters_millions'])
        for metric in METRIC_NAMES:
            figures[metric] = float(sku['measured'][metric]) * (scale if metric == 'fused_adamw_ms' else 1.0)
            how[metric] = 'measured on a %s (GPU catalogue)' % sku['model']
    else:
        basis = 'datasheet' if sku else 'estimate'
        peaks, rates = (sku['datasheet'], None) if sku else _estimated_peaks(gpu, catalogue)
        for metric in METRIC_NAMES:
            peak = as_number(peaks.get(DATASHEET_FIGURE[metric]))
            share = shares.get(metric)
            if not peak or not share:
                figures[metric] = None
                how[metric] = _not_judged_reason(metric, sku, gpu, rates)
                continue
            figures[metric] = _from_datasheet(metric, peak, share['share'], catalogue, parameters_millions)
            how[metric] = '%s %s %.4g x achievable share %.2f (lowest measured on %s)' % (
                'datasheet of the %s:' % sku['model'] if sku else 'estimated from what the GPU reports:',
                DATASHEET_FIGURE[metric], peak, share['share'], ', '.join(share['from']))
    for metric, value in sorted((site_reference or {}).get(name, {}).items()):
        figures[metric] = float(as_number(value))
        how[metric] = 'gpu_validate_reference'
        basis = 'site' if basis == 'estimate' else basis
    return {'basis': basis, 'figures': figures, 'how': how, 'model': sku['model'] if sku else None}


def _not_judged_reason(metric, sku, gpu, rates):
    if sku:
        return 'the %s datasheet gives no %s (no such tensor cores)' % (sku['model'], DATASHEET_FIGURE[metric])
    if metric.startswith('gemm_') and rates is None:
        return 'no tensor rate known for compute capability %s' % gpu.get('compute_capability')
    if metric.startswith('gemm_') and not rates.get(metric.split('_')[1]):
        return 'compute capability %s has no %s tensor cores' % (gpu.get('compute_capability'), metric.split('_')[1])
    return 'the GPU did not report its SM count, clocks and memory bus'


def _check(name, subject, measured, limit, ok, unit, detail, enforced=True):
    verdict = 'ok' if ok else 'FAILED' if limit is None else 'BELOW THRESHOLD' if enforced else 'BELOW ESTIMATE (warning)'
    figure = '' if measured is None else ' %.4g %s' % (measured, unit)
    return {'name': name, 'subject': subject, 'measured': measured, 'limit': limit, 'unit': unit, 'ok': ok,
            'enforced': enforced, 'message': '%s %s: %s%s (%s)' % (subject, name, verdict, figure.rstrip(), detail)}


def _gpu_checks(gpu, reference, unknown_gpu):
    """Checks of one GPU's figures against ``reference`` (reference_for) and how each was judged."""
    subject = 'GPU %s %s' % (gpu.get('index'), gpu.get('name'))
    checks, judged = [], {'index': gpu.get('index'), 'name': gpu.get('name'), 'basis': reference['basis'],
                          'model': reference['model'], 'how': reference['how'], 'not_judged': []}
    if reference['basis'] == 'estimate' and unknown_gpu == 'fail':
        checks.append(_check('reference', subject, None, None, False, '',
                             'not in the GPU catalogue and no gpu_validate_reference for %r, and gpu_validate_unknown_gpu '
                             'is fail: add its figures to gpu_validate_reference' % gpu.get('name')))
    for name, direction, unit in PER_GPU_METRICS:
        ref = reference['figures'].get(name)
        if ref is None:
            judged['not_judged'].append('%s: %s' % (name, reference['how'][name]))
            continue
        fraction = reference['fractions'][name]
        enforced = reference['how'][name] == 'gpu_validate_reference' or reference['basis'] in ('measured', 'datasheet')
        measured = as_number(gpu.get(name))
        if direction == 'higher':
            limit = ref * fraction
            ok = measured is not None and measured >= limit
            detail = 'needs >= %.4g = %.2f x reference %.4g, %s' % (limit, fraction, ref, reference['how'][name])
        else:
            limit = ref / fraction
            ok = measured is not None and measured <= limit
            detail = 'needs <= %.4g = reference %.4g / %.2f, %s' % (limit, ref, fraction, reference['how'][name])
        checks.append(_check(name, subject, measured, limit, ok, unit, detail, enforced))
    return checks, judged


def _amp_checks(amp, min_samples_per_s):
    checks = [_check('amp_loss', 'AMP step', amp.get('loss_last'), None,
                     bool(amp.get('loss_finite')) and bool(amp.get('loss_decreased')), '',
                     'the loss must stay finite and fall, from %r' % amp.get('loss_first'))]
    measured = as_number(amp.get('samples_per_s'))
    checks.append(_check('amp_samples_per_s', 'AMP step', measured, min_samples_per_s,
                         measured is not None and measured >= min_samples_per_s, 'samples/s',
                         'needs >= %.4g (gpu_validate_min_amp_samples_per_s)' % min_samples_per_s))
    return checks


def _allreduce_checks(allreduce, min_busbw_gbps):
    if allreduce.get('status') != 'measured':
        return []
    subject = 'all-reduce x%s' % allreduce.get('world_size')
    checks = [_check('allreduce_correct', subject, None, None, bool(allreduce.get('correct')), '',
                     'the reduced values must equal the sum over ranks')]
    sizes = allreduce.get('sizes') or []
    largest = max(sizes, key=lambda s: s.get('bytes', 0)) if sizes else {}
    measured = as_number(largest.get('busbw_gbps'))
    checks.append(_check('allreduce_busbw_gbps', subject, measured, min_busbw_gbps,
                         measured is not None and measured >= min_busbw_gbps, 'GB/s',
                         'at %s B, needs >= %.4g (gpu_validate_min_allreduce_busbw_gbps)'
                         % (largest.get('bytes'), min_busbw_gbps)))
    return checks


def gate(results, reference, min_fraction, min_amp_samples_per_s, min_allreduce_busbw_gbps,
         catalogue, unknown_gpu='warn'):
    """Verdict on the figures of one node.

    Returns ``{'status': passed|failed|skipped|error, 'passed': bool, 'checks': [...], 'failed': [...],
    'warnings': [...], 'judged': [...], 'summary': str}``. ``judged`` says per GPU which reference basis was
    used (measured, datasheet, estimate, site) and how each figure was made or why it was not judged.
    A shortfall against an estimate (a GPU the catalogue does not know) is a warning, not a failure.
    ``skipped`` (no GPU) is not a pass: ``passed`` is false and callers decide.
    """
    problems = input_problems(min_fraction, min_amp_samples_per_s, min_allreduce_busbw_gbps, reference,
                              catalogue, unknown_gpu)
    if problems:
        raise ValueError('; '.join(problems))
    status = results.get('status')
    if status != 'measured':
        reason = results.get('reason') or 'no figures'
        verdict = 'skipped' if status == 'skipped' else 'error'
        return {'status': verdict, 'passed': False, 'checks': [], 'failed': [], 'warnings': [], 'judged': [],
                'summary': '%s: %s' % (verdict, reason)}
    parameters_millions = (results.get('parameters') or {}).get('adamw_params_millions') or catalogue['adamw_parameters_millions']
    fractions = dict((name, float(as_number(min_fraction[name]))) for name in METRIC_NAMES)
    checks, judged = [], []
    for gpu in results.get('gpus') or []:
        gpu_reference = dict(reference_for(gpu, catalogue, reference, parameters_millions), fractions=fractions)
        gpu_checks, gpu_judged = _gpu_checks(gpu, gpu_reference, unknown_gpu)
        checks.extend(gpu_checks)
        judged.append(gpu_judged)
    if not checks and not judged:
        checks.append(_check('gpus', 'node', None, None, False, '', 'the figures list no GPU'))
    checks.extend(_amp_checks(results.get('amp') or {}, float(as_number(min_amp_samples_per_s))))
    checks.extend(_allreduce_checks(results.get('allreduce') or {}, float(as_number(min_allreduce_busbw_gbps))))
    failed = [check['message'] for check in checks if not check['ok'] and check['enforced']]
    warnings = [check['message'] for check in checks if not check['ok'] and not check['enforced']]
    verdict = 'failed' if failed else 'passed'
    summary = ('%s: %d of %d checks below threshold' % (verdict, len(failed), len(checks)) if failed
               else '%s: all %d checks' % (verdict, len(checks)))
    if warnings:
        summary += ', %d below an estimate (warnings)' % len(warnings)
    bases = ['GPU %s %s' % (entry['index'], _basis_text(entry)) for entry in judged]
    return {'status': verdict, 'passed': not failed, 'checks': checks, 'failed': failed, 'warnings': warnings,
            'judged': judged, 'summary': summary + ('; ' + '; '.join(bases) if bases else '')}


def _basis_text(entry):
    text = {
        'measured': 'judged against figures measured on a %s' % entry['model'],
        'datasheet': 'judged against the %s datasheet x achievable shares' % entry['model'],
        'site': 'judged against gpu_validate_reference',
        'estimate': 'not in the GPU catalogue: judged against estimates from what it reports, as warnings',
    }[entry['basis']]
    return text + ('' if not entry['not_judged'] else ' (not judged: %s)' % '; '.join(entry['not_judged']))


def _gpu_label(gpu):
    return 'GPU %s %s (%s)' % (gpu.get('index'), gpu.get('name'), gpu.get('pci_bus_id') or gpu.get('uuid') or 'no bus id')


def expectation_checks(expect, gpus, recorded=None):
    """The node's GPUs (gpu_facts' ``gpus``) against gpu_validate_expect and against those recorded when it last passed.

    Returns ``{'checks': [...], 'failed': [...], 'summary': str}``; every failure names the GPU and the difference.
    ``recorded`` is the validation section's ``gpus`` (index, name, uuid) of the last passed validation: a GPU
    recorded there and gone now is named as missing, whatever is expected.
    """
    problems = expect_problems(expect)
    if problems:
        raise ValueError('; '.join(problems))
    checks = []
    count = _whole(expect.get('count'))
    if count is not None:
        indexes = set(gpu.get('index') for gpu in gpus)
        missing = [index for index in range(count) if index not in indexes]
        detail = 'expected %d GPU(s) (gpu_validate_expect.count), found %d' % (count, len(gpus))
        if missing:
            detail += ': missing GPU index %s' % ', '.join(str(index) for index in missing)
        if len(gpus) > count:
            detail += ': more than expected'
        checks.append(_check('count', 'node', float(len(gpus)), None, len(gpus) == count, 'GPUs', detail))
    present = set(gpu.get('uuid') for gpu in gpus if gpu.get('uuid'))
    for gpu in recorded or []:
        if gpu.get('uuid') and gpu['uuid'] not in present:
            checks.append(_check('present', 'GPU %s %s' % (gpu.get('index'), gpu.get('name')), None, None, False, '',
                                 '%s was validated on this node and is missing now (fell off the bus?): run '
                                 'playbooks/validate.yml -e gpu_validate_force=true once the node is meant to be '
                                 'without it' % gpu['uuid']))
    for gpu in gpus:
        checks.extend(_gpu_expectations(expect, gpu))
    failed = [check['message'] for check in checks if not check['ok']]
    summary = ('GPU expectations: %d of %d not met' % (len(failed), len(checks)) if failed
               else 'GPU expectations: all %d met' % len(checks) if checks else 'GPU expectations: none declared')
    return {'checks': checks, 'failed': failed, 'summary': summary}


def _gpu_expectations(expect, gpu):
    subject = _gpu_label(gpu)
    checks = []
    model = expect.get('model')
    if model is not None:
        checks.append(_check('model', subject, None, None, bool(re.search(model, gpu.get('name') or '')), '',
                             'name %r, expected to match %r (gpu_validate_expect.model)' % (gpu.get('name'), model)))
    memory_gb = expect.get('memory_gb')
    if memory_gb is not None:
        reported = as_number(gpu.get('memory_total_mib'))
        needed = float(memory_gb) * 1e9 * MEMORY_SHARE_REPORTED / (1 << 20)
        checks.append(_check('memory', subject, reported, needed, reported is not None and reported >= needed, 'MiB',
                             'expected %s GB (gpu_validate_expect.memory_gb): at least %.0f MiB reported'
                             % (memory_gb, needed)))
    mig_mode = expect.get('mig_mode')
    if mig_mode is not None:
        actual = {True: 'enabled', False: 'disabled'}.get(gpu.get('mig_mode'), 'unknown')
        checks.append(_check('mig_mode', subject, None, None, actual == mig_mode, '',
                             'MIG mode %s, expected %s (gpu_validate_expect.mig_mode)' % (actual, mig_mode)))
    return checks
