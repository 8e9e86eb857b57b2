"""The stand-in .deb and apt repository builder (tests/support/standin_apt_repo.py)."""

import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "support")))
import standin_apt_repo as standin  # noqa: E402  pylint: disable=wrong-import-position

# dpkg-query -W -f DPKG_QUERY_FORMAT on the nvidia_driver molecule node after converge (excerpt).
INSTALLED = "\n".join([
    "hi \tnvidia-kernel-dkms\t535.309.01-1~deb12u1\tamd64\t\t\tdkms (>= 2.1.0.0), nvidia-kernel-support--v1, "
    "nvidia-kernel-support (= 535.309.01-1~deb12u1)\tnvidia-kernel-535.309.01",
    "hi \tlibcuda1\t535.309.01-1~deb12u1\tamd64\tsame\t\tlibnvidia-ml1 (= 535.309.01-1~deb12u1), libc6 (>= 2.34)\t"
    "libcuda.so.1 (= 535.309.01), libcuda1-any",
    "hi \tnvidia-persistenced\t535.171.04-1\tamd64\t\t\tadduser, libc6 (>= 2.34)\t",
    "ii \tdkms\t3.0.10-8+deb12u1\tall\tforeign\t\tkmod | kldutils, gcc | c-compiler\t",
    "rc \tnvidia-old\t470.1-1\tamd64\t\t\t\t",
])


def ar_members(data):
    """``[(name, bytes)]`` of an ar archive."""
    assert data[:8] == b"!<arch>\n"
    members, offset = [], 8
    while offset < len(data):
        header = data[offset:offset + 60]
        assert header[58:60] == b"`\n"
        size = int(header[48:58])
        members.append((header[:16].decode().strip(), data[offset + 60:offset + 60 + size]))
        offset += 60 + size + size % 2
    return members


def test_a_deb_holds_its_control_stanza_and_no_files_or_scripts():
    data = standin.build_deb({"Package": "nvidia-smi", "Version": "535.999.99-1", "Architecture": "amd64",
                              "Depends": "libnvidia-ml1 (= 535.999.99-1)"})
    members = ar_members(data)
    assert [member[0] for member in members] == ["debian-binary", "control.tar.gz", "data.tar.gz"]
    assert members[0][1] == b"2.0\n"
    with tarfile.open(fileobj=io.BytesIO(members[1][1])) as control:
        assert control.getnames() == ["./control"]
        text = control.extractfile("./control").read().decode()
    assert text.startswith("Package: nvidia-smi\nVersion: 535.999.99-1\nArchitecture: amd64\n")
    assert "Depends: libnvidia-ml1 (= 535.999.99-1)\n" in text and "Description: stand-in" in text
    with tarfile.open(fileobj=io.BytesIO(members[2][1])) as payload:
        assert payload.getnames() == []
    assert data == standin.build_deb({"Package": "nvidia-smi", "Version": "535.999.99-1", "Architecture": "amd64",
                                      "Depends": "libnvidia-ml1 (= 535.999.99-1)"})


@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb is not installed")
def test_dpkg_deb_reads_a_standin(tmp_path):
    path = tmp_path / "x.deb"
    path.write_bytes(standin.build_deb({"Package": "libcuda1", "Version": "1:535.999.99-1", "Multi-Arch": "same"}))
    info = subprocess.run(["dpkg-deb", "-f", str(path)], check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    assert "Package: libcuda1" in info and "Version: 1:535.999.99-1" in info and "Multi-Arch: same" in info
    assert subprocess.run(["dpkg-deb", "-c", str(path)], check=True, stdout=subprocess.PIPE).stdout == b""


def test_a_stanza_needs_a_name_and_a_version():
    with pytest.raises(ValueError, match="lacks Version"):
        standin.control_text({"Package": "nvidia-smi"})


def test_the_repository_index_and_release_match_the_files(tmp_path):
    packages = [{"Package": "nvidia-smi", "Version": "1:535.999.99-1", "Architecture": "amd64"},
                {"Package": "nvidia-driver-pinning-580", "Version": "580-1"}]
    index = standin.write_repo(str(tmp_path), packages)
    stanzas = [dict(re.findall(r"(?m)^([A-Za-z0-9-]+): (.*)$", block)) for block in index.split("\n\n")]
    assert [item["Package"] for item in stanzas] == ["nvidia-driver-pinning-580", "nvidia-smi"]
    assert stanzas[1]["Filename"] == "./pool/nvidia-smi_1%3a535.999.99-1_amd64.deb"
    for item in stanzas:
        data = (tmp_path / item["Filename"]).read_bytes()
        assert int(item["Size"]) == len(data) and item["SHA256"] == hashlib.sha256(data).hexdigest()
    assert gzip.decompress((tmp_path / "Packages.gz").read_bytes()) == (tmp_path / "Packages").read_bytes()
    release = (tmp_path / "Release").read_text()
    assert "Architectures: amd64\n" in release
    packages_bytes = (tmp_path / "Packages").read_bytes()
    assert " %s %d Packages\n" % (hashlib.sha256(packages_bytes).hexdigest(), len(packages_bytes)) in release


def test_installed_packages_only_with_their_fields():
    installed = standin.parse_installed(INSTALLED)
    assert [item["Package"] for item in installed] == ["nvidia-kernel-dkms", "libcuda1", "nvidia-persistenced", "dkms"]
    assert installed[1]["Multi-Arch"] == "same" and installed[1]["Provides"].startswith("libcuda.so.1")


def test_standins_like_the_installed_driver_at_a_newer_version():
    rewrites = [(re.compile(r"(?<![0-9.])535\.[0-9]+\.[0-9]+"), "535.999.99")]
    standins = standin.like_installed(standin.parse_installed(INSTALLED), r"^(nvidia-|libcuda1)", rewrites)
    assert [(item["Package"], item["Version"]) for item in standins] == [
        ("nvidia-kernel-dkms", "535.999.99-1~deb12u1"), ("libcuda1", "535.999.99-1~deb12u1"),
        ("nvidia-persistenced", "535.999.99-1")]
    assert standins[0]["Depends"] == ("dkms (>= 2.1.0.0), nvidia-kernel-support--v1, "
                                      "nvidia-kernel-support (= 535.999.99-1~deb12u1)")
    assert standins[1]["Depends"] == "libnvidia-ml1 (= 535.999.99-1~deb12u1), libc6 (>= 2.34)"
    assert standins[1]["Provides"] == "libcuda.so.1 (= 535.999.99), libcuda1-any"


@pytest.mark.parametrize("version, flavour, entry", [("580.159.04", "open", "nvidia-open-580"),
                                                     ("580.172.08", "proprietary", "cuda-drivers-580")])
def test_nvidia_cuda_repository_driver_set(version, flavour, entry):
    packages = standin.nvidia_cuda_repo_packages(version, flavour)
    names = {item["Package"]: item for item in packages}
    assert entry in names and "nvidia-fabricmanager-580" in names and "libnvidia-nscq-580" in names
    assert names["nvidia-driver-pinning-580"]["Architecture"] == "all"
    assert "nvidia-driver-pinning-%s" % version in names
    # Every versioned dependency inside the set names a package of the set at that version.
    for item in packages:
        for name, pinned in re.findall(r"([a-z0-9.+-]+) \(= ([^)]+)\)", item["Depends"]):
            assert name in names and names[name]["Version"] == pinned, (item["Package"], name)


@pytest.mark.parametrize("flavour, entry, kernel", [("open", "nvidia-open", "nvidia-dkms-open"),
                                                    ("proprietary", "cuda-drivers", "nvidia-dkms")])
def test_r590_and_later_stand_ins_carry_no_branch_in_their_names(flavour, entry, kernel):
    packages = standin.nvidia_cuda_repo_packages("595.71.05", flavour)
    names = {item["Package"]: item for item in packages}
    assert {entry, kernel, "libnvidia-compute", "nvidia-fabricmanager", "libnvidia-nscq", "nvidia-firmware-595.71.05"} <= set(names)
    # Only the pinning packages and the firmware (named after the release) name the branch.
    branch_named = ["nvidia-driver-pinning-595", "nvidia-driver-pinning-595.71.05", "nvidia-firmware-595.71.05"]
    assert sorted(name for name in names if "595" in name) == branch_named
    for item in packages:
        for name, pinned in re.findall(r"([a-z0-9.+-]+) \(= ([^)]+)\)", item["Depends"]):
            assert name in names and names[name]["Version"] == pinned, (item["Package"], name)


def test_two_branches_of_the_unversioned_era_share_their_names(tmp_path, capsys):
    # A newer branch under the same names: what the pin and the hold must keep apt from.
    assert standin.main([str(tmp_path / "repo"), "--distro", "ubuntu2604", "--nvidia-cuda-repo", "595.71.05",
                         "--nvidia-cuda-repo", "610.200.01"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "nvidia-open 595.71.05-0ubuntu1" in lines and "nvidia-open 610.200.01-0ubuntu1" in lines
    assert "nvidia-driver-pinning-595 595-1" in lines and "nvidia-driver-pinning-610 610-1" in lines


def test_the_command_line_writes_a_repository(tmp_path, capsys):
    assert standin.main([str(tmp_path / "repo"), "--nvidia-cuda-repo", "580.159.04"]) == 0
    assert "nvidia-open-580 580.159.04-0ubuntu1" in capsys.readouterr().out
    assert (tmp_path / "repo" / "Release").exists()
    with pytest.raises(SystemExit):
        standin.main([str(tmp_path / "bad"), "--spec", "x", "--rewrite", "no-equals-sign"])


def test_two_driver_versions_and_an_extra_in_one_repository(tmp_path, capsys):
    assert standin.main([str(tmp_path / "repo"), "--distro", "debian12", "--nvidia-cuda-repo", "580.159.04",
                         "--nvidia-cuda-repo", "580.200.01", "--extra", "dkms=3.0.10-8+deb12u1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "nvidia-open-580 580.159.04-1" in lines and "nvidia-open-580 580.200.01-1" in lines
    assert "dkms 3.0.10-8+deb12u1" in lines
    # The branch's pinning package is the same in both versions' sets: written once.
    assert lines.count("nvidia-driver-pinning-580 580-1") == 1
    assert len(lines) == len(set(lines))
    index = (tmp_path / "repo" / "Packages").read_text()
    assert index.count("Package: nvidia-driver-pinning-580\n") == 1


def test_an_extra_needs_a_name_and_a_version(tmp_path):
    with pytest.raises(SystemExit):
        standin.main([str(tmp_path / "repo"), "--nvidia-cuda-repo", "580.159.04", "--extra", "dkms"])
