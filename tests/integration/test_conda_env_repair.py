"""Damage the conda_env module repairs in place (issue 36, item 1), against the conda stand-in:
bytecode that conda compiled for a noarch python package and lists in its record is no damage;
a package whose file was deleted by hand is reinstalled alone (conda install --force-reinstall), at
the version and build it had, and the env is not removed and created again."""

import json
import os
import shutil

from test_conda_env_killed import run

SPEC = {"channels": ["conda-forge"], "dependencies": ["python=3.11", "pip", "hello-ansible", "libfoo=1.0"]}


def record(prefix, name):
    meta = os.path.join(prefix, "conda-meta")
    found = [n for n in os.listdir(meta) if n.startswith(name + "-") and n.endswith(".json")]
    with open(os.path.join(meta, found[0])) as handle:
        return json.load(handle)


def test_the_stand_in_lists_the_bytecode_of_noarch_python_packages_as_conda_does(conda_base):
    """conda's CompileMultiPycAction: every .py of a noarch python package's site-packages compiled,
    its .pyc in the record's files and paths_data as pyc_file."""
    base = conda_base()
    proc = base.run("create", "-y", "-p", os.path.join(base.prefix, "envs", "py"), "python=3.11", "pip", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pip = record(os.path.join(base.prefix, "envs", "py"), "pip")
    pyc = [path for path in pip["files"] if path.endswith(".pyc")]
    assert "lib/python3.11/site-packages/pip/__pycache__/__init__.cpython-311.pyc" in pyc
    assert len(pyc) == len([p for p in pip["paths_data"]["paths"] if p["path_type"] == "pyc_file"])
    assert all(os.path.exists(os.path.join(base.prefix, "envs", "py", path)) for path in pyc)


def test_deleted_bytecode_is_no_damage_and_a_deleted_file_is_reinstalled_alone(conda_base):
    base = conda_base()
    result = run(base, SPEC)
    assert result.get("changed") is True, result
    prefix = result["prefix"]
    created = os.stat(os.path.join(prefix, "conda-meta", "created")).st_ino

    shutil.rmtree(os.path.join(prefix, "lib", "python3.11", "site-packages", "pip", "__pycache__"))
    result = run(base, SPEC, check=True)
    assert result.get("changed") is False and result["drift"] == [] and "repair" not in result, result

    os.unlink(os.path.join(prefix, "share", "libfoo", "VERSION"))
    result = run(base, SPEC, check=True)
    assert result["changed"] is True and result["drift"] == [
        "package libfoo 1.0.0 has 1 file(s) missing: share/libfoo/VERSION; the damaged packages are reinstalled "
        "(conda install --force-reinstall)"], result
    assert result["repair"]["how"] == "reinstall" and result["repair"]["packages"] == ["libfoo==1.0.0=h4616a5c_0"]
    assert not os.path.exists(os.path.join(prefix, "share", "libfoo", "VERSION"))

    result = run(base, SPEC)
    assert result["changed"] is True, result
    assert result["commands"] == ["conda install -y --force-reinstall -p %s -c conda-forge libfoo==1.0.0=h4616a5c_0 --json"
                                  % prefix], "only libfoo is reinstalled; nothing else differs, so no env update"
    assert result["package_changes"] == {"added": [], "removed": [], "changed": []}
    with open(os.path.join(prefix, "share", "libfoo", "VERSION")) as handle:
        assert handle.read().strip() == "1.0.0"
    assert os.stat(os.path.join(prefix, "conda-meta", "created")).st_ino == created, "the env was not created again"
    assert run(base, SPEC).get("changed") is False
