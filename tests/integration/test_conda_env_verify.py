"""The conda_env role's verify step against the env the module just read: a run that changes an env
proves its new lock (conda's package list, the lock, no unfinished change); a run that finds nothing
to change has made that very comparison in the module, so the step does not run again; a lock edited
by hand is drift, the env is converged again and its new lock verified."""

import json
import os
import subprocess
import sys

from conftest import REPO_ROOT, VENV_BIN, recap

SPEC = {"channels": ["conda-forge"], "dependencies": ["hello-ansible", "libfoo=1.0"]}
VERIFY_TASK = "TASK [aistack.gpu_node.conda_env : Read the installed package list of each environment]"


def converge(base, tmp_path):
    playbook = tmp_path / "envs.yml"
    playbook.write_text(json.dumps([{
        "hosts": "localhost", "gather_facts": False,
        "roles": [{"role": "aistack.gpu_node.conda_env", "conda_env_conda_prefix": base.prefix,
                   "conda_env_envs": [{"name": "demo", "spec": SPEC}]}]}]))
    env = dict(base.env, PATH=VENV_BIN + os.pathsep + base.env["PATH"], ANSIBLE_CONFIG=os.path.join(REPO_ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO_ROOT, ".cache", "collections"), ANSIBLE_FORCE_COLOR="false")
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", "ansible_python_interpreter=" + sys.executable, str(playbook)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr
    return recap(proc.stdout)["localhost"], proc.stdout


def test_verify_runs_after_a_change_and_not_after_the_modules_own_comparison(conda_base, tmp_path):
    base = conda_base()
    counts, out = converge(base, tmp_path)
    assert counts["changed"] >= 1 and VERIFY_TASK in out, out

    counts, out = converge(base, tmp_path)
    assert counts["changed"] == 0 and VERIFY_TASK not in out, out

    lock = os.path.join(base.prefix, "envs", "demo.explicit.txt")
    with open(lock, "a") as handle:
        handle.write("https://conda.anaconda.org/conda-forge/noarch/edited-by-hand-1.0-0.conda#0123\n")
    counts, out = converge(base, tmp_path)
    assert counts["changed"] >= 1 and VERIFY_TASK in out, out
    assert "the installed packages differ from the lock written after the last change" in out, out
