"""Contract tests: the conda stand-in (tests/conda) against real conda 26.7's recorded outputs.

Every command in the recording's INDEX.tsv is replayed in the recorded order against a fresh
stand-in base whose configuration matches the recording's; the stand-in must give the same exit
code, the same JSON structure (keys at every level), the same ``exception_name``, and for
transactions the same packages linked and unlinked. Volatile values (paths, times, hashes of the
repackaged python) are not compared.
"""

import json
import os
import re
import shlex

import pytest

from conftest import REPO_ROOT

RECORDED = os.path.join(REPO_ROOT, "tests", "unit", "fixtures", "shared", "fixtures", "conda-26.7")
ENV_DEMO_PIP = """name: demo-pip
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - hello-ansible
  - libfoo=1.0
  - pip:
      - six==1.17.0
"""
ENV_FILES = {
    "env-demo-pip.yml": ENV_DEMO_PIP,
    "env-demo-pip-drifted.yml": ENV_DEMO_PIP.replace("  - hello-ansible\n", ""),
    "env-compare.yml": ENV_DEMO_PIP,
    "env-demo-pip-nodefaults.yml": ENV_DEMO_PIP.replace("  - conda-forge\n", "  - conda-forge\n  - nodefaults\n"),
}
# Recorded rows that say something about the recording machine, not about conda's contract.
NOT_REPLAYED = {"default-solver-missing-libmamba.txt": "libmamba was not installed on the recording machine"}


def index_rows(folder=RECORDED):
    with open(os.path.join(folder, "INDEX.tsv")) as handle:
        rows = [line.rstrip("\n").split("\t") for line in handle if line.strip()]
    return [(name, int(rc.split("=")[1]), command) for name, rc, _time, command in rows]


def shape(value):
    """Keys at every level; list items merged; scalars reduced to None (values are volatile)."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        merged = {}
        for item in value:
            item_shape = shape(item)
            if isinstance(item_shape, dict):
                merged.update(item_shape)
            elif item_shape is not None:
                return [item_shape]
        return [merged] if merged else []
    return None


def packages(data, action):
    return sorted((e["name"], e["version"], e["build_string"]) for e in data.get("actions", {}).get(action, [])
                  if e["name"] != "python")


@pytest.fixture(scope="module")
def replay(tmp_path_factory, conda_installer, conda_channel_root):
    from conda_testbed.pytest_plugin import install_base

    root = tmp_path_factory.mktemp("contract")
    base = install_base(conda_installer, str(root / "opt-conda"), str(root / "home"), conda_channel_root)
    project = root / "project"
    project.mkdir()
    for name, text in ENV_FILES.items():
        (project / name).write_text(text)
    paths = {"/opt/conda": base.prefix, "/home/ml/project": str(project), "/srv/conda-mirror": conda_channel_root,
             "/srv/conda-channel": os.path.join(conda_channel_root, "conda-forge"),
             # the recording had no network: a closed loopback port fails the same way
             "https://conda.anaconda.org/conda-forge": "http://127.0.0.1:9/conda-forge"}

    def run(command):
        env = {}
        command = command.replace(" (no GPU)", "")
        for old, new in paths.items():
            command = command.replace(old, new)
        words = shlex.split(command)
        while "=" in words[0]:
            key, value = words.pop(0).split("=", 1)
            env[key] = value
        assert words[0] == "conda"
        return base.run(*words[1:], env=env, cwd=str(project))

    run.base = base
    return run


def read_recorded(name, folder=RECORDED):
    with open(os.path.join(folder, name)) as handle:
        return handle.read()


def check_against_recording(proc, name, rc, folder=RECORDED):
    assert proc.returncode == rc, "%s: exit %d, recorded %d\n%s%s" % (name, proc.returncode, rc, proc.stdout, proc.stderr)
    recorded = read_recorded(name, folder)
    if name.endswith(".json"):
        ours, theirs = json.loads(proc.stdout), json.loads(recorded)
        assert shape(ours) == shape(theirs) or set(shape(ours)) >= set(shape(theirs)), name
        if isinstance(theirs, dict):
            assert set(ours) == set(theirs), "%s: top-level keys differ" % name
            assert ours.get("exception_name") == theirs.get("exception_name")
            assert ours.get("packages") == theirs.get("packages")
            assert ours.get("unsatisfiable") == theirs.get("unsatisfiable")
            assert ours.get("message") == theirs.get("message") or "exception_name" in theirs
            for action in ("LINK", "UNLINK"):
                assert packages(ours, action) == packages(theirs, action), "%s: %s differs" % (name, action)
            if "actions" in theirs:
                assert set(ours["actions"]) == set(theirs["actions"]), "%s: action kinds differ" % name
        elif theirs and isinstance(theirs[0], dict):  # conda list --json
            assert sorted((e["name"], e["version"], e["channel"]) for e in ours if e["name"] != "python") == \
                sorted((e["name"], e["version"], e["channel"]) for e in theirs if e["name"] != "python")
        else:  # conda compare --json
            assert ours == theirs
    elif name.endswith(".yml.txt"):
        assert sorted(proc.stdout.split("prefix:")[0].splitlines()) == sorted(recorded.split("prefix:")[0].splitlines())
    else:
        for marker in ("## Package Plan ##", "The following NEW packages will be INSTALLED:", "Ran pip subprocess with arguments:",
                       "# All requested packages already installed.", "Success.", "not found", "@EXPLICIT",
                       "Downloading and Extracting Packages", "# conda environments:", "conda version :"):
            assert (marker in proc.stdout) == (marker in recorded), "%s: %r present in only one of them" % (name, marker)
        stderr_file = os.path.join(folder, name + ".stderr.txt")
        if os.path.exists(stderr_file):
            recorded_error = re.search(r"^(\w+Error): ", read_recorded(name + ".stderr.txt", folder), re.M)
            if recorded_error:
                assert recorded_error.group(1) + ":" in proc.stderr, proc.stderr


@pytest.mark.parametrize("name,rc,command", index_rows(), ids=[row[0] for row in index_rows()])
def test_stand_in_matches_recorded_conda(replay, name, rc, command):
    if name in NOT_REPLAYED:
        pytest.skip(NOT_REPLAYED[name])
    check_against_recording(replay(command), name, rc)


def test_env_create_over_an_existing_env_silently_recreates_it(replay):
    """Real conda's bug, kept on purpose: the product must never call it on an existing env."""
    prefix = os.path.join(replay.base.prefix, "envs", "demo-pip")
    marker = os.path.join(prefix, "user-data.txt")
    with open(marker, "w") as handle:
        handle.write("not managed by conda\n")
    proc = replay("conda env create -f /home/ml/project/env-demo-pip.yml")
    assert proc.returncode == 0, proc.stderr
    assert not os.path.exists(marker)


def test_nodefaults_is_a_channel_name_and_fails(replay):
    folder = os.path.join(RECORDED, "conda-26.7.1")
    proc = replay("conda env create -n nodef -f /home/ml/project/env-demo-pip-nodefaults.yml")
    check_against_recording(proc, "env-create-nodefaults.txt", 1, folder)
    assert "nodefaults" in proc.stderr


def test_yes_false_is_a_usage_error(replay):
    proc = replay("conda env create --yes=false -f /home/ml/project/env-demo-pip.yml")
    assert proc.returncode == 2
    assert "ignored explicit argument 'false'" in proc.stderr


def test_pip_section_runs_from_the_env_file_folder(replay):
    proc = replay("conda env update --prune -f /home/ml/project/env-demo-pip.yml")
    assert proc.returncode == 0, proc.stderr
    command = re.search(r"^\[(.*)\]$", proc.stdout, re.M).group(1)
    words = [w.strip("'") for w in command.split(", ")]
    prefix = os.path.join(replay.base.prefix, "envs", "demo-pip")
    assert words[:6] == [os.path.join(prefix, "bin", "python"), "-m", "pip", "install", "-U", "-r"]
    assert re.match(re.escape(os.path.dirname(replay.base.home)) + r"/project/condaenv\..+\.requirements\.txt$", words[6])
    assert not os.listdir(os.path.dirname(words[6])) == [] and not any(n.startswith("condaenv.") for n in os.listdir(os.path.dirname(words[6])))
