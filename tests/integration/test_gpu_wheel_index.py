"""tests/gpu/wheel_index.py: installed distributions repacked into wheels that pip installs again."""

import os
import subprocess
import sys

from conftest import REPO_ROOT

TOOL = os.path.join(REPO_ROOT, "tests", "gpu", "wheel_index.py")


def test_repacked_closure_installs_from_the_index_and_imports(tmp_path):
    index = tmp_path / "cu130"
    # ansible-core requires jinja2, PyYAML (compiled), packaging, resolvelib, cryptography ...: a real closure.
    out = subprocess.run([sys.executable, TOOL, "repack", "--out", str(index), "ansible-core"],
                         capture_output=True, text=True, check=True).stdout
    assert "ansible-core" in out and "PyYAML" in out and "projects indexed" in out
    assert (index / "pyyaml" / "index.html").read_text().count("href=") == 1
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-compile", "--isolated", "--index-url", "file://%s" % index,
                    "--target", str(target), "ansible-core"], check=True, capture_output=True)
    code = "import ansible.release, yaml._yaml; print(ansible.release.__version__)"
    version = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(target)),
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version == subprocess.run([sys.executable, "-c", "import ansible.release; print(ansible.release.__version__)"],
                                     capture_output=True, text=True, check=True).stdout.strip()
    # The recorded hashes travel: pip wrote a RECORD with each file's sha256.
    records = [p / "RECORD" for p in target.iterdir() if p.name.lower().startswith("pyyaml-") and p.name.endswith(".dist-info")]
    assert records and "sha256=" in records[0].read_text()


def test_a_missing_requirement_is_named(tmp_path):
    proc = subprocess.run([sys.executable, TOOL, "repack", "--out", str(tmp_path), "no-such-dist-anywhere"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0 and "no-such-dist-anywhere is required but not installed" in proc.stderr
