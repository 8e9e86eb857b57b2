"""Records the GPU scenario's steps and writes its reports: one per card beside its results, and tests/gpu/REPORT.md over them.

``record`` is called by run-gpu-scenario after each step (a molecule step, or the drift check):
it reads the step's log, sums its PLAY RECAP and appends the step to ``steps.json`` in the
results folder. ``write`` joins that with what the scenario's playbooks left there
(``host.json``, ``env.json``, ``roles-<step>.json``, ``apex.json``, ``validation.json``,
``jupyter.json``, ``numa.json``, ``negatives.json``, ``venv.json``) and what ``tests/gpu/apt-path``
wrote (``apt_path.json``, ``apt_path_r595.json`` for R595, and ``apt_path_dcgm.json`` with ``--dcgm``)
into the card's report (``tests/gpu/results/<card>/REPORT.md`` and ``report.json``);
``index`` lists every card's report in ``tests/gpu/REPORT.md``. ``merge`` brings a run's results
folder into the card's kept one: a run of some steps (GPU_STEPS) replaces what those steps left and
keeps, marked with the commit they ran at, the results of the steps it did not run (an apt path run
at an earlier commit is not lost by a later run without it). Standard library only: it runs on the
air-gapped GPU host.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import sys

import yaml

RECAP_LINE = re.compile(
    r"^(?P<host>\S+)\s+:\s+ok=(?P<ok>\d+)\s+changed=(?P<changed>\d+)\s+unreachable=(?P<unreachable>\d+)"
    r"\s+failed=(?P<failed>\d+)"
)
# Steps that must leave the host as it was: any change there is a failure of the scenario.
ZERO_CHANGE_STEPS = ("idempotence", "check")
ARTEFACTS = ("host", "env", "apex", "validation", "jupyter", "numa", "negatives", "venv", "apt_path", "apt_path_r595", "apt_path_dcgm",
             "containers")
REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# apex_build_report.installed_from of the install from the cache, as the report words it.
# What each step leaves besides <step>.log, roles-<step>.json and tasks-<step>.json; the rest of the
# molecule steps' artefacts (host.json, env.json, ...) are rewritten by converge and verify, which every run makes.
STEP_ARTEFACTS = {"apt_path": ("apt_path.json", "apt_path_r595.json"), "apt_path_dcgm": ("apt_path_dcgm.json",),
                  "containers": ("containers.json", "cdi"), "drift": ("drift",),
                  "side_effect": ("negatives.json", "venv.json")}
# steps.json is merged entry by entry, the reports are written afterwards, the torch repack log is the host's.
_NOT_MERGED = ("steps.json", "REPORT.md", "report.json", "repack.log")
_CACHE_SOURCES = {"url": " at a URL (published there by the build, downloaded and sha256-checked)",
                  "node": " folder on the node", "controller": " on the controller"}


def parse_recap(log_text):
    """Sum the PLAY RECAP counters of every play in a log (the last recap of each host wins)."""
    per_host = {}
    for line in log_text.splitlines():
        match = RECAP_LINE.match(line.strip())
        if match:
            per_host[match.group("host")] = {k: int(v) for k, v in match.groupdict().items() if k != "host"}
    totals = {"ok": 0, "changed": 0, "unreachable": 0, "failed": 0}
    for counters in per_host.values():
        for key in totals:
            totals[key] += counters[key]
    return {"hosts": sorted(per_host), **totals} if per_host else None


def step_verdict(step, rc, recap):
    """Whether a molecule step passed as designed, and why not."""
    if rc != 0:
        return False, "exit status %d" % rc
    if step in ZERO_CHANGE_STEPS:
        if recap is None:
            return False, "no PLAY RECAP in the log"
        if recap["changed"]:
            return False, "%d changed, 0 expected" % recap["changed"]
    return True, ""


def record_step(results, step, rc, seconds):
    path = os.path.join(results, "steps.json")
    steps = _load(path) or []
    log_path = os.path.join(results, "%s.log" % step)
    log_text = open(log_path).read() if os.path.exists(log_path) else ""
    recap = parse_recap(log_text)
    passed, why = step_verdict(step, rc, recap)
    steps = [s for s in steps if s["step"] != step]
    steps.append({"step": step, "rc": rc, "seconds": seconds, "recap": recap, "passed": passed, "why": why})
    _dump(path, steps)
    return passed


def step_files(step):
    return ("%s.log" % step, "roles-%s.json" % step, "tasks-%s.json" % step) + STEP_ARTEFACTS.get(step, ())


def merge_results(run, kept, commit):
    """Brings the results folder ``run`` (of a run at ``commit``) into the card's folder ``kept``. The
    steps ``run`` made replace theirs; a step it did not make keeps its files and its steps.json entry,
    with the commit it ran at (the kept report's, where the entry has none). Every other file of
    ``kept`` (the molecule steps' artefacts) is replaced by ``run``'s. Returns the steps carried."""
    ran = _load(os.path.join(run, "steps.json")) or []
    made = set(step["step"] for step in ran)
    kept_report = _load(os.path.join(kept, "report.json")) or {}
    carried = [dict(step, commit=step.get("commit") or kept_report.get("commit"))
               for step in (_load(os.path.join(kept, "steps.json")) or []) if step["step"] not in made]
    keep = set(name for step in carried for name in step_files(step["step"]))
    os.makedirs(kept, exist_ok=True)
    for name in os.listdir(kept):
        if name not in keep and name not in _NOT_MERGED[1:]:
            path = os.path.join(kept, name)
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)
    for name in os.listdir(run):
        if name not in _NOT_MERGED:
            source = os.path.join(run, name)
            (shutil.copytree if os.path.isdir(source) else shutil.copy2)(source, os.path.join(kept, name))
    _dump(os.path.join(kept, "steps.json"), [dict(step, commit=commit) for step in ran] + carried)
    return [step["step"] for step in carried]


def build_report(results, commit, now=None):
    """Everything the scenario left in the results folder, as one document."""
    report = {
        "commit": commit,
        "written_at": (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%d %H:%M UTC"),
        "steps": _load(os.path.join(results, "steps.json")) or [],
        "roles": {},
        "tasks": {},
    }
    for name in sorted(os.listdir(results)):
        match = re.match(r"^roles-(?P<step>\w+)\.json$", name)
        if match:
            report["roles"][match.group("step")] = _load(os.path.join(results, name))
        match = re.match(r"^tasks-(?P<step>\w+)\.json$", name)
        if match:
            report["tasks"][match.group("step")] = _load(os.path.join(results, name))
    for name in ARTEFACTS:
        report[name] = _load(os.path.join(results, "%s.json" % name))
    apex = report["apex"] or {}
    if apex.get("build_seconds") and apex.get("cache_install_seconds"):
        apex["build_to_cache_ratio"] = round(apex["build_seconds"] / apex["cache_install_seconds"], 1)
    negatives = report["negatives"] or []
    report["passed"] = bool(report["steps"]) and all(s["passed"] for s in report["steps"]) and all(
        n.get("failed_as_designed") for n in negatives
    )
    return report


def render_markdown(report, results_rel):
    out = ["# GPU scenario report", ""]
    host = report["host"] or {}
    gpu = (host.get("gpu_facts") or {})
    gpus = gpu.get("gpus") or []
    driver = gpu.get("driver") or {}
    out.append(
        "Covers commit `%s`; written %s by `tests/gpu/run-gpu-scenario` (`make test-gpu`). Overall: **%s**."
        % (report["commit"], report["written_at"], "passed" if report["passed"] else "FAILED")
    )
    if gpus:
        out.append(
            "Host: %s; %d × %s (compute capability %s), driver %s (%s module), CUDA %s."
            % (host.get("os", "?"), len(gpus), gpus[0].get("name"), gpus[0].get("compute_capability"),
               driver.get("version"), driver.get("kernel_module_flavour", "?"), driver.get("cuda_version"))
        )
    out += ["", "## Steps", "", "| step | result | changed | time | commit |", "|---|---|---|---|---|"]
    for step in report["steps"]:
        recap = step["recap"] or {}
        out.append("| %s | %s | %s | %.1f s | `%s`%s |" % (
            step["step"], "passed" if step["passed"] else "FAILED: " + step["why"],
            recap.get("changed", "-"), step["seconds"], step.get("commit") or report["commit"],
            "" if (step.get("commit") or report["commit"]) == report["commit"] else " (an earlier run's, not run since)"))
    out += _driver_section(host)
    out += apt_path_section(report["apt_path"])
    out += apt_path_section(report.get("apt_path_r595"), "Ubuntu apt path, R590 and later names")
    out += apt_path_dcgm_section(report.get("apt_path_dcgm"))
    out += containers_section(report.get("containers"))
    out += _env_section(report["env"])
    out += _roles_section(report["roles"])
    out += _noop_tasks_section(report["tasks"].get("idempotence"))
    apex = report["apex"]
    if apex:
        built = apex.get("built") or {}
        out += ["", "## APEX", "",
                "- Built in %s s (pip wheel), installed from the cache%s in %s s (pip install): ratio %s."
                % (apex.get("build_seconds"), _CACHE_SOURCES.get((apex.get("from_cache") or {}).get("installed_from"), ""),
                   apex.get("cache_install_seconds"), apex.get("build_to_cache_ratio", "-")),
                "- Source `%s`, cache key `%s`, wheel `%s`." % (built.get("source"), built.get("key"), built.get("wheel")),
                "- Compiled modules that import: %s." % ", ".join(
                    "`%s`" % name for name, state in sorted((built.get("modules") or {}).items()) if state == "ok"),
                "- Numerical checks against torch: %s." % ", ".join(
                    "%s %s" % (name, "ok" if check.get("ok") else "FAILED") for name, check in sorted((built.get("checks") or {}).items())),
                "- APIs present: %s." % ", ".join(
                    "%s %s" % (name, "yes" if present else "no") for name, present in sorted((built.get("apis") or {}).items()))]
    validation = report["validation"]
    if validation:
        out += ["", "## Validation", "", "```json", json.dumps(validation, indent=2, sort_keys=True), "```"]
    for name in ("numa", "jupyter"):
        if report[name]:
            out += ["", "## %s" % name, "", "```json", json.dumps(report[name], indent=2, sort_keys=True), "```"]
    venv = report["venv"]
    if venv:
        gate = (venv.get("validation") or {}).get("gate") or {}
        out += ["", "## A user-named prefix (a venv)", "",
                "`aistack_env_prefix: %s` alone made it the environment the roles work on (`conda_env_target`: conda %s, "
                "python `%s`); `gpu_validate` on it: %s." % (
                    (venv.get("target") or {}).get("prefix"), (venv.get("target") or {}).get("conda"),
                    (venv.get("target") or {}).get("python"), gate.get("summary", "not run"))]
    if report["negatives"] is not None:
        out += ["", "## Negative cases", "", "| case | failed as designed | message |", "|---|---|---|"]
        for case in report["negatives"]:
            message = " ".join(str(case.get("message", "")).split())
            out.append("| %s | %s | %s |" % (case["case"], "yes" if case.get("failed_as_designed") else "NO",
                                             message.replace("|", "\\|")))
    out += ["", "Raw logs and results: `%s/`." % results_rel, ""]
    return "\n".join(out)


def _driver_section(host):
    """The driver as nvidia_driver found it: mode, branch lifecycle, Fabric Manager; the GPUs' health."""
    driver, health = host.get("nvidia_driver_report") or {}, host.get("health") or {}
    if not driver and not health:
        return []
    out = ["", "## Driver and health", ""]
    if driver:
        lifecycle, fabric = driver.get("lifecycle") or {}, driver.get("fabric_manager") or {}
        out.append("- nvidia_driver: mode **%s**, driver %s (branch %s, %s module), managed by the role: %s." % (
            driver.get("mode"), driver.get("version"), driver.get("branch"), driver.get("flavour"),
            "yes" if driver.get("managed") else "no"))
        if lifecycle:
            out.append("- Branch lifecycle: %s %s, %s until %s." % (
                lifecycle.get("branch"), lifecycle.get("designation") or "", lifecycle.get("status"), lifecycle.get("eol")))
        if fabric:
            out.append("- Fabric Manager: %s." % (fabric.get("reason") or ("needed" if fabric.get("needed") else "not needed")))
    if health:
        out.append("- Health: %s." % (health.get("summary") or health.get("verdict")))
    out.append(dcgm_line(host))
    return out


def dcgm_line(host):
    """DCGM as the dcgm role found it (dcgm_result): absent, skipped, or its version, and the diagnostic
    gpu_validate ran with it (health.dcgm)."""
    if "dcgm" not in host:
        return "- DCGM: not recorded (this run predates the dcgm role)."
    dcgm, diag = host.get("dcgm") or {}, (host.get("health") or {}).get("dcgm") or {}
    mode = dcgm.get("mode")
    if mode in ("skip", "absent", None):
        return "- DCGM: %s (%s)." % ("absent" if mode == "absent" else "skipped", dcgm.get("reason") or "no dcgm_result")
    line = "- DCGM: %s (%s, `%s`, CUDA %s, managed by the role: %s; client %s, host engine %s)" % (
        dcgm.get("version"), mode, dcgm.get("package"), dcgm.get("cuda_major"), "yes" if dcgm.get("managed") else "no",
        dcgm.get("client"), dcgm.get("hostengine") or "not answering")
    status = diag.get("status", "off")
    if status == "off":
        return line + "; no diagnostic run (gpu_validate_dcgm_diag_level 0)."
    if status == "skipped":
        return line + "; dcgmi diag -r %s skipped (%s)." % (diag.get("level"), diag.get("reason"))
    return line + "; dcgmi diag -r %s: **%s** (%s%s)." % (
        diag.get("level"), status, diag.get("class"), ", %d waived" % diag["waived"] if diag.get("waived") else "")


def _packages(items):
    return ", ".join("`%s` %s%s" % (item["package"], item["version"], " (held)" if item.get("selection") == "hold" else "")
                     for item in items) or "none"


def apt_path_section(apt_path, title="Ubuntu apt path"):
    """What tests/gpu/apt-path found: the role's install path on the host's own apt and dpkg."""
    if not apt_path:
        return []
    plain, hgx, upgrade = apt_path.get("plain") or {}, apt_path.get("hgx") or {}, apt_path.get("upgrade") or {}
    untouched = apt_path.get("host_untouched") or {}
    out = ["", "## %s" % title, "",
           "`tests/gpu/apt-path`: the nvidia_driver role's install path from NVIDIA's CUDA repository (folder `%s`) with "
           "this host's own apt and dpkg, in a throw-away overlay of its root, against stand-in packages (NVIDIA's "
           "names and versions; no files, no scripts; their dependency lists are a model of NVIDIA's, not a copy). "
           "Result: **%s** (exit status %s, %s s). Host untouched afterwards (%s, before and after): %s."
           % (apt_path.get("distro"), "passed" if apt_path.get("passed") else "FAILED", apt_path.get("rc"),
              apt_path.get("seconds"), ", ".join("`%s`" % line.rsplit(" ", 1)[0] for line in untouched.get("before") or []),
              "yes" if untouched.get("same") else "NO")]
    if apt_path.get("python_apt"):
        out.append("Python's apt bindings for ansible's apt module: %s." % apt_path["python_apt"])
    if not plain:
        return out
    report = plain.get("report") or {}
    pin = [line for line in (plain.get("pin") or "").splitlines() if line.startswith(("Pin:", "Pin-Priority:"))]
    blacklist = re.findall(r'^\s*"([^"]+)";', plain.get("unattended_upgrades") or "", re.M)
    selected = apt_path.get("selected") or []
    pinning = [item for item in selected if item["package"].startswith("nvidia-driver-pinning-")]
    driver_packages = [item for item in plain.get("installed") or [] if item["package"] != "dkms"]
    out += ["- Requested driver %s (source `%s`, branch %s, %s module); apt chose: %s." % (
        apt_path.get("version"), report.get("source"), report.get("branch"), report.get("flavour"), _packages(selected)),
        "- Pin: `%s`; NVIDIA's pinning package: %s; held: %d of %d driver packages." % (
            "`, `".join(pin), _packages(pinning), len(report.get("held") or []), len(driver_packages)),
        "- unattended-upgrades blacklist: %s." % ", ".join("`%s`" % entry for entry in blacklist)]
    fabric = report.get("fabric_manager") or {}
    out.append("- Fabric Manager without NVSwitch: %s; installed: %s." % (fabric.get("reason"), _packages(
        [item for item in plain.get("installed") or [] if item["package"].startswith(("nvidia-fabricmanager", "libnvidia-nscq"))])))
    if hgx:
        fabric = (hgx.get("report") or {}).get("fabric_manager") or {}
        out.append("- Fabric Manager on an HGX board (its recorded lspci's NVSwitches on the PCI bus): %s; installed: %s; "
                   "service (%s): %s." % (fabric.get("reason"), _packages(hgx.get("fabric_manager_packages") or []),
                                          hgx.get("service_manager"), "enabled" if hgx.get("fabric_manager_enabled") else "not enabled"))
    if upgrade:
        before, after = upgrade.get("held_before") or [], upgrade.get("held_after") or []
        # "Inst NAME [OLD] (NEW ...)" moves an installed package; without [OLD] it is a new one.
        moves = [line.split()[1] for line in upgrade.get("unprotected_moves") or [] if re.match(r"^Inst \S+ \[", line)]
        summary = [line.rstrip(".") for line in upgrade.get("upgrade_summary") or []]
        runs = ", ".join("`%s`: %s" % pair for pair in zip(("upgrade", "dist-upgrade"), summary))
        out += ["- Upgrade with driver %s in the repository, `apt-get update` then %s; the %d held packages %s." % (
            apt_path.get("newer"), runs, len(before), "kept their versions" if before == after else "CHANGED"),
            "- Without the pin and the holds the same dist-upgrade (simulated) would move %d of them: %s." % (
                len(moves), ", ".join("`%s`" % name for name in moves))]
    return out


def apt_path_dcgm_section(found):
    """What tests/gpu/apt-path --dcgm found: the dcgm role's install path on the host's own apt and dpkg."""
    if not found:
        return []
    untouched = found.get("host_untouched") or {}
    install, role_upgrade, adopt = found.get("install") or {}, found.get("role_upgrade") or {}, found.get("adopt") or {}
    out = ["", "## DCGM apt path", "",
           "`tests/gpu/apt-path --dcgm`: the dcgm role's install path with this host's own apt and dpkg, in a throw-away "
           "overlay of its root, against stand-in DCGM 4 packages (NVIDIA's names and versions; dependencies modelled on "
           "NVIDIA/DCGM's packaging; no files, no scripts; `dcgmi -v` a test double). Result: **%s** (exit status %s, %s s). "
           "Host untouched afterwards: %s." % ("passed" if found.get("passed") else "FAILED", found.get("rc"), found.get("seconds"),
                                               "yes" if untouched.get("same") else "NO")]
    if not install:
        return out
    pin = [line for line in (install.get("pin") or "").splitlines() if line.startswith(("Pin:", "Pin-Priority:"))]
    record = install.get("record") or {}
    out.append("- Install (driver R580 as nvidia_driver reports it, CUDA 13; `dcgm_version` 4.4.2 with 4.5.0 in the "
               "repository): %s; pin `%s`; record version %s."
               % (_packages(install.get("installed") or []), "`, `".join(pin), record.get("version")))
    rerun = found.get("rerun") or {}
    out.append("- The same run again: mode %s, changed: %s." % (rerun.get("mode"), "yes" if rerun.get("changed") else "no"))
    upgrade = found.get("upgrade") or {}
    if upgrade:
        moves = [line.split()[1] for line in upgrade.get("unprotected_moves") or [] if re.match(r"^Inst \S+ \[", line)]
        out.append("- `apt-get upgrade` and `dist-upgrade` with 4.5.0 in the repository: the held packages %s; without the "
                   "pin and the holds (simulated) %d would move: %s." % (
                       "kept their versions" if upgrade.get("held_before") == upgrade.get("held_after") else "CHANGED",
                       len(moves), ", ".join("`%s`" % name for name in moves)))
    if role_upgrade:
        out.append("- `dcgm_version` 4.5.0: upgraded from %s to %s: %s." % (
            (role_upgrade.get("result") or {}).get("upgrade_from"), (role_upgrade.get("result") or {}).get("version"),
            _packages(role_upgrade.get("installed") or [])))
    for refusal in found.get("refusals") or []:
        out.append("- Refused (%s), nothing moved: %s" % (refusal.get("case"), " ".join(str(refusal.get("message")).split())))
    if adopt:
        result = adopt.get("result") or {}
        out.append("- The image's DCGM %s (installed by apt, not the role), `dcgm_version` 4.5.0: mode %s, changed: %s; "
                   "packages as they were: %s; held, pinned or recorded by the role: %s." % (
                       result.get("version"), result.get("mode"), "yes" if result.get("changed") else "no",
                       _packages(adopt.get("installed") or []),
                       "no" if adopt.get("record") is None and adopt.get("pin") is None and not any(
                           item.get("selection") == "hold" for item in adopt.get("installed") or []) else "YES"))
    return out


def containers_section(found):
    """The containers step's result (tests/gpu/containers.py): the CDI spec nvidia-ctk made here, as the
    collection judges it, and the container run through it or what stopped it."""
    if not found:
        return []
    spec = found.get("spec") or {}
    later = found.get("staleness_after_driver_update") or {}
    run = found.get("run") or {}
    out = ["", "## Containers", "",
           "`tests/gpu/containers.py`: %s, built from source with Debian's Go, ran `nvidia-ctk cdi generate` on this host. "
           "Verdict: **%s**." % (found.get("nvidia_ctk") or "nvidia-ctk", found.get("verdict"))]
    if spec:
        out += ["- Spec: kind `%s`, CDI %s; devices %s; GPU device nodes %s; all device nodes %s; %d driver files mounted."
                % (spec.get("kind"), spec.get("cdi_version"), ", ".join("`%s`" % name for name in spec.get("devices") or []),
                   ", ".join("`%s`" % path for path in spec.get("gpu_device_nodes") or []),
                   ", ".join("`%s`" % path for path in spec.get("device_nodes") or []), found.get("libraries") or 0),
                "- Made for driver %s; the host runs %s (nvidia-smi). The collection's judge: %s." % (
                    ", ".join(spec.get("driver_versions") or []) or "none named", (found.get("host") or {}).get("driver_version"),
                    "; ".join(found.get("staleness") or []) or "fits"),
                "- The same spec judged against driver %s (one update later): %s." % (
                    later.get("driver_version"), "; ".join(later.get("reasons") or []) or "fits (WRONG: it must read stale)"),
                "- Paths the spec names that the host lacks: %s." % (", ".join(found.get("missing_on_host") or []) or "none")]
    if run.get("status") == "not run":
        out.append("- Container run: not run: %s." % run.get("why"))
    elif run.get("attempts") is not None:
        out.append("- Container run of `%s` with the carried crun (%s; the host has no runtime), the bundle's `config.json` "
                   "written from the spec's edits for `nvidia.com/gpu=all`: **%s**%s" % (
                       run.get("python"), ", ".join(run.get("crun") or []) or "crun", run.get("status"),
                       ": %s." % run["why"] if run.get("why") else "."))
        out += ["  %d. %s (devices %s; hooks: %s): `%s`, exit status %s: `%s`%s" % (
            number, attempt.get("attempt"), ", ".join(attempt.get("devices") or []) or "none",
            ", ".join(attempt.get("hooks") or []) or "none", attempt.get("command"), attempt.get("rc"),
            attempt.get("stdout") or "", "" if attempt.get("rc") == 0 else "; stderr: `%s`" % (attempt.get("stderr") or "")[-400:])
            for number, attempt in enumerate(run["attempts"], 1)]
    elif run:
        out.append("- Container run (`%s`): **%s**, exit status %s: `%s`%s" % (
            run.get("command"), run.get("status"), run.get("rc"), run.get("stdout") or "",
            "" if run.get("status") == "passed" else "; stderr: `%s`" % (run.get("stderr") or "")[-400:]))
    return out


def _env_section(env):
    """How the env was made, and what APEX was compiled with in it."""
    if not env:
        return []
    info, toolchain = env.get("info") or {}, env.get("build_toolchain") or {}
    variant = info.get("torch_variant") or {}
    out = ["", "## The environment", "",
           "- Made by the roles from nothing: conda base `%s` from the installer `%s` (the conda test bed's stand-in for "
           "Miniforge, built for CPython 3.12), env `%s` (`conda_env_target`, chosen by: %s) from the channel mirror %s."
           % (env.get("conda_base"), os.path.basename(str(env.get("installer"))), (env.get("target") or {}).get("prefix"),
              (env.get("target") or {}).get("chosen_by"), ", ".join("`%s`" % m for m in env.get("channel_mirror") or [])),
           "- Spec: `%s`." % json.dumps(env.get("spec"), sort_keys=True),
           "- torch variant **%s** (series %s), chosen by %s (%s); pip read it from `%s` (the host's own torch, its "
           "`nvidia-*` and triton distributions repacked into wheels there by `tests/gpu/wheel_index.py`), the rest of "
           "the pip section from `%s` (the carried wheelhouse)."
           % (variant.get("variant"), variant.get("series"), variant.get("chosen_by"), variant.get("support"),
              variant.get("index"), env.get("pip_index")),
           "- BLAS: %s." % json.dumps(info.get("blas"), sort_keys=True)]
    if toolchain:
        out += ["", "## APEX build toolchain in the env", "",
                "| what | value |", "|---|---|"]
        for key in ("python", "python_version", "python_include", "python_h_present", "cxx", "cxx_version", "nvcc",
                    "nvcc_version", "kernel", "libstdcxx_loaded", "libstdcxx_newest_glibcxx", "env_has_own_libstdcxx"):
            out.append("| %s | `%s` |" % (key, toolchain.get(key)))
    return out


def _roles_section(roles):
    """Per-role times of each step, the first run beside the no-op re-run and check mode."""
    if not roles:
        return []
    steps = [s for s in ("converge", "idempotence", "check", "side_effect", "verify") if s in roles] + sorted(
        s for s in roles if s not in ("converge", "idempotence", "check", "side_effect", "verify"))
    names = []
    for step in steps:
        for part in roles[step] or []:
            if part["name"] not in names:
                names.append(part["name"])
    times = {step: {p["name"]: p for p in roles[step] or []} for step in steps}
    out = ["", "## Per-role time (changed tasks) by step", "",
           "| part | %s |" % " | ".join(steps), "|---|%s" % ("---|" * len(steps))]
    for name in names:
        cells = []
        for step in steps:
            part = times[step].get(name)
            cells.append("%.1f s (%s)" % (part["seconds"], part.get("changed", 0)) if part else "-")
        out.append("| %s | %s |" % (name, " | ".join(cells)))
    totals = ["%.1f s" % sum(p["seconds"] for p in times[step].values()) for step in steps]
    out.append("| **all** | %s |" % " | ".join(totals))
    spent = product_seconds(roles)
    if spent.get("converge") and "idempotence" in spent:
        out += ["", "The collection's roles and plays alone (the scenario's own plays left out): %s." % noop_text(spent)]
    return out


def product_seconds(roles):
    """Per step, the seconds spent in the collection's own roles and plays (the scenario's plays left out)."""
    product = product_parts()
    return dict((step, sum(p["seconds"] for p in parts or [] if p["name"] in product)) for step, parts in roles.items())


def noop_text(spent):
    """The first run beside the no-op re-run (and check mode), as the reports word it."""
    return "first run %.1f s, no-op re-run %.1f s (%.1f%% of the first run)%s" % (
        spent["converge"], spent["idempotence"], 100.0 * spent["idempotence"] / spent["converge"],
        ", check mode %.1f s" % spent["check"] if "check" in spent else "")


def render_index(reports):
    """tests/gpu/REPORT.md: one line per GPU test host, each card's own report beside its results."""
    out = ["# GPU scenario reports, one per GPU test host", "",
           "Each card's run of `make test-gpu` (`tests/gpu/run-gpu-scenario`) writes its report beside its results;",
           "this page is made from them (`tests/gpu/gpu_report.py index`).", "",
           "| card | commit | written | overall | the collection's roles: no-op re-run | report |", "|---|---|---|---|---|---|"]
    for card, report in sorted(reports.items()):
        spent = product_seconds(report.get("roles") or {})
        noop = noop_text(spent) if spent.get("converge") and "idempotence" in spent else "not run"
        out.append("| %s | `%s` | %s | **%s** | %s | [results/%s/REPORT.md](results/%s/REPORT.md) |" % (
            card, report["commit"], report["written_at"], "passed" if report["passed"] else "FAILED", noop, card, card))
    return "\n".join(out + [""])


def product_parts(root=REPO_ROOT):
    """The parts of a run that are the collection's own: its roles, and the plays of site.yml's playbooks."""
    parts = set(os.listdir(os.path.join(root, "roles")))
    playbooks = os.path.join(root, "playbooks")
    for name in os.listdir(playbooks):
        if name.endswith(".yml"):
            with open(os.path.join(playbooks, name)) as handle:
                parts.update(play["name"] for play in yaml.safe_load(handle) or [] if isinstance(play, dict) and "name" in play)
    return parts


def _noop_tasks_section(tasks, shown=15):
    """Where the no-op re-run's time goes: tasks started and the slowest of them."""
    if not tasks:
        return []
    out = ["", "## Where the no-op re-run's time goes", "",
           "%d tasks started; the %d slowest:" % (tasks["started"], min(shown, len(tasks["slowest"]))), "",
           "| part | task | time |", "|---|---|---|"]
    for task in tasks["slowest"][:shown]:
        out.append("| %s | %s | %.2f s |" % (task["part"], task["task"].replace("|", "\\|"), task["seconds"]))
    return out


def _load(path):
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return json.load(handle)


def _dump(path, data):
    with open(path, "w") as handle:
        json.dump(data, handle, indent=2, sort_keys=True)
        handle.write("\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="add one molecule step to steps.json")
    rec.add_argument("--results", required=True)
    rec.add_argument("--step", required=True)
    rec.add_argument("--rc", type=int, required=True)
    rec.add_argument("--seconds", type=float, required=True)
    wri = sub.add_parser("write", help="write the Markdown report and its JSON twin")
    wri.add_argument("--results", required=True)
    wri.add_argument("--commit", required=True)
    wri.add_argument("--markdown", required=True)
    wri.add_argument("--json", required=True)
    mer = sub.add_parser("merge", help="bring a run's results folder into the card's, keeping the steps it did not run")
    mer.add_argument("--run", required=True, help="the results folder the run left (extracted from the GPU host)")
    mer.add_argument("--into", required=True, help="the card's kept folder (tests/gpu/results/<card>)")
    mer.add_argument("--commit", required=True, help="the commit the run ran at")
    ind = sub.add_parser("index", help="write the page that lists every card's report (tests/gpu/REPORT.md)")
    ind.add_argument("--results-root", required=True, help="the folder of one results folder per card")
    ind.add_argument("--markdown", required=True)
    args = parser.parse_args(argv)
    if args.command == "record":
        return 0 if record_step(args.results, args.step, args.rc, args.seconds) else 1
    if args.command == "merge":
        carried = merge_results(args.run, args.into, args.commit)
        print("merged; carried from earlier runs: %s" % (", ".join(carried) or "none"))
        return 0
    if args.command == "index":
        reports = dict((card, _load(os.path.join(args.results_root, card, "report.json")))
                       for card in os.listdir(args.results_root))
        with open(args.markdown, "w") as handle:
            handle.write(render_index(dict((card, report) for card, report in reports.items() if report)))
        return 0
    report = build_report(args.results, args.commit)
    _dump(args.json, report)
    results_rel = os.path.relpath(args.results, os.path.dirname(os.path.abspath(args.markdown)))
    with open(args.markdown, "w") as handle:
        handle.write(render_markdown(report, results_rel))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
