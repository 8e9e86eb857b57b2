# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure decisions of the jupyter_kernel role, taken on the controller by the jupyter_kernel_plan
action: what is wrong with the role's variables beyond their types, what the env probe's reading
(roles/jupyter_kernel/files/env_probe.py, run on the node) means for the kernel, and whether what
ran in the kernel is what was planned. ``settings`` are the role's variables without their
``jupyter_kernel_`` prefix, typed by its argument spec (plugin_utils/role_settings.py)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import re

BAD_INPUT = (
    "jupyter_kernel: bad input. jupyter_kernel_env_prefix must be an absolute path, jupyter_kernel_name lower-case "
    "letters, digits, '.', '_' or '-', starting with a letter or digit (a folder name under kernels/, never '..'), "
    "and not 'python' (jupyter_client starts its own python3 kernel for that name), jupyter_kernel_require_cuda auto, "
    "true or false, jupyter_kernel_cuda_home empty or an absolute path, jupyter_kernel_verify_timeout at least 1 "
    "(seconds).")
# Lower case: Jupyter lower-cases kernel names, so another name would never match its own folder.
_KERNEL_NAME = re.compile(r'^[a-z0-9][a-z0-9._-]*$')
DEFAULT_CUDA_HOME = '/usr/local/cuda'
# How much of a failed probe's message the refusal quotes.
_DETAIL_LENGTH = 200


def _empty_or_absolute(value):
    return value == '' or (isinstance(value, str) and value.startswith('/'))


def input_problem(settings):
    """BAD_INPUT when a variable breaks a rule its type cannot say, else None."""
    name = settings['name']
    good = (_empty_or_absolute(settings['env_prefix'])
            and (name == '' or (isinstance(name, str) and bool(_KERNEL_NAME.match(name)) and name != 'python'))
            and int(settings['verify_timeout'] or 0) >= 1
            # Compared as Jinja's `in` compares: 1 and 0 count as true and false.
            and settings['require_cuda'] in ('auto', True, False)
            and _empty_or_absolute(settings['cuda_home']))
    return None if good else BAD_INPUT


def lab_refusal(host, problems, service_mgr):
    """The refusal of a JupyterLab with ``problems`` (jupyter_lab.lab_problems) or on a node whose service
    manager (None when unknown) is not systemd; None when there is nothing to refuse."""
    if service_mgr != 'systemd':
        problems = list(problems) + ['It runs as a systemd service and the service manager here is %s: set '
                                     'jupyter_kernel_lab=false on this node.' % ('unknown' if service_mgr is None else service_mgr)]
    if not problems:
        return None
    return 'jupyter_kernel: refusing JupyterLab on %s. %s' % (host, ' '.join(problems))


def _truncate(text, length):
    """Jinja's truncate(length): whole words and '...', and no cut within 5 characters of the length."""
    if len(text) <= length + 5:
        return text
    return text[:length - 3].rsplit(' ', 1)[0] + '...'


def probe_refusal(prefix, run):
    """The refusal of an env whose python did not run the probe (``run`` is the command's result); None when it ran."""
    if run.get('rc') == 0:
        return None
    detail = (run.get('msg') or run.get('stderr') or '').strip()
    return ('jupyter_kernel: jupyter_kernel_env_prefix %s has no bin/python that runs (%s); create the env first.'
            % (prefix, _truncate(detail, _DETAIL_LENGTH)))


def probe_reading(stdout):
    """The probe's reading: its last output line that is a JSON object (what the env's python printed before
    it, a sitecustomize's say, is not)."""
    lines = [line for line in stdout.splitlines() if line.startswith('{')]
    if not lines:
        raise ValueError('jupyter_kernel: the env probe printed no reading: %s' % _truncate(stdout.strip(), _DETAIL_LENGTH))
    return json.loads(lines[-1])


def cuda_home(setting):
    """The CUDA home the probe looks for and the kernel gets when it exists."""
    return setting or DEFAULT_CUDA_HOME


def kernel_decision(settings, reading, gpu_count):
    """The env type, the kernel's variables (the thread variables, CUDA_HOME when the probe found it,
    then jupyter_kernel_env, which wins) and whether the kernel must see CUDA (auto: the node has an
    NVIDIA GPU)."""
    env = dict(settings['numa_env'] or {})
    if reading['cuda_home']:
        env['CUDA_HOME'] = cuda_home(settings['cuda_home'])
    env.update(settings['env'] or {})
    if settings['require_cuda'] == 'auto':
        require_cuda = (gpu_count or 0) > 0
    else:
        require_cuda = bool(settings['require_cuda'])
    kind = settings['env_type'] if settings['env_type'] != 'auto' else ('conda' if reading['conda'] else 'venv')
    return dict(type=kind, env=env, require_cuda=require_cuda)


def ipykernel_install_argv(kind, found, python, pip_args, spec, conda_argv):
    """How ipykernel gets into the env: None when its python finds it (the env is left as it is), else
    the env's own pip for a venv, ``conda_argv`` (kernelspec.conda_install_argv) for a conda env."""
    if found:
        return None
    if kind == 'venv':
        return [python, '-m', 'pip', 'install', '--disable-pip-version-check'] + list(pip_args) + [spec]
    return conda_argv


def proof_asked(script_sha256, name, display_name, python, env, require_cuda, scope, user):
    """What the kernel check is asked beyond the env's state: a recorded check stands only for the same."""
    return dict(script_sha256=script_sha256, name=name, display_name=display_name, python=python, env=env,
                require_cuda=require_cuda, scope=scope, user=user)


def proof_usable(settings, check_mode, reading, asked):
    """Whether the check recorded on the env's present state (the probe's, or None) may stand for this run's,
    provided the kernelspec is left as it is: a real run that verifies, not on every run, with ipykernel found,
    and the check asked the same."""
    proof = reading.get('proof')
    return bool(settings['verify'] and not settings['verify_always'] and not check_mode and reading['ipykernel']
                and isinstance(proof, dict) and proof.get('asked') == asked)


def ran_problem(name, ran, spec_dir, python, env, require_cuda):
    """The failure when what ran in the kernel (``ran``, what the check reported) is not the kernel planned:
    found elsewhere than ``spec_dir``, another interpreter, other variables (those with a $VAR, which
    jupyter_client expands at kernel start, by name only), or no CUDA where it is required; else None."""
    text = dict((key, str(value)) for key, value in env.items())
    literal = dict((key, value) for key, value in text.items() if '$' not in value)
    ran_env = ran.get('env') if isinstance(ran, dict) else None
    good = (isinstance(ran_env, dict)
            and ran.get('resource_dir') == spec_dir
            and ran.get('executable') == python
            and sorted(ran_env) == sorted(text)
            and dict((key, value) for key, value in ran_env.items() if key in literal) == literal
            and (not require_cuda or bool(ran.get('cuda_available'))))
    if good:
        return None
    return 'jupyter_kernel: the kernel %s ran %s; expected %s from %s with env %s%s' % (
        name, ran, python, spec_dir, env, ' and a CUDA device' if require_cuda else '')


def ran_summary(name, ran):
    """One line on what ran in a kernel that passed its check."""
    return 'kernel %s: %s, torch %s, CUDA %s%s' % (
        name, ran['executable'], ran.get('torch') or 'not installed', ran.get('cuda_available'),
        (', %s' % ran['device']) if ran.get('device') else '')
