"""The operating systems preflight accepts by default are the ones the driver role has packaging for
(module_utils/decide/driver_packaging.py's PLATFORMS, each with its source): Ubuntu 26.04, Debian 13
and EL10 were added there (issue 39) while preflight still refused them, so a Debian 13 node stopped
before any role ran. The role's default, its argument spec and the example fleet inventory say the same."""

import os

import yaml

from conftest import REPO_ROOT
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import driver_packaging


def driver_platforms():
    platforms = {}
    for distribution, version in driver_packaging.PLATFORMS:
        platforms.setdefault(distribution, []).append(version)
    return dict((name, sorted(versions, key=lambda v: [int(p) for p in v.split(".")])) for name, versions in platforms.items())


def load(*path):
    with open(os.path.join(REPO_ROOT, *path)) as handle:
        return yaml.safe_load(handle)


def test_preflight_accepts_every_platform_the_driver_role_packages_and_no_other():
    expected = driver_platforms()
    assert {"Debian": ["12", "13"], "Ubuntu": ["22.04", "24.04", "26.04"]}.items() <= expected.items()
    assert load("roles", "preflight", "defaults", "main.yml")["preflight_supported_platforms"] == expected
    spec = load("roles", "preflight", "meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
    assert spec["preflight_supported_platforms"]["default"] == expected
    assert load("inventories", "gpu_cluster", "group_vars", "all", "preflight.yml")["preflight_supported_platforms"] == expected
