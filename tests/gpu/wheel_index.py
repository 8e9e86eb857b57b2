"""Wheel indexes for the GPU scenario on a host without network (tests/gpu/run-gpu-scenario).

``repack``: run by a Python environment's own interpreter, writes each named distribution installed
there, and every distribution it requires (markers evaluated, extras left out), back into a wheel
under OUT, then PEP 503 index pages for OUT. The GPU host's torch (a real CUDA build) and its
``nvidia-*`` / triton distributions weigh gigabytes; repacking them on the host itself means none
of that travels, and the env's pip installs them as it would from download.pytorch.org::

    /opt/torch/.venv/bin/python3 tests/gpu/wheel_index.py repack --out DIR/cu130 torch numpy

A wheel holds exactly the files the installed RECORD lists under site-packages, with their
recorded hashes; files outside it (console scripts, which pip writes again from
``entry_points.txt``) and compiled caches are left out, and so are the installer's own
``INSTALLER``, ``REQUESTED`` and ``direct_url.json``. The tag is the one the installed ``WHEEL``
file names. Entries are stored uncompressed: the host writes and reads them once, at disk speed.

``index``: PEP 503 pages (``OUT/<project>/index.html``) for the wheels already in a folder, so that
the folder serves as ``--index-url file://OUT``::

    python3 tests/gpu/wheel_index.py index --dir WHEELHOUSE

``pack`` (``make gpu-carry``): takes out of a wheelhouse the wheels of the projects the host's torch
environment has (``repack`` writes them there again on the host), and turns each wheel over
``--xz-over`` bytes into ``<wheel>.xz``, its entries stored uncompressed first so that xz compresses
across files (jedi's 4.8 MB wheel travels as 2.1 MB); ``unpack`` writes those wheels back::

    python3 tests/gpu/wheel_index.py pack --dir WHEELHOUSE --leave-out pip pygments
    python3 tests/gpu/wheel_index.py unpack --dir WHEELHOUSE
"""

import argparse
import base64
import csv
import hashlib
import html
import io
import lzma
import os
import re
import sys
import zipfile
from importlib import metadata

LEFT_OUT = ("INSTALLER", "REQUESTED", "direct_url.json", "RECORD")


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(dist, extras):
    """What ``dist`` requires with ``extras`` asked for: (name, extras) pairs."""
    from packaging.requirements import Requirement

    for line in dist.requires or []:
        requirement = Requirement(line)
        if requirement.marker is None or any(requirement.marker.evaluate({"extra": extra}) for extra in [""] + sorted(extras)):
            yield canonical(requirement.name), frozenset(requirement.extras)


def closure(names):
    """The installed distributions of ``names`` and of all they require (extras followed, as
    torch's ``cuda-toolkit[cublas,...]``), by canonical name."""
    found, asked, todo = {}, {}, [(canonical(n), frozenset()) for n in names]
    while todo:
        name, extras = todo.pop()
        if name in found and extras <= asked[name]:
            continue
        if name not in found:
            try:
                found[name] = metadata.distribution(name)
            except metadata.PackageNotFoundError:
                sys.exit("wheel_index: %s is required but not installed in %s" % (name, sys.prefix))
        asked[name] = asked.get(name, frozenset()) | extras
        todo.extend(_requirements(found[name], asked[name]))
    return found


def _tag(dist):
    tags = [line.split(":", 1)[1].strip() for line in (dist.read_text("WHEEL") or "").splitlines()
            if line.startswith("Tag:")]
    if not tags:
        sys.exit("wheel_index: %s %s has no WHEEL tag (not installed from a wheel)" % (dist.metadata["Name"], dist.version))
    parts = [tag.split("-") for tag in tags]
    # Several tags (py2.py3-none-any) compress to one name part each, as wheel filenames do.
    return "-".join(".".join(sorted(set(part[i] for part in parts), key=[p[i] for p in parts].index)) for i in range(3))


def _record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def repack(dist, out):
    """Write ``dist`` as a wheel into ``out``; return its file name."""
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    filename = "%s-%s-%s.whl" % (name, dist.version, _tag(dist))
    site = os.path.realpath(str(dist.locate_file("")))
    dist_info = None
    rows = []
    partial = os.path.join(out, filename + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as wheel:
        for row in csv.reader(io.StringIO(dist.read_text("RECORD") or "")):
            if not row:
                continue
            path, recorded_hash, size = (row + ["", ""])[:3]
            parts = path.split("/")
            if path.startswith("..") or "__pycache__" in parts or path.endswith(".pyc"):
                continue
            if len(parts) == 2 and parts[0].endswith(".dist-info"):
                dist_info = parts[0]
                if parts[1] in LEFT_OUT:
                    continue
            wheel.write(os.path.join(site, path), path)
            rows.append([path, recorded_hash, size])
        if dist_info is None:
            sys.exit("wheel_index: the RECORD of %s names no .dist-info folder" % dist.metadata["Name"])
        rows.append(["%s/RECORD" % dist_info, "", ""])
        record = io.StringIO()
        csv.writer(record, lineterminator="\n").writerows(rows)
        wheel.writestr("%s/RECORD" % dist_info, record.getvalue())
    os.replace(partial, os.path.join(out, filename))
    return filename


def write_index(folder):
    """PEP 503 pages for the wheels in ``folder``: ``folder/<project>/index.html``."""
    projects = {}
    for filename in sorted(os.listdir(folder)):
        if filename.endswith(".whl"):
            projects.setdefault(canonical(filename.split("-", 1)[0]), []).append(filename)
    for project, files in projects.items():
        os.makedirs(os.path.join(folder, project), exist_ok=True)
        links = "".join('<a href="../%s">%s</a>\n' % (html.escape(f), html.escape(f)) for f in files)
        with open(os.path.join(folder, project, "index.html"), "w") as handle:
            handle.write("<!DOCTYPE html>\n<html><body>\n%s</body></html>\n" % links)
    with open(os.path.join(folder, "index.html"), "w") as handle:
        handle.write("<!DOCTYPE html>\n<html><body>\n%s</body></html>\n"
                     % "".join('<a href="%s/">%s</a>\n' % (p, p) for p in sorted(projects)))
    return projects


def stored(source, target):
    """Copy the wheel ``source`` to ``target`` with every entry stored: the same files, names and
    dates (so the same bytes each time), readable by pip as it is."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            info.compress_type = zipfile.ZIP_STORED
            zout.writestr(info, data)


def pack(folder, leave_out, xz_over):
    """Leave out the wheels of the projects in ``leave_out``, xz the wheels over ``xz_over`` bytes;
    return (left out, packed) file names."""
    left_out, packed = [], []
    names = set(canonical(name) for name in leave_out)
    for filename in sorted(os.listdir(folder)):
        path = os.path.join(folder, filename)
        if not filename.endswith(".whl"):
            continue
        if canonical(filename.split("-", 1)[0]) in names:
            os.remove(path)
            left_out.append(filename)
        elif os.path.getsize(path) > xz_over:
            stored(path, path + ".stored")
            with open(path + ".stored", "rb") as source, lzma.open(path + ".xz", "wb", preset=9 | lzma.PRESET_EXTREME) as target:
                target.write(source.read())
            os.remove(path + ".stored")
            os.remove(path)
            packed.append(filename)
    return left_out, packed


def unpack(folder):
    """Write each ``<wheel>.xz`` in ``folder`` back as ``<wheel>`` (once); return their names."""
    written = []
    for filename in sorted(os.listdir(folder)):
        wheel = os.path.join(folder, filename[:-3])
        if filename.endswith(".whl.xz") and not os.path.exists(wheel):
            with lzma.open(os.path.join(folder, filename)) as source, open(wheel + ".partial", "wb") as target:
                target.write(source.read())
            os.replace(wheel + ".partial", wheel)
            written.append(filename[:-3])
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("repack", help="repack installed distributions and what they require")
    make.add_argument("--out", required=True)
    make.add_argument("names", nargs="+")
    pages = commands.add_parser("index", help="index pages for the wheels in a folder")
    pages.add_argument("--dir", required=True)
    shrink = commands.add_parser("pack", help="leave out wheels the host repacks, xz the big ones")
    shrink.add_argument("--dir", required=True)
    shrink.add_argument("--leave-out", nargs="*", default=[])
    shrink.add_argument("--xz-over", type=int, default=1 << 20)
    grow = commands.add_parser("unpack", help="write the xz'ed wheels back")
    grow.add_argument("--dir", required=True)
    args = parser.parse_args(argv)
    if args.command == "pack":
        left_out, packed = pack(args.dir, args.leave_out, args.xz_over)
        print("left out (repacked on the host): %s\nxz'ed: %s" % (" ".join(left_out) or "none", " ".join(packed) or "none"))
        return
    if args.command == "unpack":
        print("unpacked: %s" % (" ".join(unpack(args.dir)) or "none"))
        return
    if args.command == "repack":
        os.makedirs(args.out, exist_ok=True)
        for _name, dist in sorted(closure(args.names).items()):
            print("%s %s -> %s" % (dist.metadata["Name"], dist.version, repack(dist, args.out)))
        folder = args.out
    else:
        folder = args.dir
    print("%d projects indexed in %s" % (len(write_index(folder)), folder))


if __name__ == "__main__":
    main()
