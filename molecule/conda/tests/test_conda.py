"""The node after the conda scenario: .condarc on the healthy mirror as conda loads it, env gone."""

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


def test_conda_loads_it(host, mirrors):
    sources = host.check_output("/opt/conda/bin/conda config --show-sources")
    assert "==> /opt/conda/.condarc <==" in sources and mirrors["healthy"] in sources


def test_env_and_its_locks_are_gone(host):
    assert not host.file("/opt/conda/envs/demo-pip").exists
    for suffix in ("environment.yml", "explicit.txt", "from-history.yml"):
        assert not host.file("/opt/conda/envs/demo-pip." + suffix).exists
    envs = json.loads(host.check_output("/opt/conda/bin/conda env list --json"))["envs"]
    assert "/opt/conda/envs/demo-pip" not in envs
