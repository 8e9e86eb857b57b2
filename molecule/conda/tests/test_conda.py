"""The node after the conda scenario: .condarc on the healthy mirror as conda loads it, demo-pip
gone, demo-blas verified by the role as OpenBLAS, which its numpy really maps, and the conda killed
midway gone with nothing left unfinished."""

import json
import os

import pytest


@pytest.fixture
def mirrors():
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "mirrors.json")) as handle:
        return json.load(handle)


def test_condarc_points_at_the_healthy_mirror(host, mirrors):
    condarc = host.file("/opt/conda/.condarc")
    assert condarc.mode == 0o644 and condarc.user == "root"
    assert "channel_alias: %s\n" % mirrors["healthy"] in condarc.content_string
    assert "channel_priority: strict\n" in condarc.content_string
    assert "defaults" not in condarc.content_string.split("# Candidates:")[1].split("\n", 1)[1]


def test_user_condarc_is_the_same_and_owned_by_the_user(host):
    user_condarc = host.file("/home/mluser/.condarc")
    assert user_condarc.user == "mluser" and user_condarc.group == "mluser" and user_condarc.mode == 0o644
    assert user_condarc.content_string == host.file("/opt/conda/.condarc").content_string


def test_conda_loads_it(host, mirrors):
    sources = host.check_output("/opt/conda/bin/conda config --show-sources")
    assert "==> /opt/conda/.condarc <==" in sources and mirrors["healthy"] in sources


def test_env_and_its_locks_are_gone(host):
    assert not host.file("/opt/conda/envs/demo-pip").exists
    for suffix in ("environment.yml", "explicit.txt", "from-history.yml", "in-progress.json"):
        assert not host.file("/opt/conda/envs/demo-pip." + suffix).exists
    envs = json.loads(host.check_output("/opt/conda/bin/conda env list --json"))["envs"]
    assert "/opt/conda/envs/demo-pip" not in envs


def test_role_recorded_the_openblas_that_numpy_maps(host):
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "blas.json")) as handle:
        recorded = json.load(handle)
    assert list(recorded) == ["demo-blas"], "demo-pip asks for no BLAS and is not probed"
    blas = recorded["demo-blas"]
    assert blas["verified"] is True and blas["requested"] == "openblas" and blas["requested_by"] == "blas=*=openblas"
    assert blas["found"] == ["openblas"] and blas["numpy"] == "2.4.6"
    assert blas["numpy_build_blas"]["name"] == "scipy-openblas"
    (library,) = blas["libraries"]
    assert library.startswith("/opt/conda/envs/demo-blas/lib/python3.11/site-packages/numpy.libs/libscipy_openblas")
    maps = host.check_output("/opt/conda/envs/demo-blas/bin/python -I -B -c "
                             "'import numpy; a = numpy.ones((8, 8)); a @ a; print(open(\"/proc/self/maps\").read())'")
    assert library in maps and "libmkl" not in maps


def test_the_killed_conda_stopped_midway_and_nothing_is_left_unfinished(host):
    # Written by the stand-in where side_effect.yml paused it (CONDA_TESTBED_PAUSE_FILE) and killed it.
    reached = json.loads(host.file("/root/conda-testbed-pause.reached").content_string)
    assert reached["done"] == ["unlink libfoo-1.1.0-h4616a5c_0"] and reached["left"] == ["link libfoo-1.0.0-h4616a5c_0"]
    assert not host.file("/proc/%d" % reached["pid"]).exists, "the paused conda was never killed"
    assert host.check_output("find /opt/conda/envs -maxdepth 1 -name '*.in-progress.json'") == ""


def test_a_group_member_makes_and_uses_an_env_of_their_own_and_cannot_touch_roots(host, mirrors):
    """The base is root's alone: mluser (a member of the conda group) gets the env and the package
    cache in their home, through the configured lists' ~/.conda entries, and cannot change root's env."""
    member = "runuser -u mluser -- env HOME=/home/mluser "
    created = host.run(member + "/opt/conda/bin/conda create -y -n mine libfoo=1.0 --json")
    assert created.rc == 0, created.stdout + created.stderr
    assert json.loads(created.stdout)["prefix"] == "/home/mluser/.conda/envs/mine"
    assert host.file("/home/mluser/.conda/envs/mine/conda-meta/history").user == "mluser"
    assert host.file("/home/mluser/.conda/pkgs").is_directory
    listed = json.loads(host.check_output(member + "/opt/conda/bin/conda list -n mine --json"))
    assert [p["name"] for p in listed] == ["libfoo"]
    for attempt in ("echo planted >> /opt/conda/envs/demo-blas/bin/python",
                    "mv /opt/conda/envs/demo-blas /opt/conda/envs/demo-blas-old",
                    "mkdir /opt/conda/envs/demo-pip",
                    "mkdir /opt/conda/pkgs/planted-1.0-0"):
        assert host.run(member + "sh -c %s", attempt).rc != 0, attempt
