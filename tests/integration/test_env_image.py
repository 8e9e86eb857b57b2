"""playbooks/image.yml (issue 38 item 2): the env conda_env made from the conda test bed's channel, served over HTTP
on loopback, baked into an OCI image from its explicit lock and pip lock with the APEX stub wheel from a keyed cache
entry, on the test bed's node image. The build fetches packages only, no repodata; sizes before and after the
clean-up are reported; a second build without the layer cache gives the same layers (or the test says which
differ); the image's python imports the env's packages and the APEX stub."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import REPO_ROOT, VENV_BIN, recap
from conda_testbed.mirror import Mirror

BASE_IMAGE = "localhost/aistack-debian12-node:latest"
IMAGE = "localhost/aistack-env-h30-image-test"
APEX_WHEEL = "apex-0.0.1+stub-py3-none-any.whl"


def podman(*args, env=None):
    return subprocess.run(["podman"] + list(args), capture_output=True, text=True, check=False, env=env)


def own_image_store(folder):
    """A podman storage of the test's own, with the machine's store as a read-only image store (the node image is
    there): every image and intermediate layer the builds make goes away with ``folder``."""
    os.makedirs(folder)
    conf = os.path.join(folder, "storage.conf")
    with open(conf, "w") as handle:
        handle.write('[storage]\ndriver = "overlay"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n[storage.options]\n'
                     'additionalimagestores = ["/var/lib/containers/storage"]\n' % (folder, folder))
    return dict(os.environ, CONTAINERS_STORAGE_CONF=conf)


def playbook(playbook_path, extra, env_base):
    env = dict(env_base, PATH=VENV_BIN + os.pathsep + env_base["PATH"], ANSIBLE_CONFIG=os.path.join(REPO_ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO_ROOT, ".cache", "collections"), ANSIBLE_FORCE_COLOR="false")
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", "ansible_python_interpreter=" + sys.executable, "-e", json.dumps(extra), playbook_path],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False, timeout=900)
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-3000:]
    return recap(proc.stdout)["localhost"], proc.stdout


def apex_cache_entry(folder):
    """A keyed cache entry as apex_build leaves it: the wheel and aistack-apex.json naming it and its sha256."""
    os.makedirs(folder)
    wheel = os.path.join(folder, APEX_WHEEL)
    files = {"apex/__init__.py": "STUB = True\n",
             "apex-0.0.1+stub.dist-info/METADATA": "Metadata-Version: 2.1\nName: apex\nVersion: 0.0.1+stub\n",
             "apex-0.0.1+stub.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: h30\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in sorted(files.items()):
            archive.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), text)
        archive.writestr(zipfile.ZipInfo("apex-0.0.1+stub.dist-info/RECORD", (1980, 1, 1, 0, 0, 0)),
                         "".join("%s,,\n" % n for n in sorted(files)) + "apex-0.0.1+stub.dist-info/RECORD,,\n")
    with open(wheel, "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    with open(os.path.join(folder, "aistack-apex.json"), "w") as handle:
        json.dump({"key": "h30", "wheel": APEX_WHEEL, "wheel_sha256": digest}, handle)
    return folder


@pytest.mark.skipif(podman("image", "exists", BASE_IMAGE).returncode != 0, reason="needs make setup-testbed's node image")
def test_env_image_from_the_locks(conda_base, conda_installer, conda_channel_root, tmp_path):
    log = tmp_path / "mirror.log"
    mirror = Mirror(conda_channel_root, log_path=str(log))
    store = str(tmp_path / "podman-store")
    podman_env = own_image_store(store)
    try:
        base = conda_base(condarc={"channel_alias": mirror.url, "channels": ["conda-forge"], "envs_dirs": [],
                                   "pkgs_dirs": [os.path.join(str(tmp_path), "conda", "pkgs")]})
        wheels = os.path.join(conda_channel_root, "wheels")
        spec = {"channels": ["conda-forge"],
                "dependencies": ["python=3.11", "pip", "hello-ansible", {"pip": ["--no-index", "--find-links " + wheels, "six==1.17.0"]}]}
        envs = tmp_path / "envs.yml"
        envs.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "roles": [
            {"role": "aistack.gpu_node.conda_env", "conda_env_conda_prefix": base.prefix,
             "conda_env_envs": [{"name": "demo", "spec": spec}]}]}]))
        playbook(str(envs), {}, base.env)
        base_env = dict(base.env, CONTAINERS_STORAGE_CONF=podman_env["CONTAINERS_STORAGE_CONF"])
        lock = os.path.join(base.prefix, "envs", "demo.explicit.txt")
        with open(lock) as handle:
            assert mirror.url in handle.read()
        with open(os.path.join(base.prefix, "envs", "demo.pip.txt")) as handle:
            assert handle.read() == "six==1.17.0\n"

        settings = {"env_image_explicit_lock": lock, "env_image_env_name": "demo", "env_image_pip_wheel_dir": wheels,
                    "env_image_apex_cache_entry": apex_cache_entry(str(tmp_path / "apex-cache" / "h30")),
                    "env_image_base_image": BASE_IMAGE, "env_image_installer_src": conda_installer,
                    "env_image_installer_sha256": open(conda_installer + ".sha256").read().split()[0],
                    "env_image_name": IMAGE, "env_image_tag": "first", "env_image_cuda_variant": "cpu",
                    "env_image_work_dir": str(tmp_path / "work"), "env_image_network": "host"}
        log.write_text("")
        image_playbook = os.path.join(REPO_ROOT, "playbooks", "image.yml")
        counts, out = playbook(image_playbook, dict(settings, aistack_image_build_host="localhost"), base_env)
        requests = log.read_text().splitlines()
        shown = re.search(r"env_image: \S+ built; size before the clean-up [0-9.]+ MiB, after [0-9.]+ MiB; \d+ layers", " ".join(out.split()))
        assert counts["changed"] >= 1 and shown, out
        print("\n" + shown.group(0))
        assert requests and not [r for r in requests if "repodata" in r], requests
        assert all(r.split()[1].endswith((".conda", ".tar.bz2")) for r in requests), requests

        first = json.loads(podman("image", "inspect", "--format", "json", IMAGE + ":first", env=podman_env).stdout)[0]
        labels = first["Labels"]
        with open(lock, "rb") as handle:
            assert labels["org.aistack.gpu_node.explicit-lock.sha256"] == hashlib.sha256(handle.read()).hexdigest()
        assert labels["org.aistack.gpu_node.cuda-variant"] == "cpu"

        # The same inputs again: kept, nothing built.
        counts, out = playbook(image_playbook, dict(settings, aistack_image_build_host="localhost"), base_env)
        assert "kept (same inputs)" in out and counts["changed"] == 0, out

        # Built again without the layer cache: the same layers.
        counts, out = playbook(image_playbook, dict(settings, aistack_image_build_host="localhost", env_image_tag="second",
                                                    env_image_no_cache=True, env_image_work_dir=str(tmp_path / "work2"),
                                                    env_image_compare_with=IMAGE + ":first"), base_env)
        shown = re.search(r"; (the same layers as|layers differing from) [^;]*;", " ".join(out.split()))
        print(shown.group(0) if shown else out)
        second = json.loads(podman("image", "inspect", "--format", "json", IMAGE + ":second", env=podman_env).stdout)[0]
        assert second["RootFS"]["Layers"] == first["RootFS"]["Layers"], (first["RootFS"], second["RootFS"])

        run = podman("run", "--rm", IMAGE + ":first", "python", "-c",
                     "import sys, six, apex; print(sys.prefix, six.__version__, apex.STUB)", env=podman_env)
        assert run.returncode == 0 and run.stdout.split() == ["/opt/conda/envs/demo", "1.17.0", "True"], run.stdout + run.stderr
        run = podman("run", "--rm", IMAGE + ":first", "sh", "-c", "echo $CONDA_DEFAULT_ENV; ls /opt/conda/envs/demo/conda-meta",
                     env=podman_env)
        assert run.stdout.split()[0] == "demo" and any(n.startswith("hello-ansible-") for n in run.stdout.split()), run.stdout
    finally:
        mirror.stop()
        shutil.rmtree(store, ignore_errors=True)  # no container is left running: nothing is mounted there
