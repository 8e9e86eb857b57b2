"""The deprecation lane: the collection's entry points under the ansible-core on PATH, failing on any
deprecation whose origin is aistack.gpu_node.

`make matrix` runs it as its `deprecations` check, in a line's venv (`make test` on the newest line).
It runs, with deprecation warnings on and a traceback kept with each (ANSIBLE_DISPLAY_TRACEBACK=deprecated):

- `ansible-playbook --syntax-check` of site.yml and every playbooks/*.yml;
- site.yml in check and diff mode on this machine, without the tags that need a conda installer,
  mirrors or a torch environment (as tests/integration/test_entry_points.py runs it): every role's
  argument spec, preflight and its planning action plugins, the driver, fabric manager, manifest and
  validation roles' read-only modules, the collection's filters;
- dev/deprecation_lane/modules.yml, a real run (not check mode) on this machine of the modules and
  action plugins that need no GPU, conda or torch, into a temporary folder.

A deprecation is the collection's when its text names the collection (its deprecator, a file of the
collection in its traceback or origin) or when ansible-core attached it to a task the collection
defines (dev/deprecation_lane/callback_plugins/deprecation_record.py). A failure inferred from a
non-zero rc without `failed` (deprecated by ansible-core 2.22) is the collection's when its module or
action plugin is. Deprecations from elsewhere (ansible-core, other collections, Python packages) are
listed, and fail nothing.

    python dev/deprecation_lane.py [--log FILE]
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LANE = os.path.join(REPO, "dev", "deprecation_lane")
COLLECTION = "aistack.gpu_node"
# How a file of the collection shows up in a traceback or origin: from the checkout, through the
# collections path, or from an AnsiballZ payload on the node.
COLLECTION_PATH_MARKERS = ("ansible_collections/aistack/gpu_node/", "ansible_collections.aistack.gpu_node")
# The tags site.yml cannot run here without a conda installer, mirrors or a torch environment.
SITE_SKIP_TAGS = "conda,env,apex,numa,jupyter"
NO_RECORDS = "Failed to load callback plugin 'deprecation_record'"
BLOCK_START = re.compile(r"^\[(DEPRECATION WARNING|DEPRECATED|WARNING|ERROR)\]: ", re.M)
PYTHON_WARNING = re.compile(r"^(?P<path>\S+?):(?P<line>\d+): (?P<category>\w*DeprecationWarning): (?P<msg>.*)$", re.M)


def deprecation_blocks(stderr):
    """Each `[DEPRECATION WARNING]` of ansible's stderr, with what follows it up to the next message
    (its origin and traceback), and each Python DeprecationWarning line, in order."""
    blocks = []
    starts = list(BLOCK_START.finditer(stderr))
    for index, match in enumerate(starts):
        if match.group(1) != "DEPRECATION WARNING":
            continue
        end = starts[index + 1].start() if index + 1 < len(starts) else len(stderr)
        text = stderr[match.start():end]
        # A Python warning printed after the block is not part of it.
        stray = PYTHON_WARNING.search(text)
        blocks.append(text[:stray.start()] if stray else text)
    for match in PYTHON_WARNING.finditer(stderr):
        blocks.append(match.group(0))
    return [block.strip() for block in blocks]


def names_collection(text, roots):
    """Whether a deprecation's text points at the collection: its deprecator, or one of its files."""
    if "collection %r" % COLLECTION in text or any(marker in text for marker in COLLECTION_PATH_MARKERS):
        return True
    # The checkout's own tool folders (a matrix line's venv is under .cache) are not the collection.
    return any(re.search(r"(^|[\s\"'(])%s/(?!\.cache/|\.venv/)" % re.escape(root.rstrip("/")), text) for root in roots)


def headline(block):
    return block.splitlines()[0]


def pointer(block, roots):
    """Where a deprecation comes from in the collection: its origin, else the innermost of the
    collection's frames in its traceback (the call of the deprecated feature); None if neither."""
    lines = [line.strip() for line in block.splitlines()[1:] if names_collection(line, roots)]
    origins = [line for line in lines if line.startswith("Origin: ")]
    return (origins or lines[-1:] or [None])[0]


def defined_by_collection(task_path, roots):
    """Whether a task (its path as ansible-core gives it, FILE:LINE) is in one of the collection's files."""
    path = task_path.rsplit(":", 1)[0] if task_path else ""
    return bool(path) and (names_collection(path, roots) or names_collection(os.path.realpath(path), roots))


def ours(action):
    return (action or "").startswith(COLLECTION + ".")


def judge(stderr_texts, records, roots):
    """(the collection's findings, other deprecations), each a sorted list of texts headed by one line."""
    collection, others, seen = set(), set(), set()
    for stderr in stderr_texts:
        for block in deprecation_blocks(stderr):
            # One of each: a module's deprecation repeats per run, from a payload folder of its own.
            if headline(block) not in seen:
                seen.add(headline(block))
                (collection if names_collection(block, roots) else others).add(block)
    attached = set()
    for record in records:
        if record["kind"] == "rc_inferred":
            text = ("%s returned rc=%s without `failed` (task %r at %s): ansible-core inferred the failure, which 2.22 deprecates"
                    % (record["action"], record["rc"], record["task"], record["task_path"]))
            (collection if ours(record["action"]) else others).add(text)
            continue
        for deprecation in record["deprecations"]:
            if (deprecation["deprecator"] or "").startswith(COLLECTION) or defined_by_collection(record["task_path"], roots):
                attached.add(deprecation["msg"])
                collection.add("[DEPRECATION WARNING]: %s (deprecator %s; task %r at %s)" % (
                    deprecation["msg"], deprecation["deprecator"], record["task"], record["task_path"]))
    # A deprecation of another's code that a task of the collection brought about is the collection's.
    prefix = "[DEPRECATION WARNING]: "
    others = set(block for block in others if not any(headline(block)[len(prefix):].startswith(msg) for msg in attached))
    return sorted(collection), sorted(others)


def read_records(path):
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def collection_roots():
    """The checkout, and the collection as ansible-core loads it (a link in the collections path)."""
    roots = {os.path.realpath(REPO), REPO}
    for base in (os.environ.get("ANSIBLE_COLLECTIONS_PATH") or "").split(os.pathsep):
        if base:
            roots.add(os.path.join(os.path.abspath(base), "ansible_collections", "aistack", "gpu_node"))
    return sorted(roots)


def commands(scratch):
    playbooks = ["site.yml"] + sorted(os.path.relpath(path, REPO) for path in glob.glob(os.path.join(REPO, "playbooks", "*.yml")))
    return [
        ("syntax check", ["ansible-playbook", "--syntax-check", "-i", "inventories/local/hosts.yml"] + playbooks),
        ("site.yml --check on this machine", ["ansible-playbook", "site.yml", "--check", "--diff", "--skip-tags", SITE_SKIP_TAGS]),
        ("modules on this machine", ["ansible-playbook", os.path.join(LANE, "modules.yml"), "-e", "lane_scratch=%s" % scratch]),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--log", help="where to write each command's output (default: stdout only)")
    args = parser.parse_args()
    roots = collection_roots()
    log = open(args.log, "w") if args.log else None
    failed_commands, stderr_texts = [], []
    with tempfile.TemporaryDirectory(prefix="aistack-deprecation-lane-") as scratch:
        record_path = os.path.join(scratch, "records.jsonl")
        env = dict(os.environ, ANSIBLE_DEPRECATION_WARNINGS="true", ANSIBLE_DISPLAY_TRACEBACK="deprecated",
                   ANSIBLE_CALLBACK_PLUGINS=os.path.join(LANE, "callback_plugins"),
                   ANSIBLE_CALLBACKS_ENABLED="deprecation_record", AISTACK_DEPRECATION_RECORD=record_path,
                   ANSIBLE_FORCE_COLOR="false", ANSIBLE_NOCOLOR="true")
        work = os.path.join(scratch, "work")
        os.makedirs(work)
        for title, command in commands(work):
            print("==> deprecation lane: %s: %s" % (title, " ".join(command)), flush=True)
            proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
            if log:
                log.write("$ %s\n--- stdout\n%s\n--- stderr\n%s\n--- exit %d\n" % (" ".join(command), proc.stdout, proc.stderr, proc.returncode))
            stderr_texts.append(proc.stderr)
            if proc.returncode:
                failed_commands.append(title)
                print("%s\n%s\n==> deprecation lane: %s exited %d" % (proc.stdout[-4000:], proc.stderr[-4000:], title, proc.returncode))
        records = read_records(record_path)
    # ansible-core only warns when a callback fails to load: without its records the lane proves nothing.
    if any(NO_RECORDS in stderr for stderr in stderr_texts) or not records:
        failed_commands.append("the deprecation_record callback (it recorded nothing)")
    if log:
        log.close()
    collection, others = judge(stderr_texts, records, roots)
    results = [record for record in records if record["kind"] == "result"]
    ran = sorted(set(record["action"] for record in results if ours(record["action"])))
    print("==> deprecation lane: %d task results, %d of them from %d of the collection's modules and action plugins: %s"
          % (len(results), sum(ours(record["action"]) for record in results), len(ran), ", ".join(name.split(".")[-1] for name in ran)))
    if others:
        print("==> deprecation lane: %d deprecation(s) from code outside the collection (not a failure):" % len(others))
        for text in others:
            print("  - %s" % headline(text))
    for text in collection:
        print("DEPRECATION FROM %s: %s" % (COLLECTION, headline(text)))
        where = pointer(text, roots)
        if where:
            print("    at %s" % where)
    print("deprecation lane: %d from %s, %d from other code, %d command(s) failed%s"
          % (len(collection), COLLECTION, len(others), len(failed_commands),
             (": " + ", ".join(failed_commands)) if failed_commands else ""))
    sys.exit(1 if collection or failed_commands else 0)


if __name__ == "__main__":
    main()
