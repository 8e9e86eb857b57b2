"""Stand-in .deb packages and a flat file: apt repository of them, for tests of what apt does.

A stand-in carries a real package's name, version and dependencies, and nothing else: no files
(unless its spec entry names some, as the container toolkit's stand-in ``nvidia-ctk``), no maintainer
scripts, so installing one can touch nothing on the host. The tests use them to
offer apt a newer driver than the installed one (does the pin and hold keep it?) and to stand in
for NVIDIA's CUDA repository on a host whose real driver must not move. Standard library only
(the .deb is an ar archive of tar members, written here): it runs on a fresh test node or the
GPU host with any python3, without dpkg-deb or apt-ftparchive.

CLI:
``python3 standin_apt_repo.py OUT --spec SPEC.json`` writes the packages SPEC lists
(``{"packages": [{"Package", "Version", "Architecture", "Depends", ...}]}``, control fields as
dpkg spells them; an entry's ``files``, ``{"/usr/bin/NAME": "PATH"}``, installs the file at PATH,
relative to SPEC's folder, as an executable there, a ``.py`` file as a python3 script);
``python3 standin_apt_repo.py OUT --like-installed REGEX --rewrite PATTERN=REPLACEMENT ...``
writes one stand-in per installed package whose name matches REGEX (read with dpkg-query), each
regular-expression rewrite applied to its Version and Depends (``'^535\\.[0-9.]+=535.999.99'``
and ``'535\\.309\\.01=535.999.99'`` offer a newer driver with the same dependency graph);
``python3 standin_apt_repo.py OUT --nvidia-cuda-repo VERSION [--nvidia-cuda-repo VERSION ...]
[--flavour open|proprietary] [--distro ubuntu2604|ubuntu2404|ubuntu2204|debian13|debian12]`` writes
NVIDIA's CUDA-repository driver packages for each VERSION (``nvidia_cuda_repo_packages()``: the
names of the VERSION's branch era, ``nvidia-open-580`` up to R580, ``nvidia-open`` from R590), with
the package revision of that folder of the repository;
``--extra NAME=VERSION`` (any mode, repeatable) adds a bare stand-in, such as the distribution's
``dkms`` that the driver's DKMS package depends on, on a host that lacks it.
Add OUT to apt as ``deb [trusted=yes] file:OUT ./`` (a flat repository: Packages and Release
at its top).
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import time

# dpkg's field order in Packages stanzas; fields not listed follow in their given order.
FIELD_ORDER = ("Package", "Version", "Architecture", "Multi-Arch", "Maintainer", "Installed-Size", "Pre-Depends", "Depends",
               "Recommends", "Conflicts", "Breaks", "Replaces", "Provides", "Section", "Priority", "Description")
STANDIN_MAINTAINER = "aistack.gpu_node tests <tests@aistack.invalid>"
# Fixed, so that the same spec gives the same bytes.
MTIME = 1700000000


def control_text(fields):
    """A control stanza: ``Package`` and ``Version`` required; Architecture defaults to all,
    Maintainer and Description to the stand-in's own."""
    missing = [name for name in ("Package", "Version") if not fields.get(name)]
    if missing:
        raise ValueError("stand-in package %r lacks %s" % (fields, ", ".join(missing)))
    fields = dict(fields)
    fields.setdefault("Architecture", "all")
    fields.setdefault("Maintainer", STANDIN_MAINTAINER)
    fields.setdefault("Description", "stand-in for %s (no files, no scripts)" % fields["Package"])
    names = [name for name in FIELD_ORDER if fields.get(name)] + sorted(
        name for name in fields if name not in FIELD_ORDER and fields[name])
    return "".join("%s: %s\n" % (name, fields[name]) for name in names)


def _tar_gz(members, mode=0o644):
    """A tar.gz of ``{name: bytes}``, root-owned, fixed mtime, each of ``mode``."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=MTIME) as compressed:
        with tarfile.open(fileobj=compressed, mode="w", format=tarfile.GNU_FORMAT) as archive:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(data), MTIME, mode
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _ar_member(name, data):
    header = "%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (name, MTIME, 0, 0, "100644", len(data))
    return header.encode("ascii") + data + (b"\n" if len(data) % 2 else b"")


def build_deb(fields, executables=None):
    """The bytes of a .deb with this control stanza, no scripts, and a data archive of ``executables``
    (``{absolute path: bytes}``, mode 0755; empty without)."""
    data = dict(("." + path, content) for path, content in (executables or {}).items())
    return b"!<arch>\n" + _ar_member("debian-binary", b"2.0\n") + _ar_member(
        "control.tar.gz", _tar_gz({"./control": control_text(fields).encode("utf-8")})) + _ar_member(
        "data.tar.gz", _tar_gz(data, mode=0o755))


def deb_filename(fields):
    """pool/NAME_VERSION_ARCH.deb, the epoch's colon spelled %3a as Debian's archive does."""
    return "pool/%s_%s_%s.deb" % (fields["Package"], fields["Version"].replace(":", "%3a"), fields.get("Architecture", "all"))


def write_repo(out, packages, origin="aistack-standin", label="aistack stand-in packages"):
    """Write each package's .deb, Packages, Packages.gz and Release into ``out``; return the Packages text."""
    os.makedirs(os.path.join(out, "pool"), exist_ok=True)
    stanzas = []
    for fields in sorted(packages, key=lambda item: (item["Package"], item["Version"])):
        fields = dict(fields)
        data = build_deb(fields, fields.pop("files", None))
        filename = deb_filename(fields)
        with open(os.path.join(out, filename), "wb") as handle:
            handle.write(data)
        stanzas.append(control_text(fields) + "Filename: ./%s\nSize: %d\nMD5sum: %s\nSHA256: %s\n" % (
            filename, len(data), hashlib.md5(data).hexdigest(), hashlib.sha256(data).hexdigest()))
    index = "\n".join(stanzas).encode("utf-8")
    files = {"Packages": index, "Packages.gz": gzip.compress(index, mtime=MTIME)}
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as handle:
            handle.write(data)
    release = ["Origin: %s" % origin, "Label: %s" % label, "Date: %s" % time.strftime("%a, %d %b %Y %H:%M:%S UTC", time.gmtime()),
               "Architectures: %s" % " ".join(sorted(set(item.get("Architecture", "all") for item in packages) - {"all"}) or ["all"])]
    for digest in ("MD5Sum", "SHA256"):
        algorithm = hashlib.md5 if digest == "MD5Sum" else hashlib.sha256
        release.append("%s:" % digest)
        release.extend(" %s %d %s" % (algorithm(data).hexdigest(), len(data), name) for name, data in sorted(files.items()))
    with open(os.path.join(out, "Release"), "w") as handle:
        handle.write("\n".join(release) + "\n")
    return index.decode("utf-8")


# dpkg-query's view of an installed package: the fields a stand-in copies.
INSTALLED_FIELDS = ("Package", "Version", "Architecture", "Multi-Arch", "Pre-Depends", "Depends", "Provides")
DPKG_QUERY_FORMAT = "\\t".join(["${db:Status-Abbrev}"] + ["${%s}" % name for name in INSTALLED_FIELDS]) + "\\n"


def parse_installed(text):
    """Installed packages from ``dpkg-query -W -f DPKG_QUERY_FORMAT``: control fields by name."""
    packages = []
    for line in (text or "").splitlines():
        values = (line.split("\t") + [""] * len(INSTALLED_FIELDS))[:len(INSTALLED_FIELDS) + 1]
        if values[0].strip()[1:2] == "i":
            packages.append(dict(zip(INSTALLED_FIELDS, values[1:])))
    return packages


def like_installed(installed, name_pattern, rewrites):
    """Stand-ins for the ``installed`` packages whose name matches ``name_pattern``: each
    ``(pattern, replacement)`` of ``rewrites`` applied to Version, Pre-Depends, Depends and Provides."""
    standins = []
    for fields in installed:
        if not re.match(name_pattern, fields["Package"]):
            continue
        fields = dict(fields)
        for key in ("Version", "Pre-Depends", "Depends", "Provides"):
            for pattern, replacement in rewrites:
                fields[key] = re.sub(pattern, replacement, fields[key])
        standins.append(fields)
    return standins


# The package revision NVIDIA's CUDA repository gives its driver packages, by OS folder (inferred
# from its file names: ubuntu2404's nvidia-open-580_580.95.05-0ubuntu1, debian12's ..._580.95.05-1;
# ubuntu2604 and debian13 assumed alike).
REVISIONS = {"ubuntu2604": "0ubuntu1", "ubuntu2404": "0ubuntu1", "ubuntu2204": "0ubuntu1", "debian13": "1", "debian12": "1"}
# From R590 NVIDIA's repository drops the branch from the package names (NVIDIA Driver Installation
# Guide r590, 4.1.1 "Ubuntu 590 and later packages"; the collection's driver_packaging.NVIDIA_APT_ERAS).
UNVERSIONED_FROM_BRANCH = 590


def nvidia_cuda_repo_packages(version, flavour="open", architecture="amd64", revision="0ubuntu1"):
    """The driver packages of NVIDIA's CUDA repository for Ubuntu (every ubuntu folder names them
    alike) at ``version``, with their dependencies: the entry package the nvidia_driver role
    installs (``nvidia-open-<branch>`` or ``cuda-drivers-<branch>`` up to R580, ``nvidia-open``
    or ``cuda-drivers`` from R590), the driver and its libraries, Fabric Manager and NSCQ, and the
    ``nvidia-driver-pinning-<branch>``/``-<version>`` packages. From R590 every name drops the
    branch (``libnvidia-compute-580`` -> ``libnvidia-compute``, ``nvidia-dkms-580-open`` ->
    ``nvidia-dkms-open``), as NVIDIA's rename table says for the names it lists; the others follow
    the same rule. The revision suffix and the exact dependency lists are a plausible model
    (inferred, not copied from the repository's index). For debian folders only the revision
    differs: the same names and graph stand in for that folder's packages."""
    branch = version.split(".", 1)[0]
    full = "%s-%s" % (version, revision)
    exact = "(= %s)" % full
    suffix = "-open" if flavour == "open" else ""
    tag = "-%s" % branch if int(branch) < UNVERSIONED_FROM_BRANCH else ""
    driver = "nvidia-driver%s%s" % (tag, suffix)
    libraries = ["libnvidia-compute%s" % tag, "libnvidia-decode%s" % tag, "libnvidia-encode%s" % tag,
                 "libnvidia-common%s" % tag, "libnvidia-cfg1%s" % tag]
    kernel = ["nvidia-dkms%s%s" % (tag, suffix), "nvidia-kernel-common%s" % tag, "nvidia-kernel-source%s%s" % (tag, suffix),
              "nvidia-firmware%s-%s" % (tag, version)]
    utilities = ["nvidia-utils%s" % tag, "nvidia-compute-utils%s" % tag]

    def package(name, depends=(), arch=architecture, pkg_version=full):
        return {"Package": name, "Version": pkg_version, "Architecture": arch, "Section": "multiverse/libs",
                "Depends": ", ".join(depends)}

    packages = [package(driver, ["%s %s" % (name, exact) for name in libraries + kernel[:2] + utilities])]
    packages += [package(name, ["%s %s" % (libraries[3], exact)] if name != libraries[3] else [])
                 for name in libraries]
    packages += [package(kernel[0], ["dkms", "%s %s" % (kernel[1], exact), "%s %s" % (kernel[2], exact), "%s %s" % (kernel[3], exact)]),
                 package(kernel[1], [kernel[3] + " " + exact]), package(kernel[2]), package(kernel[3])]
    packages += [package(name, ["%s %s" % (libraries[0], exact)]) for name in utilities]
    entry = ("nvidia-open%s" if flavour == "open" else "cuda-drivers%s") % tag
    packages.append(package(entry, ["%s %s" % (driver, exact)]))
    packages += [package("nvidia-fabricmanager%s" % tag, ["libnvidia-nscq%s %s" % (tag, exact)]),
                 package("libnvidia-nscq%s" % tag)]
    # The pinning packages hold no driver files and are architecture-independent.
    packages += [package("nvidia-driver-pinning-%s" % branch, arch="all", pkg_version="%s-1" % branch),
                 package("nvidia-driver-pinning-%s" % version, arch="all", pkg_version="%s-1" % version)]
    return packages


def unique_packages(packages):
    """``packages`` without repeats of a (Package, Version), the first kept: two driver versions of
    one branch share ``nvidia-driver-pinning-<branch>``."""
    seen, unique = set(), []
    for fields in packages:
        key = (fields["Package"], fields["Version"])
        if key not in seen:
            seen.add(key)
            unique.append(fields)
    return unique


def _read_executable(path):
    """The bytes of an executable from ``path``; a Python source without an interpreter line gets python3's."""
    with open(path, "rb") as handle:
        content = handle.read()
    return b"#!/usr/bin/python3\n" + content if path.endswith(".py") and not content.startswith(b"#!") else content


def _extra(text):
    name, separator, version = text.partition("=")
    if not separator or not name or not version:
        raise argparse.ArgumentTypeError("--extra %r: expected NAME=VERSION" % text)
    return {"Package": name, "Version": version}


def _rewrite(text):
    pattern, separator, replacement = text.rpartition("=")
    if not separator or not pattern:
        raise argparse.ArgumentTypeError("--rewrite %r: expected PATTERN=REPLACEMENT" % text)
    return re.compile(pattern), replacement


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("out", help="the repository folder (created)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--spec", help="JSON file: {\"packages\": [control fields, ...]}")
    source.add_argument("--like-installed", metavar="REGEX", help="installed packages whose name matches REGEX")
    source.add_argument("--nvidia-cuda-repo", metavar="VERSION", action="append",
                        help="NVIDIA's CUDA-repository driver packages at VERSION (repeatable)")
    parser.add_argument("--rewrite", action="append", type=_rewrite, default=[], metavar="PATTERN=REPLACEMENT")
    parser.add_argument("--flavour", choices=("open", "proprietary"), default="open")
    parser.add_argument("--architecture", default="amd64")
    parser.add_argument("--distro", choices=sorted(REVISIONS), default="ubuntu2404",
                        help="the repository folder whose package revision the stand-ins carry")
    parser.add_argument("--extra", action="append", type=_extra, default=[], metavar="NAME=VERSION",
                        help="a bare stand-in besides the others (repeatable)")
    args = parser.parse_args(argv)
    if args.spec:
        with open(args.spec) as handle:
            packages = json.load(handle)["packages"]
        for fields in packages:
            fields["files"] = dict((path, _read_executable(os.path.join(os.path.dirname(os.path.abspath(args.spec)), source)))
                                   for path, source in fields.get("files", {}).items())
    elif args.like_installed:
        listing = subprocess.run(["dpkg-query", "-W", "-f", DPKG_QUERY_FORMAT], check=True, stdout=subprocess.PIPE,
                                 universal_newlines=True).stdout
        packages = like_installed(parse_installed(listing), args.like_installed, args.rewrite)
    else:
        packages = [fields for version in args.nvidia_cuda_repo for fields in nvidia_cuda_repo_packages(
            version, args.flavour, args.architecture, REVISIONS[args.distro])]
    packages = unique_packages(packages + args.extra)
    if not packages:
        parser.error("no packages to write")
    write_repo(args.out, packages)
    for fields in packages:
        print("%s %s" % (fields["Package"], fields["Version"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
