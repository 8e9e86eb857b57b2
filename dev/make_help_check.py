"""Fail when `make help` leaves out a Makefile target.

A target is every name in `.PHONY` and every rule whose name is plain (no `$(...)`, no `%`,
not a variable assignment). `make help` lists the rules carrying a `## description`; a target
without one is missing from that list, so it is named here and the check exits 1.

    python dev/make_help_check.py [MAKEFILE]
"""

import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# "name: prerequisites ## text", but not "NAME := value" nor "NAME ?= value".
RULE = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*)\s*:(?![=:])")
HELP_LINE = re.compile(r"^\s*make (?P<name>\S+)")


def targets(makefile_text):
    """The plain rule names and the .PHONY names of a Makefile, in order of appearance."""
    text = makefile_text.replace("\\\n", " ")
    names = []
    for line in text.splitlines():
        if line.startswith(".PHONY:"):
            names += line.split(":", 1)[1].split()
            continue
        match = RULE.match(line)
        if match:
            names.append(match.group("name"))
    return list(dict.fromkeys(names))


def listed(help_output):
    """The target names `make help` printed."""
    return [m.group("name") for m in map(HELP_LINE.match, help_output.splitlines()) if m]


def missing(makefile):
    """Targets of ``makefile`` that `make help` does not list."""
    result = subprocess.run(["make", "--no-print-directory", "-s", "-f", makefile.name, "help"], cwd=makefile.parent,
                            capture_output=True, text=True, check=True)
    shown = set(listed(result.stdout))
    return [name for name in targets(makefile.read_text()) if name not in shown]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("makefile", nargs="?", default=str(ROOT / "Makefile"))
    makefile = pathlib.Path(parser.parse_args(argv).makefile).resolve()
    left_out = missing(makefile)
    if left_out:
        print("%s: `make help` does not list %s; give each target a one-line `## description`"
              % (makefile.name, ", ".join(left_out)), file=sys.stderr)
        return 1
    print("==> make help lists all %d targets" % len(targets(makefile.read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
