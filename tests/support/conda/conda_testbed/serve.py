"""Start (or stop) the conda test bed for a molecule scenario: stand-in installers, the local
channels and a loopback HTTP mirror serving both, in the background.

``python -m conda_testbed.serve start --dir DIR [--installer-version 26.7.1-0 ...] [--no-python]``
writes ``DIR/testbed.json``::

    {"url": "http://127.0.0.1:PORT", "pid": N, "root": "DIR/www",
     "installers": {"26.7.1-0": {"path": ".../Miniconda3-standin-26.7.1-0-Linux-x86_64.sh",
                                 "url": "http://127.0.0.1:PORT/...", "sha256": "..."}},
     "channel_alias": "http://127.0.0.1:PORT", "wheels": "DIR/www/wheels"}

and prints it. ``start --dir DIR --www WWW`` serves a folder laid out that way already (built
elsewhere and carried: the GPU host has no builder). ``stop --dir DIR`` ends the mirror it started. Nodes reach it with
``--network=host`` (molecule platform ``podman_options``).
"""

import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import time

from . import channel, installer


def start(folder, versions, with_python=True):
    www = os.path.join(folder, "www")
    os.makedirs(www, exist_ok=True)
    channel.materialize(www, ("conda-forge", "main"), with_python)
    for version in versions:
        installer.copy_to(www, version)
    return serve(folder, www)


def serve(folder, www, port=0):
    """Serve ``www`` (channels and installers laid out by ``start``, or carried there already built:
    tests/gpu/make-gpu-carry) on loopback, at ``port`` (0: a free one); write and return the state."""
    os.makedirs(folder, exist_ok=True)
    installers = {}
    for path in sorted(glob.glob(os.path.join(www, "Miniconda3-standin-*-Linux-x86_64.sh"))):
        version = os.path.basename(path)[len("Miniconda3-standin-"):-len("-Linux-x86_64.sh")]
        installers[version] = {"path": path, "sha256": installer.sha256_of(path), "filename": os.path.basename(path)}
    log = open(os.path.join(folder, "mirror.log"), "a")  # pylint: disable=consider-using-with
    proc = subprocess.Popen([sys.executable, "-m", "conda_testbed.mirror", "--root", www, "--port", str(port), "--log",
                             os.path.join(folder, "requests.log")], stdout=subprocess.PIPE, stderr=log,
                            stdin=subprocess.DEVNULL, text=True, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            start_new_session=True)
    url = proc.stdout.readline().strip()
    if not url.startswith("http://"):
        proc.kill()
        raise SystemExit("the mirror did not start; see %s" % os.path.join(folder, "mirror.log"))
    for entry in installers.values():
        entry["url"] = "%s/%s" % (url, entry["filename"])
    state = {"url": url, "pid": proc.pid, "root": www, "installers": installers, "channel_alias": url,
             "wheels": os.path.join(www, "wheels")}
    with open(os.path.join(folder, "testbed.json"), "w") as handle:
        json.dump(state, handle, indent=1)
    return state


def stop(folder):
    path = os.path.join(folder, "testbed.json")
    if not os.path.exists(path):
        return False
    with open(path) as handle:
        pid = json.load(handle)["pid"]
    try:
        os.kill(pid, signal.SIGTERM)
        for _attempt in range(50):
            os.kill(pid, 0)
            time.sleep(0.1)
    except ProcessLookupError:
        pass
    os.unlink(path)
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("action", choices=("start", "stop"))
    parser.add_argument("--dir", required=True)
    parser.add_argument("--installer-version", action="append", help="repeatable; default 26.7.1-0")
    parser.add_argument("--no-python", action="store_true", help="leave the python package out of the channels")
    parser.add_argument("--www", help="serve this folder, already laid out, instead of building one in DIR/www")
    parser.add_argument("--port", type=int, default=0, help="with --www: the port (default: a free one)")
    args = parser.parse_args(argv)
    folder = os.path.abspath(args.dir)
    if args.action == "stop":
        print(json.dumps({"stopped": stop(folder)}))
        return 0
    stop(folder)
    if args.www:
        print(json.dumps(serve(folder, os.path.abspath(args.www), args.port)))
    else:
        print(json.dumps(start(folder, args.installer_version or ["26.7.1-0"], not args.no_python)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
