"""The containers step of the GPU scenario (issue 38): NVIDIA's ``nvidia-ctk`` (carried, built by
``make gpu-carry NVIDIA_CTK_SOURCE=...``) generates a CDI spec from this host's real driver; the
collection's judge (plugins/module_utils/decide/cdi_spec.py) reads it as the container_toolkit role's
drift check does, against the driver and GPUs nvidia-smi reports, and once more against a driver one
update later (the spec must then read stale). Then a container is started through the spec, running
the provisioned env's python, which must see the GPU: with podman where the host has it; where the host
has no runtime at all, with the carried crun (``make gpu-carry``: Debian 12's, with the libraries it
links), given an OCI bundle whose ``config.json`` this step writes from the spec's container edits
(``oci_config``: what podman's CDI support does). Its root is the host's own root, as an overlay with a
throw-away upper layer (so the spec's hooks write nowhere on the host), else read-only in a user namespace
without the hooks; each attempt's command, exit status and output are kept. With a runtime other than
podman, or none and none carried, the result says what was found.

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
import stat
import sys
import tarfile

import yaml

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import cdi_spec

RUNTIMES = ("podman", "docker", "nerdctl", "crun", "runc", "nvidia-container-runtime")
DEVICE = "nvidia.com/gpu=all"
# A container that hangs (a hook, the GPU) must leave time for the steps after this one: three attempts
# stay within 6 minutes of a lent host's 10 (torch's import and CUDA's start take seconds).
CONTAINER_TIMEOUT = 120
# The spec's hooks name NVIDIA's nvidia-cdi-hook, which the host lacks: the carried nvidia-ctk runs the
# same hooks as `nvidia-ctk hook ...`.
CDI_HOOK = "nvidia-cdi-hook"
CONTAINER_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# `crun spec`'s default configuration, less the terminal, the cgroup mount (no cgroup namespace asked) and
# devpts' gid=5 (as `crun spec --rootless` leaves it: a user namespace maps no tty group).
BASE_CONFIG = {
    "ociVersion": "1.0.0",
    "process": {"terminal": False, "user": {"uid": 0, "gid": 0}, "cwd": "/", "noNewPrivileges": True,
                "capabilities": dict((kind, ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]) for kind in
                                     ("bounding", "effective", "permitted", "ambient")),
                "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}]},
    "root": {"path": "rootfs", "readonly": False},
    "hostname": "aistack-cdi",
    "mounts": [
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
        {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
         "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
        {"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
        {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue", "options": ["nosuid", "noexec", "nodev"]},
        {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
    ],
    "linux": {"resources": {"devices": [{"allow": False, "access": "rwm"}]},
              "namespaces": [{"type": name} for name in ("pid", "network", "ipc", "uts", "mount")],
              "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                              "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"],
              "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]},
}
ENV_PYTHON = "/opt/conda/envs/torch/bin/python"
# Before a converge made the env (the step run alone), the host's own torch environment's python.
TORCH_PYTHON = os.environ.get("GPU_TORCH_PYTHON", "/opt/torch/.venv/bin/python3")
SEES_THE_GPU = "import torch; print(torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.get_device_name(0))"


def run(args, **kwargs):
    try:
        proc = subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)
    except subprocess.TimeoutExpired as expired:
        # What it wrote until then (bytes here, whatever text= said), and the exit status timeout(1) gives.
        out, err = (part.decode(errors="replace") if isinstance(part, bytes) else part or "" for part in (expired.stdout, expired.stderr))
        return 124, out, err + "\n(stopped after %g s)" % expired.timeout
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


def container_edits(spec, device):
    """The edits the spec makes for ``device`` (``kind=name``): the spec-wide ones, then the device's."""
    kind, _equals, name = device.partition("=")
    if spec.get("kind") != kind:
        raise ValueError("the spec is for kind %s, not %s" % (spec.get("kind"), kind))
    named = [entry for entry in spec.get("devices") or [] if entry.get("name") == name]
    if not named:
        raise ValueError("the spec has no device %s (it has %s)" % (
            name, ", ".join(str(entry.get("name")) for entry in spec.get("devices") or [])))
    return [spec.get("containerEdits") or {}, named[0].get("containerEdits") or {}]


def device_nodes(spec, device):
    """The paths of the device nodes the spec gives ``device``, in order."""
    return [node["path"] for edits in container_edits(spec, device) for node in edits.get("deviceNodes") or []]


def host_device_numbers(paths):
    """{path: {type, major, minor, fileMode}} of the host's device nodes, as the spec leaves them to be read."""
    numbers = {}
    for path in paths:
        info = os.stat(path)
        numbers[path] = {"type": "c" if stat.S_ISCHR(info.st_mode) else "b", "major": os.major(info.st_rdev),
                         "minor": os.minor(info.st_rdev), "fileMode": stat.S_IMODE(info.st_mode)}
    return numbers


def oci_config(spec, device, args, numbers, cdi_hook=None, hooks=True, user_namespace=None, readonly=False):
    """An OCI runtime config (BASE_CONFIG) with the CDI spec's edits for ``device`` applied, as a CDI-aware
    engine applies them: env, device nodes (``numbers``: their type, major and minor on the host, as
    ``host_device_numbers`` reads them) allowed in the device cgroup, mounts and hooks.
    ``cdi_hook``: an nvidia-ctk that runs the spec's nvidia-cdi-hook hooks; ``hooks=False`` leaves the hooks
    out; ``user_namespace``: the host uid and gid mapped to root in a user namespace of the container's own."""
    config = json.loads(json.dumps(BASE_CONFIG))
    process, linux = config["process"], config["linux"]
    process["args"] = list(args)
    process["env"] = [CONTAINER_PATH, "HOME=/root"]
    config["root"]["readonly"] = readonly
    for edits in container_edits(spec, device):
        process["env"].extend(edits.get("env") or [])
        for node in edits.get("deviceNodes") or []:
            host = numbers[node.get("hostPath") or node["path"]]
            entry = {"path": node["path"], "type": node.get("type") or host["type"],
                     "major": node.get("major", host["major"]), "minor": node.get("minor", host["minor"]),
                     "fileMode": node.get("fileMode", host["fileMode"]), "uid": node.get("uid", 0), "gid": node.get("gid", 0)}
            linux.setdefault("devices", []).append(entry)
            linux["resources"]["devices"].append({"allow": True, "type": entry["type"], "major": entry["major"],
                                                  "minor": entry["minor"], "access": node.get("permissions") or "rwm"})
        for mount in edits.get("mounts") or []:
            config["mounts"].append({"destination": mount["containerPath"], "source": mount["hostPath"],
                                     "type": mount.get("type") or "bind", "options": list(mount.get("options") or [])})
        for hook in edits.get("hooks") or [] if hooks else []:
            path, hook_args = hook["path"], list(hook.get("args") or [path])
            if cdi_hook and os.path.basename(path) == CDI_HOOK:
                path, hook_args = cdi_hook, ["nvidia-ctk", "hook"] + hook_args[1:]
            entry = {"path": path, "args": hook_args}
            entry.update((key, hook[key]) for key in ("env", "timeout") if hook.get(key))
            config.setdefault("hooks", {}).setdefault(hook["hookName"], []).append(entry)
        if edits.get("additionalGIDs"):
            process["user"]["additionalGids"] = list(edits["additionalGIDs"])
    if user_namespace:
        uid, gid = user_namespace
        linux["namespaces"].append({"type": "user"})
        linux["uidMappings"] = [{"containerID": 0, "hostID": uid, "size": 1}]
        linux["gidMappings"] = [{"containerID": 0, "hostID": gid, "size": 1}]
    return config


def unpack_crun(carry, work):
    """The carried crun and its libraries under ``work``/crun: (the crun, its library folder), or None."""
    packed = sorted(glob.glob(os.path.join(carry, "crun-*.tar.xz")))
    if not packed:
        return None
    target = os.path.join(work, "crun")
    shutil.rmtree(target, ignore_errors=True)
    with tarfile.open(packed[-1]) as archive:
        archive.extractall(target, filter="tar")
    return os.path.join(target, "bin", "crun"), os.path.join(target, "lib")


def pick_runtime(found, carried_crun):
    """podman where the host has it; the carried crun only where the host has no runtime at all."""
    if "podman" in found:
        return "podman"
    if not found and carried_crun:
        return "carried crun"
    return None


# The overlay root: a tmpfs for its upper layer, the host's root below, in a mount namespace of the run's own.
OVERLAY_ROOT = ('mount -t tmpfs -o mode=0755 aistack-cdi "$1" && mkdir "$1/upper" "$1/work" && '
                'mount -t overlay overlay -o "lowerdir=/,upperdir=$1/upper,workdir=$1/work" "$2" && ')
# The host's root with its mounts, bound (pivot_root refuses / itself as the new root) and read-only before
# crun starts: crun makes the mount targets the root lacks, and the host must get none.
HOST_ROOT = 'mount --rbind / "$2" && mount -o remount,bind,ro "$2" && '
# crun reads the cgroup layout when it starts, even with cgroups disabled, and refuses a hybrid one
# (cgroup v1 with v2 beside it): a tmpfs over it there reads as plain v1, which it leaves alone.
NO_CGROUPS = "mount -t tmpfs -o mode=0755 aistack-no-cgroups /sys/fs/cgroup && "


def crun_attempts(bundle, crun, state):
    """How the carried crun is tried, in order: (what, config options, root, command)."""
    rootfs = os.path.join(bundle, "rootfs")

    def in_namespace(prelude, name, *crun_options):
        """crun run in a mount namespace of its own, after ``prelude`` (given the layer and the root as $1, $2)."""
        return (["unshare", "--mount", "--propagation", "private", "sh", "-c", prelude + 'shift 2 && exec "$@"', "sh",
                 os.path.join(bundle, "layer"), rootfs, crun] + list(crun_options)
                + ["--root", state, "run", "--bundle", bundle, name])
    return [
        ("root, the host's root as an overlay, the spec's hooks through the carried nvidia-ctk", {}, rootfs,
         in_namespace(OVERLAY_ROOT, "aistack-cdi-1")),
        ("the same without cgroups (crun --cgroup-manager=disabled, the host's cgroups hidden from crun)", {}, rootfs,
         in_namespace(OVERLAY_ROOT + NO_CGROUPS, "aistack-cdi-2", "--cgroup-manager=disabled")),
        ("a user namespace, the host's root read-only, no hooks (they write into the root), no cgroups",
         {"hooks": False, "user_namespace": (os.getuid(), os.getgid()), "readonly": True}, rootfs,
         in_namespace(HOST_ROOT + NO_CGROUPS, "aistack-cdi-3", "--cgroup-manager=disabled")),
    ]


def carried_crun_run(spec, device, args, carried, bundle, cdi_hook):
    """Start ``args`` through the spec with the carried crun, one attempt after another until one passes;
    each attempt's config, command and output are kept."""
    crun, lib = carried
    env = dict(os.environ, LD_LIBRARY_PATH=":".join(filter(None, [lib, os.environ.get("LD_LIBRARY_PATH")])))
    rc, version, err = run([crun, "--version"], env=env)
    result = {"runtime": "carried crun", "crun": (version or err).strip().splitlines()[:1], "bundle": bundle, "attempts": []}
    if rc != 0:
        result.update(status="failed", why="the carried crun does not start here: %s" % err.strip())
        return result
    try:
        numbers = host_device_numbers(device_nodes(spec, device))
    except OSError as error:
        result.update(status="failed", why="a device node the spec names is not on the host: %s" % error)
        return result
    os.makedirs(os.path.join(bundle, "rootfs"), exist_ok=True)
    os.makedirs(os.path.join(bundle, "layer"), exist_ok=True)
    for name, options, root, command in crun_attempts(bundle, crun, os.path.join(bundle, "state")):
        config = oci_config(spec, device, args, numbers, cdi_hook=cdi_hook, **options)
        config["root"]["path"] = root
        with open(os.path.join(bundle, "config.json"), "w") as handle:
            json.dump(config, handle, indent=1)
        rc, out, err = run(command, env=env, timeout=CONTAINER_TIMEOUT)
        attempt = {"attempt": name, "command": " ".join(command), "rc": rc, "stdout": out.strip()[-2000:],
                   "stderr": err.strip()[-2000:], "hooks": sorted(config.get("hooks") or {}),
                   "devices": [entry["path"] for entry in config["linux"].get("devices") or []]}
        result["attempts"].append(attempt)
        if rc == 0:
            break
    last = result["attempts"][-1]
    result.update(command=last["command"], rc=last["rc"], stdout=last["stdout"], stderr=last["stderr"],
                  status="passed" if last["rc"] == 0 and last["stdout"].startswith("True") else "failed")
    return result


def container_run(spec_dir, carried_crun=None, cdi_hook=None, bundle=None):
    """podman, or where the host has no runtime the carried crun, starts the env's python through the spec;
    without either, what was looked for."""
    found = [name for name in RUNTIMES if shutil.which(name)]
    runtime = pick_runtime(found, carried_crun)
    if runtime == "carried crun":
        with open(os.path.join(spec_dir, "nvidia.yaml")) as handle:
            spec = yaml.safe_load(handle)
        python = ENV_PYTHON if os.path.exists(ENV_PYTHON) else TORCH_PYTHON
        result = carried_crun_run(spec, DEVICE, [python, "-c", SEES_THE_GPU], carried_crun, bundle, cdi_hook)
        result.update(runtimes_found=found, python=python)
        return result
    if not found:
        return {"status": "not run", "runtimes_found": [],
                "why": "no OCI runtime on this host: none of %s on PATH, and none carried" % ", ".join(RUNTIMES)}
    if runtime is None:
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
    nvidia_ctk = unpack_nvidia_ctk(args.carry, os.path.abspath(os.path.join(args.work, "bin")))
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
        run=container_run(args.spec_dir, unpack_crun(args.carry, args.work), nvidia_ctk, os.path.join(args.work, "bundle")),
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
