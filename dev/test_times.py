"""Where `make test`'s time goes: each layer and each molecule scenario timed, one table at the end.

    python3 dev/test_times.py run NAME -- COMMAND...   runs COMMAND, appends NAME's time and verdict
                                                     to $AISTACK_TEST_TIMES (when set), exits as it did
    python3 dev/test_times.py table FILE [--expect NAME...]
                                                     prints FILE as a table; an expected NAME that
                                                     has no line is shown as not run

A NAME with a slash (``molecule/conda``) is a part of the layer before the slash and is shown
indented under it. The table is printed whether or not a layer failed, so a failed run still says
where its time went. It measures and never judges: no time fails anything. Standard library only
(it times the bootstrap too, before the .venv exists).
"""

import argparse
import os
import subprocess
import sys
import time


def record(path, name, seconds, status):
    with open(path, "a") as handle:
        handle.write("%s\t%.1f\t%s\n" % (name, seconds, status))


def read(path):
    """``[(name, seconds, status)]`` of a times file, in the order the runs ended."""
    rows = []
    if os.path.exists(path):
        with open(path) as handle:
            for line in handle:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 3:
                    rows.append((parts[0], float(parts[1]), parts[2]))
    return rows


def duration(seconds):
    return "%dm %02ds" % divmod(int(round(seconds)), 60)


def table(rows, expect=()):
    """The lines of the table: each layer, its parts indented under it, in the order of ``expect``
    (then any other, in the order they ended), what was expected but did not run, and the total of
    the layers. A layer whose parts ran but that has no line of its own (``make molecule`` alone,
    or a run killed midway) is shown with the sum of its parts."""
    ended = dict((name, (seconds, status)) for name, seconds, status in rows)
    order = list(dict.fromkeys(list(expect) + [name for name, _seconds, _status in rows]))
    layers = list(dict.fromkeys(name.partition("/")[0] for name in order))
    lines = []
    total = 0.0
    for layer in layers:
        parts = [name for name in order if name.startswith(layer + "/")]
        if layer in ended:
            seconds, status = ended[layer]
        elif any(part in ended for part in parts):
            seconds = sum(ended[part][0] for part in parts if part in ended)
            failed = [ended[part][1] for part in parts if part in ended and ended[part][1] != "passed"]
            status = failed[0] if failed else "passed"
        else:
            seconds, status = None, "not run"
        total += seconds or 0.0
        lines.append(("  ", layer, seconds, status))
        for part in parts:
            seconds, status = ended.get(part, (None, "not run"))
            lines.append(("    ", part.partition("/")[2], seconds, status))
    lines.append(("  ", "total", total, ""))
    width = max(len(indent + name) for indent, name, _seconds, _status in lines) + 2
    return ["==> time per layer"] + [
        ("%-*s %9s  %s" % (width, indent + name, "" if seconds is None else duration(seconds), status)).rstrip()
        for indent, name, seconds, status in lines]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:
        if len(argv) < 4 or argv[2] != "--":
            sys.exit("usage: test_times.py run NAME -- COMMAND...")
        name, command = argv[1], argv[3:]
        started = time.monotonic()
        try:
            code = subprocess.call(command)
        except KeyboardInterrupt:
            code = 130
        status = "passed" if code == 0 else "FAILED (exit %d)" % code
        if os.environ.get("AISTACK_TEST_TIMES"):
            record(os.environ["AISTACK_TEST_TIMES"], name, time.monotonic() - started, status)
        return code
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("command", choices=["table"])
    parser.add_argument("file")
    parser.add_argument("--expect", nargs="*", default=[], help="layers the run was to make, in order")
    args = parser.parse_args(argv)
    print("\n".join(table(read(args.file), args.expect)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
