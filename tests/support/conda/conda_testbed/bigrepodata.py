"""A mirror root whose conda-forge channel has conda-forge-sized repodata, generated (never fetched):
``linux-64`` 149 MB and ``noarch`` 55 MB of ``repodata.json`` in conda-forge's record layout, each
with its ``repodata.json.zst`` (the ``zstd`` tool, level 3), no ``current_repodata.json`` (conda-forge
publishes none any more). The packages are made up and point at no file: it is for measuring what a
probe reads, not for solving.

Cached in ``.cache/conda-testbed/bigrepodata-<version>`` (220 MB; 12 s to make on 2 cores).
CLI: ``python -m conda_testbed.bigrepodata`` prints the root.
"""

import json
import os
import shutil
import subprocess
import sys

from .channel import CACHE, building

VERSION = 1
SIZES = {"linux-64": 149_000_000, "noarch": 55_000_000}


def record(subdir, index):
    """One package record, as conda-forge's repodata.json lays them out (about 460 bytes; 322,000 of them in linux-64)."""
    name = "pkg%05d" % (index // 20)
    version = "%d.%d.%d" % (index % 20 // 5, index % 5, index % 7)
    build = "py311h%07x_%d" % (index * 2654435761 % 0xFFFFFFF, index % 3)
    return "%s-%s-%s.conda" % (name, version, build), {
        "build": build, "build_number": index % 3,
        "depends": ["libgcc >=14", "python >=3.11,<3.12.0a0", "python_abi 3.11.* *_cp311", "numpy >=1.23,<3"],
        "license": "BSD-3-Clause", "license_family": "BSD", "md5": "%032x" % (index * 7919),
        "name": name, "sha256": "%064x" % (index * 104729), "size": 100000 + index,
        "subdir": subdir, "timestamp": 1700000000000 + index, "version": version,
        "constrains": ["pyarrow >=14"] if index % 4 == 0 else []}


def write_repodata(path, subdir, size):
    """Streams records until ``size`` bytes: never the whole document in memory."""
    with open(path, "w") as handle:
        handle.write('{"info":{"subdir":"%s"},"packages":{},"packages.conda":{' % subdir)
        written, index = 0, 0
        while written < size:
            key, value = record(subdir, index)
            text = "%s%s:%s" % ("," if index else "", json.dumps(key), json.dumps(value, separators=(",", ":")))
            handle.write(text)
            written += len(text)
            index += 1
        handle.write('},"removed":[],"repodata_version":1}\n')
    return index


def build(log=None):
    root = os.path.join(CACHE, "bigrepodata-%d" % VERSION)
    if os.path.exists(os.path.join(root, ".complete")):
        return root
    with building(root):
        if not os.path.exists(os.path.join(root, ".complete")):
            _build(root, log)
    return root


def _build(root, log):
    if not shutil.which("zstd"):
        raise SystemExit("the zstd tool is needed to compress the generated repodata (apt-get install zstd)")
    partial = root + ".partial-%d" % os.getpid()
    shutil.rmtree(partial, ignore_errors=True)
    for subdir, size in SIZES.items():
        folder = os.path.join(partial, "conda-forge", subdir)
        os.makedirs(folder)
        count = write_repodata(os.path.join(folder, "repodata.json"), subdir, size)
        subprocess.run(["zstd", "-q", "-3", "-T0", os.path.join(folder, "repodata.json")], check=True)
        if log:
            log("%s: %d records" % (subdir, count))
    open(os.path.join(partial, ".complete"), "w").close()
    if os.path.exists(root):
        shutil.rmtree(partial)
    else:
        os.rename(partial, root)


if __name__ == "__main__":
    print(build(log=lambda line: print(line, file=sys.stderr)))
