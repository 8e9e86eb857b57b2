"""tools/aistack-drift run for real on this machine, and its systemd units."""

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from conftest import REPO_ROOT, run

DRIFT = os.path.join(REPO_ROOT, "tools", "aistack-drift")
PYTHON = os.path.join(REPO_ROOT, ".venv", "bin", "python")


def test_preflight_only_is_clean_and_exits_0(tmp_path):
    # conda's preflight needs an installer source (the network or the conda test bed).
    proc = run([PYTHON, DRIFT, "-i", "inventories/local/hosts.yml", "-t", "preflight", "--skip-tags", "conda",
                "-o", str(tmp_path)])
    assert proc.stdout.startswith("aistack-drift: clean: 1 host(s), 0 with drift")
    report = json.loads((tmp_path / "drift.json").read_text())
    assert report["hosts"]["localhost"]["status"] == "clean"
    assert (report["run"]["tags"], report["run"]["skip_tags"]) == (["preflight"], ["conda"])
    assert ET.parse(str(tmp_path / "drift.junit.xml")).getroot().find("testsuite").get("failures") == "0"


def test_bad_input_exits_1_with_the_named_error(tmp_path):
    proc = run([PYTHON, DRIFT, "-i", "inventories/local/hosts.yml", "-t", "drivers", "-o", str(tmp_path)], check=False)
    assert proc.returncode == 1
    assert "Unknown tag(s) drivers" in proc.stdout


def test_missing_inventory_exits_1(tmp_path):
    proc = run([PYTHON, DRIFT, "-i", str(tmp_path / "nope"), "-o", str(tmp_path)], check=False)
    assert proc.returncode == 1 and "does not exist" in proc.stderr


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_systemd_units_verify(tmp_path):
    for name in ("aistack-drift.service", "aistack-drift.timer"):
        shutil.copy(os.path.join(REPO_ROOT, "tools", "systemd", name), str(tmp_path))
    proc = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "aistack-drift.timer"),
                           str(tmp_path / "aistack-drift.service")], capture_output=True, text=True, check=False)
    # The only complaint allowed: the controller venv is not installed on this machine.
    problems = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert problems == ["aistack-drift.service: Command /opt/aistack/venv/bin/python is not executable: "
                        "No such file or directory"]
