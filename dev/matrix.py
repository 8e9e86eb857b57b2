"""`make matrix`: the collection against every ansible-core line it claims to support.

Each line in dev/matrix/<minor>.txt gets its own virtual environment under
.cache/matrix/<minor>/venv, on the Python its `# python:` line names (found on PATH or in pyenv),
rebuilt only when that file changes. Then, per line: `ansible-test sanity` (the tests that
version has, on that venv's Python), the unit tests (a DeprecationWarning raised in the collection's
own code an error), the deprecation lane on the newest line (dev/deprecation_lane.py: the entry
points under that line, failing on a deprecation from the collection), and the `site` molecule scenario on the oldest and
the newest line (under the shared molecule lock). Prints a table line x check and exits non-zero
unless every cell that ran passed. Each cell's log is .cache/matrix/<minor>/<check>.log.

    python dev/matrix.py [--versions 2.15,2.21] [--checks sanity,unit,deprecations,site]
"""

import argparse
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PINS = os.path.join(REPO, "dev", "matrix")
CACHE = os.path.join(REPO, ".cache", "matrix")
CHECKS = ("sanity", "unit", "deprecations", "site")
# Python's deprecation warnings raised in the collection's own code fail the unit tests. As a
# setting (-o), not -W: pytest matches the module part of a setting's filter as a regular expression
# from the start of the module's name, and that of -W as the one whole name.
OWN_CODE_FILTERS = [r"error::%s:ansible_collections\.aistack\.gpu_node" % category for category in ("DeprecationWarning", "PendingDeprecationWarning")]
OWN_CODE_WARNINGS = ["-o", "filterwarnings=" + "\n".join(OWN_CODE_FILTERS)]
MOLECULE_LOCK = "/tmp/aistack-molecule.lock"


def say(text):
    print("==> %s" % text, flush=True)


def lines():
    """Every ansible-core minor with a pin file, oldest first, with the Python it runs on."""
    found = []
    for path in glob.glob(os.path.join(PINS, "*.txt")):
        minor = os.path.basename(path)[:-4]
        with open(path) as handle:
            python = re.search(r"^# python: (\d+\.\d+)$", handle.read(), re.M)
        if not python:
            sys.exit("%s: no `# python: X.Y` line" % path)
        found.append((minor, python.group(1), path))
    return sorted(found, key=lambda line: tuple(int(part) for part in line[0].split(".")))


def find_python(version):
    """python<version> from PATH, else from a pyenv install (this machine's and CI's Pythons)."""
    candidates = [shutil.which("python%s" % version)]
    for root in (os.environ.get("PYENV_ROOT"), os.path.expanduser("~/.pyenv"), "/opt/pyenv"):
        if root:
            candidates += sorted(glob.glob(os.path.join(root, "versions", "%s.*" % version, "bin", "python%s" % version)),
                                 reverse=True)
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK) and ".pyenv/shims" not in candidate:
            return candidate
    return None


def prepare_venv(minor, python_version, pins, log):
    """The line's venv, made again only when its pin file changed. Returns its bin folder."""
    venv = os.path.join(CACHE, minor, "venv")
    stamp = os.path.join(venv, ".pins.sha256")
    with open(pins, "rb") as handle:
        want = hashlib.sha256(handle.read()).hexdigest()
    if os.path.exists(stamp) and open(stamp).read().strip() == want:
        return os.path.join(venv, "bin")
    python = find_python(python_version)
    if not python:
        raise RuntimeError("no Python %s on PATH or in pyenv for ansible-core %s" % (python_version, minor))
    say("ansible-core %s: creating %s on %s" % (minor, venv, python))
    shutil.rmtree(venv, ignore_errors=True)
    run([python, "-m", "venv", venv], log)
    run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", pins], log)
    with open(stamp, "w") as handle:
        handle.write(want + "\n")
    return os.path.join(venv, "bin")


def run(command, log, env=None, cwd=REPO):
    log.write("$ %s\n" % " ".join(command))
    log.flush()
    result = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd, check=False)
    if result.returncode:
        raise RuntimeError("`%s` exited %d" % (" ".join(command[:3]), result.returncode))


def environment(bin_dir):
    env = dict(os.environ)
    env.update(PATH=bin_dir + os.pathsep + env["PATH"], VIRTUAL_ENV=os.path.dirname(bin_dir),
               ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               CONTAINERS_CONF=os.path.join(REPO, "tests", "support", "testbed", "containers.conf"))
    return env


def check_sanity(minor, python_version, bin_dir, log):
    tree = os.path.join(CACHE, minor, "sanity", "ansible_collections", "aistack", "gpu_node")
    run([os.path.join(REPO, "dev", "sanity"), tree, python_version], log, env=environment(bin_dir))


def check_unit(minor, python_version, bin_dir, log):
    run([os.path.join(bin_dir, "python"), "-m", "pytest", "tests/unit", "-q", "-p", "no:cacheprovider"] + OWN_CODE_WARNINGS, log,
        env=environment(bin_dir))


def check_deprecations(minor, python_version, bin_dir, log):
    """The lane's findings and its verdict line are printed here too; the rest is in the cell's log."""
    try:
        run([os.path.join(bin_dir, "python"), os.path.join(REPO, "dev", "deprecation_lane.py")], log,
            env=dict(environment(bin_dir), ANSIBLE_INJECT_FACT_VARS="False"))
    finally:
        log.flush()
        with open(log.name) as written:
            findings = [line.rstrip() for line in written if line.startswith(("DEPRECATION FROM", "deprecation lane:", "    at "))]
        print("\n".join(findings), flush=True)


def check_site(minor, python_version, bin_dir, log):
    run([os.path.join(REPO, "tests", "support", "testbed", "build-node-image")], log, env=environment(bin_dir))
    # Named, so that no molecule version has to find it (molecule 25 did not in a git worktree).
    base_config = os.path.join(REPO, ".config", "molecule", "config.yml")
    # The conda test bed repackages the Python it runs on as its python 3.11: the .venv's.
    env = dict(environment(bin_dir), AISTACK_TESTBED_PYTHON=os.path.join(REPO, ".venv", "bin", "python"))
    run(["flock", MOLECULE_LOCK, os.path.join(bin_dir, "molecule"), "--base-config", base_config, "test", "-s", "site"], log, env=env)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--versions", help="comma-separated ansible-core minors (default: every pin file)")
    parser.add_argument("--checks", default=",".join(CHECKS), help="comma-separated, of %s" % ", ".join(CHECKS))
    args = parser.parse_args()
    every = lines()
    chosen = [line for line in every if not args.versions or line[0] in args.versions.split(",")]
    checks = [check for check in args.checks.split(",") if check]
    unknown = set(checks) - set(CHECKS) | set((args.versions or "").split(",")) - set(line[0] for line in every) - {""}
    if unknown or not chosen:
        sys.exit("unknown version or check: %s (versions: %s; checks: %s)"
                 % (", ".join(sorted(unknown)) or args.versions, ", ".join(line[0] for line in every), ", ".join(CHECKS)))
    # The molecule scenario runs on the ends of the supported range only, the deprecation lane on the newest line.
    ends = (every[0][0], every[-1][0])
    table = []
    for minor, python_version, pins in chosen:
        os.makedirs(os.path.join(CACHE, minor), exist_ok=True)
        row = {"version": minor, "python": python_version}
        with open(os.path.join(CACHE, minor, "venv.log"), "w") as log:
            try:
                bin_dir = prepare_venv(minor, python_version, pins, log)
            except RuntimeError as error:
                say("ansible-core %s: %s (log: %s)" % (minor, error, log.name))
                table.append(dict(row, **{check: "FAIL (venv)" for check in checks}))
                continue
        for check in checks:
            if check == "site" and minor not in ends or check == "deprecations" and minor != ends[1]:
                row[check] = "-"
                continue
            say("ansible-core %s on Python %s: %s" % (minor, python_version, check))
            started = time.monotonic()
            with open(os.path.join(CACHE, minor, "%s.log" % check), "w") as log:
                try:
                    globals()["check_" + check](minor, python_version, bin_dir, log)
                    verdict = "pass"
                except RuntimeError as error:
                    verdict = "FAIL"
                    say("ansible-core %s: %s failed: %s (log: %s)" % (minor, check, error, log.name))
            row[check] = "%s %s" % (verdict, duration(time.monotonic() - started))
        table.append(row)
    print_table(table, checks)
    cells = [row[check] for row in table for check in checks]
    failed = [row["version"] for row in table if any(row[check].startswith("FAIL") for check in checks)]
    if failed:
        print("failures on ansible-core %s (each cell's log: .cache/matrix/<line>/<check>.log)" % ", ".join(failed))
    print("matrix: %d passed, %d failed" % (sum(cell.startswith("pass") for cell in cells),
                                            sum(cell.startswith("FAIL") for cell in cells)))
    sys.exit(1 if failed else 0)


def duration(seconds):
    return "%dm%02ds" % divmod(int(seconds), 60)


def print_table(table, checks):
    columns = ["ansible-core", "python"] + ["molecule site" if check == "site" else check for check in checks]
    rows = [[row["version"], row["python"]] + [row[check] for check in checks] for row in table]
    widths = [max(len(cell) for cell in column) for column in zip(columns, *rows)]
    print()
    for cells in [columns, ["-" * width for width in widths]] + rows:
        print("| " + " | ".join(cell.ljust(width) for cell, width in zip(cells, widths)) + " |")
    print()


if __name__ == "__main__":
    main()
