# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Fabric Manager decisions of the nvidia_driver role, as pure functions (no I/O).

An HGX/DGX baseboard's NVSwitches sit on the PCI bus as NVIDIA (vendor 0x10de) devices of
class 0x0680 ("Bridge", other bridge device); their GPUs do not work until Fabric Manager, at
exactly the driver's version, has trained the fabric.

- ``parse_lspci()``/``sysfs_device()``: PCI devices from ``lspci``, ``lspci -n``, ``lspci -nn``
  or ``/sys/bus/pci/devices/*``; ``nvswitches()``: the NVSwitches among them.
- ``fabric_manager_plan()``: nothing without NVSwitch ("no NVSwitch"), otherwise the packages at
  the driver's exact version, held with it, and the service.
- ``version_problems()``: the refusal of a Fabric Manager whose version differs from the driver's.
- ``parse_fabric_state()``/``fabric_problems()``: the fabric state ``nvidia-smi -q`` reports per
  GPU, and what is wrong with it.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import driver_packaging
from ansible_collections.aistack.gpu_node.plugins.module_utils.versions import version_tuple

NVIDIA_VENDOR = "10de"
NVSWITCH_CLASS = "0680"
# nForce chipsets (MCP51/55/61, CK804) reported their Ethernet as class 0680 too, with device ids
# below 0x1000; every NVSwitch id is far above (1af1 on HGX A100, 22a3 on HGX H100/H200).
FIRST_NVSWITCH_DEVICE = 0x1000
# NVSwitch generations by PCI device id, from the Fabric Manager user guide's lspci samples
# (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html). From the third
# generation (Hopper boards) the switches are queried through NSCQ, so libnvidia-nscq goes with FM.
NVSWITCH_DEVICES = {
    "1af1": {"generation": 2, "boards": "DGX/HGX A100"},
    "22a3": {"generation": 3, "boards": "DGX/HGX H100, H200"},
}
# Package names by package manager and source; {branch} is the driver branch. The CUDA repository's
# nvidia-fabricmanager-<branch> is confirmed by a public `apt-cache madison nvidia-fabricmanager-550`
# (versions 550.90.07-1, ...); the others follow the same repositories' naming and are unconfirmed.
# From R590 NVIDIA's repository drops the branch from the names (driver_packaging.NVIDIA_APT_ERAS).
FM_PACKAGES = {
    ("apt", "nvidia"): {"fabricmanager": "nvidia-fabricmanager-{branch}", "nscq": "libnvidia-nscq-{branch}",
                        "status": "primary"},
    ("apt", "distro"): {"fabricmanager": "nvidia-fabricmanager-{branch}", "nscq": "libnvidia-nscq-{branch}",
                        "status": "unconfirmed"},
    ("dnf", "nvidia"): {"fabricmanager": "nvidia-fabric-manager", "nscq": "libnvidia-nscq", "status": "unconfirmed"},
}
FM_SERVICE = "nvidia-fabricmanager"
# Where the node lists its PCI devices; a module constant so the tests can point it at a fake tree.
PCI_DEVICES = "/sys/bus/pci/devices"
# The read-only query of the installed Fabric Manager's version, by package manager.
FM_VERSION_QUERY = {"apt": ["dpkg-query", "-W", "-f", "${Package} ${Status} ${Version}\n", "nvidia-fabricmanager*"],
                    "dnf": ["rpm", "-q", "--qf", "%{NAME} install ok installed %{VERSION}\n", "nvidia-fabric-manager"]}
NO_NVSWITCH = "no NVSwitch on the PCI bus (no NVIDIA device of bridge class 0x0680): Fabric Manager is not needed"

# lspci -n:  "05:00.0 0680: 10de:22a3 (rev a1)"
# lspci -nn: "0005:00:00.0 Bridge [0680]: NVIDIA Corporation Device [10de:1af1] (rev a1)"
# lspci:     "07:00.0 Bridge: NVIDIA Corporation Device 22a3 (rev a1)"
_SLOT = r"^(?P<slot>(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
_NUMERIC = re.compile(_SLOT + r"(?:(?P<name>[^\[\n]*?)\s*\[)?(?P<cls>[0-9a-fA-F]{4})\]?:\s+(?:.*?\[)?"
                      r"(?P<vendor>[0-9a-fA-F]{4}):(?P<device>[0-9a-fA-F]{4})\]?")
_NAMED = re.compile(_SLOT + r"(?P<name>[^:\n]+):\s+NVIDIA Corporation\s+(?:Device\s+(?P<device>[0-9a-fA-F]{4}))?", re.IGNORECASE)
# lspci's names of the classes this module tells apart ("Bridge" alone is 0680, "PCI bridge" 0604).
_CLASS_NAMES = {"bridge": "0680", "3d controller": "0302", "vga compatible controller": "0300", "pci bridge": "0604"}


def _device(slot, pci_class, vendor, device):
    return {"slot": slot.lower(), "class": pci_class.lower(), "vendor": vendor.lower(), "device": device.lower() if device else None}


def parse_lspci(text):
    """PCI devices (``slot``, ``class`` as 4 hex digits, ``vendor``, ``device``) from ``lspci``,
    ``lspci -n`` or ``lspci -nn`` output. Without ``-n`` only NVIDIA devices of a known class
    name are kept (the vendor and class are read from their names)."""
    devices = []
    for line in (text or "").splitlines():
        match = _NUMERIC.match(line.strip())
        if match:
            devices.append(_device(match.group("slot"), match.group("cls"), match.group("vendor"), match.group("device")))
            continue
        match = _NAMED.match(line.strip())
        if match and match.group("name").strip().lower() in _CLASS_NAMES:
            devices.append(_device(match.group("slot"), _CLASS_NAMES[match.group("name").strip().lower()], NVIDIA_VENDOR,
                                   match.group("device")))
    return devices


def sysfs_device(slot, vendor, device, pci_class):
    """A device from the ``vendor``, ``device`` and ``class`` files of ``/sys/bus/pci/devices/<slot>``
    (``0x10de``, ``0x22a3``, ``0x068000``)."""
    return _device(slot, pci_class.strip().lower().replace("0x", "")[:4], vendor.strip().lower().replace("0x", ""),
                   (device or "").strip().lower().replace("0x", ""))


def nvswitches(devices):
    """The NVSwitches among ``devices``, each with its ``generation`` (None when the id is not in
    ``NVSWITCH_DEVICES``)."""
    found = []
    for item in devices:
        if item["vendor"] != NVIDIA_VENDOR or item["class"] != NVSWITCH_CLASS or not item["device"]:
            continue
        if int(item["device"], 16) < FIRST_NVSWITCH_DEVICE:
            continue
        found.append(dict(item, generation=NVSWITCH_DEVICES.get(item["device"], {}).get("generation")))
    return found


def fabric_manager_plan(package_manager, source, branch, version, switches):
    """What a node with these ``switches`` needs beside driver ``version`` (branch ``branch``).

    Returns ``needed``, ``reason``, ``switches`` (count), ``packages``, ``install_names`` (pinned to
    the driver's exact version), ``service``, ``warnings`` and ``problems``. No NVSwitch: nothing,
    and the reason says "no NVSwitch".
    """
    result = {"needed": False, "reason": NO_NVSWITCH, "switches": 0, "packages": [], "install_names": [], "service": None,
              "warnings": [], "problems": []}
    if not switches:
        return result
    result.update(needed=True, switches=len(switches), service=FM_SERVICE,
                  reason="%d NVSwitch(es) on the PCI bus (%s): Fabric Manager at the driver's exact version" % (
                      len(switches), ", ".join(sorted(set(item["device"] for item in switches)))))
    names = FM_PACKAGES.get((package_manager, source))
    if (package_manager, source) == ("apt", "nvidia"):
        era = driver_packaging.nvidia_apt_era(branch)
        names = dict(names, fabricmanager=era["fabricmanager"], nscq=era["nscq"])
    if names is None:
        result["problems"].append("nvidia_driver_source: %s has no Fabric Manager package for this %s node with NVSwitches; "
                                  "use nvidia_driver_source: nvidia (NVIDIA's CUDA repository)" % (source, package_manager))
        return result
    if not version:
        result["problems"].append("nvidia_driver_version: a node with NVSwitches needs the exact driver version (\"%d.x.y\"), "
                                  "since Fabric Manager must match it to the patch level" % branch)
        return result
    unknown = sorted(set(item["device"] for item in switches if item["generation"] is None))
    if unknown:
        result["warnings"].append("NVSwitch device id(s) %s are not in the tables; installing NSCQ as for third-generation "
                                  "switches" % ", ".join(unknown))
    packages = [names["fabricmanager"].format(branch=branch)]
    if any(item["generation"] is None or item["generation"] >= 3 for item in switches):
        packages.append(names["nscq"].format(branch=branch))
    if names["status"] == "unconfirmed":
        result["warnings"].append("the Fabric Manager package names for %s/%s (%s) are unconfirmed" % (
            package_manager, source, ", ".join(packages)))
    pin = "=%s*" if package_manager == "apt" else "-%s"
    result.update(packages=packages, install_names=[name + pin % version for name in packages])
    return result


def parse_installed_version(text):
    """The version of the installed Fabric Manager from ``FM_VERSION_QUERY`` output, None when none is installed."""
    for line in (text or "").splitlines():
        match = re.match(r"^nvidia-fabric-?manager\S*\s+install ok installed\s+(?:\d+:)?(\d+(?:\.\d+)+)", line)
        if match:
            return match.group(1)
    return None


def adopt_check(driver_version, switches, fabric_manager_version):
    """Adopt mode's Fabric Manager check: ``{"report", "problems"}``; the report says "no NVSwitch"
    on a node without one."""
    report = {"needed": bool(switches), "switches": len(switches), "version": fabric_manager_version,
              "reason": NO_NVSWITCH if not switches else "%d NVSwitch(es) on the PCI bus: Fabric Manager must run at the "
              "driver's exact version" % len(switches)}
    return {"report": report, "problems": version_problems(driver_version, fabric_manager_version) if switches else []}


def version_problems(driver_version, fabric_manager_version):
    """The refusal of a Fabric Manager whose version is not exactly the driver's, naming both."""
    if not fabric_manager_version:
        return ["Fabric Manager is not installed on a node with NVSwitches; the GPUs stay unusable until "
                "nvidia-fabricmanager %s runs" % driver_version]
    if version_tuple(fabric_manager_version) != version_tuple(driver_version):
        return ["Fabric Manager %s differs from the driver %s: they must be the same version to the patch level, or "
                "Fabric Manager refuses to start and the GPUs stay unusable; install nvidia-fabricmanager %s (nvidia_driver_version)"
                % (fabric_manager_version, driver_version, driver_version)]
    return []


_FABRIC = re.compile(r"^(?P<indent>\s*)Fabric\s*$")
_FIELD = re.compile(r"^\s*(State|Status)\s*:\s*(.*?)\s*$")


def parse_fabric_state(text):
    """Each ``Fabric`` section of ``nvidia-smi -q``: ``{"state", "status"}`` (``N/A`` where the GPU
    generation reports none, as on A100)."""
    states = []
    current = None
    for line in (text or "").splitlines():
        if _FABRIC.match(line):
            current = {"state": None, "status": None}
            states.append(current)
            continue
        match = _FIELD.match(line)
        if current is not None and match:
            current[match.group(1).lower()] = match.group(2)
            if current["state"] is not None and current["status"] is not None:
                current = None
    return states


def fabric_problems(states):
    """What is wrong with the fabric: any GPU whose state is reported and is not
    ``Completed``/``Success``. ``N/A`` everywhere (A100 boards) leaves the service state to judge."""
    problems = []
    for index, item in enumerate(states):
        if item["state"] in (None, "N/A") and item["status"] in (None, "N/A"):
            continue
        if (item["state"], item["status"]) != ("Completed", "Success"):
            problems.append("GPU %d: fabric state %s, status %s (expected Completed, Success): Fabric Manager has not "
                            "trained the NVSwitch fabric; see journalctl -u nvidia-fabricmanager" % (index, item["state"], item["status"]))
    return problems
