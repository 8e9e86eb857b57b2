# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ctypes
import json
import os
import subprocess
import sys
from collections import namedtuple

import pytest

from conftest import read_h200, read_public, write
from ansible_collections.aistack.gpu_node.plugins.module_utils import versions
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe import gpu_collection, node_access, nvidia_parsers, nvml_library, toolchain


# The H200 host's values (nvidia-smi-query-gpu.csv, nvidia-smi-q-head.txt: MIG Disabled) in the
# field order the collector asks for.
H200_QUERY_LINE = "0, NVIDIA H200, GPU-33ea3011-d795-9321-b26f-fa72c6fe6db3, 580.159.04, 9.0, 143771, 00000000:00:06.0, Enabled, Disabled\n"


class FakeRunner(object):
    """Answers argv by (program basename, first argument); records the calls."""

    def __init__(self, answers):
        self.answers = answers
        self.calls = []

    def __call__(self, argv):
        self.calls.append(list(argv))
        key = (os.path.basename(argv[0]), argv[1].split("=")[0] if len(argv) > 1 else None)
        for candidate in (key, (key[0], None), key[0]):
            if candidate in self.answers:
                answer = self.answers[candidate]
                return answer(argv) if callable(answer) else answer
        return 127, "", "%s: not found" % argv[0]


def make_gpu_tree(root, proc_version=None, bus="0000:00:06.0", driver="nvidia", numa="-1"):
    device = "sys/bus/pci/devices/%s" % bus
    write(root, device + "/vendor", "0x10de\n")
    write(root, device + "/device", "0x2335\n")
    write(root, device + "/class", "0x030200\n")
    write(root, device + "/numa_node", numa + "\n")
    write(root, device + "/local_cpulist", "0-15\n")
    if driver:
        os.makedirs(os.path.join(str(root), "sys/bus/pci/drivers", driver))
        os.symlink(os.path.join(str(root), "sys/bus/pci/drivers", driver), os.path.join(str(root), device, "driver"))
    if proc_version:
        write(root, "proc/driver/nvidia/version", proc_version)
    # a non-GPU NVIDIA function (HDMI audio, class 0x0403) and another vendor's VGA controller are ignored
    write(root, "sys/bus/pci/devices/0000:00:06.1/vendor", "0x10de\n")
    write(root, "sys/bus/pci/devices/0000:00:06.1/class", "0x040300\n")
    write(root, "sys/bus/pci/devices/0000:00:02.0/vendor", "0x1234\n")
    write(root, "sys/bus/pci/devices/0000:00:02.0/class", "0x030000\n")


# ---------------------------------------------------------------------------
# versions
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("left, op, right, expected", [
    ("550.135", ">", "550.54.15", True),
    ("580.159.04", ">=", "580.65.06", True),
    ("580.65.06", "<", "580.159.04", True),
    ("580", "==", "580.0.0", True),
    ("525.60.13", "ge", "525.60.13", True),
    ("470.182.03", "lt", "525.60.13", True),
    ("13.0", "ne", "12.9", True),
    ("595.84", "le", "595.58.03", False),
])
def test_compare_versions_is_tuple_correct(left, op, right, expected):
    assert versions.compare_versions(left, op, right) is expected


def test_version_tuple_and_errors():
    assert versions.version_tuple("580.159.04") == (580, 159, 4)
    assert versions.version_tuple([12, "4"]) == (12, 4)
    with pytest.raises(ValueError):
        versions.version_tuple("2.11.0+cu130")
    with pytest.raises(ValueError):
        versions.compare_versions("1", "~=", "2")
    assert versions.major_minor("13") == "13.0"
    assert versions.major_minor(None) is None


# ---------------------------------------------------------------------------
# parsers on the H200 host's real outputs
# ---------------------------------------------------------------------------

def test_query_gpu_noheader_nounits_h200():
    fields = ["name", "driver_version", "compute_cap", "memory.total", "pci.bus_id"]
    rows = nvidia_parsers.parse_query_gpu_csv(read_h200("nvidia-smi-query-gpu-noheader-nounits.csv"), fields)
    assert rows == [{"name": "NVIDIA H200", "driver_version": "580.159.04", "compute_cap": "9.0",
                     "memory.total": "143771", "pci.bus_id": "00000000:00:06.0"}]


def test_query_gpu_with_header_h200():
    rows = nvidia_parsers.parse_query_gpu_csv(read_h200("nvidia-smi-query-gpu.csv"))
    assert rows[0]["uuid"] == "GPU-33ea3011-d795-9321-b26f-fa72c6fe6db3"
    assert rows[0]["memory.total"] == "143771 MiB"
    assert rows[0]["persistence_mode"] == "Enabled"


def test_proc_driver_version_open_h200():
    assert nvidia_parsers.parse_proc_driver_version(read_h200("proc-driver-nvidia-version.txt")) == {
        "version": "580.159.04", "flavour": "open"}


def test_smi_banner_h200():
    assert nvidia_parsers.parse_smi_banner(read_h200("nvidia-smi.txt")) == {"driver_version": "580.159.04", "cuda_version": "13.0"}


def test_nvcc_h200():
    assert nvidia_parsers.parse_nvcc_version(read_h200("nvcc-version.txt")) == {"release": "13.0", "version": "13.0.88"}


def test_topo_h200_with_escape_codes():
    text = read_h200("nvidia-smi-topo-m.txt")
    assert "\x1b[4m" in text
    topo = nvidia_parsers.parse_topo_matrix(text)
    assert topo["devices"] == ["GPU0"]
    assert topo["links"] == {"GPU0": {}}
    assert topo["gpus"] == [{"name": "GPU0", "index": 0, "cpu_affinity": "0-15", "cpus": list(range(16)),
                             "numa_affinity": 0, "gpu_numa_id": None}]


# ---------------------------------------------------------------------------
# parsers on public samples
# ---------------------------------------------------------------------------

def test_topo_eight_gpus_two_numa_nodes():
    topo = nvidia_parsers.parse_topo_matrix(read_public("nvidia-smi-topo-m-8x4090.txt"))
    assert topo["devices"] == ["GPU%d" % i for i in range(8)] + ["NIC0", "NIC1"]
    assert [gpu["numa_affinity"] for gpu in topo["gpus"]] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert topo["gpus"][4]["cpu_affinity"] == "56-111,168-223"
    assert len(topo["gpus"][0]["cpus"]) == 112
    assert topo["links"]["GPU6"]["NIC0"] == "PHB"
    assert topo["links"]["NIC0"]["NIC1"] == "PIX"
    assert "NIC0" not in [gpu["name"] for gpu in topo["gpus"]]


def test_topo_nvlink_space_aligned():
    topo = nvidia_parsers.parse_topo_matrix(read_public("nvidia-smi-topo-m-dgx-a100-2gpu.txt"))
    assert topo["links"]["GPU0"]["GPU1"] == "NV12"
    assert topo["links"]["GPU1"]["NIC0"] == "PXB"
    assert [(gpu["cpu_affinity"], gpu["numa_affinity"]) for gpu in topo["gpus"]] == [("48-63,176-191", 3)] * 2


def test_topo_nic_legend_and_empty_input():
    text = read_public("nvidia-smi-topo-m-8x4090.txt") + "\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n"
    assert nvidia_parsers.parse_topo_matrix(text)["nics"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    assert nvidia_parsers.parse_topo_matrix("") == {"devices": [], "links": {}, "gpus": [], "nics": {}}


def test_proc_driver_version_proprietary_and_aarch64():
    assert nvidia_parsers.parse_proc_driver_version(read_public("proc-driver-nvidia-version-proprietary-384.txt")) == {
        "version": "384.98", "flavour": "proprietary"}
    assert nvidia_parsers.parse_proc_driver_version(read_public("proc-driver-nvidia-version-open-aarch64.txt")) == {
        "version": "35.3.1", "flavour": "open"}
    assert nvidia_parsers.parse_proc_driver_version("garbage") == {"version": None, "flavour": None}


def test_mismatch_outputs():
    assert nvidia_parsers.parse_mismatch(read_public("nvidia-smi-mismatch-570.txt")) == {"mismatch": True, "userspace_version": "570.124"}
    assert nvidia_parsers.parse_mismatch(read_public("nvidia-smi-mismatch-plain.txt")) == {"mismatch": True, "userspace_version": None}
    assert nvidia_parsers.parse_mismatch("all good") == {"mismatch": False, "userspace_version": None}


def test_query_gpu_two_gpus_with_header():
    rows = nvidia_parsers.parse_query_gpu_csv(read_public("nvidia-smi-query-gpu-titanv-rtx5880.csv"))
    assert [(row["name"], row["compute_cap"]) for row in rows] == [("NVIDIA TITAN V", "7.0"), ("NVIDIA RTX 5880 Ada Generation", "8.9")]


def test_query_gpu_unavailable_tokens_and_bad_lines():
    rows = nvidia_parsers.parse_query_gpu_csv("0, [N/A], [Not Supported]\n", ["index", "name", "mig.mode.current"])
    assert rows == [{"index": "0", "name": None, "mig.mode.current": None}]
    assert nvidia_parsers.parse_query_gpu_csv("") == []
    with pytest.raises(ValueError):
        nvidia_parsers.parse_query_gpu_csv("1, 2\n", ["index"])


def test_smi_banner_v100_and_r610_wording():
    assert nvidia_parsers.parse_smi_banner(read_public("nvidia-smi-v100-470.txt")) == {"driver_version": "470.182.03", "cuda_version": "11.4"}
    r610 = "| NVIDIA-SMI 610.43.02   KMD Version: 610.43.02   CUDA UMD Version: 13.3 |"
    assert nvidia_parsers.parse_smi_banner(r610) == {"driver_version": "610.43.02", "cuda_version": "13.3"}
    assert nvidia_parsers.parse_smi_banner("") == {"driver_version": None, "cuda_version": None}


def test_small_parsers():
    assert nvidia_parsers.parse_nvcc_version("no nvcc here") is None
    assert nvidia_parsers.parse_cpulist("0-2,8, N/A") == [0, 1, 2, 8]
    assert nvidia_parsers.parse_cpulist(None) == []
    # the H200 host's only NUMA node, as recorded from /sys/devices/system/node/node0/cpulist
    assert nvidia_parsers.parse_cpulist(read_h200("sysfs-node.txt").split()[-1]) == list(range(16))
    assert nvidia_parsers.normalize_pci_bus_id("00000000:3B:00.0") == "0000:3b:00.0"
    assert nvidia_parsers.normalize_pci_bus_id(None) is None
    assert toolchain.format_cudnn_version(91900) == "9.19.0"
    assert toolchain.format_cudnn_version(8907) == "8.9.7"
    assert toolchain.format_cudnn_version(None) is None


@pytest.mark.parametrize("name, cc", [
    ("NVIDIA H200", "9.0"), ("Tesla V100-SXM2-32GB", "7.0"), ("NVIDIA A100-SXM4-80GB", "8.0"), ("NVIDIA A10", "8.6"),
    ("NVIDIA GeForce RTX 4090", "8.9"), ("NVIDIA GH200 480GB", "9.0"), ("NVIDIA H20", "9.0"), ("Unknown Board", None),
])
def test_lookup_compute_capability(name, cc):
    entry = gpu_collection.lookup_compute_capability(name)
    assert (entry["cc"] if entry else None) == cc


# ---------------------------------------------------------------------------
# collectors
# ---------------------------------------------------------------------------

def h200_runner(banner=True):
    answers = {("nvidia-smi", "--query-gpu"): (0, H200_QUERY_LINE, "")}
    if banner:
        answers[("nvidia-smi", None)] = (0, read_h200("nvidia-smi.txt"), "")
    return FakeRunner(answers)


def test_collect_h200_through_nvidia_smi(tmp_path):
    make_gpu_tree(tmp_path, read_h200("proc-driver-nvidia-version.txt"))
    facts = gpu_collection.collect_gpu_facts(h200_runner(), root=str(tmp_path))
    assert facts["state"] == "ok" and facts["source"] == "nvidia-smi"
    assert facts["gpus"] == [{
        "index": 0, "name": "NVIDIA H200", "uuid": "GPU-33ea3011-d795-9321-b26f-fa72c6fe6db3", "compute_capability": "9.0",
        "compute_capability_from": "driver", "memory_total_mib": 143771, "pci_bus_id": "0000:00:06.0", "numa_node": -1,
        "persistence_mode": True, "mig_mode": False,
    }]
    assert facts["driver"] == {"version": "580.159.04", "kernel_module_flavour": "open", "cuda_version": "13.0",
                               "loaded_version": "580.159.04", "userspace_version": "580.159.04", "mismatch": False}
    assert facts["pci_devices"] == [{"pci_bus_id": "0000:00:06.0", "vendor_id": "0x10de", "device_id": "0x2335", "class": "0x030200",
                                     "numa_node": -1, "local_cpulist": "0-15", "kernel_driver": "nvidia"}]


def test_collect_no_gpu(tmp_path):
    os.makedirs(os.path.join(str(tmp_path), "sys/bus/pci/devices"))
    facts = gpu_collection.collect_gpu_facts(FakeRunner({}), root=str(tmp_path))
    assert facts["state"] == "no_gpu"
    assert facts["gpus"] == [] and facts["pci_devices"] == [] and facts["source"] == "none"
    assert facts["driver"]["version"] is None and facts["driver"]["mismatch"] is False
    assert facts["messages"] == ["nvidia-smi: not found"]


def test_collect_gpu_without_driver(tmp_path):
    make_gpu_tree(tmp_path, driver="nouveau", numa="1")
    facts = gpu_collection.collect_gpu_facts(FakeRunner({}), root=str(tmp_path))
    assert facts["state"] == "gpu_no_driver" and facts["source"] == "sysfs"
    assert facts["gpus"][0]["pci_bus_id"] == "0000:00:06.0" and facts["gpus"][0]["numa_node"] == 1
    assert facts["gpus"][0]["compute_capability"] is None
    assert facts["pci_devices"][0]["kernel_driver"] == "nouveau"


def test_collect_mismatch_loaded_vs_userspace(tmp_path):
    proc = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release Build  (builder@host)\n"
    make_gpu_tree(tmp_path, proc)
    runner = FakeRunner({("nvidia-smi", "--query-gpu"): (18, read_public("nvidia-smi-mismatch-570.txt"), "")})
    facts = gpu_collection.collect_gpu_facts(runner, root=str(tmp_path))
    assert facts["state"] == "mismatch"
    assert facts["driver"]["loaded_version"] == "570.124.06"
    assert facts["driver"]["userspace_version"] == "570.124"
    assert facts["driver"]["mismatch"] is True


def test_collect_mismatch_version_from_library_name(tmp_path):
    make_gpu_tree(tmp_path, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  460.56  Tue Feb 23 23:23:23 UTC 2021\n")
    for name in ("libnvidia-ml.so.460.73.01", "libnvidia-ml.so.1", "libnvidia-ml.so.x.y"):
        write(tmp_path, "usr/lib/x86_64-linux-gnu/" + name, "")
    runner = FakeRunner({("nvidia-smi", "--query-gpu"): (18, read_public("nvidia-smi-mismatch-plain.txt"), "")})
    facts = gpu_collection.collect_gpu_facts(runner, root=str(tmp_path))
    assert facts["driver"]["userspace_version"] == "460.73.01"
    assert facts["driver"]["kernel_module_flavour"] == "proprietary"
    assert facts["state"] == "mismatch"


def test_collect_old_driver_without_compute_cap_field(tmp_path):
    make_gpu_tree(tmp_path, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.182.03  Thu Feb 23 2023\n")
    line = "0, Tesla V100-SXM2-16GB, GPU-1, 470.182.03, 16160, 00000000:00:06.0, Disabled, [N/A]\n"

    def query(argv):
        if "compute_cap" in argv[1]:
            return 6, read_public("nvidia-smi-query-compute-cap-invalid.txt"), ""
        return 0, line, ""
    runner = FakeRunner({("nvidia-smi", "--query-gpu"): query, ("nvidia-smi", None): (0, read_public("nvidia-smi-v100-470.txt"), "")})
    facts = gpu_collection.collect_gpu_facts(runner, root=str(tmp_path))
    gpu = facts["gpus"][0]
    assert (gpu["compute_capability"], gpu["compute_capability_from"]) == ("7.0", "name table (primary)")
    assert gpu["mig_mode"] is None and gpu["persistence_mode"] is False
    assert facts["driver"]["cuda_version"] == "11.4"


def test_collect_driver_loaded_but_smi_fails(tmp_path):
    make_gpu_tree(tmp_path, "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build\n")
    runner = FakeRunner({("nvidia-smi", "--query-gpu"): (9, "", "NVIDIA-SMI has failed because it couldn't communicate with the driver")})
    facts = gpu_collection.collect_gpu_facts(runner, root=str(tmp_path))
    assert facts["state"] == "driver_error"
    assert "couldn't communicate" in facts["messages"][0]


def test_kernel_module_from_sys_module(tmp_path):
    write(tmp_path, "sys/module/nvidia/version", "580.95.05\n")
    assert gpu_collection.read_kernel_module(str(tmp_path)) == {"version": "580.95.05", "flavour": None}


Memory = namedtuple("Memory", "total")
PciInfo = namedtuple("PciInfo", "busId")


class FakeNvml(object):
    """The part of pynvml the collector uses, answering like the H200 host."""

    def __init__(self, fail_init=None, fail_mig=True):
        self.fail_init = fail_init
        self.fail_mig = fail_mig
        self.shut_down = False

    def nvmlInit(self):
        if self.fail_init:
            raise RuntimeError(self.fail_init)

    def nvmlShutdown(self):
        self.shut_down = True

    def nvmlSystemGetDriverVersion(self):
        return b"580.159.04"

    def nvmlSystemGetCudaDriverVersion_v2(self):
        return 13000

    def nvmlDeviceGetCount(self):
        return 1

    def nvmlDeviceGetHandleByIndex(self, index):
        return index

    def nvmlDeviceGetName(self, handle):
        return "NVIDIA H200"

    def nvmlDeviceGetUUID(self, handle):
        return "GPU-33ea3011-d795-9321-b26f-fa72c6fe6db3"

    def nvmlDeviceGetCudaComputeCapability(self, handle):
        return (9, 0)

    def nvmlDeviceGetMemoryInfo(self, handle):
        return Memory(143771 * 1024 * 1024)

    def nvmlDeviceGetPciInfo(self, handle):
        return PciInfo(b"00000000:00:06.0")

    def nvmlDeviceGetPersistenceMode(self, handle):
        return 1

    def nvmlDeviceGetMigMode(self, handle):
        if self.fail_mig:
            raise RuntimeError("Not Supported")
        return (0, 0)


def test_collect_through_nvml(tmp_path):
    make_gpu_tree(tmp_path, read_h200("proc-driver-nvidia-version.txt"))
    nvml = FakeNvml(fail_mig=False)
    runner = FakeRunner({})
    facts = gpu_collection.collect_gpu_facts(runner, root=str(tmp_path), nvml=nvml)
    assert facts["source"] == "nvml" and facts["state"] == "ok" and nvml.shut_down
    assert runner.calls == []
    assert facts["gpus"][0]["memory_total_mib"] == 143771 and facts["gpus"][0]["mig_mode"] is False
    assert facts["driver"]["cuda_version"] == "13.0" and facts["driver"]["userspace_version"] == "580.159.04"


def test_nvml_unsupported_mig_is_none():
    gpus, _driver, error = gpu_collection.collect_nvml(FakeNvml())
    assert error is None and gpus[0]["mig_mode"] is None


def test_nvml_failure_falls_back_to_nvidia_smi(tmp_path):
    make_gpu_tree(tmp_path, read_h200("proc-driver-nvidia-version.txt"))
    facts = gpu_collection.collect_gpu_facts(h200_runner(), root=str(tmp_path), nvml=FakeNvml(fail_init="Driver Not Loaded"))
    assert facts["source"] == "nvidia-smi" and facts["messages"] == ["NVML: Driver Not Loaded"]


def test_nvml_mismatch_is_a_state(tmp_path):
    make_gpu_tree(tmp_path, "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release Build\n")
    runner = FakeRunner({("nvidia-smi", "--query-gpu"): (18, read_public("nvidia-smi-mismatch-570.txt"), "")})
    facts = gpu_collection.collect_gpu_facts(runner, root=str(tmp_path), nvml=FakeNvml(fail_init="RM has detected an NVML/RM version mismatch."))
    assert facts["state"] == "mismatch" and facts["driver"]["mismatch"] is True


def test_nvml_error_midway():
    class Broken(FakeNvml):
        def nvmlDeviceGetCount(self):
            raise RuntimeError("Unknown Error")
    nvml = Broken()
    assert gpu_collection.collect_nvml(nvml) == (None, None, "NVML: Unknown Error")
    assert nvml.shut_down


def test_without_nvidia_ml_py_nvml_is_the_drivers_library_or_none(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    assert gpu_collection.import_nvml(load=lambda: None) is None
    assert gpu_collection.import_nvml(load=lambda: "the driver's NVML") == "the driver's NVML"
    assert nvml_library.load_nvml(load=_no_library) is None


def _no_library(name):
    raise OSError("%s: cannot open shared object file: No such file or directory" % name)


class FakeNvmlLibrary(object):
    """The H200 host's NVML as a C library: each function fills what it is handed by pointer and returns an
    nvmlReturn_t, as libnvidia-ml.so.1 does (values of nvidia-smi-query-gpu.csv, MIG "Not Supported")."""

    HANDLE = 0x7F5E12345678  # wider than a C int, as real handles are

    def __init__(self, without=()):
        self.calls = []
        for name in without:
            setattr(self, name, None)

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        if name.startswith("nvml") and value is None:
            raise AttributeError(name)  # as ctypes.CDLL for a symbol the library lacks
        if name.startswith("nvml") and name != "nvmlErrorString":
            object.__getattribute__(self, "calls").append(name)
        return value

    @staticmethod
    def _fill(buffer, text):
        buffer.value = text

    def nvmlInit_v2(self):
        return 0

    def nvmlShutdown(self):
        return 0

    def nvmlSystemGetDriverVersion(self, buffer, size):
        assert size.value >= 80
        self._fill(buffer, b"580.159.04")
        return 0

    def nvmlSystemGetCudaDriverVersion_v2(self, version):
        version._obj.value = 13000
        return 0

    def nvmlDeviceGetCount_v2(self, count):
        count._obj.value = 1
        return 0

    def nvmlDeviceGetHandleByIndex_v2(self, index, handle):
        assert index.value == 0
        handle._obj.value = self.HANDLE
        return 0

    def _device(self, handle):
        assert isinstance(handle, ctypes.c_void_p) and handle.value == self.HANDLE

    def nvmlDeviceGetName(self, handle, buffer, size):
        self._device(handle)
        self._fill(buffer, b"NVIDIA H200")
        return 0

    def nvmlDeviceGetUUID(self, handle, buffer, size):
        self._device(handle)
        self._fill(buffer, b"GPU-33ea3011-d795-9321-b26f-fa72c6fe6db3")
        return 0

    def nvmlDeviceGetCudaComputeCapability(self, handle, major, minor):
        self._device(handle)
        major._obj.value, minor._obj.value = 9, 0
        return 0

    def nvmlDeviceGetMemoryInfo(self, handle, memory):
        self._device(handle)
        memory._obj.total = 143771 * 1024 * 1024
        return 0

    def nvmlDeviceGetPciInfo_v3(self, handle, pci):
        self._device(handle)
        pci._obj.busId = b"00000000:00:06.0"
        return 0

    nvmlDeviceGetPciInfo_v2 = nvmlDeviceGetPciInfo_v3

    def nvmlDeviceGetPersistenceMode(self, handle, mode):
        mode._obj.value = 1
        return 0

    def nvmlDeviceGetMigMode(self, handle, current, pending):
        return 3  # NVML_ERROR_NOT_SUPPORTED

    class _ErrorString(object):
        """A C function: the caller sets its restype (c_char_p) before calling it."""
        restype = None

        def __call__(self, code):
            assert self.restype is ctypes.c_char_p
            return {3: b"Not Supported", 9: b"Driver Not Loaded"}.get(code, b"Unknown Error")

    nvmlErrorString = _ErrorString()


def test_the_drivers_nvml_through_ctypes_gives_the_facts_nvidia_smi_gives(tmp_path):
    """One NVML session in the module's process gives the H200's facts exactly as its two nvidia-smi runs did,
    and runs no program."""
    make_gpu_tree(tmp_path, read_h200("proc-driver-nvidia-version.txt"))
    library = FakeNvmlLibrary()
    runner = FakeRunner({})
    through_nvml = gpu_collection.collect_gpu_facts(runner, root=str(tmp_path), nvml=nvml_library.CtypesNvml(library))
    through_smi = gpu_collection.collect_gpu_facts(h200_runner(), root=str(tmp_path))
    assert runner.calls == [] and through_nvml["source"] == "nvml" and through_nvml["messages"] == []
    assert through_nvml["gpus"] == [dict(gpu, mig_mode=None) for gpu in through_smi["gpus"]]  # MIG: Not Supported
    assert through_nvml["driver"] == through_smi["driver"] and through_nvml["state"] == through_smi["state"] == "ok"
    assert library.calls[0] == "nvmlInit_v2" and library.calls[-1] == "nvmlShutdown"


def test_an_older_library_is_called_by_its_older_names_and_a_missing_call_falls_back_to_nvidia_smi(tmp_path):
    make_gpu_tree(tmp_path, read_h200("proc-driver-nvidia-version.txt"))
    older = FakeNvmlLibrary(without=("nvmlDeviceGetPciInfo_v3",))
    gpus, _driver, error = gpu_collection.collect_nvml(nvml_library.CtypesNvml(older))
    assert error is None and gpus[0]["pci_bus_id"] == "0000:00:06.0" and "nvmlDeviceGetPciInfo_v2" in older.calls
    facts = gpu_collection.collect_gpu_facts(h200_runner(), root=str(tmp_path), nvml=nvml_library.CtypesNvml(
        FakeNvmlLibrary(without=("nvmlSystemGetCudaDriverVersion_v2",))))
    assert facts["source"] == "nvidia-smi" and facts["messages"] == [
        "NVML: the NVML library has none of nvmlSystemGetCudaDriverVersion_v2, nvmlSystemGetCudaDriverVersion"]


def test_an_nvml_error_code_is_raised_in_nvmls_words():
    class NotLoaded(FakeNvmlLibrary):
        def nvmlInit_v2(self):
            return 9
    assert gpu_collection.collect_nvml(nvml_library.CtypesNvml(NotLoaded())) == (None, None, "NVML: Driver Not Loaded")
    with pytest.raises(nvml_library.NvmlError, match="^Not Supported$"):
        nvml_library.CtypesNvml(FakeNvmlLibrary()).nvmlDeviceGetMigMode(ctypes.c_void_p(FakeNvmlLibrary.HANDLE))


# ---------------------------------------------------------------------------
# CUDA home, nvcc, forward compatibility, Python probe
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("environ, nvcc, local, expected", [
    ({"CUDA_HOME": "/opt/cuda-12.4", "CUDA_PATH": "/x"}, "/usr/bin/nvcc", True, ("/opt/cuda-12.4", "CUDA_HOME")),
    ({"CUDA_PATH": "/opt/cuda-12.1"}, "/usr/bin/nvcc", True, ("/opt/cuda-12.1", "CUDA_PATH")),
    ({}, "/usr/local/cuda-13.0/bin/nvcc", True, ("/usr/local/cuda-13.0", "nvcc on PATH")),
    ({}, None, True, ("/usr/local/cuda", "/usr/local/cuda")),
    ({}, None, False, (None, None)),
])
def test_resolve_cuda_home_in_torch_order(environ, nvcc, local, expected):
    assert toolchain.resolve_cuda_home(environ, lambda name: nvcc, lambda path: local) == expected


def test_collect_nvcc(tmp_path):
    runner = FakeRunner({"nvcc": (0, read_h200("nvcc-version.txt"), "")})
    nvcc = toolchain.collect_nvcc(runner, "/usr/local/cuda", "nvcc on PATH")
    assert nvcc == {"present": True, "cuda_home": "/usr/local/cuda", "found_by": "nvcc on PATH", "path": "/usr/local/cuda/bin/nvcc",
                    "release": "13.0", "version": "13.0.88", "error": None}
    assert runner.calls == [["/usr/local/cuda/bin/nvcc", "--version"]]


def test_collect_nvcc_missing():
    assert "no CUDA home" in toolchain.collect_nvcc(FakeRunner({}), None, None)["error"]
    missing = toolchain.collect_nvcc(FakeRunner({}), "/opt/cuda", "CUDA_HOME")
    assert missing["present"] is False and "not found" in missing["error"]


def test_find_forward_compat(tmp_path):
    write(tmp_path, "usr/local/cuda-13.0/compat/libcuda.so.580.95.05", "")
    assert toolchain.find_forward_compat(str(tmp_path), "13.0") == {"path": "/usr/local/cuda-13.0/compat", "present": True}
    assert toolchain.find_forward_compat(str(tmp_path), "12.8") == {"path": "/usr/local/cuda-12.8/compat", "present": False}
    assert toolchain.find_forward_compat(str(tmp_path), None) is None


def runner_with_pythonpath(pythonpath):
    """A real command runner whose Python imports from ``pythonpath`` first."""
    def runner(argv):
        env = dict(os.environ, PYTHONPATH=str(pythonpath))
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, universal_newlines=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr
    return runner


def test_python_probe_without_torch_runs_for_real(tmp_path):
    """The probe script itself, run by this interpreter with torch made unimportable."""
    write(tmp_path, "torch/__init__.py", "raise ImportError('no torch in this test')\n")

    probe = toolchain.collect_python(runner_with_pythonpath(tmp_path), sys.executable)
    assert probe["error"] is None
    assert probe["torch"]["present"] is False and "no torch in this test" in probe["torch"]["error"]
    assert probe["apex"] == {"present": False, "extensions": dict((name, False) for name in toolchain.APEX_EXTENSIONS)}


def test_python_probe_with_fake_torch_runs_for_real(tmp_path):
    """A stand-in torch package that answers like the H200 host's torch with CUDA unavailable."""
    write(tmp_path, "torch/__init__.py", (
        "__version__ = '2.11.0+cu130'\n"
        "class version: cuda = '13.0'\n"
        "class backends:\n    class cudnn:\n        version = staticmethod(lambda: 91900)\n"
        "class cuda:\n    is_available = staticmethod(lambda: False)\n    get_arch_list = staticmethod(lambda: [])\n"
        "class _C:\n    _cuda_getArchFlags = staticmethod(lambda: 'sm_75 sm_80 sm_86 sm_90 sm_100 sm_120')\n"
    ))
    write(tmp_path, "apex/__init__.py", "")
    write(tmp_path, "amp_C.py", "")

    probe = toolchain.collect_python(runner_with_pythonpath(tmp_path), sys.executable)
    torch_info = probe["torch"]
    assert torch_info["version"] == "2.11.0+cu130" and torch_info["cuda"] == "13.0" and torch_info["cudnn_version"] == "9.19.0"
    assert torch_info["cuda_available"] is False
    assert torch_info["arch_list"] == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert torch_info["arch_list_source"] == "torch._C._cuda_getArchFlags"
    assert probe["apex"]["present"] is True and probe["apex"]["extensions"]["amp_C"] is True


def test_python_probe_interpreter_missing_or_garbage():
    probe = toolchain.collect_python(FakeRunner({}), "/nonexistent/bin/python")
    assert "did not run the probe" in probe["error"] and probe["torch"] == {"present": False}
    garbage = toolchain.collect_python(FakeRunner({"python": (0, "{not json\n", "")}), "python")
    assert garbage["error"]
    ok = toolchain.collect_python(FakeRunner({"python": (0, "noise\n" + json.dumps({"torch": {"present": False}}) + "\n", "")}), "python")
    assert ok["error"] is None and ok["interpreter"] == "python"


def test_module_runner_resolves_programs():
    class Module(object):
        def __init__(self):
            self.ran = []

        def get_bin_path(self, name, opt_dirs=None):
            return "/bin/sh" if name == "sh" else None

        def run_command(self, argv, environ_update=None):
            self.ran.append((argv, environ_update))
            return 0, "out", ""
    module = Module()
    runner = node_access.module_runner(module)
    assert runner(["sh", "-c", "true"]) == (0, "out", "")
    assert module.ran == [(["/bin/sh", "-c", "true"], {"LC_ALL": "C"})]
    assert runner(["nvidia-smi"])[0] == 127
    assert runner(["/nonexistent/python", "-c", ""])[0] == 127


def test_read_json_file_proves_nothing_when_missing_cut_short_or_unreadable(tmp_path):
    record = tmp_path / "record.json"
    assert node_access.read_json_file(str(record)) is None
    record.write_text('{"version": "580.159.04", "held": true}')
    assert node_access.read_json_file(str(record)) == {"version": "580.159.04", "held": True}
    record.write_text('{"version": "580.1')  # a write that a kill cut short
    assert node_access.read_json_file(str(record)) is None
    assert node_access.read_json_file(str(tmp_path)) is None  # a folder where the record belongs
    assert node_access.read_file(str(record), "rb") == b'{"version": "580.1'


def test_the_structs_have_the_layout_of_nvml_h():
    """nvmlPciInfo_t and nvmlMemory_t as the NVML API reference lays them out: the library writes into them by offset."""
    assert ctypes.sizeof(nvml_library.PciInfo) == 16 + 5 * 4 + 32
    assert nvml_library.PciInfo.busId.offset == 36 and nvml_library.PciInfo.domain.offset == 16
    assert ctypes.sizeof(nvml_library.Memory) == 24 and nvml_library.Memory.total.offset == 0
