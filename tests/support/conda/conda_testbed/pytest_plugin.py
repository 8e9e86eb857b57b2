"""pytest fixtures of the conda test bed. Use them from a conftest.py with::

    sys.path.insert(0, os.path.join(REPO_ROOT, "tests", "support", "conda"))
    from conda_testbed.pytest_plugin import *  # noqa: F401,F403

- ``conda_channel_root`` (session): a folder with channels ``conda-forge`` and ``main`` and
  ``wheels/`` (built once, cached under .cache/conda-testbed by recipe hash).
- ``conda_mirror`` (factory): ``conda_mirror(root=None, latency=0, status=None, truncate=None,
  corrupt=False, only="")`` starts a loopback HTTP mirror of ``root`` (default the channel root);
  stopped after the test.
- ``conda_installer`` (session): the stand-in installer's path; its sha256 in ``<path>.sha256``.
- ``conda_base`` (factory): ``conda_base(condarc=None)`` runs the installer into a fresh prefix and
  returns a ``Base`` with ``prefix``, ``conda`` (path of bin/conda), ``home``, ``env``,
  ``run(*args)`` (a CompletedProcess; HOME and pip are isolated from the machine) and
  ``run_until_paused(pause_file, *args, mode="")`` (the stand-in's pause hook).
"""

import json
import os
import subprocess
import time

import pytest
import yaml

from . import channel, installer
from .mirror import Mirror


class Base:
    def __init__(self, prefix, home, channel_root):
        self.prefix = prefix
        self.home = home
        self.conda = os.path.join(prefix, "bin", "conda")
        self.channel_root = channel_root
        self.env = dict(os.environ, HOME=home, PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1",
                        PIP_FIND_LINKS=os.path.join(channel_root, "wheels"), PIP_DISABLE_PIP_VERSION_CHECK="1")
        for name in ("CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDARC", "CONDA_OVERRIDE_CUDA", "CONDA_SHLVL"):
            self.env.pop(name, None)

    def write_condarc(self, settings, path=None):
        path = path or os.path.join(self.home, ".condarc")
        with open(path, "w") as handle:
            yaml.safe_dump(settings, handle, sort_keys=False)
        return path

    def run_until_paused(self, pause_file, *args, mode=""):
        """Starts ``conda ARGS`` with the stand-in's pause hook (``mode`` in the pause file: empty for
        midway, or ``unlink-files``) and returns (the process, what it had done) once it waits there."""
        with open(pause_file, "w") as handle:
            handle.write(mode)
        proc = subprocess.Popen([self.conda] + list(args), env=dict(self.env, CONDA_TESTBED_PAUSE_FILE=pause_file),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not os.path.exists(pause_file + ".reached"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("the stand-in never reached the pause: %s%s" % proc.communicate())
            time.sleep(0.1)
        with open(pause_file + ".reached") as handle:
            return proc, json.load(handle)

    def run(self, *args, env=None, cwd=None):
        return subprocess.run([self.conda] + list(args), capture_output=True, text=True, check=False,
                              env=dict(self.env, **(env or {})), cwd=cwd)


def default_condarc(channel_root, prefix):
    """The settings the recorded fixtures were made with (conda-config-show-sources.txt)."""
    return {"auto_activate_base": False, "notify_outdated_conda": False, "envs_dirs": [os.path.join(prefix, "envs")],
            "pkgs_dirs": [os.path.join(prefix, "pkgs")], "channel_alias": "file://" + channel_root,
            "channel_priority": "strict", "channels": ["conda-forge"],
            "default_channels": ["file://%s/main" % channel_root], "always_yes": False, "solver": "classic"}


@pytest.fixture(scope="session")
def conda_channel_root(tmp_path_factory):
    return channel.materialize(str(tmp_path_factory.mktemp("conda-mirror")), ("conda-forge", "main"))


@pytest.fixture
def conda_mirror(conda_channel_root):
    started = []

    def start(root=None, **faults):
        mirror = Mirror(root or conda_channel_root, **faults)
        started.append(mirror)
        return mirror

    yield start
    for mirror in started:
        mirror.stop()


@pytest.fixture(scope="session")
def conda_installer():
    return installer.build()


def install_base(installer_path, prefix, home, channel_root, condarc="default"):
    os.makedirs(home, exist_ok=True)
    proc = subprocess.run(["bash", installer_path, "-b", "-p", prefix], capture_output=True, text=True, check=False,
                          env=dict(os.environ, HOME=home))
    if proc.returncode != 0:
        raise AssertionError("stand-in installer failed: %s%s" % (proc.stdout, proc.stderr))
    base = Base(prefix, home, channel_root)
    if condarc:
        base.write_condarc(default_condarc(channel_root, prefix) if condarc == "default" else condarc)
    return base


@pytest.fixture
def conda_base(tmp_path, conda_installer, conda_channel_root):
    def make(condarc="default", name="conda"):
        return install_base(conda_installer, str(tmp_path / name), str(tmp_path / ("home-" + name)),
                            conda_channel_root, condarc)

    return make
