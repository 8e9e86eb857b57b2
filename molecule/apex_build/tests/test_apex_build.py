"""What the apex_build role left on the node: a valid cache entry and two working environments."""

import json

import pytest

ENTRY_ROOTS = ("/var/cache/aistack/apex-wheels", "/var/cache/aistack/apex-wheels-env2")
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


def test_both_entries_hold_the_same_wheel(host):
    markers = [json.loads(host.file("%s/%s/aistack-apex.json" % (root, _entries(host, root)[0])).content_string)
               for root in ENTRY_ROOTS]
    assert markers[0]["wheel_sha256"] == markers[1]["wheel_sha256"]


@pytest.mark.parametrize("env", ["/opt/apex-env1", "/opt/apex-env2"])
def test_extensions_import_after_torch_and_run(host, env):
    result = host.run("%s/bin/python -c '%s'" % (env, IMPORT_CHECK))
    assert result.rc == 0, result.stderr


@pytest.mark.parametrize("env", ["/opt/apex-env1", "/opt/apex-env2"])
def test_installed_wheel_is_the_cached_one(host, env):
    direct_url = host.run("%s/bin/python -c 'from importlib.metadata import distribution as d; print(d(\"apex\").read_text(\"direct_url.json\"))'" % env)
    assert direct_url.rc == 0, direct_url.stderr
    sha256 = json.loads(direct_url.stdout)["archive_info"]["hashes"]["sha256"]
    root = ENTRY_ROOTS[0]
    marker = json.loads(host.file("%s/%s/aistack-apex.json" % (root, _entries(host, root)[0])).content_string)
    assert sha256 == marker["wheel_sha256"]
