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


def module(base, spec, check=False, environment=None):
    """``ansible localhost -m aistack.gpu_node.conda_env`` started (not waited for)."""
    args = {"name": "demo", "spec": spec, "conda_prefix": base.prefix, "environment": environment or {}}
    argv = [os.path.join(VENV_BIN, "ansible"), "localhost", "-i", "localhost,", "-c", "local",
            "-e", "ansible_python_interpreter=" + sys.executable, "-m", "aistack.gpu_node.conda_env",
            "-a", json.dumps(args)] + (["--check"] if check else [])
    env = dict(base.env, PATH=VENV_BIN + os.pathsep + base.env["PATH"], ANSIBLE_CONFIG=os.path.join(REPO_ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO_ROOT, ".cache", "collections"),
               ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_FORCE_COLOR="false")
    return subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result_of(proc):
    out, err = proc.communicate(timeout=300)
    try:
        return json.loads(out)["plays"][0]["tasks"][0]["hosts"]["localhost"]
    except (ValueError, KeyError, IndexError):
        pytest.fail("ansible printed no module result (rc %s)\n%s\n%s" % (proc.returncode, out, err))


def run(base, spec, check=False):
    return result_of(module(base, spec, check))


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
    checked = run(base, AFTER, check=True)
    outcome = "it is applied again" if case == "update" else "the env is removed and created again"
    assert checked["changed"] is True and checked["drift"][0] == (
        "an earlier change of env demo (%s) started at %s did not finish; %s" % (left["command"], left["started"], outcome))
    assert (records(prefix), open(marker).read()) == state, "check mode changed the env or the marker"

    repaired = run(base, AFTER)
    assert repaired["changed"] is True and not os.path.exists(marker) and not os.path.exists(work)
    if case == "create":
        assert repaired["commands"][0] == "conda remove -y --all -p %s --json" % prefix
    assert repaired["commands"][-1].startswith("conda env %s " % ("update --prune" if case == "update" else "create"))
    assert records(prefix) == ["hello-ansible-1.0.0-h4616a5c_0.json", "libfoo-1.1.0-h4616a5c_0.json"]
    listed = base.run("list", "--explicit", "--md5", "-p", prefix)
    with open(repaired["lock"]["explicit"]) as handle:
        assert handle.read() == listed.stdout

    again = run(base, AFTER)
    assert again["changed"] is False and again["drift"] == []


def test_create_killed_outside_the_module_is_updated_into_shape(conda_base, tmp_path):
    """No marker (conda killed by hand, or before this module managed the env): a prefix with a
    partial conda-meta cannot be told from a user's env, so it is updated, never wiped."""
    base = conda_base()
    prefix = os.path.join(base.prefix, "envs", "demo")
    pause_file = str(tmp_path / "pause")
    open(pause_file, "w").close()
    create = subprocess.Popen([base.conda, "create", "-y", "-p", prefix, "hello-ansible", "libfoo=1.1"],
                              env=dict(base.env, CONDA_TESTBED_PAUSE_FILE=pause_file),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not os.path.exists(pause_file + ".reached"):
        assert create.poll() is None and time.monotonic() < deadline, "the stand-in never reached the pause"
        time.sleep(0.1)
    create.kill()
    assert create.wait() == -signal.SIGKILL and records(prefix) == ["libfoo-1.1.0-h4616a5c_0.json"]

    repaired = run(base, AFTER)
    assert repaired["changed"] is True and "interrupted" not in repaired
    assert "declared conda packages not installed: hello-ansible" in repaired["drift"]
    assert [c.split(" -f ")[0] for c in repaired["commands"]] == ["conda env update --prune"]
    assert records(prefix) == ["hello-ansible-1.0.0-h4616a5c_0.json", "libfoo-1.1.0-h4616a5c_0.json"]
    assert run(base, AFTER)["changed"] is False


def record_manifest(base, tmp_path, lock, marker):
    """Runs the node_manifest role on this machine with env demo as conda_env publishes it (the part
    node_manifest reads: its lock and in-progress marker); returns (rc, stdout, manifest)."""
    playbook = tmp_path / "manifest.yml"
    manifest = tmp_path / "aistack.fact"
    published = {"demo": {"name": "demo", "state": "present", "lock": {"explicit": lock, "marker": marker}}}
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


def test_manifest_refuses_the_lock_of_an_unfinished_change(conda_base, tmp_path):
    base = conda_base()
    assert run(base, BEFORE)["changed"] is True
    kill_midway(base, AFTER, str(tmp_path / "pause"))
    lock, marker = (os.path.join(base.prefix, "envs", "demo" + suffix) for suffix in (".explicit.txt", ".in-progress.json"))
    assert os.path.exists(lock) and os.path.exists(marker)

    rc, out, recorded = record_manifest(base, tmp_path, lock, marker)
    assert rc == 2 and recorded is None, out
    assert "node_manifest: lock file %s (node_manifest_lock_files) belongs to an env whose last change did not " \
           "finish (%s exists)" % (lock, marker) in " ".join(out.split()), out

    assert run(base, AFTER)["changed"] is True and not os.path.exists(marker)
    rc, out, recorded = record_manifest(base, tmp_path, lock, marker)
    with open(lock, "rb") as handle:
        assert rc == 0 and recorded["provision"]["env_locks"] == {lock: hashlib.sha256(handle.read()).hexdigest()}, out
