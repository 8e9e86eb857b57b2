"""A stand-in NVIDIA driver and container toolkit CLI for test nodes without a GPU: installed as
``nvidia-smi`` it is the driver gpu_facts reads, installed as ``nvidia-ctk`` (by the stand-in
nvidia-container-toolkit-base package of the container_toolkit scenario) it makes CDI specs and
configures runtimes (a python3 line is put before it where it is installed). Both read the stand-in driver from files the scenario controls:

- ``$AISTACK_STANDIN_DIR/driver_version`` (default /etc/aistack-standin): the driver version;
- ``$AISTACK_STANDIN_DIR/gpus.json``: ``[{"index", "uuid", "name"}, ...]``.

``nvidia-ctk cdi generate --output=PATH`` writes a spec of the shape the real one writes (CDI 0.5,
one device per GPU by index and by UUID and ``all``, the driver's libraries mounted by their
versioned names: tests/unit/plugins/module_utils/test_cdi_spec.py's SPEC), as YAML, or JSON for a
``.json`` path. ``nvidia-ctk runtime configure --runtime=docker|containerd [--config=PATH]`` adds
the nvidia runtime to docker's daemon.json (keeping its other keys) or containerd's config.toml, as
the real one does. Standard library only: it runs on a node's python3.
"""

import json
import os
import sys

LIBDIR = "/usr/lib/x86_64-linux-gnu/"
MOUNT_OPTIONS = ["ro", "nosuid", "nodev", "bind"]
CTK_VERSION = "1.18.0"
CONTAINERD_NVIDIA = """
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
  privileged_without_host_devices = false
  runtime_engine = ""
  runtime_root = ""
  runtime_type = "io.containerd.runc.v2"

  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
    BinaryName = "/usr/bin/nvidia-container-runtime"
"""


def standin_driver(folder=None):
    """``(driver version, GPUs)`` of the stand-in driver."""
    folder = folder or os.environ.get("AISTACK_STANDIN_DIR", "/etc/aistack-standin")
    with open(os.path.join(folder, "driver_version")) as handle:
        version = handle.read().strip()
    with open(os.path.join(folder, "gpus.json")) as handle:
        return version, json.load(handle)


def cdi_spec(driver_version, gpus):
    """The spec nvidia-ctk makes for a driver and its GPUs."""
    def device(name, index):
        return {"name": name, "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia%d" % index}]}}
    devices = [device(str(gpu["index"]), gpu["index"]) for gpu in gpus] + [device(gpu["uuid"], gpu["index"]) for gpu in gpus]
    devices.append({"name": "all", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia%d" % gpu["index"]} for gpu in gpus]}})
    libraries = [LIBDIR + "libcuda.so." + driver_version, LIBDIR + "libnvidia-ml.so." + driver_version]
    mounts = [{"hostPath": path, "containerPath": path, "options": MOUNT_OPTIONS} for path in libraries + ["/usr/bin/nvidia-smi"]]
    return {"cdiVersion": "0.5.0", "kind": "nvidia.com/gpu", "devices": devices,
            "containerEdits": {"env": ["NVIDIA_VISIBLE_DEVICES=void"],
                               "deviceNodes": [{"path": path} for path in ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools")],
                               "mounts": mounts}}


def to_yaml(value, indent=0):
    """Block YAML of dicts, lists and strings (JSON-quoted scalars), as nvidia-ctk's YAML reads."""
    pad = " " * indent
    lines = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append("%s%s:" % (pad, key))
                lines.append(to_yaml(item, indent + 2))
            else:
                lines.append("%s%s: %s" % (pad, key, json.dumps(item)))
    else:
        for item in value:
            if isinstance(item, (dict, list)) and item:
                nested = to_yaml(item, indent + 2)
                lines.append("%s- %s" % (pad, nested[indent + 2:]))
            else:
                lines.append("%s- %s" % (pad, json.dumps(item)))
    return "\n".join(lines)


def option(argv, name, default=None):
    for arg in argv:
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return default


def configure(runtime, path):
    if runtime == "docker":
        path = path or "/etc/docker/daemon.json"
        config = {}
        if os.path.exists(path):
            with open(path) as handle:
                config = json.load(handle)
        config.setdefault("runtimes", {})["nvidia"] = {"args": [], "path": "nvidia-container-runtime"}
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(json.dumps(config, indent=4) + "\n")
    elif runtime == "containerd":
        path = path or "/etc/containerd/config.toml"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a") as handle:
            handle.write(CONTAINERD_NVIDIA)
    else:
        sys.exit("nvidia-ctk (stand-in): unsupported runtime %r" % runtime)
    print("INFO[0000] Wrote updated config to %s" % path)
    print("INFO[0000] It is recommended that %s daemon be restarted." % runtime)


def nvidia_ctk(argv):
    if argv[:1] == ["--version"]:
        print("NVIDIA Container Toolkit CLI version %s (stand-in)" % CTK_VERSION)
    elif argv[:2] == ["cdi", "generate"]:
        output = option(argv, "--output")
        text = json.dumps(cdi_spec(*standin_driver()), indent=2) if output.endswith(".json") else to_yaml(cdi_spec(*standin_driver()))
        with open(output, "w") as handle:
            handle.write(text + "\n")
        print("INFO[0000] Generated CDI spec with version 0.5.0")
    elif argv[:2] == ["runtime", "configure"]:
        configure(option(argv, "--runtime"), option(argv, "--config"))
    else:
        sys.exit("nvidia-ctk (stand-in): unsupported arguments %s" % " ".join(argv))


def nvidia_smi(argv):
    version, gpus = standin_driver()
    fields = option(argv, "--query-gpu")
    if fields is None:
        print("| NVIDIA-SMI %s    Driver Version: %s    CUDA Version: 13.0 |" % (version, version))
        return
    values = {"driver_version": version, "compute_cap": "9.0", "memory.total": "143771", "persistence_mode": "Enabled",
              "mig.mode.current": "Disabled"}
    for gpu in gpus:
        row = dict(values, index=str(gpu["index"]), name=gpu["name"], uuid=gpu["uuid"],
                   **{"pci.bus_id": "00000000:%02X:00.0" % (0x18 + gpu["index"])})
        print(", ".join(row[field] for field in fields.split(",")))


if __name__ == "__main__":
    (nvidia_smi if os.path.basename(sys.argv[0]) == "nvidia-smi" else nvidia_ctk)(sys.argv[1:])
