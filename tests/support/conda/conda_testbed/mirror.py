"""Serve a folder of conda channels over real HTTP on loopback, with injectable faults.

Faults apply to every request whose path matches ``--only`` (a substring; default all):
``--latency SECONDS`` before answering, ``--status CODE`` instead of the file (``--status 500
--only .json.zst``: a mirror that fails on the compressed repodata only),
``--truncate BYTES`` (send only the first bytes of each repodata file - ``repodata.json``,
``current_repodata.json`` and their ``.zst`` - with a Content-Length that matches what is sent, so
the client sees a short but "complete" body), ``--corrupt`` (each repodata file replaced by text
that is neither JSON nor zstd). Without a fault, a ``Range: bytes=A-B`` request gets that slice
(206), as from a real mirror's web server.
Each request is appended to ``--log FILE`` as ``METHOD PATH STATUS BYTES-SENT`` when asked.

CLI: ``python -m conda_testbed.mirror --root DIR [--host 127.0.0.1] [--port 0] [faults...]``
prints ``http://HOST:PORT`` on its first line once listening, then serves until killed.
In pytest: the ``conda_mirror`` fixture factory (conda_testbed.pytest_plugin).
"""

import argparse
import functools
import http.server
import os
import re
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
        # How the latency is waited; a test may wrap it to see which requests waited.
        self.sleep = time.sleep


class Handler(http.server.SimpleHTTPRequestHandler):
    faults = Faults()
    log_path = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        pass  # quiet; requests go to log_path

    def _record(self, status, sent=0):
        if self.log_path:
            with open(self.log_path, "a") as handle:
                handle.write("%s %s %s %d\n" % (self.command, self.path, status, sent))

    def _send(self, status, body, headers=()):
        self._record(status, len(body))
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _ranged(self, path, wanted):
        """The slice a ``Range: bytes=A-B`` header asks for (206), read from the file alone."""
        size = os.path.getsize(path)
        first, _dash, last = wanted[len("bytes="):].partition("-")
        first, last = int(first), min(int(last) if last else size - 1, size - 1)
        with open(path, "rb") as handle:
            handle.seek(first)
            body = handle.read(max(last - first + 1, 0))
        self._send(206, body, [("Content-Type", "application/octet-stream"),
                               ("Content-Range", "bytes %d-%d/%d" % (first, last, size))])

    def do_GET(self):  # noqa: N802
        faults = self.faults
        applies = faults.only in self.path
        if applies and faults.latency:
            faults.sleep(faults.latency)
        if applies and faults.status:
            self._record(faults.status)
            self.send_error(faults.status)
            return
        is_repodata = self.path.split("?")[0].endswith(("repodata.json", "repodata.json.zst"))
        path = self.translate_path(self.path)
        if applies and is_repodata and (faults.corrupt or faults.truncate is not None):
            if not os.path.isfile(path):
                self._record(404)
                self.send_error(404)
                return
            with open(path, "rb") as handle:
                body = CORRUPT if faults.corrupt else handle.read(faults.truncate)
            self._send(200, body, [("Content-Type", "application/json")])
            return
        wanted = self.headers.get("Range", "")
        if os.path.isfile(path) and re.match(r"^bytes=\d+-\d*$", wanted):
            self._ranged(path, wanted)
            return
        self._record(200 if os.path.exists(path) else 404, os.path.getsize(path) if os.path.isfile(path) else 0)
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
        return self.server.RequestHandlerClass.func.faults  # a partial of the handler class

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
