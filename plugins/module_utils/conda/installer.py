# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Pure decisions of the miniconda role: which installer, with which checksum, and what to do
with the prefix that is already on the node."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.aistack.gpu_node.plugins.module_utils.conda.mirrors import redact

FLAVORS = ("miniconda", "miniforge")
_INSTALLER_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-(\d+))?$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# Architectures as Ansible reports them (ansible_facts.architecture) -> installer file suffix.
ARCHITECTURES = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64", "ppc64le": "ppc64le"}
# What a fresh filesystem's root holds: a volume an admin mounted at the prefix counts as an empty folder.
_EMPTY_FOLDER_ENTRIES = frozenset(["lost+found"])
# Characters systemd-escape --path keeps as they are.
_PATH_ESCAPE_KEEPS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_.")


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


def started_record_name(prefix):
    """The file name of the record of an install the role started at ``prefix``: the path as
    ``systemd-escape --path`` writes it, plus ``.json`` (``/opt/conda`` -> ``opt-conda.json``, ``/opt/my-conda`` ->
    ``opt-my\\x2dconda.json``), readable and one name per prefix."""
    trimmed = "/".join(part for part in prefix.split("/") if part)
    escaped = []
    for index, char in enumerate(trimmed):
        if char == "/":
            escaped.append("-")
        elif char in _PATH_ESCAPE_KEEPS and not (index == 0 and char == "."):
            escaped.append(char)
        else:
            escaped.extend("\\x%02x" % byte for byte in bytearray(char.encode("utf-8")))
    return "".join(escaped or ["-"]) + ".json"


def existing_prefix_action(entries, started, marker_name):
    """What may be done with an existing path at the prefix, before anything in it is run: ``None`` when
    :func:`install_action` decides (the folder is a conda base, or the role made it), else ``{"action", "reason"}``.

    ``entries``: the names in the folder, None when the path is not a folder. ``started``: whether the role's
    record of an install it started at this prefix is there (kept outside the prefix, written before the installer
    runs: an install killed before the installer made ``conda-meta/`` leaves only that proof). ``marker_name``: the
    file name of the role's completion marker in the prefix.

    - A conda base (``conda-meta/``), the role's own or one from elsewhere, goes on to :func:`install_action`, which
      repairs one without the role's marker in place (``-u``, envs kept): a base from elsewhere is adopted.
    - A folder with the role's completion marker, or its record of a started install, is the role's: repaired.
    - An empty folder (or a fresh filesystem's, with only ``lost+found``), such as a mount point an admin made for
      the base, is installed into.
    - Anything else is refused: the installer would write into someone's folder, and the role then makes the whole
      prefix root's alone.
    """
    if entries is None:
        return {"action": "refuse", "reason": "miniconda_prefix is there but is not a folder; point miniconda_prefix at a "
                "new path, an empty folder or a conda base. Nothing was changed."}
    names = set(entries)
    if not names - _EMPTY_FOLDER_ENTRIES:
        return {"action": "install", "reason": "an empty folder: the installer fills it in place"}
    if "conda-meta" in names or marker_name in names or started:
        return None
    shown = sorted(names)
    listing = ", ".join(shown[:5]) + (" and %d more" % (len(shown) - 5) if len(shown) > 5 else "")
    return {"action": "refuse", "reason": "miniconda_prefix is an existing folder this role did not make: it holds "
            "%s, and no conda-meta/ of a conda base. The installer would write into it, and the role makes the whole "
            "prefix root's alone. Point miniconda_prefix at a new path, an empty folder or a conda base, or empty "
            "this folder. Nothing was changed." % listing}
