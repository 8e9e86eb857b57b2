# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


import pytest
from ansible.module_utils import basic

from conftest import read_h200, run_module
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import gpu_collection, nvidia_parsers
from ansible_collections.aistack.gpu_node.plugins.modules import gpu_facts


H200_QUERY_LINE = "0, NVIDIA H200, GPU-33ea3011-d795-9321-b26f-fa72c6fe6db3, 580.159.04, 9.0, 143771, 00000000:00:06.0, Enabled, Disabled\n"


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A fake root with the H200's PCI device and kernel module, and nvidia-smi answering from fixtures."""
    root = tmp_path / "root"
    # The H200's PCI device as recorded (sysfs-gpu-numa.txt: path, class, numa=, local_cpulist=);
    # the capture lists NVIDIA devices only, so the vendor is 0x10de. The device id is not recorded.
    path, device_class, numa, cpulist = read_h200("sysfs-gpu-numa.txt").split()
    device = root / path.lstrip("/")
    device.mkdir(parents=True)
    for name, value in (("vendor", "0x10de"), ("class", device_class), ("device", "0x2335"),
                        ("numa_node", numa.split("=", 1)[1]), ("local_cpulist", cpulist.split("=", 1)[1])):
        (device / name).write_text(value + "\n")
    program = tmp_path / "nvidia-smi"
    program.write_text("")
    calls = []

    def run_command(self, argv, **kwargs):
        calls.append(argv)
        if argv[1:2] == ["--query-gpu=" + ",".join(nvidia_parsers.QUERY_GPU_FIELDS)]:
            return 0, H200_QUERY_LINE, ""
        return 0, read_h200("nvidia-smi.txt"), ""

    real_collect = gpu_collection.collect_gpu_facts
    monkeypatch.setattr(gpu_facts, "collect_gpu_facts", lambda runner, root, nvml: real_collect(runner, root=str(tmp_path / "root"), nvml=nvml))
    monkeypatch.setattr(gpu_facts, "import_nvml", lambda: None)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: str(program))
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    return {"root": root, "calls": calls}


def test_h200_facts(host, capsys):
    (host["root"] / "proc/driver/nvidia").mkdir(parents=True)
    (host["root"] / "proc/driver/nvidia/version").write_text(read_h200("proc-driver-nvidia-version.txt"))
    rc, result = run_module(gpu_facts, {}, capsys)
    facts = result["ansible_facts"]["aistack_gpu"]
    assert rc == 0 and result["changed"] is False
    assert facts["state"] == "ok"
    assert facts["gpus"][0]["compute_capability"] == "9.0" and facts["gpus"][0]["numa_node"] == -1
    assert facts["driver"]["version"] == "580.159.04" and facts["driver"]["kernel_module_flavour"] == "open"
    assert facts["driver"]["cuda_version"] == "13.0" and facts["driver"]["mismatch"] is False
    assert list(result["ansible_facts"]) == ["aistack_gpu"]
    (pci,) = facts["pci_devices"]
    assert (pci["pci_bus_id"], pci["class"], pci["numa_node"], pci["local_cpulist"]) == ("0000:00:06.0", "0x030200", -1, "0-15")


def test_check_mode_gives_the_same_facts(host, capsys):
    _rc, normal = run_module(gpu_facts, {}, capsys)
    rc, checked = run_module(gpu_facts, {"_ansible_check_mode": True}, capsys)
    assert rc == 0 and checked["changed"] is False
    assert checked["ansible_facts"] == normal["ansible_facts"]


def test_gpu_without_driver(host, capsys, monkeypatch):
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kwargs: (9, "", "NVIDIA-SMI has failed"))
    rc, result = run_module(gpu_facts, {"use_nvml": False}, capsys)
    facts = result["ansible_facts"]["aistack_gpu"]
    assert rc == 0 and facts["state"] == "gpu_no_driver" and facts["source"] == "sysfs"


def test_use_nvml_true_tries_nvml(monkeypatch, capsys):
    seen = {}

    def collect(runner, root, nvml):
        seen["nvml"] = nvml
        return {"state": "no_gpu"}
    monkeypatch.setattr(gpu_facts, "collect_gpu_facts", collect)
    monkeypatch.setattr(gpu_facts, "import_nvml", lambda: "pynvml-module")
    run_module(gpu_facts, {}, capsys)
    assert seen["nvml"] == "pynvml-module"
    run_module(gpu_facts, {"use_nvml": False}, capsys)
    assert seen["nvml"] is None
