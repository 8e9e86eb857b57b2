"""What the apex_build role left on the node: valid cache entries, three working environments, and
the entry the builder published at the cache URL (served on the node's loopback)."""

import json

import pytest

ENTRY_ROOTS = ("/var/cache/aistack/apex-wheels", "/var/cache/aistack/apex-wheels-env2", "/var/cache/aistack/apex-wheels-env3")
ENVS = ("/opt/apex-env1", "/opt/apex-env2", "/opt/apex-env3")
SERVED = "/srv/wheel-cache/apex"
IMPORT_CHECK = ("import torch, apex_C, apex_demo_contrib_C; t = [torch.ones(2), torch.zeros(3)]; "
                "assert torch.equal(apex_C.flatten(t), torch.cat(t)); assert apex_demo_contrib_C.answer() == 42")


def _entries(host, root):
    listing = host.run("ls %s" % root)
    assert listing.rc == 0, listing.stderr
    return listing.stdout.split()


@pytest.mark.parametrize("root", ENTRY_ROOTS)
def test_one_verified_entry_whose_wheel_matches_its_marker(host, root):
    entries = _entries(host, root)
    assert len(entries) == 1
    entry = "%s/%s" % (root, entries[0])
    marker = json.loads(host.file(entry + "/aistack-apex.json").content_string)
    assert marker["key"] == entries[0]
    assert marker["required_modules"] == ["apex_C", "apex_demo_contrib_C"]
    assert marker["build_env"]["APEX_CPP_EXT"] == "1" and marker["build_env"]["APEX_DEMO_CONTRIB"] == "1"
    assert "APEX_CUDA_EXT" not in marker["build_env"] and "TORCH_CUDA_ARCH_LIST" not in marker["build_env"]
    assert host.file(entry + "/" + marker["wheel"]).sha256sum == marker["wheel_sha256"]


def test_every_entry_holds_the_same_wheel(host):
    markers = [json.loads(host.file("%s/%s/aistack-apex.json" % (root, _entries(host, root)[0])).content_string)
               for root in ENTRY_ROOTS]
    assert len(set(marker["wheel_sha256"] for marker in markers)) == 1


@pytest.mark.parametrize("env", ENVS)
def test_extensions_import_after_torch_and_run(host, env):
    result = host.run("%s/bin/python -c '%s'" % (env, IMPORT_CHECK))
    assert result.rc == 0, result.stderr


@pytest.mark.parametrize("env", ENVS)
def test_installed_wheel_is_the_cached_one(host, env):
    direct_url = host.run("%s/bin/python -c 'from importlib.metadata import distribution as d; print(d(\"apex\").read_text(\"direct_url.json\"))'" % env)
    assert direct_url.rc == 0, direct_url.stderr
    sha256 = json.loads(direct_url.stdout)["archive_info"]["hashes"]["sha256"]
    root = ENTRY_ROOTS[0]
    marker = json.loads(host.file("%s/%s/aistack-apex.json" % (root, _entries(host, root)[0])).content_string)
    assert sha256 == marker["wheel_sha256"]


def test_the_url_serves_the_builders_verified_entry(host):
    entries = _entries(host, SERVED)
    assert entries == _entries(host, ENTRY_ROOTS[0])
    served = json.loads(host.file("%s/%s/aistack-apex.json" % (SERVED, entries[0])).content_string)
    built = json.loads(host.file("%s/%s/aistack-apex.json" % (ENTRY_ROOTS[0], entries[0])).content_string)
    assert served == built
    assert host.file("%s/%s/%s" % (SERVED, entries[0], served["wheel"])).sha256sum == served["wheel_sha256"]


def test_the_builder_uploaded_wheel_before_marker_and_the_third_env_downloaded_it(host):
    requests = host.file("/var/log/wheel-cache.log").content_string.splitlines()
    key = _entries(host, SERVED)[0]
    puts = [line for line in requests if line.startswith("PUT /apex/%s/" % key)]
    assert [line.split()[1].rsplit("/", 1)[1].endswith(".whl") for line in puts] == [True, False]
    assert all(line.endswith(" 201") for line in puts)
    assert any(line.startswith("GET /apex/%s/apex-" % key) and line.endswith(" 200") for line in requests)
    refused = [line for line in requests if line.startswith("PUT /elsewhere/")]
    assert refused and all(line.endswith(" 401") for line in refused)
