"""inventories/offline.example.yml, the sources file users copy for an air-gapped fleet: every name in
it (and in its commented alternatives) is an option of its role, every value passes that option's
argument spec, and the installer's version is one the miniconda role has a checksum for."""

import os
import re

import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from conftest import REPO_ROOT

EXAMPLE = os.path.join(REPO_ROOT, "inventories", "offline.example.yml")
ROLES = os.path.join(REPO_ROOT, "roles")


def role_options():
    """{option name: (role, its argument spec entry)} over every role's main entry point (the internal
    node_probe role has none: users set no variable of it)."""
    options = {}
    for role in sorted(os.listdir(ROLES)):
        path = os.path.join(ROLES, role, "meta", "argument_specs.yml")
        if os.path.exists(path):
            with open(path) as handle:
                for name, spec in yaml.safe_load(handle)["argument_specs"].get("main", {}).get("options", {}).items():
                    options[name] = (role, spec)
    return options


def spec_for_validation(spec):
    """An argument spec entry as ArgumentSpecValidator takes it: the keys it knows, suboptions too."""
    kept = {key: value for key, value in spec.items() if key in ("type", "elements", "choices", "required")}
    if "options" in spec:
        kept["options"] = {name: spec_for_validation(sub) for name, sub in spec["options"].items()}
    return kept


def test_every_name_is_an_option_of_its_role_and_every_value_passes_its_spec():
    with open(EXAMPLE) as handle:
        text = handle.read()
    settings = yaml.safe_load(text)
    commented = re.findall(r"^# ([a-z][a-z0-9_]+): ", text, flags=re.MULTILINE)
    options = role_options()
    unknown = [name for name in list(settings) + commented if name not in options]
    assert unknown == []
    for name, value in settings.items():
        role, spec = options[name]
        result = ArgumentSpecValidator({name: spec_for_validation(spec)}).validate({name: value})
        assert result.error_messages == [], (role, name)
    assert {"miniconda_installer_url", "miniconda_version", "miniconda_installer_sha256"} <= set(settings)


def test_the_installer_version_is_in_the_roles_checksum_table():
    with open(EXAMPLE) as handle:
        settings = yaml.safe_load(handle)
    with open(os.path.join(ROLES, "miniconda", "vars", "main.yml")) as handle:
        installers = yaml.safe_load(handle)["__miniconda_installers"]
    versions = installers[settings["miniconda_flavor"]]["versions"]
    assert settings["miniconda_version"] in versions
    assert settings["miniconda_installer_url"].endswith(
        installers[settings["miniconda_flavor"]]["filename"].format(version=settings["miniconda_version"], arch="x86_64"))
