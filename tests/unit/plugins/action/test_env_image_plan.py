# -*- coding: utf-8 -*-
"""env_image_plan: the env_image role's settings read from the task's variables and refused, each problem named,
before anything is fetched or built; the node is never asked."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from unittest import mock

from conftest import read_role_vars, run_planner

from ansible_collections.aistack.gpu_node.plugins.action.env_image_plan import ActionModule

DEFAULTS, _ROLE_VARS = read_role_vars("env_image")
SHA256 = "0" * 64


def plan(**settings):
    """The action on a host whose variables are the role's defaults, a miniconda installer, and ``settings``."""
    variables = dict(DEFAULTS, inventory_hostname="builder", miniconda_installer_src="/srv/Miniforge3.sh",
                     miniconda_installer_sha256=SHA256)
    variables.update(("env_image_" + name, value) for name, value in settings.items())
    node = mock.MagicMock()
    result = run_planner(ActionModule, variables, node)
    node.assert_not_called()
    return result


def test_the_defaults_with_an_installer_pass():
    result = plan()
    assert not result.get("failed") and result["problems"] == [] and result["changed"] is False


def test_each_bad_setting_is_named_in_one_refusal():
    result = plan(tag="a:b", work_dir="tmp/image", installer_sha256="abc")
    assert result["failed"]
    assert result["msg"] == "env_image: " + "; ".join(result["problems"])
    assert result["problems"] == [
        "env_image_work_dir must be an absolute path on the build host, got 'tmp/image'",
        "env_image_installer_sha256 must be the installer's sha256 (64 hex digits), got 'abc'",
        "env_image_tag must be an image tag (letters, digits, _ . -; 128 at most), got 'a:b'"]


def test_a_value_the_argument_spec_refuses_is_named():
    result = plan(no_cache="sometimes")
    assert result["failed"] and "env_image_no_cache" in result["msg"]
