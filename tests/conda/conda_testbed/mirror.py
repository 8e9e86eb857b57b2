"""Serve a folder of conda channels over real HTTP on loopback, with injectable faults.

Faults apply to every request whose path matches ``--only`` (a substring; default all):
``--latency SECONDS`` before answering, ``--status CODE`` instead of the file,
``--truncate BYTES`` (send only the first bytes of each ``repodata.json``, with a Content-Length
that matches what is sent, so the client sees a short but "complete" body),
``--corrupt`` (``repodata.json`` replaced by text that is not JSON).
Each request is appended to ``--log FILE`` as ``METHOD PATH STATUS`` when asked.

CLI: ``python -m conda_testbed.mirror --root DIR [--host 127.0.0.1] [--port 0] [faults...]``
prints ``http://HOST:PORT`` on its first line once listening, then serves until killed.
In pytest: the ``conda_mirror`` fixture factory (conda_testbed.pytest_plugin).
"""

import argparse
import functools
import http.server
import os
import sys
import threading
import time

CORRUPT = b"<html><body>502 Bad Gateway (not repodata)</body></html>\n"


class Faults:
    def __init__(self, latency=0.0, status=None, truncate=None, corrupt=False, only=""):
        self.latency = latency
        self.status = status
        self.truncate = truncate
        self.corrupt = corrupt
        self.only = only


class Handler(http.server.SimpleHTTPRequestHandler):
    faults = Faults()
    log_path = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        pass  # quiet; requests go to log_path

    def _record(self, status):
        if self.log_path:
            with open(self.log_path, "a") as handle:
                handle.write("%s %s %s\n" % (self.command, self.path, status))

    def do_GET(self):  # noqa: N802
        faults = self.faults
        applies = faults.only in self.path
        if applies and faults.latency:
            time.sleep(faults.latency)
        if applies and faults.status:
            self._record(faults.status)
            self.send_error(faults.status)
            return
        is_repodata = self.path.split("?")[0].endswith("repodata.json")
        if applies and is_repodata and (faults.corrupt or faults.truncate is not None):
            path = self.translate_path(self.path)
            if not os.path.isfile(path):
                self._record(404)
                self.send_error(404)
                return
            with open(path, "rb") as handle:
                body = handle.read()
            body = CORRUPT if faults.corrupt else body[: faults.truncate]
            self._record(200)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        path = self.translate_path(self.path)
        self._record(200 if os.path.exists(path) else 404)
        super().do_GET()


class Mirror:
    """A running mirror: ``url``, ``stop()``; a context manager."""

    def __init__(self, root, host="127.0.0.1", port=0, log_path=None, **faults):
        handler = type("MirrorHandler", (Handler,), {"faults": Faults(**faults), "log_path": log_path})
        self.server = http.server.ThreadingHTTPServer((host, port), functools.partial(handler, directory=root))
        self.server.daemon_threads = True
        self.host, self.port = self.server.server_address[:2]
        self.url = "http://%s:%d" % (self.host if self.host != "0.0.0.0" else "127.0.0.1", self.port)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def faults(self):
        return self.server.RequestHandlerClass.faults

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", required=True, help="folder served at / (channels are its sub-folders)")
    parser.add_argument("--host", default="127.0.0.1", help="0.0.0.0 to reach it from podman's bridge")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each answer")
    parser.add_argument("--status", type=int, help="answer every request with this HTTP status")
    parser.add_argument("--truncate", type=int, help="serve only the first BYTES of repodata.json")
    parser.add_argument("--corrupt", action="store_true", help="serve repodata.json that is not JSON")
    parser.add_argument("--only", default="", help="apply the faults only to paths containing this")
    parser.add_argument("--log", help="append 'METHOD PATH STATUS' per request to this file")
    args = parser.parse_args(argv)
    mirror = Mirror(os.path.abspath(args.root), args.host, args.port, args.log, latency=args.latency,
                    status=args.status, truncate=args.truncate, corrupt=args.corrupt, only=args.only)
    print(mirror.url, flush=True)
    try:
        mirror.thread.join()
    except KeyboardInterrupt:
        mirror.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
