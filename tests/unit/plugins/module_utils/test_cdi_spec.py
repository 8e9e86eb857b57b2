# -*- coding: utf-8 -*-
"""CDI specs: what one made by nvidia-ctk is for, and whether it still fits the node."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import os

import yaml

from conftest import FIXTURES
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import cdi_spec

UUID = "GPU-d657d2a4-7b62-379a-9a7e-116a1d5aa7ee"
LIBDIR = "/usr/lib/x86_64-linux-gnu/"
# The shape of `nvidia-ctk cdi generate` (CDI 0.5+, nvidia-ctk's default names: index and UUID, and "all"), for one
# GPU on driver 580.159.04; the GPU host's own spec is tested below.
SPEC = {
    "cdiVersion": "0.5.0",
    "kind": "nvidia.com/gpu",
    "devices": [
        {"name": "0", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"}]}},
        {"name": UUID, "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"}]}},
        {"name": "all", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"}]}},
    ],
    "containerEdits": {
        "env": ["NVIDIA_VISIBLE_DEVICES=void"],
        "deviceNodes": [{"path": "/dev/nvidiactl"}, {"path": "/dev/nvidia-uvm"}, {"path": "/dev/nvidia-uvm-tools"}],
        "mounts": [
            {"hostPath": LIBDIR + "libcuda.so.580.159.04", "containerPath": LIBDIR + "libcuda.so.580.159.04",
             "options": ["ro", "nosuid", "nodev", "bind"]},
            {"hostPath": LIBDIR + "libnvidia-ml.so.580.159.04", "containerPath": LIBDIR + "libnvidia-ml.so.580.159.04",
             "options": ["ro", "nosuid", "nodev", "bind"]},
            {"hostPath": "/usr/bin/nvidia-smi", "containerPath": "/usr/bin/nvidia-smi", "options": ["ro", "nosuid", "nodev", "bind"]},
        ],
    },
}
GPUS = [{"index": 0, "uuid": UUID, "name": "NVIDIA H200"}]


def test_the_summary_names_the_devices_nodes_and_the_driver_the_spec_was_made_for():
    summary = cdi_spec.summary(SPEC)
    assert summary["problems"] == [] and summary["kind"] == "nvidia.com/gpu" and summary["cdi_version"] == "0.5.0"
    assert summary["devices"] == ["0", UUID, "all"]
    assert summary["gpu_indexes"] == [0] and summary["gpu_uuids"] == [UUID]
    assert summary["gpu_device_nodes"] == ["/dev/nvidia0"]
    assert summary["device_nodes"] == ["/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia0", "/dev/nvidiactl"]
    assert summary["driver_versions"] == ["580.159.04"]


def test_a_spec_that_fits_the_node_has_no_staleness():
    assert cdi_spec.staleness(cdi_spec.summary(SPEC), "580.159.04", GPUS) == []


def test_a_driver_update_makes_the_spec_stale_naming_both_versions():
    assert cdi_spec.staleness(cdi_spec.summary(SPEC), "580.200.01", GPUS) == [
        "the CDI spec was made for driver 580.159.04, the node runs 580.200.01"]


def test_a_gpu_gone_or_added_makes_the_spec_stale():
    other = "GPU-00000000-0000-0000-0000-000000000001"
    reasons = cdi_spec.staleness(cdi_spec.summary(SPEC), "580.159.04", GPUS + [{"index": 1, "uuid": other}])
    assert reasons == ["the CDI spec names GPUs 0, the node has 0, 1",
                       "the CDI spec names GPUs the node does not have (none) or lacks GPUs it has (%s)" % other]
    swapped = cdi_spec.staleness(cdi_spec.summary(SPEC), "580.159.04", [{"index": 0, "uuid": other}])
    assert swapped == ["the CDI spec names GPUs the node does not have (%s) or lacks GPUs it has (%s)" % (UUID, other)]


def test_what_is_no_nvidia_ctk_spec_is_named():
    spec = copy.deepcopy(SPEC)
    del spec["kind"]
    spec["containerEdits"]["mounts"] = spec["containerEdits"]["mounts"][2:]
    summary = cdi_spec.summary(spec)
    assert summary["problems"] == [
        "the CDI spec has no kind",
        "the CDI spec mounts no versioned driver library (libcuda.so.<version>, libnvidia-ml.so.<version>)"]
    assert cdi_spec.staleness(summary, "580.159.04", GPUS) == summary["problems"]
    assert cdi_spec.summary(["not", "a", "spec"])["problems"] == ["the CDI spec is not a mapping"]


def test_the_spec_nvidia_ctk_made_on_the_h100_host_fits_it_and_reads_stale_after_a_driver_update():
    """`nvidia-ctk cdi generate` (1.17.8) on the GPU test host (H100, driver 580.159.04, recorded by
    tests/gpu/containers.py): its GPU by index and UUID, its device nodes, and the driver it mounts."""
    with open(os.path.join(FIXTURES, "gpu", "nvidia-ctk-cdi-generate-h100.yaml")) as handle:
        spec = yaml.safe_load(handle)
    uuid = "GPU-c885ff9f-3ad7-6ca1-36ae-b5aa48ee0e24"
    summary = cdi_spec.summary(spec)
    assert summary["problems"] == [] and summary["devices"] == ["0", uuid, "all"]
    assert summary["gpu_device_nodes"] == ["/dev/nvidia0"] and summary["driver_versions"] == ["580.159.04"]
    assert "/dev/nvidiactl" in summary["device_nodes"] and "/dev/nvidia-uvm" in summary["device_nodes"]
    host_gpus = [{"index": 0, "uuid": uuid, "name": "NVIDIA H100 80GB HBM3"}]
    assert cdi_spec.staleness(summary, "580.159.04", host_gpus) == []
    assert cdi_spec.staleness(summary, "580.159.05", host_gpus) == [
        "the CDI spec was made for driver 580.159.04, the node runs 580.159.05"]
