"""The conda base the miniconda role left on the node, as a user of the node sees it."""

import json


# A member of the conda group (the scenario's miniconda_group_members) trying to plant code that root
# runs or sources: every site or drift run runs bin/conda and the base's python, and every login
# shell, root's included, sources the profile scripts. Each attempt must be refused by the kernel.
MEMBER = "runuser -u nobody -g nogroup -G conda -- sh -c "
PLANTS = {
    "bin/conda": "echo planted >> /opt/conda/bin/conda",
    "bin/ replaced": "cp /opt/conda/bin/conda /tmp/c && mv -f /tmp/c /opt/conda/bin/python3",
    "conda.sh": "echo planted >> /opt/conda/etc/profile.d/conda.sh",
    "site-packages": "echo 'import os' > /opt/conda/lib/python3.11/site-packages/planted.pth",
    "condarc.d": "echo 'channel_alias: https://evil.example' > /opt/conda/condarc.d/planted.yml",
    "system .condarc": "echo 'channel_alias: https://evil.example' >> /opt/conda/.condarc",
    "package cache": "mkdir /opt/conda/pkgs/planted-1.0-0",
    "envs": "mkdir /opt/conda/envs/planted",
    "history": "echo planted >> /opt/conda/conda-meta/history",
    "login script": "echo planted >> /etc/profile.d/aistack-conda.sh",
}


def test_base_is_roots_alone_but_for_a_members_own_environment(host):
    """side_effect left a member's environment in envs/, as the role's group-writable releases let one make it."""
    found = host.check_output("find /opt/conda \\( -path '/opt/conda/envs/*' ! -user root -prune -printf 'left %p\\n' \\) "
                              "-o \\( ! -user root -o ! -type l -perm /022 \\) -print")
    assert found == "left /opt/conda/envs/by-nobody"


def test_a_group_member_cannot_plant_code_root_runs(host):
    assert "conda" in host.user("nobody").groups
    planted = {}
    for what, command in PLANTS.items():
        result = host.run(MEMBER + "%s", command)
        if result.rc == 0:
            planted[what] = command
    assert planted == {}, "a conda group member changed what root runs: %s" % planted


def test_marker_names_the_upgraded_installer(host):
    marker = json.loads(host.file("/opt/conda/.aistack-miniconda.json").content_string)
    assert (marker["flavor"], marker["version"]) == ("miniconda", "26.7.2-0")
    assert len(marker["sha256"]) == 64


def test_login_shell_has_conda_without_base_active(host):
    result = host.run("bash -lc 'type conda >/dev/null && conda --version && echo \"prefix=${CONDA_PREFIX:-}\"'")
    assert result.rc == 0, result.stderr
    assert "conda 26.7.2-0" in result.stdout
    assert "prefix=\n" in result.stdout + "\n"


def test_auto_activate_base_is_off(host):
    shown = json.loads(host.check_output("/opt/conda/bin/conda config --show --json"))
    assert shown["auto_activate"] is False


def test_no_rc_file_was_edited(host):
    for path in ("/root/.bashrc", "/root/.profile", "/etc/bash.bashrc"):
        rc = host.file(path)
        assert not rc.exists or "conda" not in rc.content_string


def test_a_group_member_gets_environments_and_a_package_cache_of_their_own(host):
    """conda's own choice for a base the user cannot write: ~/.conda/envs first, ~/.conda/pkgs."""
    shown = host.check_output("runuser -u nobody -g nogroup -G conda -- env HOME=/tmp/nobody-home "
                              "/opt/conda/bin/conda info --json")
    info = json.loads(shown)
    assert info["root_writable"] is False
    assert info["envs_dirs"][:2] == ["/tmp/nobody-home/.conda/envs", "/opt/conda/envs"]
    assert info["pkgs_dirs"] == ["/opt/conda/pkgs", "/tmp/nobody-home/.conda/pkgs"]


def test_anaconda_terms_recorded_once(host):
    record = host.file("/opt/conda/etc/aistack-anaconda-tos-accepted").content_string.split()
    assert record == ["https://repo.anaconda.com/pkgs/main", "https://repo.anaconda.com/pkgs/r"]


def test_no_started_install_is_left_recorded(host):
    """The role's records of the installs it started go once a base has conda-meta/; their folder is root's alone."""
    records = host.file("/var/lib/aistack/miniconda")
    assert (records.is_directory, records.user, records.group, records.mode) == (True, "root", "root", 0o755)
    assert records.listdir() == []
