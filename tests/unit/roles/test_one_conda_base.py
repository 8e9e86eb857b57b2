"""Issue 36, item 10: one variable decides the conda base every role uses. The conda prefix defaults of
mirrors_condarc and conda_env, templated as Ansible does, follow the miniconda role."""

import os

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from conftest import REPO_ROOT

FOLLOWERS = [("mirrors_condarc", "mirrors_condarc_conda_prefix"), ("conda_env", "conda_env_conda_prefix")]


def default_of(role, name, variables):
    with open(os.path.join(REPO_ROOT, "roles", role, "defaults", "main.yml")) as handle:
        expression = yaml.safe_load(handle)[name]
    # A role's defaults file is trusted to hold templates, as Ansible's loader marks it.
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(expression))


@pytest.mark.parametrize("role, name", FOLLOWERS)
@pytest.mark.parametrize("variables, expected", [
    ({}, "/opt/conda"),
    ({"miniconda_prefix": "/srv/conda"}, "/srv/conda"),
    # once the miniconda role has run, what it made
    ({"miniconda_prefix": "/srv/conda", "miniconda_result": {"prefix": "/srv/conda"}}, "/srv/conda"),
])
def test_the_conda_prefix_follows_the_miniconda_role(role, name, variables, expected):
    assert default_of(role, name, variables) == expected
