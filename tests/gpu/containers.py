"""The containers step of the GPU scenario (issue 38): NVIDIA's ``nvidia-ctk`` (carried, built by
``make gpu-carry NVIDIA_CTK_SOURCE=...``) generates a CDI spec from this host's real driver; the
collection's judge (plugins/module_utils/decide/cdi_spec.py) reads it as the container_toolkit role's
drift check does, against the driver and GPUs nvidia-smi reports, and once more against a driver one
update later (the spec must then read stale). Then a container is started through the spec with the
first OCI runtime found on the host, running the provisioned env's python, which must see the GPU; with
none, the result says exactly what was looked for.

Writes ``--out`` (JSON) and the spec under ``--spec-dir``; exit status 1 when the spec does not fit this
host or a container run that could start failed.
"""

import argparse
import glob
import json
import lzma
import os
import shutil
import subprocess
import sys

import yaml

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import cdi_spec

RUNTIMES = ("podman", "docker", "nerdctl", "crun", "runc", "nvidia-container-runtime")
ENV_PYTHON = "/opt/conda/envs/torch/bin/python"
SEES_THE_GPU = "import torch; print(torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.get_device_name(0))"


def run(args, **kwargs):
    proc = subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)
    return proc.returncode, proc.stdout, proc.stderr


def unpack_nvidia_ctk(carry, bin_dir):
    packed = sorted(glob.glob(os.path.join(carry, "nvidia-ctk-*.xz")))
    if not packed:
        sys.exit("containers: no nvidia-ctk-*.xz in %s (make gpu-carry NVIDIA_CTK_SOURCE=...)" % carry)
    os.makedirs(bin_dir, exist_ok=True)
    binary = os.path.join(bin_dir, "nvidia-ctk")
    with lzma.open(packed[-1]) as source, open(binary, "wb") as target:
        shutil.copyfileobj(source, target)
    os.chmod(binary, 0o755)
    return binary


def host_gpus():
    """(driver version, [{index, uuid}]) as nvidia-smi reports them: the judge's inputs, read apart from the spec."""
    rc, out, err = run(["nvidia-smi", "--query-gpu=index,uuid,driver_version", "--format=csv,noheader"])
    if rc != 0:
        sys.exit("containers: nvidia-smi failed: %s" % err.strip())
    rows = [[cell.strip() for cell in line.split(",")] for line in out.splitlines() if line.strip()]
    return rows[0][2], [{"index": int(index), "uuid": uuid} for index, uuid, _driver in rows]


def one_update_later(version):
    """580.159.04 -> 580.159.05: the last part one higher, its width kept."""
    parts = version.split(".")
    return ".".join(parts[:-1] + [str(int(parts[-1]) + 1).zfill(len(parts[-1]))])


def missing_on_host(paths):
    return [path for path in paths if not os.path.exists(path)]


def container_run(spec_dir):
    """The first runtime on PATH starts the env's python through the spec; without one, what was looked for."""
    found = [name for name in RUNTIMES if shutil.which(name)]
    if not found:
        return {"status": "not run", "runtimes_found": [],
                "why": "no OCI runtime on this host: none of %s on PATH, and none carried" % ", ".join(RUNTIMES)}
    if "podman" not in found:
        return {"status": "not run", "runtimes_found": found,
                "why": "only %s here: a CDI-aware engine (podman) applies a spec; none of these was driven by this step"
                       % ", ".join(found)}
    # The host's own root, read-only with an overlay, is the container's root: no image to pull offline.
    args = ["podman", "run", "--rm", "--cdi-spec-dir", spec_dir, "--device", "nvidia.com/gpu=all",
            "--rootfs", "/:O", ENV_PYTHON, "-c", SEES_THE_GPU]
    rc, out, err = run(args)
    return {"status": "passed" if rc == 0 and out.startswith("True") else "failed", "runtimes_found": found,
            "command": " ".join(args), "rc": rc, "stdout": out.strip()[-2000:], "stderr": err.strip()[-2000:]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--carry", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--spec-dir", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    nvidia_ctk = unpack_nvidia_ctk(args.carry, os.path.join(args.work, "bin"))
    _rc, version, _err = run([nvidia_ctk, "--version"])
    os.makedirs(args.spec_dir, exist_ok=True)
    spec_path = os.path.join(args.spec_dir, "nvidia.yaml")
    rc, out, err = run([nvidia_ctk, "cdi", "generate", "--output", spec_path])
    result = {"nvidia_ctk": version.strip().splitlines()[0] if version.strip() else None,
              "generate": {"rc": rc, "log": (out + err).strip().splitlines()[-40:]}}
    if rc != 0 or not os.path.exists(spec_path):
        result["verdict"] = "nvidia-ctk cdi generate failed (exit status %d)" % rc
        write(args.out, result)
        return 1
    with open(spec_path) as handle:
        summary = cdi_spec.summary(yaml.safe_load(handle))
    driver, gpus = host_gpus()
    later = one_update_later(driver)
    result.update(
        spec=dict((key, summary[key]) for key in ("kind", "cdi_version", "devices", "gpu_device_nodes", "device_nodes",
                                                  "driver_versions", "problems")),
        libraries=len(summary["libraries"]),
        missing_on_host=missing_on_host(summary["device_nodes"] + summary["libraries"]),
        host={"driver_version": driver, "gpus": gpus},
        staleness=cdi_spec.staleness(summary, driver, gpus),
        staleness_after_driver_update={"driver_version": later, "reasons": cdi_spec.staleness(summary, later, gpus)},
        run=container_run(args.spec_dir),
    )
    fits = not result["staleness"] and not result["missing_on_host"] and result["staleness_after_driver_update"]["reasons"]
    result["verdict"] = "the spec fits this host" if fits else "the spec does NOT fit this host"
    write(args.out, result)
    return 0 if fits and result["run"]["status"] != "failed" else 1


def write(path, result):
    with open(path, "w") as handle:
        json.dump(result, handle, indent=1, sort_keys=True)
    print(json.dumps(result, indent=1, sort_keys=True))


if __name__ == "__main__":
    sys.exit(main())
