# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.aistack.gpu_node.plugins.filter.conda import FilterModule, conda_install_argv


def test_ipykernel_into_a_conda_env_from_conda_forge_only():
    argv = FilterModule().filters()["conda_install_argv"](["ipykernel"], "/opt/conda/envs/ml",
                                                          channels=["conda-forge", "nodefaults"])
    assert argv == ["conda", "install", "--prefix", "/opt/conda/envs/ml", "--yes", "--json",
                    "--override-channels", "--channel", "conda-forge", "ipykernel"]


def test_configured_channels_and_another_executable():
    assert conda_install_argv("ipykernel>=6", "/opt/env", conda="/opt/conda/bin/mamba") == [
        "/opt/conda/bin/mamba", "install", "--prefix", "/opt/env", "--yes", "--json", "ipykernel>=6"]


@pytest.mark.parametrize("packages, prefix", [([], "/opt/env"), ([""], "/opt/env"), (["ipykernel"], "envs/ml"), (["x"], None)])
def test_bad_input_is_named(packages, prefix):
    with pytest.raises(AnsibleFilterError, match="conda_install_argv: (packages|prefix)"):
        conda_install_argv(packages, prefix)
