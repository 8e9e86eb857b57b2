"""The GPU scenario's report writer (tests/gpu/gpu_report.py): recap parsing, verdicts, report."""

import datetime
import importlib.util
import json
import os
import shutil

import pytest

from conftest import REPO_ROOT

_SPEC = importlib.util.spec_from_file_location("gpu_report", os.path.join(REPO_ROOT, "tests", "gpu", "gpu_report.py"))
gpu_report = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gpu_report)

# A real log from the GPU host (the CUDA-match run of d057bfc): one play, one recap line.
RECORDED_LOG = os.path.join(REPO_ROOT, "tests", "unit", "fixtures", "gpu", "cuda-checks-run.log")


def test_recap_of_a_recorded_run():
    recap = gpu_report.parse_recap(open(RECORDED_LOG).read())
    assert recap == {"hosts": ["localhost"], "ok": 4, "changed": 1, "unreachable": 0, "failed": 0}


def test_recap_sums_hosts_and_keeps_the_last_recap_of_each():
    log = (
        "PLAY RECAP ***\nnode1 : ok=3 changed=2 unreachable=0 failed=0 skipped=0\n"
        "PLAY RECAP ***\nnode1 : ok=5 changed=1 unreachable=0 failed=0 skipped=0\n"
        "node2 : ok=5 changed=0 unreachable=0 failed=1 skipped=0\n"
    )
    assert gpu_report.parse_recap(log) == {"hosts": ["node1", "node2"], "ok": 10, "changed": 1,
                                           "unreachable": 0, "failed": 1}


def test_no_recap():
    assert gpu_report.parse_recap("ERROR! the playbook could not be found") is None


@pytest.mark.parametrize("step, rc, changed, passed, why", [
    ("converge", 0, 12, True, ""),
    ("idempotence", 0, 0, True, ""),
    ("idempotence", 0, 1, False, "1 changed, 0 expected"),
    ("check", 0, 3, False, "3 changed, 0 expected"),
    ("check", 2, 0, False, "exit status 2"),
])
def test_step_verdict(step, rc, changed, passed, why):
    recap = {"hosts": ["localhost"], "ok": 1, "changed": changed, "unreachable": 0, "failed": 0}
    assert gpu_report.step_verdict(step, rc, recap) == (passed, why)


def test_zero_change_step_without_recap_fails():
    assert gpu_report.step_verdict("check", 0, None) == (False, "no PLAY RECAP in the log")


def test_record_write_round_trip(tmp_path):
    results = tmp_path / "h200"
    results.mkdir()
    shutil.copy(RECORDED_LOG, results / "converge.log")
    (results / "check.log").write_text(open(RECORDED_LOG).read())
    assert gpu_report.record_step(str(results), "converge", 0, 12.5)
    assert not gpu_report.record_step(str(results), "check", 0, 3.0)  # the recorded log changed 1
    built = {"modules": {"apex_C": "ok", "amp_C": "missing"}, "checks": {"FusedAdam": {"ok": True}}, "apis": {"apex.amp": False}}
    (results / "apex.json").write_text(json.dumps({"build_seconds": 180.0, "cache_install_seconds": 2.5,
                                                   "from_cache": {"installed_from": "url"}, "built": built}))
    (results / "negatives.json").write_text(json.dumps([{"case": "cuda mismatch", "failed_as_designed": True,
                                                         "message": "torch.version.cuda is 13.0 | 12.4"}]))
    (results / "roles-converge.json").write_text(json.dumps([{"name": "apex_build", "seconds": 181.2, "changed": 5}]))
    now = datetime.datetime(2026, 12, 2, 18, 0, tzinfo=datetime.timezone.utc)
    report = gpu_report.build_report(str(results), "abc1234", now=now)
    assert report["apex"]["build_to_cache_ratio"] == 72.0
    assert [s["step"] for s in report["steps"]] == ["converge", "check"]
    assert report["passed"] is False  # check changed something
    markdown = gpu_report.render_markdown(report, "results/h200")
    assert "Covers commit `abc1234`; written 2026-12-02 18:00 UTC" in markdown
    assert "| check | FAILED: 1 changed, 0 expected | 1 | 3.0 s | `abc1234` |" in markdown
    assert "| part | converge |" in markdown and "| apex_build | 181.2 s (5) |" in markdown
    assert "13.0 \\| 12.4" in markdown
    assert "installed from the cache at a URL (published there by the build" in markdown
    assert "ratio 72.0." in markdown and "- Compiled modules that import: `apex_C`." in markdown
    assert "FusedAdam ok" in markdown and "apex.amp no" in markdown


def test_write_command_exit_status(tmp_path):
    results = tmp_path / "r"
    results.mkdir()
    (results / "converge.log").write_text(open(RECORDED_LOG).read())
    assert gpu_report.main(["record", "--results", str(results), "--step", "converge", "--rc", "0", "--seconds", "1"]) == 0
    args = ["write", "--results", str(results), "--commit", "c", "--markdown", str(tmp_path / "R.md"),
            "--json", str(tmp_path / "r.json")]
    assert gpu_report.main(args) == 0
    (results / "negatives.json").write_text(json.dumps([{"case": "x", "failed_as_designed": False}]))
    assert gpu_report.main(args) == 1
    assert json.loads((tmp_path / "r.json").read_text())["passed"] is False


def test_the_env_section_says_how_the_env_was_made_and_roles_compare_steps(tmp_path):
    results = tmp_path / "h200"
    results.mkdir()
    (results / "env.json").write_text(json.dumps({
        "target": {"prefix": "/opt/conda/envs/torch", "chosen_by": "primary", "conda": True},
        "info": {"torch_variant": {"variant": "cu130", "series": "2.11", "chosen_by": "driver 580.159.04", "support": "full",
                                   "index": "file:///var/tmp/aistack-gpu/torch-index/cu130"}, "blas": None},
        "conda_base": "/opt/conda", "installer": "http://127.0.0.1:1/Miniconda3-standin-26.7.1-0-Linux-x86_64.sh",
        "channel_mirror": ["http://127.0.0.1:1"], "pip_index": "file:///var/tmp/aistack-gpu/pypi/", "spec": {"x": 1},
        "build_toolchain": {"python": "/opt/conda/envs/torch/bin/python", "libstdcxx_loaded": "/lib/x86_64-linux-gnu/libstdc++.so.6"}}))
    (results / "roles-converge.json").write_text(json.dumps([{"name": "conda_env", "seconds": 80.0, "changed": 4}]))
    (results / "roles-idempotence.json").write_text(json.dumps([{"name": "conda_env", "seconds": 5.0, "changed": 0},
                                                                {"name": "gpu_validate", "seconds": 1.5, "changed": 0},
                                                                {"name": "Record what this run proved", "seconds": 7.0}]))
    (results / "venv.json").write_text(json.dumps({"target": {"prefix": "/opt/torch/.venv", "conda": False, "python": "p"},
                                                   "validation": {"gate": {"summary": "6/6 checks passed"}}}))
    markdown = gpu_report.render_markdown(gpu_report.build_report(str(results), "c"), "results/h200")
    assert "torch variant **cu130** (series 2.11), chosen by driver 580.159.04" in markdown
    assert "conda base `/opt/conda` from the installer `Miniconda3-standin-26.7.1-0-Linux-x86_64.sh`" in markdown
    assert "| libstdcxx_loaded | `/lib/x86_64-linux-gnu/libstdc++.so.6` |" in markdown
    assert "| part | converge | idempotence |" in markdown
    assert "| conda_env | 80.0 s (4) | 5.0 s (0) |" in markdown and "| gpu_validate | - | 1.5 s (0) |" in markdown
    assert "| **all** | 80.0 s | 13.5 s |" in markdown
    # The scenario's own plays are left out of the collection's figure; its roles and site's plays count.
    assert ("The collection's roles and plays alone (the scenario's own plays left out): first run 80.0 s, "
            "no-op re-run 6.5 s (8.1% of the first run).") in markdown
    assert "`aistack_env_prefix: /opt/torch/.venv` alone made it" in markdown and "6/6 checks passed" in markdown


def test_the_no_op_section_lists_the_slowest_tasks_of_the_idempotence_run(tmp_path):
    results = tmp_path / "h200"
    results.mkdir()
    (results / "tasks-converge.json").write_text(json.dumps({"started": 300, "slowest": [
        {"part": "apex_build", "task": "Build the wheel", "seconds": 170.0}]}))
    (results / "tasks-idempotence.json").write_text(json.dumps({"started": 278, "slowest": [
        {"part": "jupyter_kernel", "task": "Start the kernel | prove it", "seconds": 4.25},
        {"part": "apex_build", "task": "Probe the env", "seconds": 3.0}]}))
    markdown = gpu_report.render_markdown(gpu_report.build_report(str(results), "c"), "results/h200")
    assert "278 tasks started; the 2 slowest:" in markdown
    assert "| jupyter_kernel | Start the kernel \\| prove it | 4.25 s |" in markdown
    assert "Build the wheel" not in markdown


def test_driver_section_from_the_h200_adopt_run():
    # nvidia_driver_report and the health verdict as the H200's converge printed them (ecb5c71).
    driver = {
        "mode": "adopt", "version": "580.159.04", "branch": 580, "flavour": "open", "managed": False,
        "lifecycle": {"branch": "R580", "designation": "LTSB", "eol": "2028-06", "status": "supported", "successor": None},
        "fabric_manager": {"needed": False, "switches": 0, "version": None,
                           "reason": "no NVSwitch on the PCI bus (no NVIDIA device of bridge class 0x0680): "
                                     "Fabric Manager is not needed"},
    }
    health = {"verdict": "OK", "summary": "health OK: 0 Xid/SXid events in the kernel log since boot (dmesg) on 0 devices"}
    host = {"nvidia_driver_report": driver, "health": health}
    assert gpu_report._driver_section(host) == [
        "", "## Driver and health", "",
        "- nvidia_driver: mode **adopt**, driver 580.159.04 (branch 580, open module), managed by the role: no.",
        "- Branch lifecycle: R580 LTSB, supported until 2028-06.",
        "- Fabric Manager: no NVSwitch on the PCI bus (no NVIDIA device of bridge class 0x0680): Fabric Manager is not needed.",
        "- Health: health OK: 0 Xid/SXid events in the kernel log since boot (dmesg) on 0 devices.",
        "- DCGM: not recorded (this run predates the dcgm role).",
    ]
    assert gpu_report._driver_section({}) == []


# dcgm_result as the dcgm role publishes it on the H100 host (no DCGM there: tools-present.txt of
# ../shared/fixtures/gpu-h100), and with a DCGM adopted and a level-1 diagnostic run by gpu_validate.
DCGM_ABSENT = {"mode": "absent", "reason": "DCGM is not installed and dcgm_install is false", "version": None,
               "package": None, "cuda_major": 13, "managed": False, "client": None, "hostengine": None}
DCGM_ADOPTED = {"mode": "adopt", "reason": "DCGM 4.5.0 is installed and this role did not install it: adopted, never replaced",
                "version": "4.5.0", "package": "datacenter-gpu-manager-4-cuda13", "cuda_major": 13, "managed": False,
                "client": "4.5.0", "hostengine": "4.5.0"}


@pytest.mark.parametrize("dcgm, diag, line", [
    (DCGM_ABSENT, {"level": 0, "status": "off"},
     "- DCGM: absent (DCGM is not installed and dcgm_install is false)."),
    ({"mode": "skip", "reason": "no NVIDIA GPU on the PCI bus"}, {},
     "- DCGM: skipped (no NVIDIA GPU on the PCI bus)."),
    (DCGM_ADOPTED, {"level": 1, "version": "4.5.0", "status": "passed", "class": "OK", "findings": [], "waived": 0},
     "- DCGM: 4.5.0 (adopt, `datacenter-gpu-manager-4-cuda13`, CUDA 13, managed by the role: no; client 4.5.0, "
     "host engine 4.5.0); dcgmi diag -r 1: **passed** (OK)."),
    (dict(DCGM_ADOPTED, hostengine=None), {"level": 3, "status": "passed", "class": "OK", "waived": 1},
     "- DCGM: 4.5.0 (adopt, `datacenter-gpu-manager-4-cuda13`, CUDA 13, managed by the role: no; client 4.5.0, "
     "host engine not answering); dcgmi diag -r 3: **passed** (OK, 1 waived)."),
    (dict(DCGM_ADOPTED, mode="install", managed=True), {"level": 1, "status": "failed", "class": "ISOLATE", "waived": 0},
     "- DCGM: 4.5.0 (install, `datacenter-gpu-manager-4-cuda13`, CUDA 13, managed by the role: yes; client 4.5.0, "
     "host engine 4.5.0); dcgmi diag -r 1: **failed** (ISOLATE)."),
    (DCGM_ADOPTED, {"level": 1, "status": "skipped", "reason": "check mode"},
     "- DCGM: 4.5.0 (adopt, `datacenter-gpu-manager-4-cuda13`, CUDA 13, managed by the role: no; client 4.5.0, "
     "host engine 4.5.0); dcgmi diag -r 1 skipped (check mode)."),
    (DCGM_ADOPTED, {"level": 0, "status": "off"},
     "- DCGM: 4.5.0 (adopt, `datacenter-gpu-manager-4-cuda13`, CUDA 13, managed by the role: no; client 4.5.0, "
     "host engine 4.5.0); no diagnostic run (gpu_validate_dcgm_diag_level 0)."),
])
def test_the_report_has_a_dcgm_line(dcgm, diag, line):
    host = {"nvidia_driver_report": {"mode": "adopt"}, "dcgm": dcgm, "health": {"verdict": "OK", "summary": "s", "dcgm": diag}}
    assert gpu_report._driver_section(host)[-1] == line
    report = {"commit": "abc", "written_at": "now", "passed": True, "steps": [], "host": host, "apt_path": None, "env": None,
              "roles": {}, "tasks": {}, "apex": None, "validation": None, "numa": None, "jupyter": None, "venv": None,
              "negatives": None}
    assert line in gpu_report.render_markdown(report, "results/h100").splitlines()


# tests/gpu/apt-path --out FILE as it ran on Debian 12 (folder debian12), stand-ins of 580.159.04 and 580.200.01.
APT_PATH_RUN = os.path.join(REPO_ROOT, "tests", "unit", "fixtures", "gpu", "apt_path-debian12.json")


# tests/gpu/apt-path --dcgm --out FILE as it ran on Debian 12: stand-ins of DCGM 4.4.2, 4.5.0 and 4.7.0.
APT_PATH_DCGM_RUN = os.path.join(REPO_ROOT, "tests", "unit", "fixtures", "gpu", "apt_path_dcgm-debian12.json")


def test_the_dcgm_apt_path_section_from_a_recorded_run():
    with open(APT_PATH_DCGM_RUN) as handle:
        found = json.load(handle)
    lines = gpu_report.apt_path_dcgm_section(found)
    assert lines[:3] == ["", "## DCGM apt path", ""]
    assert "Result: **passed** (exit status 0" in lines[3] and lines[3].endswith("Host untouched afterwards: yes.")
    assert lines[4] == ("- Install (driver R580 as nvidia_driver reports it, CUDA 13; `dcgm_version` 4.4.2 with 4.5.0 in the "
                        "repository): `datacenter-gpu-manager-4-core` 1:4.4.2-1 (held), `datacenter-gpu-manager-4-cuda13` "
                        "1:4.4.2-1 (held); pin `Pin: version 1:4.4.2-*`, `Pin-Priority: 990`; record version 4.4.2.")
    assert lines[5] == "- The same run again: mode keep, changed: no."
    assert lines[6].startswith("- `apt-get upgrade` and `dist-upgrade` with 4.5.0 in the repository: the held packages kept "
                               "their versions; without the pin and the holds (simulated) 2 would move")
    assert lines[7].startswith("- `dcgm_version` 4.5.0: upgraded from 4.4.2 to 4.5.0")
    assert lines[8].startswith("- Refused (downgrade), nothing moved: dcgm on localhost: dcgm_version 4.4.2 is older")
    assert lines[9].startswith("- Refused (engine), nothing moved: dcgm on localhost: the DCGM host engine runs 4.4.2")
    assert lines[10].startswith("- The image's DCGM 4.7.0 (installed by apt, not the role), `dcgm_version` 4.5.0: mode adopt, "
                                "changed: no;")
    assert lines[10].endswith("held, pinned or recorded by the role: no.")
    assert gpu_report.apt_path_dcgm_section(None) == []
    failed = gpu_report.apt_path_dcgm_section({"rc": 2, "seconds": 9, "passed": False, "host_untouched": {"same": True}})
    assert "Result: **FAILED** (exit status 2, 9 s)" in failed[3] and len(failed) == 4


def test_the_apt_path_section_from_a_recorded_run(tmp_path):
    results = tmp_path / "h200"
    results.mkdir()
    shutil.copy(APT_PATH_RUN, results / "apt_path.json")
    markdown = gpu_report.render_markdown(gpu_report.build_report(str(results), "c"), "results/h200")
    section = markdown.split("## Ubuntu apt path\n", 1)[1].split("\n## ", 1)[0]
    assert "(folder `debian12`)" in section and "Result: **passed** (exit status 0," in section
    assert ("Host untouched afterwards (`dpkg -l`, `dpkg --get-selections`, `/etc/apt`, `/etc/modprobe.d`, "
            "`/etc/systemd/system`, `/var/lib/aistack`, before and after): yes.") in section
    assert "apt chose: `dkms` 3.0.10-8+deb12u1, `libnvidia-cfg1-580` 580.159.04-1 (held)," in section
    assert "`nvidia-open-580` 580.159.04-1 (held)" in section
    assert ("- Pin: `Pin: version 580.159.04*`, `Pin-Priority: 1001`; NVIDIA's pinning package: "
            "`nvidia-driver-pinning-580.159.04` 580.159.04-1 (held); held: 14 of 14 driver packages.") in section
    assert "- unattended-upgrades blacklist: `^(nvidia-|libnvidia-|" in section
    assert "- Fabric Manager without NVSwitch: no NVSwitch on the PCI bus" in section and "installed: none." in section
    assert ("installed: `libnvidia-nscq-580` 580.159.04-1 (held), `nvidia-fabricmanager-580` 580.159.04-1 (held); "
            "service (systemd): enabled.") in section
    assert "`dist-upgrade`: 0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded; the 16 held packages kept" in section
    assert "would move 14 of them: `nvidia-open-580`," in section and "`nvidia-fabricmanager-580`" in section


# The same on Debian 12 for R595 (issue 39): stand-ins of 595.71.05 with R590 and later's unversioned
# names, and of 610.200.01, a newer branch under the same names, in the repository for the upgrade.
APT_PATH_R595_RUN = os.path.join(REPO_ROOT, "tests", "unit", "fixtures", "gpu", "apt_path_r595-debian12.json")


def test_the_r595_apt_path_section_from_a_recorded_run(tmp_path):
    results = tmp_path / "h200"
    results.mkdir()
    shutil.copy(APT_PATH_RUN, results / "apt_path.json")
    shutil.copy(APT_PATH_R595_RUN, results / "apt_path_r595.json")
    markdown = gpu_report.render_markdown(gpu_report.build_report(str(results), "c"), "results/h200")
    assert "\n## Ubuntu apt path\n" in markdown
    section = markdown.split("## Ubuntu apt path, R590 and later names\n", 1)[1].split("\n## ", 1)[0]
    assert "Result: **passed** (exit status 0," in section and "before and after): yes." in section
    assert "- Requested driver 595.71.05 (source `nvidia`, branch 595, open module)" in section
    assert "`nvidia-open` 595.71.05-1 (held)" in section and "`libnvidia-compute` 595.71.05-1 (held)" in section
    assert "nvidia-open-595" not in section and "libnvidia-compute-595" not in section
    assert ("- Pin: `Pin: version 595.71.05*`, `Pin-Priority: 1001`; NVIDIA's pinning package: "
            "`nvidia-driver-pinning-595.71.05` 595.71.05-1 (held)") in section
    assert "installed: `libnvidia-nscq` 595.71.05-1 (held), `nvidia-fabricmanager` 595.71.05-1 (held)" in section
    # A newer branch under the same names moves nothing while the pin and the holds stand, and would move all.
    assert "- Upgrade with driver 610.200.01 in the repository" in section and "the 16 held packages kept their versions" in section
    assert "would move 14 of them: `nvidia-open`," in section
    run = json.load(open(APT_PATH_R595_RUN))
    assert all("(610.200.01-1 " in line for line in run["upgrade"]["unprotected_moves"] if line.startswith("Inst "))


def test_the_apt_path_section_says_where_python_apt_came_from():
    section = "\n".join(gpu_report.apt_path_section({"distro": "ubuntu2404", "rc": 0, "python_apt": (
        "built for the overlay by tests/gpu/python-apt-bindings: python-apt_2.6.0.tar.xz for Python 3.12.3 on libapt-pkg 2.7.14")}))
    assert ("Python's apt bindings for ansible's apt module: built for the overlay by tests/gpu/python-apt-bindings: "
            "python-apt_2.6.0.tar.xz for Python 3.12.3 on libapt-pkg 2.7.14.") in section
    assert "Python's apt bindings" not in "\n".join(gpu_report.apt_path_section({"distro": "debian12", "rc": 0}))


def test_the_apt_path_section_says_what_failed():
    run = json.load(open(APT_PATH_RUN))
    run["upgrade"]["held_after"] = [line.replace("nvidia-open-580 580.159.04-1", "nvidia-open-580 580.200.01-1")
                                    for line in run["upgrade"]["held_after"]]
    run.update(passed=False, rc=2, host_untouched={"same": False})
    lines = gpu_report.apt_path_section(run)
    assert "Result: **FAILED** (exit status 2," in lines[3] and "before and after): NO." in lines[3]
    assert any("the 16 held packages CHANGED." in line for line in lines)
    # A run that stopped before the playbook wrote its findings: the one line.
    assert len(gpu_report.apt_path_section({"distro": "ubuntu2404", "passed": False, "rc": 2, "host_untouched": {"same": True}})) == 4
    assert gpu_report.apt_path_section(None) == []


def test_the_index_lists_each_cards_committed_report_with_its_no_op_figure(tmp_path):
    root = os.path.join(REPO_ROOT, "tests", "gpu", "results")
    cards = sorted(card for card in os.listdir(root) if os.path.exists(os.path.join(root, card, "report.json")))
    assert len(cards) >= 1
    out = tmp_path / "REPORT.md"
    assert gpu_report.main(["index", "--results-root", root, "--markdown", str(out)]) == 0
    rows = [line for line in out.read_text().splitlines() if line.startswith("| ") and not line.startswith("| card")]
    assert [row.split(" | ")[0].lstrip("| ") for row in rows] == cards
    for card, row in zip(cards, rows):
        report = json.load(open(os.path.join(root, card, "report.json")))
        assert "`%s`" % report["commit"] in row and ("**passed**" if report["passed"] else "**FAILED**") in row
        assert "no-op re-run" in row and "[results/%s/REPORT.md](results/%s/REPORT.md)" % (card, card) in row
    # The committed page is this one.
    assert out.read_text() == open(os.path.join(REPO_ROOT, "tests", "gpu", "REPORT.md")).read()


def test_a_run_of_some_steps_keeps_the_results_of_the_others_with_their_commit(tmp_path):
    """A run without the apt paths (GPU_STEPS) must not lose the apt path results an earlier run left: they stay,
    marked with the commit they ran at; what the steps that ran left is replaced, stale files of theirs go."""
    kept, run = tmp_path / "kept", tmp_path / "run"
    kept.mkdir()
    run.mkdir()
    old_steps = [{"step": "converge", "rc": 0, "seconds": 300.0, "recap": None, "passed": True, "why": ""},
                 {"step": "check", "rc": 0, "seconds": 30.0, "recap": None, "passed": True, "why": ""},
                 {"step": "apt_path", "rc": 0, "seconds": 139.7, "recap": None, "passed": True, "why": ""}]
    (kept / "steps.json").write_text(json.dumps(old_steps))
    (kept / "report.json").write_text(json.dumps({"commit": "0217e52"}))
    for name in ("apt_path.json", "apt_path_r595.json", "apt_path.log", "check.log", "roles-check.json", "host.json",
                 "converge.log", "roles-side_effect.json"):
        content = [] if name.startswith("roles-") else {"distro": "old " + name}
        (kept / name).write_text(json.dumps(content) if name.endswith(".json") else "old " + name)
    (kept / "drift").mkdir()
    (kept / "drift" / "drift.json").write_text("old")
    (run / "steps.json").write_text(json.dumps([dict(old_steps[0], seconds=290.0)]))
    for name in ("converge.log", "host.json", "repack.log"):
        (run / name).write_text(json.dumps({"os": "new"}) if name.endswith(".json") else "new " + name)
    (run / "drift").mkdir()
    (run / "drift" / "drift.json").write_text("new")

    assert gpu_report.main(["merge", "--run", str(run), "--into", str(kept), "--commit", "86038d0"]) == 0

    assert sorted(p.name for p in kept.iterdir()) == sorted(
        ["apt_path.json", "apt_path_r595.json", "apt_path.log", "check.log", "roles-check.json", "converge.log",
         "host.json", "drift", "steps.json", "report.json"])
    assert json.loads((kept / "apt_path_r595.json").read_text()) == {"distro": "old apt_path_r595.json"}
    assert json.loads((kept / "host.json").read_text()) == {"os": "new"} and (kept / "drift" / "drift.json").read_text() == "new"
    steps = json.loads((kept / "steps.json").read_text())
    assert [(s["step"], s["commit"], s["seconds"]) for s in steps] == [
        ("converge", "86038d0", 290.0), ("check", "0217e52", 30.0), ("apt_path", "0217e52", 139.7)]
    report = gpu_report.build_report(str(kept), "86038d0")
    markdown = gpu_report.render_markdown(report, "results/x")
    assert "| apt_path | passed | - | 139.7 s | `0217e52` (an earlier run's, not run since) |" in markdown
    assert "| converge | passed | - | 290.0 s | `86038d0` |" in markdown
    # A later run that makes apt_path again takes it over, with its own commit.
    (run / "steps.json").write_text(json.dumps([old_steps[2]]))
    (run / "apt_path.json").write_text("{}")
    gpu_report.merge_results(str(run), str(kept), "feed123")
    steps = dict((s["step"], s["commit"]) for s in json.loads((kept / "steps.json").read_text()))
    assert steps == {"apt_path": "feed123", "converge": "86038d0", "check": "0217e52"}
    assert (kept / "apt_path.json").read_text() == "{}" and not (kept / "apt_path_r595.json").exists()


def test_a_run_without_the_drift_and_side_effect_steps_keeps_what_they_left(tmp_path):
    """The drift check's folder and the refusal cases' files are those steps' own: a run of converge and
    idempotence alone (GPU_STEPS) keeps them, and the report still counts the refusals."""
    kept, run = tmp_path / "kept", tmp_path / "run"
    kept.mkdir()
    run.mkdir()
    step = {"rc": 0, "seconds": 10.0, "recap": None, "passed": True, "why": ""}
    (kept / "steps.json").write_text(json.dumps([dict(step, step=s) for s in ("converge", "drift", "side_effect")]))
    (kept / "report.json").write_text(json.dumps({"commit": "0217e52"}))
    (kept / "drift").mkdir()
    (kept / "drift" / "drift.json").write_text("{}")
    (kept / "negatives.json").write_text(json.dumps([{"case": "x", "failed_as_designed": True}]))
    (kept / "venv.json").write_text("{}")
    (run / "steps.json").write_text(json.dumps([dict(step, step="converge")]))

    assert gpu_report.merge_results(str(run), str(kept), "86038d0") == ["drift", "side_effect"]

    assert (kept / "drift" / "drift.json").exists() and (kept / "venv.json").exists()
    assert gpu_report.build_report(str(kept), "86038d0")["negatives"] == [{"case": "x", "failed_as_designed": True}]


def test_the_containers_section_names_the_spec_the_judge_and_what_stopped_the_run():
    found = {"nvidia_ctk": "NVIDIA Container Toolkit CLI version 1.17.8", "verdict": "the spec fits this host",
             "spec": {"kind": "nvidia.com/gpu", "cdi_version": "0.5.0", "devices": ["0", "all"],
                      "gpu_device_nodes": ["/dev/nvidia0"], "device_nodes": ["/dev/nvidia0", "/dev/nvidiactl"],
                      "driver_versions": ["580.159.04"]},
             "libraries": 30, "missing_on_host": [], "host": {"driver_version": "580.159.04"}, "staleness": [],
             "staleness_after_driver_update": {"driver_version": "580.159.05", "reasons": []},
             "run": {"status": "not run", "why": "no OCI runtime on this host"}}
    text = "\n".join(gpu_report.containers_section(found))
    assert "## Containers" in text and "Verdict: **the spec fits this host**" in text
    assert "devices `0`, `all`; GPU device nodes `/dev/nvidia0`" in text and "30 driver files mounted" in text
    assert "Made for driver 580.159.04; the host runs 580.159.04 (nvidia-smi). The collection's judge: fits." in text
    # A judge that would not see a driver update is named as wrong.
    assert "against driver 580.159.05 (one update later): fits (WRONG: it must read stale)" in text
    assert "- Container run: not run: no OCI runtime on this host." in text
    assert gpu_report.containers_section(None) == []


def test_the_containers_section_lists_each_carried_crun_attempt():
    run = {"runtime": "carried crun", "crun": ["crun version 1.8.1"], "status": "passed", "runtimes_found": [],
           "python": "/opt/conda/envs/torch/bin/python",
           "attempts": [{"attempt": "root, overlay", "command": "unshare ... crun run", "rc": 1, "stdout": "",
                         "stderr": "cgroups in hybrid mode not supported", "hooks": ["createContainer"],
                         "devices": ["/dev/nvidiactl", "/dev/nvidia0"]},
                        {"attempt": "without cgroups", "command": "unshare ... crun --cgroup-manager=disabled run", "rc": 0,
                         "stdout": "True 1 NVIDIA H100 80GB HBM3", "stderr": "", "hooks": [], "devices": []}]}
    text = "\n".join(gpu_report.containers_section({"verdict": "the spec fits this host", "run": run}))
    assert ("- Container run of `/opt/conda/envs/torch/bin/python` with the carried crun (crun version 1.8.1; the host has no "
            "runtime), the bundle's `config.json` written from the spec's edits for `nvidia.com/gpu=all`: **passed**.") in text
    assert ("  1. root, overlay (devices /dev/nvidiactl, /dev/nvidia0; hooks: createContainer): `unshare ... crun run`, "
            "exit status 1: ``; stderr: `cgroups in hybrid mode not supported`") in text
    assert "  2. without cgroups (devices none; hooks: none): `unshare ... crun --cgroup-manager=disabled run`, exit status 0: " \
           "`True 1 NVIDIA H100 80GB HBM3`" in text
