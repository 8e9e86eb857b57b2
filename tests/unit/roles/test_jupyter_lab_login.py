"""roles/jupyter_kernel/files/lab_login.py, run the way the role runs it (python -c, the passwords as
JSON on stdin), against a stand-in of jupyter_server's login handshake on loopback: the _xsrf cookie
of the login page sent back in the form, a redirect with a login cookie for the password, and the
API answering 403 without that cookie. The real server is logged in to by the numa_jupyter scenario."""

import http.server
import json
import os
import subprocess
import sys
import threading
import urllib.parse

import pytest

from conftest import REPO_ROOT

SCRIPT = os.path.join(REPO_ROOT, "roles", "jupyter_kernel", "files", "lab_login.py")
PASSWORD = "the-right-password"
XSRF = "2|33964f9f|f91dc5d4e46e9b5673df637e39a21ce0|1796575876"
SESSION = "2|1:0|10:1796575961|24:username-127-0-0-1|signed"


class StandIn(http.server.BaseHTTPRequestHandler):
    accept_any_password = False

    def log_message(self, *args):
        pass

    def _cookies(self):
        return dict(part.strip().split("=", 1) for part in self.headers.get("Cookie", "").split(";") if "=" in part)

    def _answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/login":
            self._answer(200, b"<form>", [("Set-Cookie", "_xsrf=%s; Path=/" % XSRF)])
        elif self.path == "/api/kernelspecs" and self._cookies().get("username-127-0-0-1") == SESSION:
            self._answer(200, json.dumps({"kernelspecs": {"torch": {}, "python3": {}}}).encode())
        else:
            self._answer(403)

    def do_POST(self):
        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        if self.path != "/login" or form.get("_xsrf") != [XSRF] or self._cookies().get("_xsrf") != XSRF:
            self._answer(403)
        elif form.get("password") == [PASSWORD] or self.accept_any_password:
            self._answer(302, headers=[("Location", "/"), ("Set-Cookie", "username-127-0-0-1=%s; HttpOnly; Path=/" % SESSION)])
        else:
            self._answer(401, b"Invalid credentials")


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    StandIn.accept_any_password = False


def log_in(url, passwords):
    with open(SCRIPT) as handle:
        text = handle.read()
    proc = subprocess.run([sys.executable, "-c", text], input=json.dumps({"url": url, "passwords": passwords}),
                          capture_output=True, text=True, check=True)
    return proc.stdout


def test_the_password_gets_a_session_a_wrong_one_none_and_no_secret_is_printed(server):
    url = "http://127.0.0.1:%d/" % server.server_address[1]
    out = log_in(url, [PASSWORD + "-wrong", PASSWORD])
    assert json.loads(out) == [
        {"login_page": 200, "login": 401, "cookies_set": [], "api": 403, "kernels": []},
        {"login_page": 200, "login": 302, "cookies_set": ["username-127-0-0-1"], "api": 200, "kernels": ["python3", "torch"]}]
    for secret in (PASSWORD, XSRF, SESSION):
        assert secret not in out


def test_a_server_that_lets_any_password_in_shows_as_such(server):
    StandIn.accept_any_password = True
    url = "http://127.0.0.1:%d" % server.server_address[1]
    wrong = json.loads(log_in(url, ["anything"]))[0]
    assert (wrong["login"], wrong["api"]) == (302, 200)


def test_no_xsrf_cookie_means_no_login_is_tried(server):
    url = "http://127.0.0.1:%d/nowhere" % server.server_address[1]
    assert json.loads(log_in(url, [PASSWORD])) == [
        {"login_page": 403, "login": None, "cookies_set": [], "api": None, "kernels": []}]
