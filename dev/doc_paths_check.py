"""Fail when a document names a file outside the repository.

A clone, the built tarball and the docsite carry the repository alone: a doc that points at
the project's ``shared/`` folder beside the clone, at a relative path that climbs out of the
repository, or at an absolute path of the machine it was written on sends its reader nowhere.

Read: the Markdown and reStructuredText files, docs/, the role argument specs, the plugins
(their documentation and docstrings), the changelog fragments and the collection metadata.
Recorded outputs (tests/unit/fixtures, tests/gpu/results) are left alone: they are evidence,
kept as recorded.

    python dev/doc_paths_check.py [FILE ...]     (default: every such file git tracks)
"""

import argparse
import fnmatch
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ("*.md", "*.rst", "docs/*", "roles/*/meta/argument_specs.yml", "plugins/*.py", "plugins/*.yml",
        "changelogs/fragments/*", "galaxy.yml", "meta/*.yml", "dev/docsite/*")
RECORDED = ("tests/unit/fixtures/*", "tests/gpu/results/*")
# The project's shared folder beside the clone (../shared, or shared/... as seen from the workspace).
SHARED = re.compile(r"(?<![\w./-])(?:\.\./)*shared/[\w.-]+")
# Where the project's checkouts and home folders lie on the machines it is developed on.
MACHINE_PATH = re.compile(r"(?<![\w.-])/(?:work|root|home)/[\w.-]+")
RELATIVE = re.compile(r"(?<![\w./-])(?:\.\./)+[\w.-][\w./-]*")


def documents():
    """The tracked files this check reads, relative to the repository root."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [name for name in listed.split("\0") if name
            and any(fnmatch.fnmatch(name, pattern) for pattern in DOCS)
            and not any(fnmatch.fnmatch(name, pattern) for pattern in RECORDED)]


def outside_references(relative_name, text, root=ROOT):
    """``(line number, reference, why)`` for each reference in ``text`` to a file outside ``root``."""
    folder = (root / relative_name).parent
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in SHARED.finditer(line):
            found.append((number, match.group(0), "the shared folder beside the repository"))
        for match in MACHINE_PATH.finditer(line):
            found.append((number, match.group(0), "a path of the machine the doc was written on"))
        for match in RELATIVE.finditer(line):
            target = os.path.normpath(os.path.join(str(folder), match.group(0)))
            if os.path.commonpath([target, str(root)]) != str(root):
                found.append((number, match.group(0), "a relative path out of the repository"))
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("files", nargs="*", help="repository-relative paths (default: every tracked doc)")
    names = parser.parse_args(argv).files or documents()
    problems = []
    for name in names:
        text = (ROOT / name).read_text(errors="replace")
        problems += ["%s:%d: %s names %s" % (name, number, reference, why)
                     for number, reference, why in outside_references(name, text)]
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print("%d reference(s) to files outside the repository: point at the repository's own copy or say it in words"
              % len(problems), file=sys.stderr)
        return 1
    print("==> docs name no file outside the repository (%d files read)" % len(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
