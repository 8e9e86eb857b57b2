"""Issue 35, item 3: a mirror password in the channel URLs (a .condarc's channel_alias, as mirrors_condarc
writes it) never stays in the files conda writes for the envs and the package cache the conda_env module
manages. conda records the URL it downloaded with, credentials included, in the package cache (urls.txt,
each package's info/repodata_record.json, the repodata cache's state); the module removes them after each
transaction it runs, and conda still works from the scrubbed records."""

import os
import stat

from conda_testbed.pytest_plugin import default_condarc
from test_conda_env_killed import run
from test_no_secrets import SECRET, files_with_secret, with_password

SPEC = {"channels": ["conda-forge"], "dependencies": ["hello-ansible", "libfoo=1.0"]}
UPDATED = {"channels": ["conda-forge"], "dependencies": ["hello-ansible", "libfoo=1.1"]}


def credentialed_base(conda_base, conda_mirror):
    base = conda_base(condarc=None)
    condarc = base.write_condarc(dict(default_condarc(base.channel_root, base.prefix),
                                      channel_alias=with_password(conda_mirror().url)),
                                 os.path.join(base.prefix, ".condarc"))
    return base, condarc


def test_conda_leaves_the_password_in_the_package_cache_but_not_in_conda_meta(conda_base, conda_mirror):
    """What the stand-in writes, as conda 26.7 does (its record_urls_as_conda_does and save_repodata_cache
    name the conda source): the package cache keeps the URL conda downloaded with; conda-meta does not."""
    base, condarc = credentialed_base(conda_base, conda_mirror)
    prefix = os.path.join(base.prefix, "envs", "plain")
    proc = base.run("create", "-y", "-p", prefix, "libfoo=1.0", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pkgs = os.path.join(base.prefix, "pkgs")
    found = sorted(os.path.relpath(path, pkgs) for path in files_with_secret(base.prefix, skip={condarc}))
    assert "urls.txt" in found, found
    assert "libfoo-1.0.0-h4616a5c_0/info/repodata_record.json" in found
    assert any(path.endswith(".info.json") for path in found) and any(path.endswith(".q") for path in found)
    assert not [path for path in found if "conda-meta" in path], found


def test_no_password_stays_in_the_base_after_create_update_and_repair(conda_base, conda_mirror):
    base, condarc = credentialed_base(conda_base, conda_mirror)

    check = run(base, SPEC, check=True)
    assert check["changed"] is True, check
    result = run(base, SPEC)
    assert result["changed"] is True, result
    assert SECRET not in repr(result)
    assert os.path.join(base.prefix, "pkgs", "urls.txt") in result["scrubbed"], result["scrubbed"]
    assert files_with_secret(base.prefix, skip={condarc}) == []
    assert run(base, SPEC)["changed"] is False, "a scrubbed record is no drift and a second run changes nothing"

    # The scrub keeps a file's owner and mode, and check mode writes nothing (this case was a test of its own, on a
    # base of its own converged to SPEC the same way).
    urls = os.path.join(base.prefix, "pkgs", "urls.txt")
    os.chmod(urls, 0o640)
    with open(urls, "a") as handle:
        handle.write(with_password("http://127.0.0.1:1/conda-forge/noarch/x-1-0.conda") + "\n")
    before = os.stat(urls)
    check = run(base, SPEC, check=True)
    assert check["changed"] is True and check["scrubbed"] == [urls], check
    assert files_with_secret(base.prefix, skip={condarc}) == [urls], "check mode writes nothing"
    rescrubbed = run(base, SPEC)
    assert rescrubbed["changed"] is True and rescrubbed["scrubbed"] == [urls], rescrubbed
    after = os.stat(urls)
    assert stat.S_IMODE(after.st_mode) == 0o640 and (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert files_with_secret(base.prefix, skip={condarc}) == []
    assert run(base, SPEC)["changed"] is False

    prefix = result["prefix"]
    listed = base.run("list", "-p", prefix, "--explicit")
    assert listed.returncode == 0 and "/conda-forge/" in listed.stdout and SECRET not in listed.stdout, listed
    assert base.run("list", "-p", prefix, "--json").returncode == 0

    result = run(base, UPDATED)
    assert result["changed"] is True, result
    assert files_with_secret(base.prefix, skip={condarc}) == []

    os.unlink(os.path.join(prefix, "share", "libfoo", "VERSION"))
    result = run(base, UPDATED)
    assert result["changed"] is True and result["repair"]["how"] == "reinstall", result
    assert os.path.exists(os.path.join(prefix, "share", "libfoo", "VERSION"))
    assert files_with_secret(base.prefix, skip={condarc}) == []
    assert run(base, UPDATED)["changed"] is False
