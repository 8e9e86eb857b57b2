"""The URL cache test double's pause hook (kill points, issue 18): a wheel upload that arrives while
the pause file exists is held before its body is read, and the uploading process is named in
<file>.reached, so a kill point can SIGKILL that client mid-publish; nothing is written then."""

import base64
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time

SERVER = os.path.join(os.path.dirname(__file__), "..", "support", "http_cache_server.py")
CLIENT = """
import base64, sys, urllib.request
request = urllib.request.Request(sys.argv[1], data=b"x" * 1000, method="PUT",
                                 headers={"Authorization": "Basic " + base64.b64encode(b"u:p").decode()})
print(urllib.request.urlopen(request).status)
"""


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(predicate, what, timeout=120):
    """Polls until ``predicate``; the deadline only bounds a wait that should end at once, so it is generous."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_upload_held_at_the_pause_names_its_client_and_writes_nothing_when_killed(tmp_path):
    port, root, pause = free_port(), tmp_path / "root", tmp_path / "pause"
    server = subprocess.Popen([sys.executable, SERVER, "--root", str(root), "--port", str(port), "--user", "u:p",
                               "--pause-file", str(pause)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().strip() == "http://127.0.0.1:%d" % port
        url = "http://127.0.0.1:%d/apex/key/apex-0.1-py3-none-any.whl" % port
        pause.touch()
        client = subprocess.Popen([sys.executable, "-c", CLIENT, url], stdout=subprocess.PIPE, text=True)
        wait_for(lambda: os.path.exists(str(pause) + ".reached"), "the upload never reached the pause")
        reached = json.loads((tmp_path / "pause.reached").read_text())
        assert reached["pid"] == client.pid and reached["where"] == "PUT /apex/key/apex-0.1-py3-none-any.whl"
        os.kill(client.pid, signal.SIGKILL)
        client.wait(timeout=60)
        pause.unlink()
        # The held request ends short; a new upload, without the pause, goes through.
        wait_for(lambda: not any(path.is_file() for path in root.rglob("*")), "a killed upload left a file")
        again = subprocess.run([sys.executable, "-c", CLIENT, url], capture_output=True, text=True, timeout=120, check=True)
        assert again.stdout.strip() == "201"
        assert (root / "apex" / "key" / "apex-0.1-py3-none-any.whl").read_bytes() == b"x" * 1000
        assert not [path.name for path in (root / "apex" / "key").iterdir() if path.name.startswith(".upload-")]
    finally:
        server.kill()
        server.wait(timeout=60)


def test_a_refused_upload_gets_its_401_not_a_reset(tmp_path):
    """A wrong password on a large upload is answered 401 after the body is read (as nginx's
    lingering close does): answered before it, the client still sending got EPIPE, and
    apex_build's 'wrong credentials' case saw 'answered nothing' on a loaded machine."""
    port = free_port()
    server = subprocess.Popen([sys.executable, SERVER, "--root", str(tmp_path), "--port", str(port), "--user", "u:p"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().strip() == "http://127.0.0.1:%d" % port
        for _attempt in range(3):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            connection.request("PUT", "/apex/key/apex-0.1-py3-none-any.whl", body=b"x" * (64 << 20),
                               headers={"Authorization": "Basic " + base64.b64encode(b"u:wrong").decode()})
            assert connection.getresponse().status == 401
            connection.close()
        assert not list(tmp_path.iterdir())
    finally:
        server.kill()
        server.wait(timeout=60)
