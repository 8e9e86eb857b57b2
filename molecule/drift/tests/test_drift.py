"""Tamper with a provisioned node three ways; the drift check names exactly those, and site.yml repairs them."""

import json
import os
import subprocess

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
NODE = "aistack-drift-1"
SKIP_TAGS = "driver,conda,env"  # as in molecule.yml

# (how the node is tampered with, the command run in the node, the (role, task) that must report it)
TAMPERING = [
    ("a recorded driver version edited in the node manifest",
     "sed -i 's/\"driver\": null/\"driver\": \"535.104.05\"/' /etc/ansible/facts.d/aistack.fact",
     ("node_manifest", "Write the node manifest section provision")),
    ("the installed validation script edited",
     "echo '# local edit' >> /usr/local/libexec/aistack/validate_gpu.py",
     ("gpu_validate", "Install the validation script")),
    ("the results directory opened to everyone",
     "chmod 0777 /var/lib/aistack/validation",
     ("gpu_validate", "Create the script and results directories")),
]


def drift(tmp_path, name):
    inventory = tmp_path / "inventory.yml"
    inventory.write_text("all:\n  children:\n    gpu_nodes:\n      hosts:\n        %s:\n"
                         "          ansible_connection: containers.podman.podman\n" % NODE)
    out = tmp_path / name
    proc = subprocess.run([os.path.join(REPO_ROOT, ".venv", "bin", "python"), os.path.join(REPO_ROOT, "tools", "aistack-drift"),
                           "-i", str(inventory), "-o", str(out), "--skip-tags", SKIP_TAGS], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    with open(out / "drift.json") as handle:
        return proc, json.load(handle)


def test_drift_names_exactly_the_tampering_and_site_repairs_it(host, tmp_path):
    proc, report = drift(tmp_path, "after-converge")
    assert proc.returncode == 0, proc.stdout + proc.stderr

    for _what, command, _task in TAMPERING:
        host.run_expect([0], command)

    proc, report = drift(tmp_path, "tampered")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    changed = report["hosts"][NODE]["changed"]
    assert sorted((r["role"], r["task"]) for r in changed) == sorted(task for _what, _command, task in TAMPERING)
    by_task = {r["task"]: r for r in changed}
    assert '+        "driver": null,' in by_task["Write the node manifest section provision"]["diff"][0]
    assert "-# local edit" in by_task["Install the validation script"]["diff"][0]
    assert '"mode": "0777"' in by_task["Create the script and results directories"]["diff"][0]
    for _what, _command, (role, task) in TAMPERING:
        assert "    %s : %s" % (role, task) in proc.stdout

    apply = subprocess.run([os.path.join(REPO_ROOT, ".venv", "bin", "ansible-playbook"), "site.yml",
                            "-i", str(tmp_path / "inventory.yml"), "--skip-tags", SKIP_TAGS], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    assert apply.returncode == 0, apply.stdout[-3000:]

    proc, report = drift(tmp_path, "repaired")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["hosts"][NODE]["status"] == "clean"
    assert host.file("/var/lib/aistack/validation").mode == 0o755
