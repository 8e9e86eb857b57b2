"""roles/jupyter_kernel/files/env_probe.py, run the way the role runs it (python -c after env_proof.py,
the env prefix, the CUDA home, the proof file and the python as arguments): what it says about
conda-meta, ipykernel on the path, CUDA and the kernel's recorded proof."""

import json
import os
import subprocess
import sys

from conftest import REPO_ROOT

SCRIPT = os.path.join(REPO_ROOT, "roles", "jupyter_kernel", "files", "env_probe.py")
HEAD = os.path.join(REPO_ROOT, "plugins", "module_utils", "probe", "env_proof.py")


def probe(prefix, cuda_home, cwd, pythonpath=None, proof=None, kernel_file=""):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    text = "\n".join(open(path).read() for path in (HEAD, SCRIPT))
    proc = subprocess.run([sys.executable, "-c", text, str(prefix), str(cuda_home), str(proof or cwd / "none.json"),
                           sys.executable, str(kernel_file)], cwd=str(cwd), capture_output=True, text=True, check=True, env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_conda_env_with_ipykernel_on_its_path_and_cuda(tmp_path):
    prefix = tmp_path / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    site = tmp_path / "site"
    (site / "ipykernel").mkdir(parents=True)
    (site / "ipykernel" / "__init__.py").write_text("raise ImportError('found, never imported')\n")
    cuda = tmp_path / "cuda"
    cuda.mkdir()
    found = probe(prefix, cuda, tmp_path, pythonpath=site)
    assert dict((key, found[key]) for key in ("conda", "ipykernel", "cuda_home")) == {
        "conda": True, "ipykernel": True, "cuda_home": True}
    assert found["proof"] is None and len(found["env_state"]) == 64


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


def test_the_proof_recorded_on_this_state_is_handed_over_and_a_new_package_voids_it(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    state = probe(tmp_path, tmp_path, tmp_path, pythonpath=site)["env_state"]
    proof = tmp_path / "proof.json"
    proof.write_text(json.dumps({"python": sys.executable, "env_state": state, "ran": {"cuda_available": True}}))
    assert probe(tmp_path, tmp_path, tmp_path, pythonpath=site, proof=proof)["proof"]["ran"] == {"cuda_available": True}
    (site / "numpy-2.0.dist-info").mkdir()
    (site / "numpy-2.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 2.0\n")
    assert probe(tmp_path, tmp_path, tmp_path, pythonpath=site, proof=proof)["proof"] is None


def test_kernel_json_is_read_with_its_mode_and_only_as_a_regular_file(tmp_path):
    kernel = tmp_path / "kernels" / "torch" / "kernel.json"
    kernel.parent.mkdir(parents=True)
    kernel.write_text('{"argv": ["python"]}\n')
    kernel.chmod(0o640)
    assert probe(tmp_path, tmp_path, tmp_path, kernel_file=kernel)["kernel_file"] == {"text": '{"argv": ["python"]}\n', "mode": 0o640}
    # Not asked (a user kernel), missing, or no regular file: no reading, the module looks itself.
    assert probe(tmp_path, tmp_path, tmp_path)["kernel_file"] is None
    assert probe(tmp_path, tmp_path, tmp_path, kernel_file=tmp_path / "none" / "kernel.json")["kernel_file"] is None
    link = tmp_path / "link.json"
    link.symlink_to(kernel)
    assert probe(tmp_path, tmp_path, tmp_path, kernel_file=link)["kernel_file"] is None
