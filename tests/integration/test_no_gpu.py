"""No GPU, no driver: on a machine without an NVIDIA GPU, site.yml's driver component changes
nothing, check mode included, and says why in one line (issue 16)."""

import os
import re
import sys

import pytest
from conftest import REPO_ROOT, recap, run

sys.path.insert(0, os.path.join(REPO_ROOT, ".cache", "collections"))
from ansible_collections.aistack.gpu_node.plugins.module_utils.probe.gpu_collection import scan_pci  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.skipif(bool(scan_pci("/")), reason="this machine has an NVIDIA GPU")


def test_driver_check_run_on_a_node_without_gpu_changes_nothing_and_says_why():
    # The acceptance command, with the shipped local inventory and nothing else.
    proc = run(["ansible-playbook", "site.yml", "--check", "--tags", "driver", "-i", "inventories/local/hosts.yml"], check=False)
    output = "--- stdout\n%s\n--- stderr\n%s" % (proc.stdout, proc.stderr)
    assert proc.returncode == 0, output
    assert recap(proc.stdout)["localhost"]["changed"] == 0, output
    # One message (the YAML result format folds it across terminal lines), once in preflight and
    # once in the provision play.
    reason = re.findall(r"msg: '(nvidia_driver skipped on localhost: [^']*)'", " ".join(proc.stdout.split()))
    assert len(reason) == 2 and len(set(reason)) == 1, output
    assert "no NVIDIA GPU on this node" in reason[0] and "nvidia_driver_install_without_gpu: true" in reason[0]
    # What the issue saw planned there (sources, pin, holds): the install tasks are not even included.
    for task in ("Enable the driver's components of Debian's archive", "Pin the driver packages to the branch or version",
                 "Install the driver packages and kernel headers", "Hold every installed driver package"):
        assert task not in proc.stdout, output
