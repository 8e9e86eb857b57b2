"""site.yml on a fresh node ends in one working environment, read through the facts the roles published.

Then the drift loop users schedule: nine tamperings (the first three are what users really break: a
package in the env, the kernelspec, the thread activation hook; the last three the files that hold
the secrets) are each named exactly by one drift check (site.yml --check --diff), a converge repairs
them, and the drift check of the collection as Galaxy installs it (the whole site.yml) is clean
again and proven dry byte for byte on this provisioned node (files/snapshot.sh before and after, as
the scenario's prepare and side_effect do around check mode on the fresh node).

Last, issue 35's no-secret search: the node is given a mirror password, a JupyterLab token and a
password with its hash (host_vars/aistack-site-1.yml). The repairing converge runs the whole
site.yml at -vvv with --diff, and neither its output, nor the drift checks' output and reports, nor
the facts the roles published, nor any file on the node holds one of them, but for the three
files whose readers need one (each readable by those only). The search is first shown to find a
planted secret.
"""

import base64
import json
import os
import re
import shlex
import sys
import subprocess

import yaml

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
NODE = "aistack-site" + os.environ.get("AISTACK_NODE_SUFFIX", "-1")  # molecule.yml's node
EPHEMERAL = os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "")
INVENTORY = os.path.join(EPHEMERAL, "inventory")
# The tooling this verifier runs under (the .venv, or a `make matrix` line's venv).
VENV_BIN = os.path.dirname(sys.executable)
# The scenario's group_vars read the sources from there (molecule.yml sets it for its own runs).
os.environ.setdefault("AISTACK_SITE_SOURCES", os.path.join(REPO_ROOT, ".cache", "site-molecule" + os.environ.get("AISTACK_NODE_SUFFIX", "")))
# converge.yml writes what the roles published there.
RESULTS = os.environ.get("AISTACK_SITE_RESULTS", os.path.join(REPO_ROOT, ".cache", "site-results" + os.environ.get("AISTACK_NODE_SUFFIX", "")))

# What the site scenario's node is given (host_vars/aistack-site-1.yml), by name.
with open(os.path.join(os.path.dirname(__file__), "..", "host_vars", NODE + ".yml")) as _host_vars:
    SECRETS = yaml.safe_load(_host_vars)["site_secrets"]
# The files that must hold a secret, as what reads them needs it: (path, the secrets it may hold, the
# most its mode may allow). conda reads the mirror password from the .condarc (and a hand edit's
# backup beside it keeps it), systemd the token from a root-only file, JupyterLab the hash from its
# configuration, and it writes the token into its runtime files. Anything else that holds one is a leak.
SECRET_HOLDERS = [
    (re.compile(r"^/opt/conda/\.condarc(\.[^/]+~)?$"), {"mirror_password"}, 0o640),
    (re.compile(r"^/etc/jupyterlab/token\.env$"), {"lab_token"}, 0o600),
    (re.compile(r"^/etc/jupyterlab/jupyter_server_config\.json$"), {"lab_password_hash"}, 0o640),
    # JupyterLab's own record of its server, and the page that opens it, both with the token: its user's alone.
    (re.compile(r"^/var/lib/jupyterlab/\.local/share/jupyter/runtime/jpserver-[0-9]+(-open\.html|\.json)$"), {"lab_token"}, 0o600),
]
# What the drift test saw, for the no-secret test after it: the output of each run, and the report folders.
SEEN = {"outputs": {}, "reports": []}

# (what a user breaks, the command that breaks it in the node, the (role, task) the drift check must name)
TAMPERING = [
    ("a package of the env uninstalled by hand",
     "/opt/conda/envs/torch/bin/python -m pip uninstall --yes --quiet ninja",
     ("conda_env", "Converge each environment")),
    ("the kernelspec edited",
     "sed -i 's/\"display_name\": \"[^\"]*\"/\"display_name\": \"edited by hand\"/' "
     "/usr/local/share/jupyter/kernels/torch/kernel.json",
     ("jupyter_kernel", "The kernelspec")),
    ("the thread activation hook edited",
     "sed -i 's/OMP_NUM_THREADS=[0-9]*/OMP_NUM_THREADS=64/' /opt/conda/envs/torch/etc/conda/activate.d/*numa*",
     ("numa_tuning", "The env's activation scripts (conda's activate.d and deactivate.d, or the venv's hook) and the per-GPU launcher")),
    ("a recorded torch version edited in the node manifest",
     "sed -i 's/\"torch\": \"[^\"]*\"/\"torch\": \"1.0.0\"/' /etc/ansible/facts.d/aistack.fact",
     ("node_manifest", "Write the node manifest section provision")),
    ("the installed validation script edited",
     "echo '# local edit' >> /usr/local/libexec/aistack/validate_gpu.py",
     ("gpu_validate", "The validation script and its results folder")),
    ("the validation results opened to everyone",
     "chmod 0777 /var/lib/aistack/validation",
     ("gpu_validate", "The validation script and its results folder")),
    # The files that hold the secrets: the drift report names them, and never shows what they hold.
    ("the conda base's .condarc edited",
     "echo '# local edit' >> /opt/conda/.condarc",
     ("mirrors_condarc", "Write the system-wide .condarc")),
    ("JupyterLab's token file edited",
     "echo '# local edit' >> /etc/jupyterlab/token.env",
     ("jupyter_kernel", "JupyterLab token, read by systemd as root")),
    ("JupyterLab's configuration, which holds the password hash, edited",
     "sed -i 's/\"open_browser\": false/\"open_browser\": true/' /etc/jupyterlab/jupyter_server_config.json",
     ("jupyter_kernel", "JupyterLab server configuration (the password hash is readable by its user only)")),
]
# What else a check names after those: JupyterLab's restart, which its two files notify.
TAMPERING_CONSEQUENCES = [("jupyter_kernel", "Restart JupyterLab")]


SNAPSHOT = os.path.join(os.path.dirname(__file__), "..", "files", "snapshot.sh")
# The components the tamperings touch: the drift checks after the full clean one run on these only.
TAMPERED_TAGS = "conda,env,numa,jupyter,manifest,validate"


def snapshot(host, name):
    """files/snapshot.sh on the node: the hash of its state, the listing left in /run/snapshot.NAME."""
    with open(SNAPSHOT) as handle:
        script = handle.read()
    return host.run_expect([0], "bash -s %s <<'SNAPSHOT'\n%sSNAPSHOT" % (name, script)).stdout.strip()


def published():
    with open(os.path.join(RESULTS, "published-%s.json" % NODE)) as handle:
        return json.load(handle)


def playbook(*args):
    return subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "site.yml", "-i", INVENTORY] + list(args),
                          cwd=REPO_ROOT, capture_output=True, text=True, check=False)


def drift(tmp_path, name, *args):
    out = tmp_path / name
    proc = subprocess.run([os.path.join(VENV_BIN, "python"), os.path.join(REPO_ROOT, "tools", "aistack-drift"),
                           "-i", INVENTORY, "-o", str(out)] + list(args), cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    SEEN["outputs"]["drift " + name] = proc.stdout + proc.stderr
    SEEN["reports"].append(str(out))
    with open(out / "drift.json") as handle:
        return proc, json.load(handle)


def test_the_environment_the_roles_work_on_is_the_primary_conda_env():
    facts = published()
    assert facts["conda_env_target"] == {"name": "torch", "prefix": "/opt/conda/envs/torch",
                                         "python": "/opt/conda/envs/torch/bin/python", "conda": True, "chosen_by": "primary"}
    env = facts["conda_env_info"]["torch"]
    assert env["prefix"] == "/opt/conda/envs/torch" and env["state"] == "present" and env["primary"]
    assert env["lock"]["explicit"] == "/opt/conda/envs/torch.explicit.txt"
    # The default env's torch: the CPU build, since the node has no GPU.
    assert env["torch_variant"]["variant"] == "cpu"
    assert env["torch_variant"]["chosen_by"] == "no NVIDIA GPU on the node"
    assert env["blas"]["requested"] == "openblas" and env["blas"]["verified"]
    assert facts["preflight_report"]["gpu"]["state"] == "no_gpu"


def test_apex_was_built_here_and_the_env_has_the_thread_settings(host):
    # APEX's C++ kernel imports in the env: the kernel test below imports it with torch.
    report = published()["apex_build_report"]
    assert report["env_prefix"] == "/opt/conda/envs/torch" and report["built_on"] == NODE and report["problems"] == []
    # What `conda activate torch` does with the env's hooks: source etc/conda/activate.d.
    threads = host.run_expect([0], "bash -c 'for hook in /opt/conda/envs/torch/etc/conda/activate.d/*.sh; do . \"$hook\"; done; "
                                   "echo $OMP_NUM_THREADS'").stdout.strip()
    assert threads == str(published()["numa_tuning_env"]["OMP_NUM_THREADS"])


def test_the_kernel_runs_the_env_and_imports_torch_and_the_apex_kernels(host):
    # The kernel's interpreter (the env's python, which it prints) imports torch and APEX's C++
    # kernel (the stand-in tree, built into this env by apex_build on this build host), then prints
    # torch's version: nothing is printed unless both import.
    code = ("from jupyter_client.manager import start_new_kernel\n"
            "km, kc = start_new_kernel(kernel_name='torch')\n"
            "reply = kc.execute_interactive('import sys, torch, apex_C; print(sys.executable, torch.__version__)', timeout=120, "
            "output_hook=lambda msg: msg['msg_type'] == 'stream' and print(msg['content']['text'], end=''))\n"
            "km.shutdown_kernel()\n")
    out = host.run_expect([0], "/opt/conda/envs/torch/bin/python - <<'CODE'\n%sCODE" % code).stdout
    python, torch = ((out.splitlines() or [""])[0].split(" ", 1) + [""])[:2]
    assert python == "/opt/conda/envs/torch/bin/python", out
    assert torch.startswith("2.13.0") and "+cpu" in torch, out


def test_the_manifest_records_the_env(host):
    manifest = json.loads(host.file("/etc/ansible/facts.d/aistack.fact").content_string)
    assert manifest["provision"]["python"] == "/opt/conda/envs/torch/bin/python"
    assert manifest["provision"]["torch"].startswith("2.13.0")
    # The lock's sha256 as conda_env published it after its verify step: the file's own.
    assert manifest["provision"]["env_locks"] == {
        "/opt/conda/envs/torch.explicit.txt": host.file("/opt/conda/envs/torch.explicit.txt").sha256sum}
    assert manifest["validation"] == {"status": "skipped", "reason": "no GPU"}


def test_the_health_verdict_is_published_even_without_a_gpu():
    """The kernel log is scanned on every node: a podman node reads its host's ring buffer through dmesg
    (journald holds no kernel messages there), or cannot, and says so: UNKNOWN, never a silent OK."""
    health = published()["gpu_validate_result"]["health"]
    assert health["kernel_log"]["source"] in ("journalctl", "dmesg", "none")
    if health["kernel_log"]["source"] == "none":
        assert health["verdict"] == "UNKNOWN" and health["kernel_log"]["reason"]
    else:
        assert health["verdict"] == "OK" and health["devices"] == []
    assert health["fails"] is False and health["dcgm"] == {"level": 0, "status": "off"}


def _recap(output):
    """The counts of NODE's line in a play recap."""
    for line in output.splitlines():
        parts = line.split()
        if parts[:2] == [NODE, ":"]:
            return dict(part.split("=") for part in parts[2:])
    raise AssertionError("no recap line for %s in:\n%s" % (NODE, output[-3000:]))


def test_drift_names_each_tampering_and_is_repaired(host, tmp_path):
    # All nine in one command on the node, each one's exit status checked (set -e).
    host.run_expect([0], "bash -c %s" % shlex.quote("set -e\n" + "\n".join(command for _what, command, _task in TAMPERING)))

    proc, report = drift(tmp_path, "tampered", "--tags", TAMPERED_TAGS)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    changed = report["hosts"][NODE]["changed"]
    assert sorted(set((r["role"], r["task"]) for r in changed)) == sorted(
        set(task for _what, _command, task in TAMPERING) | set(TAMPERING_CONSEQUENCES))
    for _what, _command, (role, task) in TAMPERING:
        assert "    %s : %s" % (role, task) in proc.stdout
    # One task writes both: its diff names each path that drifted.
    validation_diff = "\n".join(next(r for r in changed if r["role"] == "gpu_validate")["diff"])
    assert "/usr/local/libexec/aistack/validate_gpu.py" in validation_diff and "/var/lib/aistack/validation" in validation_diff

    # The repair is the whole site.yml at -vvv with --diff: the no-secret test searches its output.
    # The drift check clean again after it is the installed collection's, the next test's (the whole
    # site.yml in check mode, which takes in the tampered tags).
    apply = playbook("-vvv", "--diff")
    SEEN["outputs"]["site.yml -vvv --diff"] = apply.stdout + apply.stderr
    assert apply.returncode == 0, apply.stdout[-4000:]
    assert host.file("/var/lib/aistack/validation").mode == 0o755
    assert host.run_expect([0], "/opt/conda/envs/torch/bin/python -m pip show ninja").rc == 0


def test_the_installed_collection_finds_no_drift_dry_and_validates_from_a_folder_outside_the_checkout(host, tmp_path):
    """What a user gets from Galaxy: the built tarball, installed into an empty folder, runs the job by
    its playbooks' names from a folder with no checkout in sight. On this node, converged by the
    checkout's site.yml (the drift test before tampered with it and repaired it so), the installed
    drift check, the whole site.yml in check mode, is clean, and the installed validation passes
    after it in the same run; both are proven dry byte for byte: the same job, wherever its files
    lie, and the drift test's "clean again" (a superset of its tampered tags). The tarball holds no
    build or report output."""
    assert "site.yml -vvv --diff" in SEEN["outputs"], "the drift test did not repair the node first"
    build = subprocess.run([os.path.join(VENV_BIN, "ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path / "build")],
                           cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stdout + build.stderr
    tarball = next((tmp_path / "build").glob("aistack-gpu_node-*.tar.gz"))
    listing = subprocess.run(["tar", "tzf", str(tarball)], capture_output=True, text=True, check=True).stdout.splitlines()
    leaked = [path for path in listing
              if path.split("/")[0] in ("drift-report", ".cache", ".coverage", "ansible.cfg") or path.startswith("tests/gpu/results")]
    assert leaked == [], leaked
    assert {"playbooks/site.yml", "playbooks/drift.yml", "playbooks/validate.yml", "tools/aistack-drift"} <= set(listing)

    # Only the installed collection and the test bed's connection plugin's own collection are on the
    # path: nothing of the checkout, and no ansible.cfg (the user's folder has none).
    collections = tmp_path / "collections"
    user = tmp_path / "user"
    user.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("ANSIBLE_")}
    env.update(ANSIBLE_COLLECTIONS_PATH=str(collections), ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="false", ANSIBLE_FORCE_COLOR="false",
               ANSIBLE_CONNECTION_PLUGINS=os.path.join(REPO_ROOT, "tests", "support", "testbed", "connection_plugins"))
    install = subprocess.run([os.path.join(VENV_BIN, "ansible-galaxy"), "collection", "install", "--no-deps", "-p", str(collections), str(tarball)],
                             cwd=str(user), env=env, capture_output=True, text=True, check=False)
    installed_root = collections / "ansible_collections" / "aistack" / "gpu_node"
    assert install.returncode == 0 and (installed_root / "playbooks" / "site.yml").is_file(), install.stdout + install.stderr
    podman = collections / "ansible_collections" / "containers"
    podman.mkdir()
    os.symlink(os.path.join(REPO_ROOT, ".cache", "collections", "ansible_collections", "containers", "podman"), str(podman / "podman"))

    def installed(names, *args):
        proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook")] + ["aistack.gpu_node." + name for name in names]
                              + ["-i", INVENTORY] + list(args), cwd=str(user), env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, "aistack.gpu_node.%s: %s" % (names, (proc.stdout + proc.stderr)[-4000:])
        return proc.stdout

    # The playbook resolves to the installed copy (and its roles with it: the checkout is on no path).
    playbook_path = installed(["site"], "--syntax-check").strip().splitlines()[-1]
    assert playbook_path == "playbook: %s" % (installed_root / "playbooks" / "site.yml"), playbook_path
    # The drift check, then the validation, in one ansible-playbook run (two playbooks, the second
    # only after the first passed); the snapshot after both, so validate is proven dry here too (the
    # idempotence step ran it at 0 changed).
    before = snapshot(host, "before-drift")
    report_dir = tmp_path / "drift-installed"
    drift_out = installed(["drift", "validate"], "-e", "aistack_drift_output_dir=%s" % report_dir)
    SEEN["outputs"]["installed drift"] = drift_out
    SEEN["reports"].append(str(report_dir))
    with open(str(report_dir / "drift.json")) as handle:
        report = json.load(handle)
    assert report["hosts"][NODE]["status"] == "clean", drift_out + json.dumps(report["hosts"][NODE].get("changed"))[:4000]
    # validate's play runs on the node (the drift check's on localhost): the node's recap line is its.
    assert "PLAY [Validate GPU nodes]" in drift_out and _recap(drift_out)["failed"] == "0", drift_out[-4000:]
    after = snapshot(host, "after-drift")
    assert before == after, host.run("diff /run/snapshot.before-drift /run/snapshot.after-drift | head -40").stdout


def secrets_in(text):
    """The names of the secrets in ``text``, each with its first line there (shortened)."""
    found = {}
    for name, secret in SECRETS.items():
        for line in text.splitlines():
            if secret in line:
                found[name] = line.strip()[:300]
                break
    return found


def node_files_with_secrets(host, plant=None):
    """Every file on the node that holds one of the secrets: its own file system (the wheel folder
    mounted from the controller aside), /run and /tmp. ({path: {"mode": its mode, "secrets": {secret
    name: [line numbers]}}}, {path: its text}). One command on the node finds them and prints each
    one's mode and content (bash: the node's sh is dash); ``plant`` = (path, text) is written first
    and removed after the search, in the same command, whatever the search did."""
    grep = " ".join("-e %s" % shlex.quote(secret) for secret in SECRETS.values())
    search = ("{ find / -xdev -type f -print0; find /run /tmp -xdev -type f -print0; } 2>/dev/null"
              " | xargs -0 -r grep -lZF %s 2>/dev/null"
              " | while IFS= read -r -d '' path; do printf '%%s %%s ' \"$(stat -c %%a \"$path\")\" \"$(printf %%s \"$path\" | base64 -w0)\";"
              " base64 -w0 < \"$path\"; echo; done" % grep)
    if plant:
        search = "printf %%s %s > %s && { %s; }; status=$?; rm -f %s && exit $status" % (
            shlex.quote(plant[1]), shlex.quote(plant[0]), search, shlex.quote(plant[0]))
    listing = host.run_expect([0], "bash -c %s" % shlex.quote(search)).stdout.split("\n")
    found, texts = {}, {}
    for entry in filter(None, listing):
        mode, path, content = entry.split(" ")
        path = base64.b64decode(path).decode("utf-8", "replace")
        text = base64.b64decode(content).decode("utf-8", "replace")
        lines = text.splitlines()
        texts[path] = text
        found[path] = {"mode": int(mode, 8), "secrets": dict(
            (name, [number for number, line in enumerate(lines, 1) if secret in line])
            for name, secret in SECRETS.items() if secret in text)}
    return found, texts


def leaks_in_files(found):
    """What of ``found`` is a leak: a file that is no holder, holds a secret it must not, is readable
    beyond its holder's mode, or (a .condarc) names a secret in a comment."""
    leaks = {}
    for path, seen in found.items():
        holder = next(((allowed, mode) for pattern, allowed, mode in SECRET_HOLDERS if pattern.match(path)), None)
        if holder is None or set(seen["secrets"]) - holder[0] or seen["mode"] & ~holder[1]:
            leaks[path] = seen
    return leaks


def test_no_secret_in_the_vvv_site_run_the_drift_reports_or_any_file_on_the_node(host):
    assert "site.yml -vvv --diff" in SEEN["outputs"] and len(SEEN["reports"]) == 2, "the drift tests did not finish"
    grep = " ".join("-e %s" % shlex.quote(secret) for secret in SECRETS.values())
    # The searches find a planted secret: in a text, and in a file on the node (taken away after the search).
    assert secrets_in("ok: [%s] => %s" % (NODE, SECRETS["lab_token"])) == {"lab_token": "ok: [%s] => %s" % (NODE, SECRETS["lab_token"])}
    planted = "/var/lib/aistack-planted-secret"
    found, node_texts = node_files_with_secrets(host, plant=(planted, "x=%s\n" % SECRETS["mirror_password"]))
    assert leaks_in_files(found).pop(planted, {}).get("secrets") == {"mirror_password": [1]}, found
    del found[planted]

    # The run's and the drift checks' output, the drift reports, the facts the roles published, and
    # the node's journal (where modules log how they were invoked; its files may be compressed).
    texts = dict(SEEN["outputs"])
    for folder in SEEN["reports"]:
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), errors="replace") as handle:
                texts[os.path.join(os.path.basename(folder), name)] = handle.read()
    with open(os.path.join(RESULTS, "published-%s.json" % NODE)) as handle:
        texts["published facts"] = handle.read()
    texts["journal"] = host.run("journalctl --no-pager -o cat 2>/dev/null | grep -F %s; true" % grep).stdout
    assert dict((name, secrets_in(text)) for name, text in texts.items() if secrets_in(text)) == {}
    # The -vvv run did go through the secrets' tasks: the redacted mirror, the JupyterLab logins.
    vvv = SEEN["outputs"]["site.yml -vvv --diff"]
    assert "mirroruser:***@127.0.0.1" in vvv and "Check that a wrong password gets no session" in vvv

    # The node's files: the secrets only where they must be, and no .condarc names one in a comment.
    assert leaks_in_files(found) == {}, found
    assert {"/opt/conda/.condarc", "/etc/jupyterlab/token.env", "/etc/jupyterlab/jupyter_server_config.json"} <= set(found)
    for path in (path for path in found if "condarc" in path):
        lines = node_texts[path].splitlines()
        assert [n for n in found[path]["secrets"]["mirror_password"] if lines[n - 1].lstrip().startswith("#")] == [], path
