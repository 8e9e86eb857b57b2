"""The python -c texts apex_build and jupyter_kernel build from their vars (env_proof.py's text ahead
of the role's script), as Ansible templates them, run in a real Python: each compiles, and the probes
print their reading with the environment's state digest."""

import json
import sys

from conftest import REPO_ROOT, run

PLAYBOOK = """
- hosts: localhost
  connection: local
  gather_facts: false
  vars_files:
    - {root}/roles/apex_build/vars/main.yml
    - {root}/roles/jupyter_kernel/vars/main.yml
  vars:
    python: "{{{{ ansible_playbook_python }}}}"
  tasks:
    - name: Run apex_build's probe
      ansible.builtin.command:
        argv: ["{{{{ python }}}}", -c, "{{{{ __apex_build_env_script }}}}", probe, {tmp}/none.json, "{{{{ python }}}}"]
      vars:
        role_path: {root}/roles/apex_build
      register: apex_probe

    - name: Run jupyter_kernel's probe
      ansible.builtin.command:
        argv: ["{{{{ python }}}}", -c, "{{{{ __jupyter_kernel_probe_script }}}}", {tmp}, {tmp}, {tmp}/none.json, "{{{{ python }}}}", {tmp}/none/kernel.json]
      vars:
        role_path: {root}/roles/jupyter_kernel
      register: jupyter_probe

    - name: Compile jupyter_kernel's kernel check (it needs jupyter_client to run)
      ansible.builtin.command:
        argv: ["{{{{ python }}}}", -c, "import sys; compile(sys.argv[1], 'kernel_check', 'exec')", "{{{{ __jupyter_kernel_check_script }}}}"]
      vars:
        role_path: {root}/roles/jupyter_kernel

    - name: Keep the readings for the test
      ansible.builtin.copy:
        content: "{{{{ [apex_probe.stdout | from_json, jupyter_probe.stdout | from_json] | to_json }}}}"
        dest: {tmp}/readings.json
        mode: "0644"
"""


def test_the_env_scripts_run_as_the_roles_build_them(tmp_path):
    playbook = tmp_path / "env_scripts.yml"
    playbook.write_text(PLAYBOOK.format(root=REPO_ROOT, tmp=tmp_path))
    run(["ansible-playbook", "-i", "localhost,", "-e", "ansible_python_interpreter=" + sys.executable, str(playbook)])
    apex, jupyter = json.loads((tmp_path / "readings.json").read_text())
    assert apex["proof"] is None and len(apex["env_state"]) == 64 and apex["python_tag"].startswith("cp3")
    assert jupyter["proof"] is None and jupyter["env_state"] == apex["env_state"] and jupyter["kernel_file"] is None
