"""roles/jupyter_kernel/files/env_probe.py, run the way the role runs it (python -c, the env prefix
and the CUDA home as arguments): what it says about conda-meta, ipykernel on the path and CUDA."""

import json
import os
import subprocess
import sys

from conftest import REPO_ROOT

SCRIPT = os.path.join(REPO_ROOT, "roles", "jupyter_kernel", "files", "env_probe.py")


def probe(prefix, cuda_home, cwd, pythonpath=None):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    with open(SCRIPT) as handle:
        text = handle.read()
    proc = subprocess.run([sys.executable, "-c", text, str(prefix), str(cuda_home)], cwd=str(cwd),
                          capture_output=True, text=True, check=True, env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_conda_env_with_ipykernel_on_its_path_and_cuda(tmp_path):
    prefix = tmp_path / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    site = tmp_path / "site"
    (site / "ipykernel").mkdir(parents=True)
    (site / "ipykernel" / "__init__.py").write_text("raise ImportError('found, never imported')\n")
    cuda = tmp_path / "cuda"
    cuda.mkdir()
    assert probe(prefix, cuda, tmp_path, pythonpath=site) == {"conda": True, "ipykernel": True, "cuda_home": True}


def test_venv_without_ipykernel_ignores_the_working_directory(tmp_path):
    prefix = tmp_path / "venv"
    prefix.mkdir()
    # An ipykernel folder where the command runs is not on the kernel's path.
    (tmp_path / "ipykernel").mkdir()
    (tmp_path / "ipykernel" / "__init__.py").write_text("")
    found = probe(prefix, tmp_path / "no-cuda", tmp_path)
    assert found["conda"] is False and found["cuda_home"] is False
    # The test tooling has no ipykernel of its own.
    assert found["ipykernel"] is False
