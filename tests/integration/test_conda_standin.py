"""Contract tests: the conda stand-in (tests/support/conda) against real conda 26.7's recorded outputs.

Every command in the recording's INDEX.tsv is replayed in the recorded order against a fresh
stand-in base whose configuration matches the recording's; the stand-in must give the same exit
code, the same JSON structure (keys at every level), the same ``exception_name``, and for
transactions the same packages linked and unlinked. Volatile values (paths, times, hashes of the
repackaged python) are not compared.
"""

import glob
import json
import os
import re
import shlex
import shutil
import sys

import pytest

from conftest import REPO_ROOT

sys.path.insert(0, os.path.join(REPO_ROOT, ".cache", "collections"))
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import env as ce  # noqa: E402  pylint: disable=wrong-import-position

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
NOT_REPLAYED = {}
# The recording machine's conda was built from source: none of the plugins Miniconda ships (the stand-in
# installer lays them down, and the replay's base goes without them).
RECORDING_HAD_NO_PLUGINS = ("conda_libmamba_solver", "conda_anaconda_tos")


def index_rows(folder=RECORDED):
    with open(os.path.join(folder, "INDEX.tsv")) as handle:
        rows = [line.rstrip("\n").split("\t") for line in handle if line.strip()]
    return [(name, int(rc.split("=")[1]), command) for name, rc, _time, command in rows]


def read_recorded(name, folder=RECORDED):
    with open(os.path.join(folder, name)) as handle:
        return handle.read()


# JSON paths where the stand-in's keys may differ from the recording's, each with why. Nothing
# else is let through: keys are compared at every level, in dicts and in the dicts of lists.
KEYS_NOT_COMPARED = {
    "$.env_vars": "names of the calling process's environment variables (test_info_env_vars_follow_conda checks the rule)",
}


def kind(value):
    return "object" if isinstance(value, dict) else "list" if isinstance(value, list) else "scalar"


def merged(values):
    """One recorded value standing for several (the items of a list): objects merged key by key, lists joined."""
    if all(isinstance(v, dict) for v in values):
        keys = list(dict.fromkeys(k for v in values for k in v))
        return {k: merged([v[k] for v in values if k in v]) for k in keys}
    if all(isinstance(v, list) for v in values):
        return [item for v in values for item in v]
    return values[0]


def recorded_lists(folder=RECORDED):
    """{JSON path of a list: its items in every recorded output}: what conda prints where one recording is empty."""
    found = {}

    def walk(value, path):
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, "%s.%s" % (path, key))
        elif isinstance(value, list):
            found.setdefault(path, []).extend(value)
            for item in value:
                walk(item, path + "[]")

    for name, _rc, _command in index_rows(folder):
        if name.endswith(".json"):
            walk(json.loads(read_recorded(name, folder)), "$")
    return found


RECORDED_LISTS = recorded_lists()


def key_differences(ours, theirs, known_items, path="$"):
    """Where our JSON's keys differ from the recorded JSON's, at every level (values are volatile).

    A list's items are each compared with the recorded items merged; where the recorded list is
    empty, with the items real conda printed at the same path in the other recordings.
    """
    if kind(ours) != kind(theirs):
        return ["%s: %s, recorded %s" % (path, kind(ours), kind(theirs))]
    if path in KEYS_NOT_COMPARED or kind(ours) == "scalar":
        return []
    if isinstance(ours, dict):
        found = ["%s.%s: not in the recording" % (path, k) for k in ours if k not in theirs]
        found += ["%s.%s: missing" % (path, k) for k in theirs if k not in ours]
        for key in ours:
            if key in theirs:
                found += key_differences(ours[key], theirs[key], known_items, "%s.%s" % (path, key))
        return found
    recorded_items = theirs or known_items.get(path, [])
    found = []
    for item in ours:
        like = [r for r in recorded_items if kind(r) == kind(item)]
        if like:
            found += key_differences(item, merged(like), known_items, path + "[]")
        elif kind(item) != "scalar" or recorded_items:
            found.append("%s[]: %s item, recorded conda printed none here" % (path, kind(item)))
    return found


def with_recorded_paths(value, recorded_paths):
    """Our JSON with dict keys that are our paths (``envs_details``) turned into the recording's paths."""
    if isinstance(value, list):
        return [with_recorded_paths(item, recorded_paths) for item in value]
    if not isinstance(value, dict):
        return value
    renamed = {}
    for key, item in value.items():
        for ours, recorded in sorted(recorded_paths.items(), key=lambda pair: -len(pair[0])):
            key = key.replace(ours, recorded)
        renamed[key] = with_recorded_paths(item, recorded_paths)
    return renamed


def packages(data, action):
    return sorted((e["name"], e["version"], e["build_string"]) for e in data.get("actions", {}).get(action, [])
                  if e["name"] != "python")


@pytest.fixture(scope="module")
def replay(tmp_path_factory, conda_installer, conda_channel_root):
    from conda_testbed.pytest_plugin import install_base

    root = tmp_path_factory.mktemp("contract")
    base = install_base(conda_installer, str(root / "opt-conda"), str(root / "home"), conda_channel_root)
    for plugin in RECORDING_HAD_NO_PLUGINS:
        for dist in glob.glob(os.path.join(base.prefix, "lib", "python3*", "site-packages", plugin + "-*.dist-info")):
            shutil.rmtree(dist)
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
    run.recorded_paths = {new: old for old, new in paths.items()}
    return run


def check_against_recording(proc, name, rc, folder=RECORDED, recorded_paths=None):
    assert proc.returncode == rc, "%s: exit %d, recorded %d\n%s%s" % (name, proc.returncode, rc, proc.stdout, proc.stderr)
    recorded = read_recorded(name, folder)
    if name.endswith(".json"):
        ours, theirs = with_recorded_paths(json.loads(proc.stdout), recorded_paths or {}), json.loads(recorded)
        differences = key_differences(ours, theirs, RECORDED_LISTS)
        assert not differences, "%s: keys differ from real conda's\n%s" % (name, "\n".join(differences))
        if isinstance(theirs, dict):
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
        if os.path.exists(stderr_file):  # (one is not vendored: see SHARED_NOT_COPIED)
            recorded_error = re.search(r"^(\w+Error): ", read_recorded(name + ".stderr.txt", folder), re.M)
            if recorded_error:
                assert recorded_error.group(1) + ":" in proc.stderr, proc.stderr


@pytest.mark.parametrize("name,rc,command", index_rows(), ids=[row[0] for row in index_rows()])
def test_stand_in_matches_recorded_conda(replay, name, rc, command):
    if name in NOT_REPLAYED:
        pytest.skip(NOT_REPLAYED[name])
    check_against_recording(replay(command), name, rc, recorded_paths=replay.recorded_paths)


def test_keys_not_compared_are_in_the_recording():
    """An exception that names no recorded object would let a wrong key through unnoticed."""
    for path in KEYS_NOT_COMPARED:
        holders = []
        for name, _rc, _command in index_rows():
            value = json.loads(read_recorded(name)) if name.endswith(".json") else None
            for key in path.split(".")[1:]:
                value = value.get(key) if isinstance(value, dict) else None
            holders += [name] if isinstance(value, dict) else []
        assert holders, "KEYS_NOT_COMPARED: %s is an object in no recorded output" % path


def test_info_env_vars_follow_conda(replay):
    """env_vars' keys are left out of the replay: they depend on the environment, by conda's rule."""
    recorded = json.loads(read_recorded("conda-info.json"))["env_vars"]
    always = sorted(k for k, v in recorded.items() if v == "<not set>")
    assert always == ["CIO_TEST", "LD_PRELOAD"]  # listed by real conda although unset
    proc = replay("conda info --json")
    shown = json.loads(proc.stdout)["env_vars"]
    assert all(k in shown for k in always), shown
    proc = replay("HTTPS_PROXY=http://ml:secret@proxy:3128 SUDO_USER=ml PYTHONUNBUFFERED=1 conda info --json")
    shown = json.loads(proc.stdout)["env_vars"]
    assert (shown["HTTPS_PROXY"], shown["SUDO_USER"], shown["PYTHONUNBUFFERED"]) == ("<set>", "ml", "1")
    assert "secret" not in proc.stdout


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


def test_reads_the_system_condarc_and_condarc_d_like_conda(conda_base, conda_channel_root):
    """mirrors_condarc writes <root>/.condarc and miniconda <root>/condarc.d/: both are read."""
    base = conda_base(condarc=None)
    system = base.write_condarc({"channel_alias": "file://" + conda_channel_root, "channels": ["conda-forge"],
                                 "channel_priority": "strict"}, path=os.path.join(base.prefix, ".condarc"))
    os.makedirs(os.path.join(base.prefix, "condarc.d"), exist_ok=True)
    dropin = base.write_condarc({"auto_activate_base": False}, path=os.path.join(base.prefix, "condarc.d", "aistack.yml"))
    sources = base.run("config", "--show-sources")
    assert sources.returncode == 0, sources.stderr
    assert sources.stdout.index("==> %s <==" % system) < sources.stdout.index("==> %s <==" % dropin)
    shown = json.loads(base.run("config", "--show", "channels", "channel_alias", "auto_activate", "--json").stdout)
    assert shown["channels"] == ["conda-forge"] and shown["auto_activate"] is False
    assert shown["channel_alias"]["location"] == conda_channel_root and shown["channel_alias"]["scheme"] == "file"
    proc = base.run("create", "-y", "-n", "demo", "libfoo=1.0", "--json")
    assert [e["dist_name"] for e in json.loads(proc.stdout)["actions"]["LINK"]] == ["libfoo-1.0.0-h4616a5c_0"]


# Behaviours of real conda with no recording (they need a conda killed midway or a failing pip):
# each is held to conda 26.7's source (named in the test) and, where it prints an error, to the
# keys every recorded error JSON has.
RECORDED_ERROR_KEYS = sorted(set.intersection(*[
    set(data) for data in (json.loads(read_recorded(name)) for name, _rc, _command in index_rows() if name.endswith(".json"))
    if isinstance(data, dict) and "exception_name" in data]))


def test_error_keys_every_recorded_error_has():
    assert RECORDED_ERROR_KEYS == ["caused_by", "error", "exception_name", "exception_type", "message"]


def test_history_is_written_last_and_only_it_makes_an_env(conda_base, tmp_path):
    """conda: PrefixData.is_environment() is conda-meta/history, written by the transaction's last
    action; any other folder gets DirectoryNotACondaEnvironmentError, remove --all included."""
    base = conda_base()
    prefix = os.path.join(base.prefix, "envs", "demo")
    proc, reached = base.run_until_paused(str(tmp_path / "pause"), "create", "-y", "-p", prefix, "hello-ansible")
    proc.kill()
    proc.wait()
    assert reached["done"] == ["link libfoo-1.1.0-h4616a5c_0"]
    assert os.listdir(os.path.join(prefix, "conda-meta")) == ["libfoo-1.1.0-h4616a5c_0.json"]
    for args in (["list", "-p", prefix], ["remove", "-y", "--all", "-p", prefix], ["env", "export", "-p", prefix]):
        refused = base.run(*(args + ["--json"]))
        error = json.loads(refused.stdout)
        assert refused.returncode == 1 and error["exception_name"] == "DirectoryNotACondaEnvironmentError", refused.stdout
        assert sorted(error) == sorted(RECORDED_ERROR_KEYS + ["target_directory"])
        assert error["message"].startswith("The target directory exists, but it is not a conda environment.")
    assert "demo" not in base.run("env", "list").stdout

    created = base.run("create", "-y", "-p", prefix + "2", "hello-ansible", "--json")
    assert created.returncode == 0 and os.path.isfile(os.path.join(prefix + "2", "conda-meta", "history"))


def test_conda_meta_records_give_what_list_explicit_lists(conda_base):
    """The conda_env module reads an env's explicit list from conda-meta (ce.recorded_explicit_entries)
    instead of running conda list --explicit --md5: both say the same."""
    base = conda_base()
    prefix = os.path.join(base.prefix, "envs", "demo")
    assert base.run("create", "-y", "-p", prefix, "hello-ansible", "libfoo=1.0").returncode == 0
    meta = os.path.join(prefix, "conda-meta")
    records = []
    for name in sorted(n for n in os.listdir(meta) if n.endswith(".json")):
        with open(os.path.join(meta, name)) as handle:
            records.append(json.load(handle))
    listed = base.run("list", "--explicit", "--md5", "-p", prefix)
    assert listed.returncode == 0 and len(records) == 2
    assert ce.recorded_explicit_entries(records) == ce.explicit_entries(listed.stdout)


def test_unlink_renames_files_then_the_record_to_backups(conda_base, tmp_path):
    """conda: UnlinkPathAction renames each file to <path>.c~, RemoveLinkedPackageRecordAction (the
    last of a package's actions) its record; the backups go only when the transaction is done."""
    base = conda_base()
    prefix = os.path.join(base.prefix, "envs", "demo")
    assert base.run("create", "-y", "-p", prefix, "hello-ansible", "libfoo=1.0").returncode == 0
    pause = str(tmp_path / "pause")
    proc, reached = base.run_until_paused(pause, "install", "-y", "-p", prefix, "libfoo=1.1", mode="unlink-files")
    assert reached["backups"] == ["share/libfoo/VERSION.c~"]
    meta = os.path.join(prefix, "conda-meta")
    assert "libfoo-1.0.0-h4616a5c_0.json" in os.listdir(meta), "the record goes after the files"
    os.unlink(pause)
    assert proc.wait() == 0
    assert not [n for _d, _s, names in os.walk(prefix) for n in names if n.endswith(".c~")]
    assert sorted(n for n in os.listdir(meta) if n.endswith(".json")) == [
        "hello-ansible-1.0.0-h4616a5c_0.json", "libfoo-1.1.0-h4616a5c_0.json"]


def test_failed_pip_section_says_only_pip_failed_and_pips_reason_goes_to_stderr(conda_base, tmp_path):
    """conda: env/pip_util.py prints "Pip subprocess error:" and pip's stderr to stderr and raises
    CondaEnvException("Pip failed"); the conda part is applied by then."""
    base = conda_base()
    spec = tmp_path / "env.yml"
    spec.write_text("name: demo\nchannels: [conda-forge]\ndependencies:\n  - python=3.11\n  - pip\n  - libfoo=1.0\n"
                    "  - pip:\n      - six==9.9.9\n")
    proc = base.run("env", "create", "--json", "-f", str(spec))
    error = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert proc.returncode == 1 and error["exception_name"] == "CondaEnvException" and error["message"] == "Pip failed"
    assert sorted(error) == RECORDED_ERROR_KEYS
    assert "Pip subprocess error:" in proc.stderr and "No matching distribution found for six==9.9.9" in proc.stderr
    assert "six" not in proc.stdout
    assert os.path.isfile(os.path.join(base.prefix, "envs", "demo", "conda-meta", "history"))
