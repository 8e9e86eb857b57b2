# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The numa_tuning role's refusals and decisions, taken on the controller (numa_tuning_plan) from
the role's settings and what numa_facts read of the node; and the activation and launcher check:
the shell text it runs, the judgement of what that printed, and whether a check recorded on the
node still proves this run. Pure."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.env_proof import proof_key

SENTINEL = "aistack-sentinel"
_SHELL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# The lines of /proc/self/status that bound a process's CPUs and memory nodes (cgroup cpuset, affinity).
_ALLOWED = re.compile(r"^(Cpus|Mems)_allowed_list:")


def _quote(text):
    """POSIX shell quoting (shlex.quote's rule; shlex is not in Python 2's standard library)."""
    text = str(text)
    if text and re.match(r"^[\w@%+=:,./-]+$", text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _int(text):
    """Jinja's int filter: 0 for what is no integer."""
    try:
        return int(str(text).strip())
    except ValueError:
        return 0


def _order(names):
    # Case-blind, as Jinja's sort and dictsort are (the order the role's scripts have always used).
    return sorted(names, key=lambda name: (name.lower(), name))


# -- the input and the node ---------------------------------------------------------------------

def input_problem(settings):
    """The refusal of the input alone (what the argument spec cannot say), or None."""
    good = ((not settings["env_prefix"] or settings["env_prefix"].startswith("/"))
            and settings["threads_per_gpu"] >= 0
            and all(_SHELL_NAME.match(name) for name in settings["env_extra"])
            and settings["launcher_path"].startswith("/"))
    if good:
        return None
    return ("numa_tuning: bad input. numa_tuning_env_prefix and numa_tuning_launcher_path must be absolute paths, "
            "numa_tuning_threads_per_gpu an integer >= 0 (0 derives it), numa_tuning_env_extra a mapping of shell "
            "variable names.")


def unread_refusal(prefix, result):
    """numa_facts' refusal of the prefix (not a directory), under the role's variable; None when it read the node."""
    if "aistack_numa" in (result.get("ansible_facts") or {}):
        return None
    return "numa_tuning: numa_tuning_env_prefix %s: %s" % (prefix, result.get("msg", ""))


def threads_refusal(threads_per_gpu, facts, host):
    """OMP_NUM_THREADS and friends beyond the node's CPUs oversubscribe every core (a typo such as 100000)."""
    cpus = sum(len(node["cpus"]) for node in facts["nodes"])
    if threads_per_gpu <= cpus:
        return None
    return ("numa_tuning: numa_tuning_threads_per_gpu is %s, more than the %s CPUs of %s; give at most that, or 0 to "
            "derive it from the GPU's NUMA node." % (threads_per_gpu, cpus, host))


def env_type(requested, facts):
    """venv or conda as asked, else as the prefix shows (conda-meta/, pyvenv.cfg); 'unknown' when neither."""
    return requested if requested != "auto" else ((facts.get("env") or {}).get("type") or "unknown")


def env_refusal(prefix, requested, decided, facts):
    """The refusal of a prefix that is no Python env of the type decided, or None."""
    env = facts.get("env") or {}
    if env.get("python") and decided in ("venv", "conda") and (decided != "venv" or env.get("activate")):
        return None
    return ("numa_tuning: numa_tuning_env_prefix %s is not a %s Python env: expected bin/python and conda-meta/ (conda) "
            "or pyvenv.cfg and bin/activate (venv). Create the env first, or set numa_tuning_env_type." % (prefix, requested))


def session_env(facts, extra):
    """numa_tuning_env: the node's thread variables for a shell or kernel, with the role's extra ones on top."""
    env = dict(facts["session_env"])
    env.update(extra)
    return env


def plan_lines(facts, env):
    """What the role shows of its plan."""
    return [
        "NUMA nodes: %s (SMT %s)" % ([node["cpulist"] for node in facts["nodes"]], facts["smt"]),
        "GPUs: %s" % [dict((key, value) for key, value in entry.items() if key != "env") for entry in facts["plan"]],
        "OpenMP in the env: %s" % (", ".join(facts["openmp"]["runtimes"]) or "none found"),
        "Activation env: %s" % env,
        "; ".join(facts["messages"]) or "sysfs and nvidia-smi topo -m agree",
    ]


def host_writable(setting, host):
    """Whether the host's kernel knobs are to be written: the setting, else whether either kernel file is writable."""
    if setting is not None:
        return setting
    return bool(host["numa_balancing"]["writable"] or host["thp"]["writable"])


def host_failures(knobs, host, state):
    """The knobs the kernel does not hold after the host tuning, one sentence each; None when it holds them all."""
    failures = ["numa_tuning: %s is %s after numa_tuning_host_state=%s, expected %s" % (knob, host[knob]["value"], state, value)
                for knob, value in knobs.items() if host[knob]["value"] != value]
    return "; ".join(failures) or None


# -- the activation and launcher check ---------------------------------------------------------------

def check_files(prefix, kind, conda_script, hook, launcher_path):
    """The files the check's result rests on, hashed by the check and again by a later numa_facts:
    the activation scripts (a venv's bin/activate too, which wraps deactivate), and the launcher."""
    if kind == "conda":
        files = ["%s/etc/conda/%s/%s" % (prefix, folder, conda_script) for folder in ("activate.d", "deactivate.d")]
    else:
        files = [hook, "%s/bin/activate" % prefix]
    return files + ([launcher_path] if launcher_path else [])


def check_script(env, prefix, kind, conda_script, launcher_path, files):
    """The bash text of the check: what the node is (digests, numactl, allowed CPUs), then activation and
    deactivation with sentinel values, then, with a launcher, a command through it for GPU 0."""
    names = _order(env)
    if kind == "venv":
        activate, deactivate = ". %s" % _quote(prefix + "/bin/activate"), "deactivate"
    else:
        scripts = ["%s/etc/conda/%s/%s" % (prefix, folder, conda_script) for folder in ("activate.d", "deactivate.d")]
        activate, deactivate = [". %s" % _quote(script) for script in scripts]
    lines = ["set -eo pipefail",
             "grep -E '^(Cpus|Mems)_allowed_list:' /proc/self/status | sed 's/^/allowed /'"]
    if launcher_path:
        lines += ['numactl="$(command -v numactl || true)"', 'echo "numactl $numactl"']
    lines.append("sha256sum -- %s%s | sed 's/^/digest /'" % (
        " ".join(_quote(path) for path in files), ' ${numactl:+"$numactl"}' if launcher_path else ""))
    lines += ["export %s=%s" % (name, SENTINEL) for name in names]
    lines.append(activate)
    lines += ['echo "active %s=$%s"' % (name, name) for name in names]
    lines.append(deactivate)
    lines += ['echo "restored %s=$%s"' % (name, name) for name in names]
    if launcher_path:
        lines += ["unset %s" % " ".join(names),
                  "%s --gpu 0 sh -c 'echo \"$OMP_NUM_THREADS\"; grep Cpus_allowed_list /proc/self/status' \\" % _quote(launcher_path),
                  "  | sed 's/^/launched /'"]
    return "\n".join(lines) + "\n"


def check_plan(env, facts, prefix, kind, conda_script, hook, launcher_path):
    """What the check runs and judges by (launcher_path None: no launcher), with ``key``, the proof key of both."""
    files = check_files(prefix, kind, conda_script, hook, launcher_path)
    gpu0 = next((entry for entry in facts["plan"] if entry["index"] == 0), None)
    check = dict(script=check_script(env, prefix, kind, conda_script, launcher_path, files), prefix=prefix, env=env,
                 launcher=bool(launcher_path), gpu0=gpu0, session_threads=facts["session_threads"])
    check["key"] = proof_key(check)
    return check


def _tagged(lines, tag):
    return [line[len(tag) + 1:] for line in lines if line.startswith(tag + " ")]


def allowed_lists(lines):
    """``{"Cpus_allowed_list": "0-15", ...}`` from lines of /proc/<pid>/status."""
    return dict((line.split(":", 1)[0], line.split(":", 1)[1].strip()) for line in lines if _ALLOWED.match(line))


def check_state(stdout_lines, launcher):
    """What the check found the node to be: the digest of each file it rests on, numactl's path (with a
    launcher) and the CPUs and memory nodes the check's processes may use; a later numa_facts reads the same."""
    files = {}
    for line in _tagged(stdout_lines, "digest"):
        match = re.match(r"^\\?([0-9a-f]{64})  (.*)$", line)
        if match:
            files[match.group(2)] = match.group(1)
    state = dict(files=files, allowed=allowed_lists(_tagged(stdout_lines, "allowed")))
    if launcher:
        state["numactl"] = (_tagged(stdout_lines, "numactl") or [""])[0]
    return state


def launcher_shown(stdout_lines, stderr_lines):
    """What the launcher did, as the role shows it."""
    return " | ".join([line for line in stdout_lines if line.startswith("launched ")] + list(stderr_lines))


def check_failure(check, stdout_lines, stderr):
    """The refusal of what the check printed, or None: activation sets the env and deactivation gives back
    the sentinels; the launcher gives GPU 0's threads and, where it binds, its CPU slice."""
    env = check["env"]
    names = _order(env)
    if (_tagged(stdout_lines, "active") != ["%s=%s" % (name, env[name]) for name in names]
            or _tagged(stdout_lines, "restored") != ["%s=%s" % (name, SENTINEL) for name in names]):
        return "numa_tuning: activation of %s did not set/restore %s: %s" % (check["prefix"], env, list(stdout_lines))
    if not check["launcher"]:
        return None
    launched, gpu0 = _tagged(stdout_lines, "launched"), check["gpu0"]
    unbound = "running unbound" in stderr
    bound_right = gpu0 is not None and gpu0["numa_node"] >= 0 and len(launched) == 2 and launched[1].split()[-1:] == [gpu0["cpus"]]
    if (len(launched) == 2
            and _int(launched[0]) == (gpu0["threads"] if gpu0 is not None else check["session_threads"])
            and (unbound or bound_right)):
        return None
    return "numa_tuning: the launcher ran %s / %s; plan %s" % (launched, stderr, gpu0)


def proof_holds(check, recorded, state):
    """Whether the check recorded on the node (``recorded``) proves this run: made for this check (its key),
    on the node as numa_facts found it now (``state``, read for the recorded state's files). The role
    also asks that this run wrote nothing the check rests on."""
    return (isinstance(recorded, dict) and recorded.get("key") == check["key"]
            and isinstance(recorded.get("state"), dict) and recorded["state"] == state)
