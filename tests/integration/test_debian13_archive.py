"""Debian 13's real driver (issue 39 item 1): the nvidia_driver role's plan for Debian 13 with
nvidia_driver_source: distro, resolved by apt against trixie's real Packages index, from the
repositories, components, keyring and pin the role writes by default, as on an empty node.

Runs apt with a private state, cache and configuration folder (nothing of this machine's apt is
read or written) in simulation (``apt-get -s``); skips, saying why, only where Debian's archive is
unreachable or this machine has no apt or no Debian archive keyring."""

import os
import re
import shutil
import subprocess
import sys

import jinja2
import pytest
import yaml
from conftest import REPO_ROOT

sys.path.insert(0, os.path.join(REPO_ROOT, ".cache", "collections"))
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide.nvidia_driver import plan_install  # noqa: E402  pylint: disable=wrong-import-position

H200 = {"name": "NVIDIA H200", "compute_capability": "9.0"}
DEFAULTS = os.path.join(REPO_ROOT, "roles", "nvidia_driver", "defaults", "main.yml")
ROLE_VARS = os.path.join(REPO_ROOT, "roles", "nvidia_driver", "vars", "main.yml")
PREFERENCES = os.path.join(REPO_ROOT, "roles", "nvidia_driver", "templates", "apt-preferences.j2")


def role_defaults():
    """The role's defaults as a Debian 13 node gets them (ansible_facts.distribution_release: trixie)."""
    with open(DEFAULTS) as handle:
        defaults = yaml.safe_load(handle)
    with open(ROLE_VARS) as handle:
        role_vars = yaml.safe_load(handle)
    # nvidia_driver_debian_repositories is a template of the role's Debian archive list.
    name = re.match(r"^\{\{ (\w+) \}\}$", defaults["nvidia_driver_debian_repositories"]).group(1)
    release = jinja2.Template(role_vars["__nvidia_driver_debian_release"]).render(ansible_facts={"distribution_release": "trixie"})
    defaults["nvidia_driver_debian_repositories"] = yaml.safe_load(jinja2.Template(yaml.safe_dump(role_vars[name])).render(
        __nvidia_driver_debian_release=release))
    return defaults


@pytest.fixture(scope="module")
def trixie(tmp_path_factory):
    """apt options for a private apt that reads only the role's Debian sources, with its index fetched."""
    if not shutil.which("apt-get"):
        pytest.skip("no apt-get on this machine")
    defaults = role_defaults()
    keyring = defaults["nvidia_driver_debian_keyring"]
    if not os.path.exists(keyring):
        pytest.skip("no Debian archive keyring at %s (the role's nvidia_driver_debian_keyring)" % keyring)
    root = tmp_path_factory.mktemp("trixie-apt")
    for folder in ("lists/partial", "cache/archives/partial", "preferences.d", "apt.conf.d"):
        (root / folder).mkdir(parents=True)
    (root / "status").write_text(u"")
    # The role's one-line equivalent of its deb822 files (templates/apt.sources.j2), beside the
    # node's own sources of the same suites' main component (a Debian node has them; the role adds the rest).
    (root / "sources.list").write_text(u"".join(
        "deb [signed-by=%s] %s %s %s\n" % (keyring, repo["uris"], suite, components)
        for repo in defaults["nvidia_driver_debian_repositories"] for suite in repo["suites"]
        for components in (" ".join(defaults["nvidia_driver_debian_components"]), "main")))
    options = ["-o", "Dir::State=%s" % root, "-o", "Dir::State::Lists=%s/lists" % root, "-o", "Dir::State::status=%s/status" % root,
               "-o", "Dir::Cache=%s/cache" % root, "-o", "Dir::Etc::SourceList=%s/sources.list" % root,
               "-o", "Dir::Etc::SourceParts=%s/apt.conf.d" % root, "-o", "Dir::Etc::Parts=%s/apt.conf.d" % root,
               "-o", "Dir::Etc::Preferences=%s/preferences" % root, "-o", "Dir::Etc::PreferencesParts=%s/preferences.d" % root,
               "-o", "APT::Architecture=amd64", "-o", "APT::Architectures::=amd64", "-o", "Acquire::Retries=1"]
    update = subprocess.run(["apt-get"] + options + ["update"], capture_output=True, text=True, timeout=600, check=False)
    if update.returncode != 0 or re.search(r"^(Err|W: Failed to fetch)", update.stdout + update.stderr, re.M):
        pytest.skip("Debian's archive is unreachable from here (apt-get update exited %d): %s" % (
            update.returncode, (update.stderr or update.stdout).strip()[-400:]))
    return {"options": options, "root": root, "sources": (root / "sources.list").read_text()}


def simulate(trixie, names):
    return subprocess.run(["apt-get"] + trixie["options"] + ["-s", "--no-install-recommends", "install"] + names,
                          capture_output=True, text=True, timeout=600, check=False)


def test_the_role_reads_trixies_suites_on_debian_13(trixie):
    assert "deb.debian.org/debian trixie contrib non-free non-free-firmware" in trixie["sources"]
    assert "debian-security trixie-security " in trixie["sources"]


@pytest.mark.parametrize("flavour", ["proprietary", "open"])
def test_debian_13_distro_plan_resolves_against_trixies_real_index(trixie, flavour):
    plan = plan_install("Debian", "13.2", "x86_64", source="distro", flavour=flavour, gpus=[H200])
    assert plan["problems"] == [] and plan["branch"] == 550
    # What the archive offers of the planned driver package: its version is the plan's branch.
    policy = subprocess.run(["apt-cache"] + trixie["options"] + ["policy", plan["version_package"]],
                            capture_output=True, text=True, check=True).stdout
    candidate = re.search(r"Candidate: (\S+)", policy).group(1)
    assert candidate.startswith("550."), policy
    version = re.match(r"^(\d+\.\d+\.\d+)", candidate).group(1)
    exact = plan_install("Debian", "13.2", "x86_64", source="distro", flavour=flavour, version=version, gpus=[H200])
    # The role's pin, as its template writes it, confines apt to that version.
    (trixie["root"] / "preferences").write_text(jinja2.Template(open(PREFERENCES).read()).render(
        ansible_managed="test", __nvidia_driver_plan=exact))
    try:
        proc = simulate(trixie, exact["install_names"])
    finally:
        (trixie["root"] / "preferences").unlink()
    output = "--- stdout\n%s\n--- stderr\n%s" % (proc.stdout, proc.stderr)
    assert proc.returncode == 0, output
    installed = dict(re.findall(r"^Inst (\S+) \((\S+) ", proc.stdout, re.M))
    for name in exact["packages"]:
        assert name in installed, output
        assert installed[name].startswith(version if name != "nvidia-persistenced" else "550."), (name, installed[name])
    # The planned kernel module flavour, and not the other.
    wanted, other = ("nvidia-open-kernel-dkms", "nvidia-kernel-dkms") if flavour == "open" else (
        "nvidia-kernel-dkms", "nvidia-open-kernel-dkms")
    assert wanted in installed and other not in installed, output


def test_a_branch_debian_13_does_not_carry_is_refused_before_apt(trixie):
    # R580 is not in trixie's archive: the plan refuses it, and apt confirms there is none.
    plan = plan_install("Debian", "13.2", "x86_64", source="distro", branch="580", gpus=[H200])
    assert "only branch 550" in plan["problems"][0]
    madison = subprocess.run(["apt-cache"] + trixie["options"] + ["madison", "nvidia-kernel-dkms"],
                             capture_output=True, text=True, check=True).stdout
    assert madison and not re.search(r"\| 580\.", madison)
