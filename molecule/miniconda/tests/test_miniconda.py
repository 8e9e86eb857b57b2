"""The conda base the miniconda role left on the node, as a user of the node sees it."""

import json


def test_prefix_belongs_to_root_and_the_conda_group(host):
    for path in ("/opt/conda", "/opt/conda/envs", "/opt/conda/pkgs"):
        folder = host.file(path)
        assert (folder.user, folder.group) == ("root", "conda")
        assert folder.mode & 0o2070 == 0o2070, "%s is not setgid and group-writable" % path


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


def test_group_member_can_create_an_environment_dir(host):
    assert "conda" in host.user("nobody").groups
    result = host.run("runuser -u nobody -g nogroup -G conda -- mkdir /opt/conda/envs/by-nobody")
    assert result.rc == 0, result.stderr
    assert host.file("/opt/conda/envs/by-nobody").group == "conda"
    host.run("rm -rf /opt/conda/envs/by-nobody")


def test_anaconda_terms_recorded_once(host):
    record = host.file("/opt/conda/etc/aistack-anaconda-tos-accepted").content_string.split()
    assert record == ["https://repo.anaconda.com/pkgs/main", "https://repo.anaconda.com/pkgs/r"]
