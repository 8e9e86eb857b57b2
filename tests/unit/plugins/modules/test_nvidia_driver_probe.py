# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The nvidia_driver_probe module: what it reads on a (fake) node for the nvidia_driver_plan action.

Its readers are fed fake trees (/lib/modules, sysfs's PCI devices, the boot id, the record, the
Secure Boot efivar); the module's commands (dpkg-query, rpm, mokutil, dkms, dpkg, dnf) answer from
recorded outputs by program name. It decides nothing: the decisions are tested on the action and on
module_utils.decide.nvidia_driver."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

import pytest

from ansible.module_utils import basic
from conftest import read_public, run_module
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import fabric_manager, nvidia_driver
from ansible_collections.aistack.gpu_node.plugins.modules import nvidia_driver_probe as probe


def hgx_sysfs(root):
    """The sysfs entries of an HGX H100 baseboard's NVSwitches and one GPU (ids of the FM user guide's lspci sample)."""
    for slot, device, pci_class in (("0000:07:00.0", "0x22a3", "0x068000"), ("0000:08:00.0", "0x22a3", "0x068000"),
                                    ("0000:1b:00.0", "0x2330", "0x030200")):
        path = root / slot
        path.mkdir(parents=True)
        for name, value in (("vendor", "0x10de"), ("device", device), ("class", pci_class)):
            (path / name).write_text(value + u"\n")


# -- the readers, on fake trees ----------------------------------------------------

def test_kernels_are_the_folders_with_a_modules_order(tmp_path):
    for name in ("6.1.0-41-amd64", "6.1.0-40-amd64", "headers-only"):
        (tmp_path / name).mkdir()
    for name in ("6.1.0-41-amd64", "6.1.0-40-amd64"):
        (tmp_path / name / "modules.order").write_text(u"")
    assert probe.installed_kernels(str(tmp_path)) == ["6.1.0-40-amd64", "6.1.0-41-amd64"]
    assert probe.installed_kernels(str(tmp_path / "absent")) == []


def test_nvswitches_are_read_from_sysfs(tmp_path):
    hgx_sysfs(tmp_path)
    switches = probe.read_nvswitches(str(tmp_path))
    assert [item["slot"] for item in switches] == ["0000:07:00.0", "0000:08:00.0"]
    assert switches[0]["device"] == "22a3" and switches[0]["class"] == fabric_manager.NVSWITCH_CLASS
    assert probe.read_nvswitches(str(tmp_path / "absent")) == []


def test_the_record_reads_back_and_one_that_is_not_json_is_refused_by_name(tmp_path):
    path = tmp_path / "record.json"
    assert probe.read_record(str(path)) is None
    path.write_text(json.dumps({"branch": 535}))
    assert probe.read_record(str(path)) == {"branch": 535}
    path.write_text(u"{half")
    with pytest.raises(ValueError, match=r"^nvidia_driver: the role's record %s is not JSON \(.*\); remove it to let "
                                         r"the role decide afresh$" % path):
        probe.read_record(str(path))


def test_the_boot_id_is_stripped(tmp_path):
    (tmp_path / "boot_id").write_text(u"boot-1\n")
    assert probe.read_boot_id(str(tmp_path / "boot_id")) == "boot-1"
    assert probe.read_boot_id(str(tmp_path / "absent")) == ""


def test_secure_boot_from_mokutil_else_from_the_efivar(tmp_path):
    calls = []

    def run_command(argv):
        calls.append(argv)
        return 0, "SecureBoot enabled\n", ""
    mokutil, efivar = tmp_path / "mokutil", tmp_path / "SecureBoot"
    assert probe.read_secure_boot(run_command, str(mokutil), str(efivar)) == "unsupported" and calls == []
    efivar.write_bytes(b"\x06\x00\x00\x00\x00")
    assert probe.read_secure_boot(run_command, str(mokutil), str(efivar)) == "disabled"
    mokutil.write_text(u"")
    assert probe.read_secure_boot(run_command, str(mokutil), str(efivar)) == "enabled"
    assert calls == [[str(mokutil), "--sb-state"]]


# -- the module ----------------------------------------------------------------------

@pytest.fixture
def node(tmp_path, monkeypatch):
    """A node without kernels, mokutil or EFI, whose commands answer from ``node.outputs`` by program name."""
    (tmp_path / "modules").mkdir()
    (tmp_path / "boot_id").write_text(u"boot-1\n")
    monkeypatch.setattr(nvidia_driver, "MODULES_DIR", str(tmp_path / "modules"))
    monkeypatch.setattr(nvidia_driver, "BOOT_ID_PATH", str(tmp_path / "boot_id"))
    monkeypatch.setattr(nvidia_driver, "MOKUTIL", str(tmp_path / "mokutil"))
    monkeypatch.setattr(nvidia_driver, "SECURE_BOOT_EFIVAR", str(tmp_path / "SecureBoot"))
    monkeypatch.setattr(fabric_manager, "PCI_DEVICES", str(tmp_path / "pci"))

    class Node(object):
        root = tmp_path
        record = str(tmp_path / "record.json")
        outputs = {"dpkg-query": (1, "", "dpkg-query: no path found matching pattern */nvidia-smi\n")}
        calls = []

    def run_command(self, argv, **kwargs):
        Node.calls.append(argv)
        return Node.outputs[argv[0].rsplit("/", 1)[-1]]

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    Node.calls = []
    return Node


PACKAGE_QUERY = ["dpkg-query", "-W", "-f", "${db:Status-Abbrev}\\t${Package}\\t${Version}\\n"]
RPM_QUERY = ["rpm", "-qa", "--qf", "ii\\t%{NAME}\\t%{EPOCHNUM}:%{VERSION}-%{RELEASE}\\n"]


def run(node, capsys, **args):
    return run_module(probe, dict(args, _ansible_check_mode=True), capsys)


def test_preflight_reads_a_bare_node_with_one_owner_query(node, capsys):
    code, result = run(node, capsys, stage="preflight", record_path=node.record, pkg_mgr="apt")
    assert code == 0 and result["changed"] is False
    assert dict((key, result[key]) for key in ("record", "owners", "packages", "kernels", "switches",
                                               "fabric_manager_version", "secure_boot", "boot_id")) == {
        "record": None, "owners": [], "packages": {}, "kernels": [], "switches": [], "fabric_manager_version": None,
        "secure_boot": "unsupported", "boot_id": "boot-1"}
    assert node.calls == [nvidia_driver.owner_query_argv("apt"), PACKAGE_QUERY + nvidia_driver.PACKAGE_GLOBS["apt"]]


def test_preflight_lists_the_installed_driver_packages_and_headers(node, capsys):
    # dpkg-query -W as Debian 12 answers it: a removed package left its configuration (rc), one is held (hi).
    node.outputs["dpkg-query"] = (1, "ii \tnvidia-kernel-dkms\t535.247.01-1~deb12u1\nhi \tlibcuda1\t535.247.01-1~deb12u1\n"
                                     "rc \tnvidia-legacy-check\t535.247.01-1~deb12u1\nii \tlinux-headers-6.1.0-41-amd64\t"
                                     "6.1.158-1\n", "dpkg-query: no packages found matching cuda-drivers*\n")
    code, result = run(node, capsys, stage="preflight", record_path=node.record, pkg_mgr="apt")
    assert code == 0 and result["packages"] == {"nvidia-kernel-dkms": "535.247.01-1~deb12u1",
                                                "libcuda1": "535.247.01-1~deb12u1",
                                                "linux-headers-6.1.0-41-amd64": "6.1.158-1"}


def test_preflight_reads_the_owners_and_fabric_manager_where_there_are_nvswitches(node, capsys):
    hgx_sysfs(node.root / "pci")
    node.outputs["dpkg-query"] = (0, "nvidia-smi: /usr/bin/nvidia-smi\nnvidia-fabricmanager-580 install ok installed "
                                     "580.95.04-1\n", "")
    code, result = run(node, capsys, stage="preflight", record_path=node.record, pkg_mgr="apt")
    assert code == 0 and result["owners"] == ["nvidia-smi"] and len(result["switches"]) == 2
    assert result["fabric_manager_version"] == "580.95.04"
    assert fabric_manager.FM_VERSION_QUERY["apt"] in node.calls


def test_preflight_refuses_a_record_that_is_not_json(node, capsys):
    (node.root / "record.json").write_text(u"{half")
    code, result = run(node, capsys, stage="preflight", record_path=node.record, pkg_mgr="apt")
    assert code == 1 and result["msg"].startswith("nvidia_driver: the role's record %s is not JSON" % node.record)


def test_installed_reads_only_what_it_is_asked(node, capsys):
    code, result = run(node, capsys, stage="installed")
    assert code == 0 and node.calls == [] and result["dkms_status"] is None and result["hold_list"] is None
    assert result["packages"] is None
    assert result["boot_id"] == "boot-1"
    node.outputs["dkms"] = (0, read_public("dkms-status-debian12-container.txt"), "")
    node.outputs["dpkg"] = (0, "libcuda1:amd64\t\t\t\t\thold\n", "")
    code, result = run(node, capsys, stage="installed", dkms_module="nvidia-current", hold_list="apt")
    assert node.calls == [["dkms", "status", "-m", "nvidia-current"], ["dpkg", "--get-selections"]]
    assert result["dkms_status"] == read_public("dkms-status-debian12-container.txt")
    assert result["hold_list"] == "libcuda1:amd64\t\t\t\t\thold\n"
    node.calls[:] = []
    node.outputs["rpm"] = (0, "ii\tnvidia-driver\t3:580.95.05-1.el9\n", "")
    code, result = run(node, capsys, stage="installed", package_list="dnf")
    assert node.calls == [RPM_QUERY + nvidia_driver.PACKAGE_GLOBS["dnf"]]
    assert result["packages"] == {"nvidia-driver": "3:580.95.05-1.el9"}


def test_installed_fails_when_dkms_or_dpkg_fails_and_takes_dnf_without_versionlock_as_nothing_held(node, capsys):
    node.outputs["dkms"] = (3, "", "dkms: command broke\n")
    code, result = run(node, capsys, stage="installed", dkms_module="nvidia-current")
    assert code == 1 and result["msg"] == "nvidia_driver: dkms status failed (rc 3): dkms: command broke"
    node.outputs["dpkg"] = (2, "", "dpkg: error: broken status\n")
    code, result = run(node, capsys, stage="installed", hold_list="apt")
    assert code == 1 and result["msg"] == "nvidia_driver: dpkg --get-selections failed (rc 2): dpkg: error: broken status"
    node.outputs["dnf"] = (1, "", "No such command: versionlock.\n")
    code, result = run(node, capsys, stage="installed", hold_list="dnf")
    assert code == 0 and result["hold_list"] == ""
