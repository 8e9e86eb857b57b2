"""Build a stand-in Miniconda installer: a real self-extracting ``.sh`` with Miniconda's interface.

``bash Miniconda3-standin-<version>-Linux-x86_64.sh -b [-u] [-f] [-p PREFIX]`` lays down a base
prefix: ``bin/conda`` and ``condabin/conda`` (the py-rattler stand-in), ``bin/python`` (a venv-style
link to the machine's python3 >= 3.10; py-rattler and PyYAML ride in the payload, so nothing is
fetched on the node), ``conda-meta/history``, ``etc/profile.d/conda.sh``, ``pkgs/``, ``envs/``.
Exit codes and messages follow the real installer (conda/constructor's ``header.sh``): 0 done;
1 ``ERROR: File or directory already exists: '<prefix>'`` (stderr) without ``-u`` or ``-f``,
1 ``ERROR: did not recognize option '?', please try -h`` (stdout) for an unknown option or ``-p``
without a value, 1 for a prefix with spaces or one that cannot be created; 2 after ``-h`` (the usage,
stdout). Its own: 2 without ``-b`` (the real one would prompt for the license) and 1 when the node
has no python3 >= 3.10. ``-u`` updates in place, keeping ``envs/``.

The payload is copied from the controller's tooling venv (tests run on Debian 12 x86_64 and the
nodes are Debian 12 too; py-rattler's wheel is abi3 manylinux2014). A sha256 file is written next
to the installer so that a role's checksum logic is exercised against a real file.

CLI: ``python -m conda_testbed.installer --out DIR [--version 26.7.1]`` prints the installer path.
"""

import argparse
import glob
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

from .channel import CACHE, building

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_VERSION = "26.7.1"
PAYLOAD_PACKAGES = ("rattler", "py_rattler-*.dist-info", "yaml", "_yaml", "pyyaml-*.dist-info", "PyYAML-*.dist-info")

HEADER = r"""#!/bin/sh
# Stand-in for the Miniconda3 installer (aistack.gpu_node test bed, tests/support/conda): same options,
# messages and exit codes as the real one for -b, -u, -f, -p. Not a product file.
INSTALLER_NAME="Miniconda3"
INSTALLER_VER="@VERSION@"
PREFIX="${HOME:-/root}/miniconda3"
BATCH=0
FORCE=0
UPDATE=0
usage() {
    echo "usage: $0 [options]

Installs ${INSTALLER_NAME} ${INSTALLER_VER}

-b           run install in batch mode (without manual intervention),
             it is expected the license terms (if any) are agreed upon
-f           no error if install prefix already exists
-h           print this help message and exit
-p PREFIX    install prefix, defaults to $PREFIX, must not contain spaces.
-u           update an existing installation"
}
while getopts "bfhp:u" x; do
    case "$x" in
        b) BATCH=1 ;;
        f) FORCE=1 ;;
        p) PREFIX="$OPTARG" ;;
        u) UPDATE=1 ;;
        h) usage; exit 2 ;;
        ?) printf "ERROR: did not recognize option '%s', please try -h\n" "$x"; exit 1 ;;
    esac
done
if [ "$BATCH" = 0 ]; then
    echo "ERROR: this test-bed installer runs in batch mode only (-b)" >&2
    exit 2
fi
case "$PREFIX" in
    *\ *) echo "ERROR: Cannot install into directories with spaces" >&2; exit 1 ;;
esac
if [ "$UPDATE" = 0 ] && [ "$FORCE" = 0 ] && [ -e "$PREFIX" ]; then
    printf "ERROR: File or directory already exists: '%s'\n" "$PREFIX" >&2
    echo "If you want to update an existing installation, use the -u option." >&2
    exit 1
fi
PYTHON="${CONDA_STANDIN_PYTHON:-$(command -v python3)}"
if [ -z "$PYTHON" ] || ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "ERROR: the conda stand-in needs python3 >= 3.10 on the node" >&2
    exit 1
fi
PYTHON="$("$PYTHON" -c 'import os, sys; print(os.path.realpath(sys.executable))')"
PYVER="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if ! mkdir -p "$PREFIX"; then
    printf "ERROR: Could not create directory: '%s'.\n" "$PREFIX" >&2
    exit 1
fi
PREFIX="$(cd "$PREFIX" && pwd)"
echo "PREFIX=$PREFIX"
echo "Unpacking payload ..."
# Test hooks, each only while the file its variable names exists: stop, write <file>.reached
# ({"pid": ..., "prefix": ...}) and wait for a test's SIGKILL.
pause_while() {
    [ -n "$1" ] && [ -e "$1" ] || return 0
    printf '{"pid": %d, "prefix": "%s"}\n' "$$" "$PREFIX" > "$1.reached.tmp"
    mv "$1.reached.tmp" "$1.reached"
    while [ -e "$1" ]; do sleep 0.1; done
}
SITE="$PREFIX/lib/python$PYVER/site-packages"
rm -rf "$SITE/conda_testbed" "$SITE/rattler"
mkdir -p "$SITE" "$PREFIX/bin" "$PREFIX/condabin" "$PREFIX/pkgs" "$PREFIX/envs" "$PREFIX/etc/profile.d" || exit 1
ARCHIVE_LINE=$(awk '/^__ARCHIVE_BELOW__$/ { print NR + 1; exit 0 }' "$0")
tail -n "+$ARCHIVE_LINE" "$0" | tar -xzf - -C "$SITE" || { echo "ERROR: could not extract the payload" >&2; exit 1; }
# The conda plugins Miniconda ships, as conda finds them (entry points of the "conda" group): the
# libmamba solver and Anaconda's terms of service (`conda tos`). The stand-in offers each only while
# its dist-info is there; a test removes one to stand for a conda without it.
for plugin in "conda_libmamba_solver 25.4.0" "conda_anaconda_tos 0.2.2"; do
    name=${plugin% *}
    dist="$SITE/$name-${plugin#* }.dist-info"
    mkdir -p "$dist" || exit 1
    printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$(echo "$name" | tr _ -)" "${plugin#* }" > "$dist/METADATA"
    printf '[conda]\n%s = %s.plugin\n' "$name" "$name" > "$dist/entry_points.txt"
done
# INSTALLER_TESTBED_PAUSE_BEFORE_META_FILE: the payload unpacked, no conda-meta/ yet (the real installer
# makes it when it links the packages it unpacked).
pause_while "${INSTALLER_TESTBED_PAUSE_BEFORE_META_FILE:-}"
mkdir -p "$PREFIX/conda-meta" || exit 1
# INSTALLER_TESTBED_PAUSE_FILE: conda-meta/ there, no launcher yet.
pause_while "${INSTALLER_TESTBED_PAUSE_FILE:-}"
printf 'home = %s\ninclude-system-site-packages = false\nversion = %s\n' "$(dirname "$PYTHON")" "$PYVER" > "$PREFIX/pyvenv.cfg"
ln -sfn "$PYTHON" "$PREFIX/bin/python"
ln -sfn python "$PREFIX/bin/python3"
for launcher in "$PREFIX/bin/conda" "$PREFIX/condabin/conda"; do
    printf '#!%s/bin/python\nfrom conda_testbed.standin.cli import run\nrun(root_prefix="%s", version="%s")\n' \
        "$PREFIX" "$PREFIX" "$INSTALLER_VER" > "$launcher"
    chmod 0755 "$launcher"
done
cat > "$PREFIX/etc/profile.d/conda.sh" <<EOF
# conda.sh of the test-bed stand-in: the conda shell function, activate/deactivate by PATH.
export CONDA_EXE='$PREFIX/bin/conda'
export CONDA_PYTHON_EXE='$PREFIX/bin/python'
export _CE_M=''
export _CE_CONDA=''
__conda_prefix_of() {
    case "\$1" in
        ''|base) echo '$PREFIX' ;;
        */*) echo "\$1" ;;
        *) echo '$PREFIX/envs/'"\$1" ;;
    esac
}
conda() {
    case "\$1" in
        activate)
            __conda_target="\$(__conda_prefix_of "\$2")"
            if [ ! -d "\$__conda_target/conda-meta" ]; then
                echo "EnvironmentNameNotFound: Could not find conda environment: \$2" >&2
                return 1
            fi
            if [ -n "\${CONDA_PREFIX:-}" ]; then PATH="\$(echo "\$PATH" | sed "s|\$CONDA_PREFIX/bin:||")"; fi
            export PATH="\$__conda_target/bin:\$PATH"
            export CONDA_PREFIX="\$__conda_target"
            export CONDA_DEFAULT_ENV="\${2:-base}"
            export CONDA_SHLVL=1
            ;;
        deactivate)
            if [ -n "\${CONDA_PREFIX:-}" ]; then PATH="\$(echo "\$PATH" | sed "s|\$CONDA_PREFIX/bin:||")"; fi
            unset CONDA_PREFIX CONDA_DEFAULT_ENV
            export CONDA_SHLVL=0
            ;;
        *) "\$CONDA_EXE" "\$@" ;;
    esac
}
case ":\$PATH:" in
    *':$PREFIX/condabin:'*) ;;
    *) export PATH='$PREFIX/condabin':"\$PATH" ;;
esac
export CONDA_SHLVL="\${CONDA_SHLVL:-0}"
EOF
printf '==> %s <==\n# cmd: %s\n# conda version: %s\n' "$(date '+%Y-%m-%d %H:%M:%S')" "$0 $*" "$INSTALLER_VER" \
    >> "$PREFIX/conda-meta/history"
"$PREFIX/bin/conda" --version > /dev/null || { echo "ERROR: the installed conda does not run" >&2; exit 1; }
echo "installation finished."
exit 0
__ARCHIVE_BELOW__
"""


def _skip_caches(info):
    return None if "__pycache__" in info.name else info


def _payload(site_packages):
    """The gzip tar of the stand-in package and its dependencies (py-rattler, PyYAML)."""
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="conda-testbed-payload-") as work, \
            tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        for pattern in PAYLOAD_PACKAGES:
            for path in sorted(glob.glob(os.path.join(site_packages, pattern))):
                staged = os.path.join(work, os.path.basename(path))
                if os.path.isdir(path):
                    shutil.copytree(path, staged, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    shutil.copy2(path, staged)
                # py-rattler's wheel carries its symbol table (82 MB, 55 stripped): a smaller installer
                # for the GPU host, whose checkout travels under a size limit.
                libraries = glob.glob(os.path.join(staged, "**", "*.so"), recursive=True)
                if libraries:
                    subprocess.run(["strip", "--strip-unneeded"] + libraries, check=True)
                archive.add(staged, arcname=os.path.basename(path), filter=_skip_caches)
        archive.add(HERE, arcname="conda_testbed", filter=_skip_caches)
    return buffer.getvalue()


def _site_packages():
    import rattler

    return os.path.dirname(os.path.dirname(os.path.abspath(rattler.__file__)))


def _source_digest():
    digest = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(HERE)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            with open(os.path.join(folder, name), "rb") as handle:
                digest.update(name.encode() + handle.read())
    digest.update(_site_packages().encode())
    return digest.hexdigest()[:16]


def build(version=DEFAULT_VERSION):
    """Return the path of the cached installer for ``version`` (``<path>.sha256`` beside it)."""
    folder = os.path.join(CACHE, "installer-%s" % _source_digest())
    path = os.path.join(folder, "Miniconda3-standin-%s-Linux-x86_64.sh" % version)
    if os.path.exists(path + ".sha256"):
        return path
    with building(folder):
        if not os.path.exists(path + ".sha256"):
            _build(folder, path, version)
    return path


def _build(folder, path, version):
    os.makedirs(folder, exist_ok=True)
    content = HEADER.replace("@VERSION@", version).encode() + _payload(_site_packages())
    partial = path + ".partial-%d" % os.getpid()
    with open(partial, "wb") as handle:
        handle.write(content)
    os.chmod(partial, 0o755)
    os.rename(partial, path)
    # The checksum last, whole (renamed into place): its presence says the installer is complete.
    with open(partial + ".sha256", "w") as handle:
        handle.write("%s  %s\n" % (hashlib.sha256(content).hexdigest(), os.path.basename(path)))
    os.rename(partial + ".sha256", path + ".sha256")


def sha256_of(path):
    with open(path + ".sha256") as handle:
        return handle.read().split()[0]


def copy_to(out, version=DEFAULT_VERSION):
    """Copy the installer and its ``.sha256`` into ``out``; return the installer's path there."""
    source = build(version)
    os.makedirs(out, exist_ok=True)
    target = os.path.join(out, os.path.basename(source))
    for suffix in ("", ".sha256"):
        shutil.copy2(source + suffix, target + suffix)
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", required=True, help="folder to write the installer and its .sha256 into")
    parser.add_argument("--version", default=DEFAULT_VERSION, help="version the stand-in reports")
    args = parser.parse_args(argv)
    print(copy_to(os.path.abspath(args.out), args.version))


if __name__ == "__main__":
    sys.exit(main())
