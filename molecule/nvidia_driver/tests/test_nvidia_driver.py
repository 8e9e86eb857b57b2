"""What the nvidia_driver role left on a fresh Debian 12 node: packages, holds, pin, blacklist."""

import json
import os

import pytest

DRIVER = ("nvidia-kernel-dkms", "nvidia-smi", "libcuda1", "libnvidia-ml1", "firmware-nvidia-gsp")


@pytest.fixture
def report():
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "nvidia_driver_report.json")) as handle:
        return json.load(handle)


@pytest.mark.parametrize("name", DRIVER)
def test_driver_packages_installed_at_the_pinned_version_and_held(host, name):
    package = host.package(name)
    assert package.is_installed
    assert package.version.startswith("535.309.01-")
    assert host.run("dpkg --get-selections %s" % name).stdout.split() == [name, "hold"]


def test_every_installed_driver_package_is_held(host, report):
    installed = host.run(r"dpkg-query -W -f '${Package} ${db:Status-Abbrev}\n' | awk '$2 ~ /^[ih]i/ {print $1}'").stdout.split()
    driver = sorted(name for name in installed
                    if name.startswith(("nvidia-", "libnvidia-", "libcuda1", "firmware-nvidia-gsp")))
    held = sorted(host.run("dpkg --get-selections | awk '$2 == \"hold\" {print $1}'").stdout.split())
    assert driver and driver == held == report["held"]


def test_no_x_stack_pulled_in(host):
    assert not host.package("xserver-xorg-video-nvidia").is_installed
    assert not host.package("nvidia-driver").is_installed


def test_apt_pin_keeps_the_driver_on_its_version(host):
    pin = host.file("/etc/apt/preferences.d/aistack-nvidia-driver.pref").content_string
    assert "Pin: version 535.309.01*\n" in pin and "Pin-Priority: 1001" in pin
    policy = host.run("apt-cache policy nvidia-kernel-dkms").stdout
    assert "Candidate: 535.309.01-" in policy and "1001" in policy


def test_unattended_upgrades_blacklist(host):
    content = host.file("/etc/apt/apt.conf.d/51aistack-nvidia-driver").content_string
    assert "Unattended-Upgrade::Package-Blacklist" in content
    dump = host.run("apt-config dump Unattended-Upgrade::Package-Blacklist").stdout
    assert "^(nvidia-|libnvidia-|libcuda1" in dump


def test_non_free_components_enabled(host):
    sources = host.file("/etc/apt/sources.list.d/aistack-nvidia-driver-debian-security.sources").content_string
    assert "Components: contrib non-free non-free-firmware" in sources
    assert "Suites: bookworm-security" in sources


def test_nouveau_blacklisted(host):
    config = host.file("/etc/modprobe.d/aistack-nvidia-blacklist-nouveau.conf")
    assert config.mode == 0o644
    assert "blacklist nouveau" in config.content_string
    assert host.run("modprobe --showconfig 2>/dev/null | grep -x 'blacklist nouveau'").rc == 0


def test_dkms_registered_but_nothing_built_or_loaded(host, report):
    status = host.run("dkms status").stdout
    assert "nvidia-current/535.309.01: added" in status
    assert not host.file("/lib/modules").exists
    assert not host.file("/proc/driver/nvidia").exists
    assert report["kernels"] == [] and report["loaded_version"] is None


def test_persistence_daemon_enabled_not_started(host):
    service = host.service("nvidia-persistenced")
    assert service.is_enabled
    assert not service.is_running


def test_record_and_reboot_needed(host, report):
    record = json.loads(host.file("/var/lib/aistack/nvidia_driver.json").content_string)
    assert record["managed_by"] == "aistack.gpu_node.nvidia_driver"
    assert (record["branch"], record["version"], record["flavour"]) == (535, "535.309.01", "proprietary")
    assert record["module_changed_boot"] == host.file("/proc/sys/kernel/random/boot_id").content_string.strip()
    assert report["reboot_needed"] is True
