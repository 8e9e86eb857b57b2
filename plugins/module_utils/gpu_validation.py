# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU acceptance gate: figures measured by ``validate_gpu.py`` against thresholds.

Pure functions, no I/O: the role feeds them the script's JSON and its variables.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

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


def input_problems(min_fraction, min_amp_samples_per_s, min_allreduce_busbw_gbps, reference):
    """Every bad threshold or reference entry, each naming its variable and what was expected."""
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
    if not isinstance(reference, dict):
        problems.append('gpu_validate_reference must be a mapping of GPU name to reference figures, got %r' % (reference,))
    else:
        for gpu, figures in sorted(reference.items()):
            if not isinstance(figures, dict):
                problems.append('gpu_validate_reference[%r] must be a mapping of metric to number, got %r' % (gpu, figures))
                continue
            for name in METRIC_NAMES:
                number = as_number(figures.get(name))
                if number is None or number <= 0:
                    problems.append('gpu_validate_reference[%r].%s must be a positive number, got %r'
                                    % (gpu, name, figures.get(name)))
    return problems


def _check(name, subject, measured, limit, ok, unit, detail):
    verdict = 'ok' if ok else 'FAILED' if limit is None else 'BELOW THRESHOLD'
    figure = '' if measured is None else ' %.4g %s' % (measured, unit)
    return {'name': name, 'subject': subject, 'measured': measured, 'limit': limit, 'unit': unit, 'ok': ok,
            'message': '%s %s: %s%s (%s)' % (subject, name, verdict, figure.rstrip(), detail)}


def _gpu_checks(gpu, reference, min_fraction):
    subject = 'GPU %s %s' % (gpu.get('index'), gpu.get('name'))
    figures = reference.get(gpu.get('name'))
    if figures is None:
        return [_check('reference', subject, None, None, False, '',
                       'no reference figures for %r: add them to gpu_validate_reference' % gpu.get('name'))]
    checks = []
    for name, direction, unit in PER_GPU_METRICS:
        measured = as_number(gpu.get(name))
        ref = float(figures[name])
        fraction = float(min_fraction[name])
        if direction == 'higher':
            limit = ref * fraction
            ok = measured is not None and measured >= limit
            detail = 'needs >= %.4g = %.2f x reference %.4g' % (limit, fraction, ref)
        else:
            limit = ref / fraction
            ok = measured is not None and measured <= limit
            detail = 'needs <= %.4g = reference %.4g / %.2f' % (limit, ref, fraction)
        checks.append(_check(name, subject, measured, limit, ok, unit, detail))
    return checks


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


def gate(results, reference, min_fraction, min_amp_samples_per_s, min_allreduce_busbw_gbps):
    """Verdict on the figures of one node.

    Returns ``{'status': passed|failed|skipped|error, 'passed': bool, 'checks': [...], 'failed': [...],
    'summary': str}``. ``skipped`` (no GPU) is not a pass: ``passed`` is false and callers decide.
    """
    problems = input_problems(min_fraction, min_amp_samples_per_s, min_allreduce_busbw_gbps, reference)
    if problems:
        raise ValueError('; '.join(problems))
    status = results.get('status')
    if status != 'measured':
        reason = results.get('reason') or 'no figures'
        verdict = 'skipped' if status == 'skipped' else 'error'
        return {'status': verdict, 'passed': False, 'checks': [], 'failed': [],
                'summary': '%s: %s' % (verdict, reason)}
    checks = []
    for gpu in results.get('gpus') or []:
        checks.extend(_gpu_checks(gpu, reference, min_fraction))
    if not checks:
        checks.append(_check('gpus', 'node', None, None, False, '', 'the figures list no GPU'))
    checks.extend(_amp_checks(results.get('amp') or {}, float(as_number(min_amp_samples_per_s))))
    checks.extend(_allreduce_checks(results.get('allreduce') or {}, float(as_number(min_allreduce_busbw_gbps))))
    failed = [check['message'] for check in checks if not check['ok']]
    verdict = 'failed' if failed else 'passed'
    return {'status': verdict, 'passed': not failed, 'checks': checks, 'failed': failed,
            'summary': '%s: %d of %d checks below threshold' % (verdict, len(failed), len(checks)) if failed
            else '%s: all %d checks' % (verdict, len(checks))}
