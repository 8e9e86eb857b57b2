"""tests/gpu/containers.py, the GPU scenario's containers step, against stand-ins for nvidia-ctk and nvidia-smi
(the real ones run on the GPU host): the spec it makes is judged, stale against a driver update, and the
container run says what stopped it."""

import importlib.util
import io
import json
import lzma
import os
import tarfile

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


# A real recording (nvidia-ctk cdi generate on the H100 host), kept apart from the results folder that each GPU run rewrites.
RECORDED_SPEC = os.path.join(REPO_ROOT, "tests", "unit", "fixtures", "gpu", "nvidia-ctk-cdi-generate-h100.yaml")
# The H100 host's device numbers as a Linux driver gives them (nvidia-uvm's major is dynamic).
NUMBERS = {"/dev/nvidia-uvm": {"type": "c", "major": 510, "minor": 0, "fileMode": 0o666},
           "/dev/nvidia-uvm-tools": {"type": "c", "major": 510, "minor": 1, "fileMode": 0o666},
           "/dev/nvidiactl": {"type": "c", "major": 195, "minor": 255, "fileMode": 0o666},
           "/dev/nvidia0": {"type": "c", "major": 195, "minor": 0, "fileMode": 0o666}}


def recorded_spec():
    with open(RECORDED_SPEC) as handle:
        return yaml.safe_load(handle)


def test_the_bundle_config_applies_the_recorded_spec_for_every_gpu():
    spec = recorded_spec()
    config = containers.oci_config(spec, "nvidia.com/gpu=all", ["/opt/conda/envs/torch/bin/python", "-c", "1"], NUMBERS,
                                   cdi_hook="/var/tmp/aistack-gpu/bin/nvidia-ctk")
    assert config["process"]["args"] == ["/opt/conda/envs/torch/bin/python", "-c", "1"]
    assert "NVIDIA_VISIBLE_DEVICES=void" in config["process"]["env"]
    # The spec-wide nodes, then the device's, each with the host's numbers and allowed in the device cgroup.
    assert [(d["path"], d["major"], d["minor"]) for d in config["linux"]["devices"]] == [
        ("/dev/nvidia-uvm", 510, 0), ("/dev/nvidia-uvm-tools", 510, 1), ("/dev/nvidiactl", 195, 255), ("/dev/nvidia0", 195, 0)]
    assert config["linux"]["resources"]["devices"][0] == {"allow": False, "access": "rwm"}
    assert {"allow": True, "type": "c", "major": 195, "minor": 0, "access": "rwm"} in config["linux"]["resources"]["devices"]
    # Every mount the spec names, as a bind with its options; the base's own come first.
    binds = [m for m in config["mounts"] if m["type"] == "bind"]
    assert len(binds) == len(spec["containerEdits"]["mounts"]) == 35
    assert {"destination": "/etc/vulkan/icd.d/nvidia_icd.json", "source": "/usr/share/vulkan/icd.d/nvidia_icd.json",
            "type": "bind", "options": ["ro", "nosuid", "nodev", "bind"]} in binds
    assert config["mounts"][0]["destination"] == "/proc"
    # The spec's four nvidia-cdi-hook hooks, run by the carried nvidia-ctk's `hook` command, their env kept.
    hooks = config["hooks"]["createContainer"]
    assert [hook["args"][:3] for hook in hooks] == [["nvidia-ctk", "hook", "create-symlinks"]] * 2 + [
        ["nvidia-ctk", "hook", "enable-cuda-compat"], ["nvidia-ctk", "hook", "update-ldcache"]]
    assert {hook["path"] for hook in hooks} == {"/var/tmp/aistack-gpu/bin/nvidia-ctk"}
    assert hooks[3]["args"][3:] == ["--folder", "/usr/local/nvidia/lib64"] and hooks[3]["env"] == ["NVIDIA_CTK_DEBUG=false"]
    assert "uidMappings" not in config["linux"] and config["root"] == {"path": "rootfs", "readonly": False}
    # The base is not changed by a config made from it.
    assert "devices" not in containers.BASE_CONFIG["linux"] and "args" not in containers.BASE_CONFIG["process"]


def test_the_bundle_config_in_a_user_namespace_without_hooks():
    config = containers.oci_config(recorded_spec(), "nvidia.com/gpu=0", ["python"], NUMBERS, hooks=False,
                                   user_namespace=(1000, 1001), readonly=True)
    assert "hooks" not in config and config["root"]["readonly"] is True
    assert {"type": "user"} in config["linux"]["namespaces"]
    assert config["linux"]["uidMappings"] == [{"containerID": 0, "hostID": 1000, "size": 1}]
    assert config["linux"]["gidMappings"] == [{"containerID": 0, "hostID": 1001, "size": 1}]
    # Without the cdi_hook, the spec's hooks keep the path it names.
    kept = containers.oci_config(recorded_spec(), "nvidia.com/gpu=0", ["python"], NUMBERS)
    assert {hook["path"] for hook in kept["hooks"]["createContainer"]} == {"/usr/bin/nvidia-cdi-hook"}


def test_a_device_the_spec_does_not_name_is_refused_naming_those_it_does():
    spec = recorded_spec()
    try:
        containers.oci_config(spec, "nvidia.com/gpu=1", ["python"], NUMBERS)
    except ValueError as error:
        assert str(error) == "the spec has no device 1 (it has 0, GPU-c885ff9f-3ad7-6ca1-36ae-b5aa48ee0e24, all)"
    else:
        raise AssertionError("a device the spec lacks was accepted")
    try:
        containers.container_edits(spec, "amd.com/gpu=all")
    except ValueError as error:
        assert str(error) == "the spec is for kind nvidia.com/gpu, not amd.com/gpu"
    else:
        raise AssertionError("another kind was accepted")


def test_device_nodes_come_with_the_host_numbers(tmp_path):
    assert containers.device_nodes(recorded_spec(), "nvidia.com/gpu=all") == [
        "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidiactl", "/dev/nvidia0"]
    null = os.stat("/dev/null")
    assert containers.host_device_numbers(["/dev/null"]) == {"/dev/null": {
        "type": "c", "major": os.major(null.st_rdev), "minor": os.minor(null.st_rdev), "fileMode": null.st_mode & 0o7777}}


def test_the_carried_crun_runs_only_where_the_host_has_no_runtime():
    carried = ("/work/crun/bin/crun", "/work/crun/lib")
    assert containers.pick_runtime([], carried) == "carried crun"
    assert containers.pick_runtime([], None) is None
    assert containers.pick_runtime(["podman", "crun"], carried) == "podman"
    # A runtime the step does not drive is named, and the carried one is not used beside it.
    assert containers.pick_runtime(["runc"], carried) is None


def test_the_step_starts_the_carried_crun_with_the_spec_it_made(tmp_path, monkeypatch):
    carry = stand_ins(tmp_path, monkeypatch)
    with lzma.open(str(carry / "crun-1.8.1.tar.xz"), "wb") as packed:
        packed.write(tar_of({"bin/crun": b"#!/bin/sh\n", "lib/libyajl.so.2": b""}))
    started = []

    def carried_crun_run(spec, device, args, carried, bundle, cdi_hook):
        started.append((spec["kind"], device, args[0], os.path.exists(carried[0]), os.path.isdir(carried[1]), cdi_hook))
        return {"runtime": "carried crun", "status": "passed", "attempts": []}
    monkeypatch.setattr(containers, "carried_crun_run", carried_crun_run)
    monkeypatch.setattr(containers, "ENV_PYTHON", str(tmp_path / "no-env" / "python"))
    rc, result = step(tmp_path, carry)
    # No env made here: the host's torch environment's python runs in the container.
    assert rc == 0 and result["run"] == {"runtime": "carried crun", "status": "passed", "attempts": [], "runtimes_found": [],
                                         "python": containers.TORCH_PYTHON}
    assert started == [("nvidia.com/gpu", "nvidia.com/gpu=all", containers.TORCH_PYTHON, True, True,
                        str(tmp_path / "work" / "bin" / "nvidia-ctk"))]
    # With a runtime on the host, the carried crun stays unused.
    (tmp_path / "bin" / "runc").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "runc").chmod(0o755)
    started.clear()
    rc, result = step(tmp_path, carry)
    assert not started and result["run"]["status"] == "not run" and result["run"]["runtimes_found"] == ["runc"]


def tar_of(files):
    """A tar of ``files`` ({name: bytes}), as make gpu-carry packs crun."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_a_command_that_hangs_is_stopped_with_what_it_wrote():
    rc, out, err = containers.run(["sh", "-c", "echo started; sleep 5"], timeout=0.5)
    assert rc == 124 and out == "started\n" and err.endswith("(stopped after 0.5 s)")


def stand_in_crun(tmp_path):
    crun = tmp_path / "crun" / "bin" / "crun"
    crun.parent.mkdir(parents=True)
    (tmp_path / "crun" / "lib").mkdir()
    crun.write_text('#!/bin/sh\ncase "$1" in --version) echo "crun version 1.8.1";; fail) echo "mount: EPERM" >&2; exit 1;;'
                    ' pass) echo "True 1 NVIDIA H100 80GB HBM3";; esac\n')
    crun.chmod(0o755)
    return str(crun), str(tmp_path / "crun" / "lib")


def test_the_carried_crun_is_tried_until_an_attempt_passes_each_kept(tmp_path, monkeypatch):
    carried = stand_in_crun(tmp_path)
    monkeypatch.setattr(containers, "crun_attempts", lambda bundle, crun, state: [
        ("first", {}, "rootfs", [crun, "fail"]), ("second", {"hooks": False}, "rootfs", [crun, "pass"]),
        ("third", {}, "rootfs", [crun, "fail"])])
    monkeypatch.setattr(containers, "host_device_numbers", lambda paths: NUMBERS)
    bundle = str(tmp_path / "bundle")
    result = containers.carried_crun_run(recorded_spec(), "nvidia.com/gpu=all", ["python"], carried, bundle, "/bin/nvidia-ctk")
    assert result["status"] == "passed" and result["crun"] == ["crun version 1.8.1"] and result["stdout"] == "True 1 NVIDIA H100 80GB HBM3"
    assert [(a["attempt"], a["rc"], a["stderr"], a["hooks"]) for a in result["attempts"]] == [
        ("first", 1, "mount: EPERM", ["createContainer"]), ("second", 0, "", [])]
    # The bundle holds the config of the attempt that ran last.
    with open(os.path.join(bundle, "config.json")) as handle:
        assert "hooks" not in json.load(handle)


def test_a_device_node_the_host_lacks_stops_the_carried_run_naming_it(tmp_path):
    spec = {"kind": "nvidia.com/gpu", "devices": [{"name": "all", "containerEdits": {"deviceNodes": [{"path": "/dev/aistack-none"}]}}]}
    result = containers.carried_crun_run(spec, "nvidia.com/gpu=all", ["python"], stand_in_crun(tmp_path), str(tmp_path / "b"), None)
    assert result["status"] == "failed" and result["attempts"] == []
    assert result["why"] == "a device node the spec names is not on the host: [Errno 2] No such file or directory: '/dev/aistack-none'"
