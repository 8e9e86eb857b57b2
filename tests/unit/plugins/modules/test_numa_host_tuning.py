# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

import pytest
from ansible.module_utils import basic

from conftest import run_module, write
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import host_tuning
from ansible_collections.aistack.gpu_node.plugins.modules import numa_host_tuning

WANTED = {"numa_balancing": False, "thp": "madvise", "governor": "performance"}


@pytest.fixture
def root(tmp_path, monkeypatch):
    """A bare-metal-like host: NUMA balancing on, THP madvise, two CPUs on powersave, no tuned."""
    write(tmp_path, "proc/sys/kernel/numa_balancing", "1\n")
    write(tmp_path, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n")
    for cpu in (0, 1):
        write(tmp_path, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor" % cpu, "powersave\n")
    monkeypatch.setattr(numa_host_tuning, "ROOT", str(tmp_path))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: None)
    return tmp_path


def read(root, path):
    return (root / path).read_text()


def test_apply_then_revert(root, capsys):
    rc, result = run_module(numa_host_tuning, dict(WANTED), capsys)
    assert rc == 0 and result["changed"] is True and result["method"] == "sysfs"
    assert result["knobs"] == {"numa_balancing": "0", "thp": "madvise", "governor": "performance"}
    assert read(root, "proc/sys/kernel/numa_balancing") == "0"
    assert read(root, "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor") == "performance"
    assert "kernel.numa_balancing = 0" in read(root, "etc/sysctl.d/90-aistack-numa.conf")
    tmpfiles = read(root, "etc/tmpfiles.d/aistack-numa.conf")
    assert "w /sys/kernel/mm/transparent_hugepage/enabled - - - - madvise" in tmpfiles
    assert "w /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor - - - - performance" in tmpfiles
    assert json.loads(read(root, "var/lib/aistack/numa_host_tuning.json")) == {
        "original": {"numa_balancing": "1", "governor": "powersave"}}
    assert '"numa_balancing": "1"' in result["diff"]["before"] and '"numa_balancing": "0"' in result["diff"]["after"]

    _rc, again = run_module(numa_host_tuning, dict(WANTED), capsys)
    assert again["changed"] is False

    _rc, checked = run_module(numa_host_tuning, {"state": "absent", "_ansible_check_mode": True}, capsys)
    assert checked["changed"] is True and read(root, "proc/sys/kernel/numa_balancing") == "0"

    _rc, reverted = run_module(numa_host_tuning, {"state": "absent"}, capsys)
    assert reverted["changed"] is True
    assert read(root, "proc/sys/kernel/numa_balancing") == "1"
    assert read(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") == "powersave"
    for path in ("etc/sysctl.d/90-aistack-numa.conf", "etc/tmpfiles.d/aistack-numa.conf", "var/lib/aistack/numa_host_tuning.json"):
        assert not (root / path).exists()
    _rc, reverted_again = run_module(numa_host_tuning, {"state": "absent"}, capsys)
    assert reverted_again["changed"] is False


def test_check_mode_writes_nothing(root, capsys):
    _rc, result = run_module(numa_host_tuning, dict(WANTED, _ansible_check_mode=True), capsys)
    assert result["changed"] is True and result["knobs"]["numa_balancing"] == "0"
    assert read(root, "proc/sys/kernel/numa_balancing") == "1\n"
    assert not (root / "etc").exists() and not (root / "var").exists()


def test_host_already_as_wanted_records_nothing(root, capsys):
    write(root, "proc/sys/kernel/numa_balancing", "0\n")
    _rc, result = run_module(numa_host_tuning, {"numa_balancing": False, "thp": "madvise"}, capsys)
    # only the persistence file is new; no original needs keeping
    assert result["changed"] is True and not (root / "var/lib/aistack/numa_host_tuning.json").exists()
    assert run_module(numa_host_tuning, {"numa_balancing": False, "thp": "madvise"}, capsys)[1]["changed"] is False


def test_vm_without_cpufreq(root, capsys):
    for cpu in (0, 1):
        (root / ("sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor" % cpu)).unlink()
    _rc, result = run_module(numa_host_tuning, dict(WANTED), capsys)
    assert result["left_alone"] == {"governor": "not supported on this host (no cpufreq)"}
    assert "scaling_governor" not in read(root, "etc/tmpfiles.d/aistack-numa.conf")


def test_tuned_profile_on_top_of_the_active_one(root, capsys, monkeypatch):
    calls = []

    def run_command(self, argv, **kwargs):
        calls.append(argv[1:])
        return 0, "Current active profile: throughput-performance\n", ""
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: "/usr/sbin/" + name)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    _rc, result = run_module(numa_host_tuning, dict(WANTED), capsys)
    assert result["method"] == "tuned" and result["changed"] is True
    profile = read(root, "etc/tuned/aistack-gpu/tuned.conf")
    assert "include=throughput-performance" in profile and "kernel.numa_balancing=0" in profile
    assert "transparent_hugepages=madvise" in profile and "governor=performance" in profile
    assert calls == [["active"], ["profile", "aistack-gpu"]]
    assert read(root, "proc/sys/kernel/numa_balancing") == "1\n"  # tuned applies it, not this module
    del calls[:]
    _rc, result = run_module(numa_host_tuning, {"state": "absent"}, capsys)
    assert calls == [["profile", "throughput-performance"]]
    assert not (root / "etc/tuned/aistack-gpu").exists()


def test_a_failing_tuned_adm_fails_the_task_with_its_rc(root, capsys, monkeypatch, tmp_path):
    """The one result that carries an rc: the module says `failed` itself, it is not left to ansible-core to infer."""
    tuned = tmp_path / "tuned-adm"
    tuned.write_text('#!/bin/sh\n[ "$1" = active ] && { echo "Current active profile: balanced"; exit 0; }\n'
                     'echo "Cannot find profile aistack-gpu" >&2; exit 3\n')
    tuned.chmod(0o755)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: str(tuned))
    rc, result = run_module(numa_host_tuning, dict(WANTED), capsys)
    assert rc == 1
    assert result["failed"] is True and result["rc"] == 3
    assert "Cannot find profile aistack-gpu" in result["stderr"]


def test_plan_skips_what_cannot_be_written():
    host = {"numa_balancing": {"value": "1", "writable": False, "supported": True},
            "thp": {"value": "always", "writable": True, "supported": True},
            "governor": {"value": None, "writable": False, "supported": False}}
    changes, left_alone = host_tuning.plan(host, host_tuning.wanted_values(False, "madvise", "performance"))
    assert changes == {"thp": ("always", "madvise")}
    assert sorted(left_alone) == ["governor", "numa_balancing"]
    assert "read-only" in left_alone["numa_balancing"]
    with pytest.raises(ValueError, match="thp must be one of"):
        host_tuning.wanted_values(thp="sometimes")
    assert host_tuning.parse_thp("[always] madvise never") == "always"
    assert host_tuning.parse_tuned_active("Current active profile: virtual-guest\n") == "virtual-guest"
    assert host_tuning.parse_saved_state("not json") == {} and host_tuning.parse_saved_state("[1]") == {}
