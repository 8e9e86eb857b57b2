"""A wheel cache at a URL, for tests: serves a folder over HTTP (GET, HEAD) and accepts uploads
(PUT) the way artifact servers' raw repositories do (Nexus raw, Artifactory generic, WebDAV).

Uploads need HTTP Basic credentials when ``--user NAME:PASSWORD`` is given (401 otherwise); a
file is written to a temporary name and renamed, so a reader never sees half of it. Each request
is appended to ``--log FILE`` as ``METHOD PATH STATUS``. Standard library only: it runs on a
fresh test node or the GPU host with any python3.

With ``--pause-file FILE`` (a hook for kill points), a wheel upload that arrives while FILE exists
is held before its body is read: the pid of the uploading process on this host goes to
``FILE.reached`` and the request waits while FILE exists. When that process has died meanwhile (a
kill point killed it), the upload is dropped unread and nothing is written.

CLI: ``python3 http_cache_server.py --root DIR [--host 127.0.0.1] [--port 8765] [--user u:p] [--log F]
[--pause-file F]`` prints ``http://HOST:PORT`` once listening, then serves until killed.
"""

import argparse
import base64
import functools
import http.server
import os
import sys
import tempfile
import time


def socket_owner(port):
    """The pid of the process on this host whose TCP socket has local port ``port`` (a client's)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if os.path.exists(table):
            with open(table) as handle:
                inodes.update(fields[9] for fields in (line.split() for line in list(handle)[1:])
                              if int(fields[1].rsplit(":", 1)[1], 16) == port)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            links = [os.readlink("/proc/%s/fd/%s" % (pid, fd)) for fd in os.listdir("/proc/%s/fd" % pid)]
        except OSError:
            continue
        if int(pid) != os.getpid() and any(link[len("socket:["):-1] in inodes for link in links if link.startswith("socket:[")):
            return int(pid)
    return None


def process_alive(pid):
    """Whether process ``pid`` runs (a zombie, killed and not yet reaped, does not)."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Handler(http.server.SimpleHTTPRequestHandler):
    credentials = None
    log_path = None
    pause_file = None

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        pass  # quiet; requests go to log_path

    def _record(self, status):
        if self.log_path:
            with open(self.log_path, "a") as handle:
                handle.write("%s %s %s\n" % (self.command, self.path, status))

    def send_response(self, code, message=None):
        self._record(code)
        super().send_response(code, message)

    def _pause_if_asked(self):
        """Hold a wheel upload while the pause file exists. False when its client was killed meanwhile."""
        if not (self.pause_file and self.path.endswith(".whl") and os.path.exists(self.pause_file)):
            return True
        client = socket_owner(self.client_address[1])
        # Written aside and renamed: a kill point that sees <file>.reached reads it whole.
        with open(self.pause_file + ".reached.tmp", "w") as reached:
            reached.write('{"pid": %d, "where": "PUT %s"}' % (client or -1, self.path))
        os.replace(self.pause_file + ".reached.tmp", self.pause_file + ".reached")
        while os.path.exists(self.pause_file):
            time.sleep(0.1)
        # A small body is already in this end's socket buffer when its client dies: reading it would
        # publish an upload whose client was killed mid-publish.
        return client is None or process_alive(client)

    def _authorized(self):
        if self.credentials is None:
            return True
        expected = "Basic " + base64.b64encode(self.credentials.encode()).decode()
        return self.headers.get("Authorization") == expected

    def _discard_body(self):
        """Read the request's body and drop it, as nginx's lingering close does before an early
        answer: a client still sending would otherwise get a reset (EPIPE) instead of the answer."""
        remaining = int(self.headers.get("Content-Length", "0"))
        while remaining:
            chunk = self.rfile.read(min(remaining, 1 << 20))
            if not chunk:
                break
            remaining -= len(chunk)

    def do_PUT(self):  # noqa: N802
        if not self._authorized():
            self._discard_body()
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="wheel cache"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        target = self.translate_path(self.path)
        if self.path.endswith("/") or not target.startswith(os.path.abspath(self.directory) + os.sep):
            self.send_error(400, "PUT needs a file path inside the cache")
            return
        if not self._pause_if_asked():
            self.close_connection = True
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
    parser.add_argument("--pause-file")
    args = parser.parse_args(argv)
    os.makedirs(args.root, exist_ok=True)
    Handler.credentials = args.user
    Handler.log_path = args.log
    Handler.pause_file = args.pause_file
    server = http.server.ThreadingHTTPServer(
        (args.host, args.port), functools.partial(Handler, directory=os.path.abspath(args.root)))
    print("http://%s:%d" % server.server_address[:2], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
