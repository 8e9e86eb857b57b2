"""The loopback mirror's injected faults, seen through the conda stand-in as real conda reports them."""

import json
import time
import urllib.request


def condarc_for(base, url):
    settings = {"channel_alias": url, "channels": ["conda-forge"], "remote_max_retries": 0,
                "remote_read_timeout_secs": 2.0, "pkgs_dirs": [base.prefix + "/pkgs"]}
    base.write_condarc(settings)


def test_healthy_mirror_serves_a_solvable_channel(conda_base, conda_mirror):
    base, mirror = conda_base(condarc=None), conda_mirror()
    condarc_for(base, mirror.url)
    proc = base.run("create", "-y", "-n", "demo", "hello-ansible", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {e["name"] for e in json.loads(proc.stdout)["actions"]["LINK"]} == {"hello-ansible", "libfoo"}


def test_http_error_is_a_conda_http_error(conda_base, conda_mirror):
    base, mirror = conda_base(condarc=None), conda_mirror(status=503)
    condarc_for(base, mirror.url)
    proc = base.run("create", "-y", "-n", "demo", "hello-ansible", "--json")
    error = json.loads(proc.stdout)
    assert (proc.returncode, error["exception_name"], error["status_code"]) == (1, "CondaHTTPError", "503")


def test_unreachable_mirror_is_status_000(conda_base):
    base = conda_base(condarc=None)
    condarc_for(base, "http://127.0.0.1:9")
    error = json.loads(base.run("create", "-y", "-n", "demo", "hello-ansible", "--json").stdout)
    assert (error["exception_name"], error["status_code"]) == ("CondaHTTPError", "000")


def test_corrupt_and_truncated_repodata_fail_by_name(conda_base, conda_mirror):
    base = conda_base(condarc=None)
    for faults in ({"corrupt": True}, {"truncate": 100}):
        mirror = conda_mirror(**faults)
        condarc_for(base, mirror.url)
        proc = base.run("create", "-y", "-n", "demo", "hello-ansible", "--json")
        assert (proc.returncode, json.loads(proc.stdout)["exception_name"]) == (1, "JSONDecodeError")


def test_latency_applies_to_matching_paths_only(conda_mirror):
    """Which requests waited is read from the mirror's own record of its waits, not from a stopwatch
    (a loaded machine stretches an unmatched request past any threshold); the wait itself is real, so
    the matched request takes at least the latency, a bound no load can break."""
    mirror = conda_mirror(latency=0.5, only="/main/")
    waits, sleep = [], mirror.faults.sleep
    mirror.faults.sleep = lambda seconds: (waits.append(seconds), sleep(seconds))
    urllib.request.urlopen(mirror.url + "/conda-forge/noarch/repodata.json").read()
    assert waits == []
    started = time.monotonic()
    urllib.request.urlopen(mirror.url + "/main/noarch/repodata.json").read()
    assert time.monotonic() - started >= 0.5 and waits == [0.5]
