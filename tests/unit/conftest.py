"""Make ``ansible_collections.aistack.gpu_node`` importable from the checkout.

Unit tests import the collection's code by its real package name, the way Ansible loads it.
A checkout is not laid out as ``ansible_collections/aistack/gpu_node``, so a private tree with
one symlink to the repository root is placed first on ``sys.path``.
"""

import json
import os
import sys
import tempfile

import pytest

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _collection_root():
    base = os.path.join(tempfile.gettempdir(), "aistack-gpu_node-unit-%d" % os.getuid())
    namespace = os.path.join(base, "ansible_collections", "aistack")
    link = os.path.join(namespace, "gpu_node")
    os.makedirs(namespace, exist_ok=True)
    if os.path.realpath(link) != REPO_ROOT:
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(REPO_ROOT, link)
    return base


try:
    import ansible_collections.aistack.gpu_node  # noqa: F401  # already on the path; pylint: disable=unused-import
except ImportError:
    sys.path.insert(0, _collection_root())
    for name in [m for m in sys.modules if m == "ansible_collections" or m.startswith("ansible_collections.")]:
        del sys.modules[name]

FIXTURES = os.path.join(REPO_ROOT, "tests", "unit", "fixtures")
# Copies of the project's shared recorded data (../shared), kept in the repository so that a
# clone alone runs every test; test_shared_copies.py proves they equal ../shared where it exists.
SHARED = os.path.join(FIXTURES, "shared")
SHARED_ORIGINAL = os.path.join(os.path.dirname(REPO_ROOT), "shared")
SHARED_COPIES = ("fixtures/conda-26.7", "fixtures/gpu-h200", "reference/cuda_compat_data.yml")

SHARED_H200 = os.path.join(SHARED, "fixtures", "gpu-h200")
SHARED_CONDA = os.path.join(SHARED, "fixtures", "conda-26.7")
PUBLIC_FIXTURES = os.path.join(FIXTURES, "public")


def read_h200(name):
    """An unedited output captured on the H200 test host (copy of ``../shared/fixtures/gpu-h200``)."""
    with open(os.path.join(SHARED_H200, name)) as handle:
        return handle.read()


def read_conda(name):
    """An unedited output of real conda 26.7 (copy of ``../shared/fixtures/conda-26.7``; INDEX.tsv names the command)."""
    with open(os.path.join(SHARED_CONDA, name)) as handle:
        return handle.read()


def read_public(name):
    """A public sample from ``tests/unit/fixtures/public`` without its leading ``# source:`` line."""
    with open(os.path.join(PUBLIC_FIXTURES, name)) as handle:
        lines = handle.read().splitlines(True)
    return "".join(lines[1:] if lines and lines[0].startswith("# source:") else lines)


def run_module(module, args, capsys):
    """Run ``module.main()`` with ``args``; return its exit code and the JSON it printed."""
    from ansible.module_utils.testing import patch_module_args

    with patch_module_args(args):
        with pytest.raises(SystemExit) as exited:
            module.main()
    return exited.value.code, json.loads(capsys.readouterr().out)
