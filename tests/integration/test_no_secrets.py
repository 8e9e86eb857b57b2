"""Issue 35, item 3: a mirror password never shows. The roles run for real on this machine at -vvv
against the conda test bed, with the password in the mirror URLs; their output and every file they
write are searched for it. The .condarc's settings must carry it (conda reads them), so there only its
comments are searched."""

import json
import os
import subprocess
import sys

from conftest import REPO_ROOT, VENV_BIN

from conda_testbed.pytest_plugin import default_condarc

SECRET = "S3cretMirrorPw"


def with_password(url):
    return url.replace("http://", "http://mirroruser:%s@" % SECRET, 1)


def play(base, tmp_path, role, variables):
    playbook = tmp_path / ("%s.yml" % role)
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False,
                                     "roles": [dict({"role": "aistack.gpu_node." + role}, **variables)]}]))
    env = dict(base.env, PATH=VENV_BIN + os.pathsep + base.env["PATH"], ANSIBLE_CONFIG=os.path.join(REPO_ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO_ROOT, ".cache", "collections"), ANSIBLE_FORCE_COLOR="false")
    return subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-vvv", "-i", "localhost,", "-c", "local",
                           "-e", "ansible_python_interpreter=" + sys.executable, str(playbook)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False, timeout=600)


def leaks(text):
    return [line for line in text.splitlines() if SECRET in line]


def files_with_secret(root, skip=()):
    found = []
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if path in skip or not os.path.isfile(path):
                continue
            with open(path, "rb") as handle:
                if SECRET.encode() in handle.read():
                    found.append(path)
    return found


def test_mirrors_condarc_shows_and_comments_no_password(conda_base, conda_mirror, tmp_path):
    base = conda_base(condarc=None)
    healthy, down = with_password(conda_mirror().url), with_password("http://127.0.0.1:9")
    proc = play(base, tmp_path, "mirrors_condarc", {
        "mirrors_condarc_conda_prefix": base.prefix, "mirrors_condarc_mirrors": [down, healthy],
        "mirrors_condarc_group": "root", "mirrors_condarc_probe_timeout": 5})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    assert leaks(out) == [], leaks(out)
    assert "Show the mirrors ranked by measured latency" in out and "mirroruser:***@127.0.0.1" in out, out[-6000:]

    condarc = os.path.join(base.prefix, ".condarc")
    with open(condarc) as handle:
        text = handle.read()
    assert SECRET in text, "the settings carry the password conda needs"
    comments = [line for line in text.splitlines() if line.lstrip().startswith("#")]
    assert any("mirroruser:***@" in line for line in comments), comments
    assert leaks("\n".join(comments)) == []
    assert files_with_secret(base.prefix, skip={condarc}) == []


def test_conda_env_error_names_the_mirror_without_its_password(conda_base, tmp_path):
    base = conda_base(condarc=None)
    # conda expands the channel through channel_alias, password included, and names that URL in its error
    base.write_condarc(dict(default_condarc(base.channel_root, base.prefix), remote_max_retries=0,
                            channel_alias=with_password("http://127.0.0.1:9"), remote_connect_timeout_secs=2))
    proc = play(base, tmp_path, "conda_env", {
        "conda_env_conda_prefix": base.prefix,
        "conda_env_envs": [{"name": "demo", "spec": {"channels": ["conda-forge"], "dependencies": ["hello-ansible"]}}]})
    out = proc.stdout + proc.stderr
    assert leaks(out) == [], leaks(out)
    assert proc.returncode != 0 and "channel unreachable" in out and "mirroruser:***@127.0.0.1:9" in out, out[-6000:]
    assert files_with_secret(os.path.join(base.prefix, "envs")) == []


def test_miniconda_names_its_installer_url_without_the_password(tmp_path):
    """An unreachable installer URL with credentials: the role refuses it before any change, naming the
    URL without them, and the password shows nowhere in the output, -vvv included."""
    base = type("Base", (), {"env": dict(os.environ)})
    url = "http://installer:%s@127.0.0.1:9/mirror/Miniforge3-Linux-x86_64.sh" % SECRET
    proc = play(base, tmp_path, "miniconda", {"miniconda_prefix": str(tmp_path / "conda"), "miniconda_installer_url": url})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "the installer http://127.0.0.1:9/mirror/Miniforge3-Linux-x86_64.sh is unreachable" in out, out[-6000:]
    assert leaks(out) == [], leaks(out)
    assert not (tmp_path / "conda").exists()
