# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Pure decisions of the miniconda role: which installer, with which checksum, and what to do
with the prefix that is already on the node."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.conda_mirrors import redact

FLAVORS = ("miniconda", "miniforge")
_INSTALLER_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-(\d+))?$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# Architectures as Ansible reports them (ansible_facts.architecture) -> installer file suffix.
ARCHITECTURES = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64", "ppc64le": "ppc64le"}


def installer_version_tuple(version):
    """``"25.1.1-2"`` -> ``(25, 1, 1, 2)``; ``"25.3.0"`` -> ``(25, 3, 0, 0)``. Raises ValueError."""
    match = _INSTALLER_VERSION.match(str(version).strip())
    if not match:
        raise ValueError("not an installer version like 25.1.1-2: %r" % (version,))
    return tuple(int(part or 0) for part in match.groups())


def choose_installer(table, flavor, version, architecture, sha256="", url=""):
    """The installer to use: ``{flavor, version, filename, url, sha256, source}``. ``url`` has a password
    in it masked: it is what messages show, and the role downloads from miniconda_installer_url itself.

    ``table`` is the role's table of vendor checksums: ``{flavor: {"base_url": "...[{version}]...", "filename":
    "...{version}...{arch}...", "default_version": ..., "versions": {version: {arch: {"sha256": ...,
    "source": ...}}}}}``. ``version`` empty means the flavor's pinned default. A ``sha256`` given by
    the user is required for a version or architecture the table does not know, and must equal
    the table's value where it does know it. ``url`` replaces the vendor URL (a mirror).
    Raises ValueError naming the variable to fix.
    """
    if flavor not in FLAVORS or flavor not in table:
        raise ValueError("miniconda_flavor must be one of %s, got %r" % (", ".join(FLAVORS), flavor))
    entry = table[flavor]
    version = str(version or entry["default_version"])
    installer_version_tuple(version)  # validates
    arch = ARCHITECTURES.get(architecture)
    if arch is None:
        raise ValueError("no %s installer for architecture %r (known: %s)"
                         % (flavor, architecture, ", ".join(sorted(ARCHITECTURES))))
    sha256 = str(sha256 or "").strip().lower()
    if sha256 and not _SHA256.match(sha256):
        raise ValueError("miniconda_installer_sha256 must be 64 hex digits, got %r" % sha256)
    known = entry["versions"].get(version, {}).get(arch)
    if known:
        if sha256 and sha256 != known["sha256"]:
            raise ValueError("miniconda_installer_sha256 %s differs from the vendor's published %s for %s %s %s (%s)"
                             % (sha256, known["sha256"], flavor, version, arch, known["source"]))
        sha256, source = known["sha256"], known["source"]
    elif sha256:
        source = "miniconda_installer_sha256 (given by the user)"
    else:
        raise ValueError("%s %s for %s is not in the role's checksum table (%s); set miniconda_installer_sha256 "
                         "to the vendor's published sha256 of that installer"
                         % (flavor, version, arch, ", ".join(sorted(entry["versions"])) or "empty"))
    filename = entry["filename"].format(version=version, arch=arch)
    return {"flavor": flavor, "version": version, "filename": filename, "sha256": sha256, "source": source,
            "url": redact(url or "%s/%s" % (entry["base_url"].format(version=version, arch=arch).rstrip("/"), filename))}


def install_action(desired, prefix_exists, marker, conda_runs, allow_downgrade=False):
    """What to do with the prefix: ``{"action": ..., "reason": ...}``.

    Actions: ``none`` (verified install of the desired version), ``install`` (no prefix),
    ``repair`` (a prefix without a valid completion marker, or whose conda does not run: an
    interrupted or damaged install, re-run in place with ``-u`` so environments are kept),
    ``upgrade`` (older version, in place with ``-u``), ``refuse`` (a downgrade not allowed, or a
    different flavor in the same prefix).
    """
    if not prefix_exists:
        return {"action": "install", "reason": "no conda prefix yet"}
    if not isinstance(marker, dict) or not marker.get("version") or not marker.get("flavor"):
        return {"action": "repair", "reason": "the prefix has no completion marker: an interrupted or foreign install"}
    if not conda_runs:
        return {"action": "repair", "reason": "conda in the prefix does not run"}
    if marker["flavor"] != desired["flavor"]:
        return {"action": "refuse", "reason": "the prefix holds %s %s; changing to %s in place is not supported: remove "
                "it or set miniconda_prefix to another path" % (marker["flavor"], marker["version"], desired["flavor"])}
    have = installer_version_tuple(marker["version"])
    want = installer_version_tuple(desired["version"])
    if have == want:
        if marker.get("sha256") and marker["sha256"] != desired["sha256"]:
            return {"action": "repair", "reason": "installed from an installer with another checksum"}
        return {"action": "none", "reason": "%s %s installed and verified" % (marker["flavor"], marker["version"])}
    if have < want:
        return {"action": "upgrade", "reason": "%s -> %s" % (marker["version"], desired["version"])}
    if allow_downgrade:
        return {"action": "upgrade", "reason": "downgrade %s -> %s (miniconda_allow_downgrade)" % (marker["version"], desired["version"])}
    return {"action": "refuse", "reason": "the prefix holds %s %s, newer than %s; set miniconda_allow_downgrade: true "
            "to go back" % (marker["flavor"], marker["version"], desired["version"])}
