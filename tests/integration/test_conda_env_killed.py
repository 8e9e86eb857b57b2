"""A conda transaction killed for real: the stand-in, paused halfway through linking by the test
hook CONDA_TESTBED_PAUSE_FILE, gets SIGKILL; then the conda_env module (run by ansible, as on a
node) reports the unfinished change in check mode, repairs it, and is idempotent."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO_ROOT, VENV_BIN

BEFORE = {"channels": ["conda-forge"], "dependencies": ["hello-ansible", "libfoo=1.0"]}
AFTER = {"channels": ["conda-forge"], "dependencies": ["hello-ansible", "libfoo=1.1"]}


def module(base, spec, check=False, environment=None, new_session=False, **options):
    """``ansible localhost -m aistack.gpu_node.conda_env`` started (not waited for); ``new_session``:
    in its own process group, so a test can kill ansible and all it started at once."""
    args = dict({"name": "demo", "spec": spec, "conda_prefix": base.prefix, "environment": environment or {}}, **options)
    argv = [os.path.join(VENV_BIN, "ansible"), "localhost", "-i", "localhost,", "-c", "local",
            "-e", "ansible_python_interpreter=" + sys.executable, "-m", "aistack.gpu_node.conda_env",
            "-a", json.dumps(args)] + (["--check"] if check else [])
    env = dict(base.env, PATH=VENV_BIN + os.pathsep + base.env["PATH"], ANSIBLE_CONFIG=os.path.join(REPO_ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO_ROOT, ".cache", "collections"),
               ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_FORCE_COLOR="false")
    return subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=new_session)


def result_of(proc):
    out, err = proc.communicate(timeout=300)
    try:
        return json.loads(out)["plays"][0]["tasks"][0]["hosts"]["localhost"]
    except (ValueError, KeyError, IndexError):
        pytest.fail("ansible printed no module result (rc %s)\n%s\n%s" % (proc.returncode, out, err))


def run(base, spec, check=False):
    return result_of(module(base, spec, check))


def backups(prefix):
    """The ``*.c~`` files under the prefix (conda's backups of what it unlinks)."""
    return sorted(os.path.relpath(os.path.join(folder, name), prefix) for folder, _dirs, names in os.walk(prefix)
                  for name in names if name.endswith(".c~"))


def records(prefix):
    meta = os.path.join(prefix, "conda-meta")
    return sorted(name for name in os.listdir(meta) if name.endswith(".json"))


def kill_midway(base, spec, pause_file):
    """Runs the module with the pause hook, kills the paused stand-in with SIGKILL, returns the
    module's result and what the stand-in had done."""
    open(pause_file, "w").close()
    proc = module(base, spec, environment={"CONDA_TESTBED_PAUSE_FILE": pause_file})
    deadline = time.monotonic() + 120
    while not os.path.exists(pause_file + ".reached"):
        assert proc.poll() is None and time.monotonic() < deadline, "the stand-in never reached the pause"
        time.sleep(0.1)
    with open(pause_file + ".reached") as handle:
        reached = json.load(handle)
    os.kill(reached["pid"], signal.SIGKILL)
    return result_of(proc), reached


@pytest.mark.parametrize("case", ["create", "update"])
def test_killed_transaction_is_reported_then_repaired(conda_base, tmp_path, case):
    base = conda_base()
    prefix = os.path.join(base.prefix, "envs", "demo")
    marker = prefix + ".in-progress.json"
    if case == "update":
        assert run(base, BEFORE)["changed"] is True
    killed, reached = kill_midway(base, AFTER, str(tmp_path / "pause"))

    assert killed.get("failed") is True and "rc=-9" in killed["msg"], killed
    if case == "create":
        # Dependencies first: libfoo linked, hello-ansible not yet.
        assert reached["done"] == ["link libfoo-1.1.0-h4616a5c_0"] and records(prefix) == ["libfoo-1.1.0-h4616a5c_0.json"]
    else:
        # Unlinks first: libfoo 1.0 gone, 1.1 not yet there, hello-ansible left without its dependency.
        assert reached["done"] == ["unlink libfoo-1.0.0-h4616a5c_0"] and records(prefix) == ["hello-ansible-1.0.0-h4616a5c_0.json"]
    with open(marker) as handle:
        left = json.load(handle)
    assert left["action"] == case and left["env"] == "demo"
    work = os.path.join(base.prefix, "envs", ".demo.applying")
    assert os.listdir(work) == ["environment.yml"] and "-f %s/environment.yml " % work in left["command"]

    state = records(prefix), open(marker).read()
    lock = prefix + ".explicit.txt"
    if case == "update":
        # node_manifest refuses the lock of the unfinished change (this case was a test of its own, which made this
        # very state on a base of its own: env demo at BEFORE, the change to AFTER killed midway).
        assert os.path.exists(lock)
        rc, out, recorded = record_manifest(base, tmp_path, lock, marker)
        assert rc == 2 and recorded is None, out
        assert "node_manifest: lock file %s (node_manifest_lock_files) belongs to an env whose last change did not " \
               "finish (%s exists)" % (lock, marker) in " ".join(out.split()), out
        assert (records(prefix), open(marker).read()) == state, "node_manifest changed the env or the marker"
    checked = run(base, AFTER, check=True)
    assert checked["changed"] is True and checked["drift"][0] == (
        "an earlier change of env demo (%s) started at %s did not finish; the env is removed and created again"
        % (left["command"], left["started"]))
    if case == "create":
        # conda writes conda-meta/history last: the prefix is no env to conda, and is replaced.
        assert checked["drift"][1].startswith("prefix %s is not a conda environment: conda-meta/history is missing" % prefix)
    else:
        # conda renamed libfoo 1.0's files and record to *.c~ and never deleted them: an update
        # would leave them, so the env is replaced.
        assert checked["drift"][1] == ("2 file(s) left as .c~ backups by an interrupted conda transaction: "
                                       "conda-meta/libfoo-1.0.0-h4616a5c_0.json.c~, share/libfoo/VERSION.c~; "
                                       "the env is removed and created again")
    assert (records(prefix), open(marker).read()) == state, "check mode changed the env or the marker"

    repaired = run(base, AFTER)
    assert repaired["changed"] is True and not os.path.exists(marker) and not os.path.exists(work)
    assert repaired["commands"][0] == ("rm -rf %s" % prefix if case == "create" else
                                       "conda remove -y --all -p %s --json" % prefix)
    assert repaired["commands"][-1].startswith("conda env create ")
    assert backups(prefix) == []
    assert records(prefix) == ["hello-ansible-1.0.0-h4616a5c_0.json", "libfoo-1.1.0-h4616a5c_0.json"]
    listed = base.run("list", "--explicit", "--md5", "-p", prefix)
    with open(repaired["lock"]["explicit"]) as handle:
        assert handle.read() == listed.stdout
    if case == "update":
        # Once the change is repaired, node_manifest records the lock.
        rc, out, recorded = record_manifest(base, tmp_path, lock, marker)
        with open(lock, "rb") as handle:
            assert rc == 0 and recorded["provision"]["env_locks"] == {lock: hashlib.sha256(handle.read()).hexdigest()}, out

    again = run(base, AFTER)
    assert again["changed"] is False and again["drift"] == []


def kill_conda(base, pause_file, *args, mode=""):
    """Runs ``conda ARGS`` until the stand-in's pause, SIGKILLs it there, returns what it had done."""
    proc, reached = base.run_until_paused(pause_file, *args, mode=mode)
    proc.kill()
    assert proc.wait() == -signal.SIGKILL
    return reached


def test_create_killed_outside_the_module_is_replaced(conda_base, tmp_path):
    """Issue 22, item 1. No marker (conda killed by hand, or before this module managed the env), and
    conda writes conda-meta/history last: the prefix it leaves is refused by every conda command,
    ``remove --all`` included. Check mode and state=absent report it instead of failing; state=present
    deletes the folder and creates the env."""
    base = conda_base()
    prefix = os.path.join(base.prefix, "envs", "demo")
    kill_conda(base, str(tmp_path / "pause"), "create", "-y", "-p", prefix, "hello-ansible", "libfoo=1.1")
    assert records(prefix) == ["libfoo-1.1.0-h4616a5c_0.json"] and not os.path.exists(os.path.join(prefix, "conda-meta", "history"))
    refused = base.run("list", "--json", "-p", prefix)
    assert refused.returncode == 1 and json.loads(refused.stdout)["exception_name"] == "DirectoryNotACondaEnvironmentError"
    reason = ("prefix %s is not a conda environment: conda-meta/history is missing (a create that did not finish; "
              "conda refuses every command on it); the folder is deleted and the env created again" % prefix)

    checked = run(base, AFTER, check=True)
    assert checked.get("failed") is not True and checked["changed"] is True and checked["drift"] == [reason], checked
    absent = result_of(module(base, None, check=True, state="absent"))
    assert absent.get("failed") is not True and absent["changed"] is True, absent
    assert records(prefix) == ["libfoo-1.1.0-h4616a5c_0.json"], "check mode changed the prefix"

    repaired = run(base, AFTER)
    assert repaired["changed"] is True and "interrupted" not in repaired and repaired["drift"] == [reason]
    assert repaired["commands"][0] == "rm -rf %s" % prefix and repaired["commands"][1].startswith("conda env create ")
    assert records(prefix) == ["hello-ansible-1.0.0-h4616a5c_0.json", "libfoo-1.1.0-h4616a5c_0.json"]
    assert run(base, AFTER)["changed"] is False

    kill_conda(base, str(tmp_path / "pause2"), "create", "-y", "-p", prefix + "2", "hello-ansible")
    removed = result_of(module(base, None, state="absent", name="demo2"))
    assert removed["changed"] is True and removed["commands"] == ["rm -rf %s2" % prefix] and not os.path.exists(prefix + "2")


def test_unlink_killed_outside_the_module_is_drift_and_replaced(conda_base, tmp_path):
    """Issue 22, item 2. conda renames a package's files to *.c~ before its record; killed in between,
    the package is still listed with its files gone, and conda calls the env complete. The module
    finds the missing files and the backups, reports them in check mode and replaces the env."""
    base = conda_base()
    prefix = os.path.join(base.prefix, "envs", "demo")
    assert run(base, BEFORE)["changed"] is True
    reached = kill_conda(base, str(tmp_path / "pause"), "install", "-y", "-p", prefix, "libfoo=1.1", mode="unlink-files")
    assert reached["partly"] == ["unlink libfoo-1.0.0-h4616a5c_0"] and reached["backups"] == ["share/libfoo/VERSION.c~"]
    listed = json.loads(base.run("list", "--json", "-p", prefix).stdout)
    assert [(p["name"], p["version"]) for p in listed] == [("hello-ansible", "1.0.0"), ("libfoo", "1.0.0")]
    drift = ["package libfoo 1.0.0 has 1 file(s) missing: share/libfoo/VERSION",
             "1 file(s) left as .c~ backups by an interrupted conda transaction: share/libfoo/VERSION.c~; "
             "the env is removed and created again"]

    checked = run(base, BEFORE, check=True)
    assert checked["changed"] is True and checked["drift"] == drift, checked
    assert backups(prefix) == ["share/libfoo/VERSION.c~"], "check mode changed the env"

    repaired = run(base, BEFORE)
    assert repaired["changed"] is True and repaired["drift"] == drift
    assert repaired["commands"][0] == "conda remove -y --all -p %s --json" % prefix
    assert repaired["commands"][-1].startswith("conda env create ")
    assert backups(prefix) == []
    with open(os.path.join(prefix, "share", "libfoo", "VERSION")) as handle:
        assert handle.read().strip() == "1.0.0"
    assert run(base, BEFORE)["changed"] is False


def record_manifest(base, tmp_path, lock, marker, verified_sha256=None):
    """Runs the node_manifest role on this machine with env demo as conda_env publishes it (the part
    node_manifest reads: its lock and in-progress marker, and the lock's sha256 when conda_env's verify
    step proved it in the same run); returns (rc, stdout, manifest)."""
    playbook = tmp_path / "manifest.yml"
    manifest = tmp_path / "aistack.fact"
    published = {"demo": {"name": "demo", "state": "present",
                          "lock": {"explicit": lock, "marker": marker, "sha256": verified_sha256}}}
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "vars": {"conda_env_info": published},
                                     "roles": [{"role": "aistack.gpu_node.node_manifest", "node_manifest_path": str(manifest),
                                                "node_manifest_python": ""}]}]))
    env = dict(base.env, PATH=VENV_BIN + os.pathsep + base.env["PATH"], ANSIBLE_CONFIG=os.path.join(REPO_ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO_ROOT, ".cache", "collections"), ANSIBLE_FORCE_COLOR="false")
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", "ansible_python_interpreter=" + sys.executable, str(playbook)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False, timeout=300)
    recorded = json.loads(manifest.read_text()) if manifest.exists() else None
    return proc.returncode, proc.stdout, recorded


def test_manifest_takes_a_lock_conda_env_verified_in_the_run_as_published(conda_base, tmp_path):
    # What conda_env's verify step proved is not read again: neither the lock nor its marker is looked at.
    base = conda_base()
    lock, marker = (str(tmp_path / ("gone" + suffix)) for suffix in (".explicit.txt", ".in-progress.json"))
    rc, out, recorded = record_manifest(base, tmp_path, lock, marker, verified_sha256="ab" * 32)
    assert rc == 0 and recorded["provision"]["env_locks"] == {lock: "ab" * 32}, out


def test_failed_pip_section_names_pips_reason_and_stays_drift(conda_base):
    """Issue 22, item 4. conda applies the conda part, then the pip section fails; its JSON says only
    "Pip failed" and pip's reason goes to stderr. The failure names pip's reason, and the env, half
    applied, stays drift (its marker) until a run completes."""
    base = conda_base()
    wheels = os.path.join(base.channel_root, "wheels")
    bad = {"channels": ["conda-forge"], "dependencies": [
        "python=3.11", "pip", "libfoo=1.0", {"pip": ["--no-index", "--find-links " + wheels, "six==9.9.9"]}]}
    failed = run(base, bad)
    assert failed.get("failed") is True
    assert "No matching distribution found for six==9.9.9" in failed["msg"], failed["msg"]
    assert "env demo is left unfinished" in failed["msg"]
    prefix = os.path.join(base.prefix, "envs", "demo")
    assert "libfoo-1.0.0-h4616a5c_0.json" in records(prefix), "conda's part was applied"

    checked = run(base, bad, check=True)
    assert checked["changed"] is True and checked["drift"][0].startswith("an earlier change of env demo (conda env create ")

    good = dict(bad, dependencies=bad["dependencies"][:3] + [{"pip": ["--no-index", "--find-links " + wheels, "six==1.17.0"]}])
    repaired = run(base, good)
    assert repaired["changed"] is True and not os.path.exists(prefix + ".in-progress.json")
    assert run(base, good)["changed"] is False


def test_pip_packages_dropped_from_the_spec_are_uninstalled_and_locked(conda_base):
    """Issue 22, also seen: conda env update --prune never removes pip packages, and neither conda lock
    records them. A pip project dropped from the spec is uninstalled; the pip lock records the pip
    part, and a pip package installed by hand is drift against it."""
    base = conda_base()
    wheels = os.path.join(base.channel_root, "wheels")
    with_six = {"channels": ["conda-forge"], "dependencies": [
        "python=3.11", "pip", "libfoo=1.0", {"pip": ["--no-index", "--find-links " + wheels, "six==1.17.0"]}]}
    without_six = dict(with_six, dependencies=with_six["dependencies"][:3])
    prefix = os.path.join(base.prefix, "envs", "demo")
    assert run(base, with_six)["changed"] is True
    with open(prefix + ".pip.txt") as handle:
        assert handle.read() == "six==1.17.0\n"

    checked = run(base, without_six, check=True)
    assert "pip packages not declared are installed: six (conda env update never removes them; " \
           "they are uninstalled)" in checked["drift"]
    assert checked["package_changes"]["removed"] == ["six==1.17.0=pypi_0"]
    updated = run(base, without_six)
    assert updated["changed"] is True and updated["commands"][-1] == "%s/bin/python -m pip uninstall -y six" % prefix
    pip_names = [p["name"] for p in json.loads(base.run("list", "--json", "-p", prefix).stdout) if p["channel"] == "pypi"]
    assert pip_names == [] and run(base, without_six)["changed"] is False

    subprocess.run([os.path.join(prefix, "bin", "python"), "-m", "pip", "install", "-q", "six==1.17.0"],
                   env=base.env, check=True)
    drifted = run(base, without_six, check=True)
    assert drifted["changed"] is True and drifted["drift"] == [
        "pip packages not declared are installed: six (conda env update never removes them; they are uninstalled)",
        "the pip packages differ from the pip lock written after the last change: added six==1.17.0; removed none"]
    repaired = run(base, without_six)
    assert repaired["commands"][-1] == "%s/bin/python -m pip uninstall -y six" % prefix
    assert run(base, without_six)["changed"] is False
