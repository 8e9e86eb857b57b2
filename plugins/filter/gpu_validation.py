# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.aistack.gpu_node.plugins.module_utils import gpu_validation


def gpu_validation_gate(results, reference, min_fraction, min_amp_samples_per_s, min_allreduce_busbw_gbps):
    if not isinstance(results, dict):
        raise AnsibleFilterError('gpu_validation_gate expects the figures of validate_gpu.py (a mapping), got %s'
                                 % type(results).__name__)
    try:
        return gpu_validation.gate(results, reference, min_fraction, min_amp_samples_per_s, min_allreduce_busbw_gbps)
    except ValueError as exc:
        raise AnsibleFilterError('gpu_validate: bad input: %s' % exc)


def gpu_validation_input_problems(min_fraction, min_amp_samples_per_s, min_allreduce_busbw_gbps, reference):
    return gpu_validation.input_problems(min_fraction, min_amp_samples_per_s, min_allreduce_busbw_gbps, reference)


class FilterModule(object):
    def filters(self):
        return {'gpu_validation_gate': gpu_validation_gate,
                'gpu_validation_input_problems': gpu_validation_input_problems}
