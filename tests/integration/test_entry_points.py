"""The collection's entry points, run for real from the checkout and from a built tarball."""

import os
import tarfile
import textwrap

from conftest import REPO_ROOT, recap, run


# What site.yml would write on this machine; check mode must leave each exactly as it was.
SITE_PATHS = ("/etc/ansible/facts.d/aistack.fact", "/usr/local/libexec/aistack/validate_gpu.py",
              "/var/lib/aistack/validation")


def _state(paths):
    return {p: os.stat(p).st_mtime_ns if os.path.exists(p) else None for p in paths}


def test_site_check_mode_on_this_machine_changes_nothing():
    before = _state(SITE_PATHS)
    # conda and env need an installer source and mirrors (the network, or the conda test bed of
    # the conda scenario), apex, numa and jupyter a torch environment this machine lacks: each
    # is proven in its molecule scenario; everything else runs here.
    proc = run(["ansible-playbook", "site.yml", "--check", "--diff", "--skip-tags", "conda,env,apex,numa,jupyter"])
    counts = recap(proc.stdout)
    assert counts["localhost"]["failed"] == 0
    assert "preflight_report" in proc.stdout
    assert "PLAY [Provision GPU nodes]" in proc.stdout and "PLAY [Validate GPU nodes]" in proc.stdout
    assert _state(SITE_PATHS) == before


def test_gpu_cluster_inventory_resolves_roles_from_the_checkout():
    proc = run(["ansible-playbook", "site.yml", "-i", "inventories/gpu_cluster", "--list-tasks"])
    assert "aistack.gpu_node.preflight : Read the node and decide whether it can be provisioned" in proc.stdout
    assert "gpu-node-01.example.com" in run(["ansible-inventory", "-i", "inventories/gpu_cluster", "--graph"]).stdout
    listing = run(["ansible-galaxy", "collection", "list", "aistack.gpu_node", "--format", "yaml"]).stdout
    assert os.path.join(REPO_ROOT, ".cache", "collections", "ansible_collections") in listing


def test_built_tarball_installs_and_its_roles_run_from_there(tmp_path, collection_tarball):
    tarball = collection_tarball
    with tarfile.open(tarball) as archive:
        names = archive.getnames()
    assert "roles/preflight/tasks/main.yml" in names
    assert "plugins/modules/gpu_facts.py" in names
    assert not [n for n in names if n.startswith((".venv", ".cache", ".git/"))]

    # Outside the checkout: an empty ansible.cfg, only a fresh collections path.
    collections = tmp_path / "collections"
    config = tmp_path / "ansible.cfg"
    config.write_text("[defaults]\n")
    env = {"ANSIBLE_CONFIG": str(config), "ANSIBLE_COLLECTIONS_PATH": str(collections),
           "ANSIBLE_COLLECTIONS_SCAN_SYS_PATH": "false"}
    run(["ansible-galaxy", "collection", "install", "--offline", "-p", str(collections), tarball], env=env, cwd=str(tmp_path))
    assert (collections / "ansible_collections" / "aistack" / "gpu_node" / "MANIFEST.json").exists()

    playbook = tmp_path / "play.yml"
    playbook.write_text(textwrap.dedent("""\
        - name: Run a role of the installed collection
          hosts: localhost
          connection: local
          gather_facts: false
          vars:
            ansible_python_interpreter: "{{ ansible_playbook_python }}"
          roles:
            - role: aistack.gpu_node.preflight
          post_tasks:
            - name: Show where the role came from
              ansible.builtin.debug:
                msg: "installed at {{ lookup('ansible.builtin.pipe', 'ansible-galaxy collection list aistack.gpu_node') }}"
        """))
    proc = run(["ansible-playbook", "-i", "localhost,", "--check", str(playbook)], env=env, cwd=str(tmp_path))
    assert recap(proc.stdout)["localhost"]["failed"] == 0
    assert str(collections / "ansible_collections") in proc.stdout
