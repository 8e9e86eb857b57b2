"""Behaviours of real conda the stand-in learnt in issue 36, each from conda's source (the path named in
each test) where no recording shows it: pip added to python's dependencies, a fresh solve on
``env update --prune``, the plugins Miniconda ships (``tos``, the libmamba solver) offered only while
installed, and an env's variables in conda-meta/state."""

import glob
import json
import os
import shutil

from conda_testbed.pytest_plugin import default_condarc


def linked(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return sorted(entry["name"] for entry in json.loads(proc.stdout)["actions"]["LINK"])


def plugin(base, name):
    found = glob.glob(os.path.join(base.prefix, "lib", "python3*", "site-packages", name + "-*.dist-info"))
    assert len(found) == 1, "the stand-in installer lays down Miniconda's %s plugin" % name
    return found[0]


def test_python_depends_on_pip_unless_add_pip_as_python_dependency_is_off(conda_base):
    """core/subdir_data.py: python 2.x/3.x records get "pip" in their depends (context default True)."""
    base = conda_base()
    assert linked(base.run("create", "--dry-run", "--json", "-p", "/tmp/x", "python=3.11")) == ["pip", "python"]
    off = conda_base(condarc=dict(default_condarc(base.channel_root, base.prefix), add_pip_as_python_dependency=False),
                     name="off")
    assert linked(off.run("create", "--dry-run", "--json", "-p", "/tmp/x", "python=3.11")) == ["python"]


def test_env_update_with_prune_solves_afresh_and_without_keeps_what_is_installed(conda_base, tmp_path):
    """core/solve.py: on prune "DO NOT add existing prefix data to solution" (history and installed specs
    ignored), so an unpinned package moves to the newest; env update without it is FREEZE_INSTALLED."""
    base = conda_base()
    prefix = os.path.join(base.prefix, "envs", "u")
    assert base.run("create", "-y", "-p", prefix, "libfoo=1.0", "--json").returncode == 0
    spec = tmp_path / "env.yml"
    spec.write_text("channels: [conda-forge]\ndependencies: [libfoo]\n")
    kept = base.run("env", "update", "-f", str(spec), "-p", prefix, "--json")
    assert kept.returncode == 0 and json.loads(kept.stdout).get("message") == "All requested packages already installed."
    upgraded = base.run("env", "update", "--prune", "-f", str(spec), "-p", prefix, "--json")
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    assert [(e["name"], e["version"]) for e in json.loads(upgraded.stdout)["actions"]["LINK"]] == [("libfoo", "2.0.0")]


def test_tos_and_libmamba_only_while_their_plugins_are_installed(conda_base):
    """conda itself has no tos subcommand and the solvers classic and rattler (recorded --solver choices);
    plugins/manager.py get_solver_backend refuses a configured solver it does not know."""
    base = conda_base()
    assert base.run("tos", "accept", "--override-channels", "--channel", "conda-forge").returncode == 0
    assert "--solver {classic,rattler,libmamba}" in base.run("create", "--help").stdout
    shutil.rmtree(plugin(base, "conda_anaconda_tos"))
    shutil.rmtree(plugin(base, "conda_libmamba_solver"))
    refused = base.run("tos", "accept")
    assert refused.returncode == 2 and "invalid choice: 'tos'" in refused.stderr
    assert "--solver {classic,rattler}" in base.run("create", "--help").stdout
    base.write_condarc(dict(default_condarc(base.channel_root, base.prefix), solver="libmamba"))
    failed = base.run("create", "--dry-run", "--json", "-p", "/tmp/x", "libfoo")
    error = json.loads(failed.stdout)
    assert failed.returncode == 1 and error["exception_name"] == "CondaValueError"
    assert error["message"] == ("You have chosen a non-default solver backend (libmamba) but it was not recognized. "
                                "Choose one of: classic, rattler")


def test_env_variables_live_in_conda_meta_state_and_unset_ones_are_marked(conda_base, tmp_path):
    """core/prefix_data.py set/unset_environment_env_vars, cli/main_env_vars.py; env create/update set them."""
    base = conda_base()
    prefix = os.path.join(base.prefix, "envs", "v")
    spec = tmp_path / "env.yml"
    spec.write_text("channels: [conda-forge]\ndependencies: [libfoo]\nvariables: {A: '1', B: two}\n")
    assert base.run("env", "create", "-f", str(spec), "-p", prefix).returncode == 0
    with open(os.path.join(prefix, "conda-meta", "state")) as handle:
        assert json.load(handle) == {"env_vars": {"A": "1", "B": "two"}}
    assert base.run("env", "config", "vars", "unset", "-p", prefix, "B").returncode == 0
    with open(os.path.join(prefix, "conda-meta", "state")) as handle:
        assert json.load(handle) == {"env_vars": {"A": "1", "B": "***unset***"}}
    listed = base.run("env", "config", "vars", "list", "--json", "-p", prefix)
    assert json.loads(listed.stdout) == {"A": "1"}
