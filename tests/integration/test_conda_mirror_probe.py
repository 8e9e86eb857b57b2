"""conda_mirror_probe (run as a module process, as on a node) against loopback mirrors: what it
reads of conda-forge-sized repodata, and a mirror that fails only on what conda reads first."""

import json
import os
import subprocess
import sys

from conftest import REPO_ROOT

from conda_testbed import bigrepodata

LIMIT = 8 * 1024 * 1024


def run_probe(tmp_path, mirror_url):
    """The module run as its own process, as on a node: (its result, its peak resident memory in KiB)."""
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {"mirrors": [mirror_url], "channels": ["conda-forge"]}}))
    proc = subprocess.Popen([sys.executable, os.path.join(REPO_ROOT, "plugins", "modules", "conda_mirror_probe.py"), str(args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=os.path.join(REPO_ROOT, ".cache", "collections")))
    _pid, status, usage = os.wait4(proc.pid, 0)  # the result is small: it fits the pipe
    assert os.waitstatus_to_exitcode(status) == 0, proc.stderr.read().decode()
    return json.loads(proc.stdout.read()), usage.ru_maxrss


def served(log):
    """Bytes the mirror sent, from its request log (METHOD PATH STATUS BYTES)."""
    with open(log) as handle:
        return sum(int(line.split()[3]) for line in handle)


def test_probe_reads_a_few_mb_of_conda_forge_sized_repodata(conda_mirror, tmp_path):
    """Issue 22, item 5: linux-64 149 MB and noarch 55 MB of repodata.json (with .zst); the old probe
    read all 204 MB of it."""
    log = tmp_path / "requests.log"
    mirror = conda_mirror(root=bigrepodata.build(), log_path=str(log))
    result, peak = run_probe(tmp_path, mirror.url)
    ranked = result["ranked"][0]
    sent = served(str(log))
    print("\nprobe of a conda-forge-sized mirror: %d bytes read by the module, %d bytes sent by the mirror, "
          "%d ms, peak memory of the module process %.1f MiB" % (ranked["bytes_read"], sent, ranked["latency_ms"], peak / 1024.0))
    with open(log) as handle:
        print(handle.read())
    assert ranked["healthy"] is True, ranked
    assert ranked["bytes_read"] <= LIMIT and sent <= LIMIT


def test_mirror_failing_only_on_zst_is_unhealthy_with_the_reason(conda_mirror, conda_base, tmp_path):
    """Issue 22, item 5: conda 26 reads current_repodata.json.zst first and does not fall back on a
    5xx; the old probe read only repodata.json and ranked this mirror healthy."""
    mirror = conda_mirror(status=500, only=".json.zst")
    result, _peak = run_probe(tmp_path, mirror.url)
    ranked = result["ranked"][0]
    assert ranked["healthy"] is False and result["chosen"] is None
    assert ranked["errors"][0] == "%s/conda-forge/noarch/current_repodata.json.zst: HTTP 500 (conda fails every solve on it)" % mirror.url
    assert "no healthy mirror" in result["message"]

    # conda (the stand-in, faithful to it here) fails on that mirror the same way
    base = conda_base(condarc={"channel_alias": mirror.url, "channels": ["conda-forge"], "remote_max_retries": 0})
    error = json.loads(base.run("create", "--dry-run", "-n", "demo", "libfoo", "--json").stdout)
    assert (error["exception_name"], error["status_code"]) == ("CondaHTTPError", "500")
    assert error["url"].endswith("/current_repodata.json.zst")
