"""tests/gpu/containers.py, the GPU scenario's containers step, against stand-ins for nvidia-ctk and nvidia-smi
(the real ones run on the GPU host): the spec it makes is judged, stale against a driver update, and the
container run says what stopped it."""

import importlib.util
import json
import lzma
import os

import yaml

from conftest import REPO_ROOT

SPEC = os.path.join(REPO_ROOT, "tests", "unit", "plugins", "module_utils", "test_cdi_spec.py")
_spec = importlib.util.spec_from_file_location("containers_step", os.path.join(REPO_ROOT, "tests", "gpu", "containers.py"))
containers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(containers)
_cdi = importlib.util.spec_from_file_location("cdi_spec_cases", SPEC)
cdi_cases = importlib.util.module_from_spec(_cdi)
_cdi.loader.exec_module(cdi_cases)


def stand_ins(tmp_path, monkeypatch, driver="580.159.04", spec=None):
    """A carry with a packed stand-in nvidia-ctk that writes ``spec``, and an nvidia-smi reporting ``driver``."""
    carry, bin_dir = tmp_path / "carry", tmp_path / "bin"
    carry.mkdir()
    bin_dir.mkdir()
    spec_file = tmp_path / "made.yaml"
    spec_file.write_text(yaml.safe_dump(spec or cdi_cases.SPEC))
    script = ('#!/bin/sh\ncase "$1" in --version) echo "NVIDIA Container Toolkit CLI version 1.17.8";;\n'
              'cdi) /bin/cp %s "$4";; esac\n' % spec_file)
    with lzma.open(str(carry / "nvidia-ctk-1.17.8.xz"), "wb") as packed:
        packed.write(script.encode())
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho '0, %s, %s'\n" % (cdi_cases.UUID, driver))
    smi.chmod(0o755)
    # Only the stand-ins on PATH: no container runtime this machine may have.
    monkeypatch.setenv("PATH", str(bin_dir))
    # The spec's paths are the GPU host's, not this machine's.
    monkeypatch.setattr(containers, "missing_on_host", lambda paths: [])
    return carry


def step(tmp_path, carry):
    out = tmp_path / "containers.json"
    rc = containers.main(["--carry", str(carry), "--work", str(tmp_path / "work"), "--spec-dir", str(tmp_path / "cdi"),
                          "--out", str(out)])
    return rc, json.loads(out.read_text())


def test_a_spec_made_for_the_host_fits_and_reads_stale_one_driver_update_later(tmp_path, monkeypatch):
    rc, result = step(tmp_path, stand_ins(tmp_path, monkeypatch))
    assert rc == 0 and result["verdict"] == "the spec fits this host", result
    assert result["nvidia_ctk"] == "NVIDIA Container Toolkit CLI version 1.17.8"
    assert result["spec"]["driver_versions"] == ["580.159.04"] and result["spec"]["gpu_device_nodes"] == ["/dev/nvidia0"]
    assert result["staleness_after_driver_update"] == {
        "driver_version": "580.159.05", "reasons": ["the CDI spec was made for driver 580.159.04, the node runs 580.159.05"]}
    assert result["run"]["status"] == "not run" and result["run"]["why"].startswith("no OCI runtime on this host")


def test_a_spec_for_another_driver_fails_the_step(tmp_path, monkeypatch):
    rc, result = step(tmp_path, stand_ins(tmp_path, monkeypatch, driver="580.200.01"))
    assert rc == 1 and result["verdict"] == "the spec does NOT fit this host"
    assert result["staleness"] == ["the CDI spec was made for driver 580.159.04, the node runs 580.200.01"]


def test_one_update_later_keeps_the_width_of_the_last_part():
    assert containers.one_update_later("580.159.04") == "580.159.05"
    assert containers.one_update_later("595.71.09") == "595.71.10" and containers.one_update_later("560.35") == "560.36"
