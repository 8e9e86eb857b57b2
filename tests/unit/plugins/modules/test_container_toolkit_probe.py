# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The container_toolkit_probe module: what it reads on a (fake) node. The runtime configurations are the ones
nvidia-ctk wrote, as posted in public threads (tests/unit/fixtures/public)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

from ansible.module_utils import basic
from conftest import read_public, run_module
from ansible_collections.aistack.gpu_node.plugins.modules import container_toolkit_probe as probe

DOCKER = read_public("docker-daemon-json-nvidia-ctk.json")
CONTAINERD = read_public("containerd-config-nvidia-ctk-v2.toml")


def test_the_nvidia_runtime_is_found_in_what_nvidia_ctk_wrote():
    assert probe.docker_configured(DOCKER)
    assert not probe.docker_configured('{"log-driver": "journald"}') and not probe.docker_configured(None)
    assert not probe.docker_configured("not json") and not probe.docker_configured("[]")
    assert probe.containerd_configured(["", CONTAINERD])
    assert not probe.containerd_configured([CONTAINERD.replace("runtimes.nvidia", "runtimes.runc"), None])


@pytest.fixture
def node(monkeypatch, tmp_path):
    programs, calls = set(), []

    def get_bin_path(self, name, required=False, opt_dirs=None):
        return "/usr/bin/" + name if name in programs else None

    def run_command(self, argv, **kwargs):
        calls.append(argv)
        held = "hi \tnvidia-container-toolkit\t1.18.0-1\nii \tlibnvidia-container1\t1.18.0-1\n"
        return (0, held, "") if argv[0] == "dpkg-query" else (127, "", "not found")

    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", get_bin_path)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    (tmp_path / "containerd" / "config.d").mkdir(parents=True)
    return programs, calls, tmp_path


def test_one_read_of_runtimes_packages_holds_key_and_spec(node, capsys):
    programs, calls, root = node
    programs.update(["dockerd", "containerd", "podman"])
    (root / "daemon.json").write_text(DOCKER)
    (root / "containerd" / "config.toml").write_text("version = 2\n")
    (root / "containerd" / "config.d" / "99-nvidia.toml").write_text(CONTAINERD)
    (root / "nvidia.yaml").write_text("cdiVersion: 0.5.0\n")
    code, result = run_module(probe, dict(pkg_mgr="apt", cdi_spec_path=str(root / "nvidia.yaml"), key_path=str(root / "key.asc"),
                                          docker_config=str(root / "daemon.json"),
                                          containerd_config=str(root / "containerd" / "config.toml")), capsys)
    assert code == 0 and result["changed"] is False
    assert result["runtimes"] == {"docker": {"present": True, "configured": True},
                                  "containerd": {"present": True, "configured": True},
                                  "podman": {"present": True}, "crio": {"present": False}}
    assert result["packages"] == {"nvidia-container-toolkit": "1.18.0-1", "libnvidia-container1": "1.18.0-1"}
    assert result["held"] == ["nvidia-container-toolkit"] and result["key_present"] is False
    assert result["cdi_spec"] == "cdiVersion: 0.5.0\n"
    assert [argv[0] for argv in calls] == ["dpkg-query"]


def test_a_bare_node_reads_as_nothing_there(node, capsys):
    _programs, _calls, root = node
    code, result = run_module(probe, dict(pkg_mgr="apt", cdi_spec_path=str(root / "none.yaml"), key_path=str(root / "key.asc"),
                                          docker_config=str(root / "none.json"),
                                          containerd_config=os.path.join(str(root), "none", "config.toml")), capsys)
    assert code == 0 and result["cdi_spec"] is None
    assert not any(runtime["present"] for runtime in result["runtimes"].values())
    assert not result["runtimes"]["docker"]["configured"] and not result["runtimes"]["containerd"]["configured"]
