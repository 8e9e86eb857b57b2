"""A wheel cache at a URL, for tests: serves a folder over HTTP (GET, HEAD) and accepts uploads
(PUT) the way artifact servers' raw repositories do (Nexus raw, Artifactory generic, WebDAV).

Uploads need HTTP Basic credentials when ``--user NAME:PASSWORD`` is given (401 otherwise); a
file is written to a temporary name and renamed, so a reader never sees half of it. Each request
is appended to ``--log FILE`` as ``METHOD PATH STATUS``. Standard library only: it runs on a
fresh test node or the GPU host with any python3.

CLI: ``python3 http_cache_server.py --root DIR [--host 127.0.0.1] [--port 8765] [--user u:p] [--log F]``
prints ``http://HOST:PORT`` once listening, then serves until killed.
"""

import argparse
import base64
import functools
import http.server
import os
import sys
import tempfile


class Handler(http.server.SimpleHTTPRequestHandler):
    credentials = None
    log_path = None

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        pass  # quiet; requests go to log_path

    def _record(self, status):
        if self.log_path:
            with open(self.log_path, "a") as handle:
                handle.write("%s %s %s\n" % (self.command, self.path, status))

    def send_response(self, code, message=None):
        self._record(code)
        super().send_response(code, message)

    def _authorized(self):
        if self.credentials is None:
            return True
        expected = "Basic " + base64.b64encode(self.credentials.encode()).decode()
        return self.headers.get("Authorization") == expected

    def do_PUT(self):  # noqa: N802
        if not self._authorized():
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="wheel cache"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        target = self.translate_path(self.path)
        if self.path.endswith("/") or not target.startswith(os.path.abspath(self.directory) + os.sep):
            self.send_error(400, "PUT needs a file path inside the cache")
            return
        length = int(self.headers.get("Content-Length", "0"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        handle, partial = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".upload-")
        with os.fdopen(handle, "wb") as stream:
            remaining = length
            while remaining:
                chunk = self.rfile.read(min(remaining, 1 << 20))
                if not chunk:
                    break
                stream.write(chunk)
                remaining -= len(chunk)
        if remaining:
            os.unlink(partial)
            self.send_error(400, "upload ended %d bytes short" % remaining)
            return
        os.chmod(partial, 0o644)
        existed = os.path.exists(target)
        os.replace(partial, target)
        self.send_response(204 if existed else 201)
        self.send_header("Content-Length", "0")
        self.end_headers()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--user", help="NAME:PASSWORD that uploads must present")
    parser.add_argument("--log")
    args = parser.parse_args(argv)
    os.makedirs(args.root, exist_ok=True)
    Handler.credentials = args.user
    Handler.log_path = args.log
    server = http.server.ThreadingHTTPServer(
        (args.host, args.port), functools.partial(Handler, directory=os.path.abspath(args.root)))
    print("http://%s:%d" % server.server_address[:2], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
