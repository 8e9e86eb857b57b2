"""Gather once: the GPUs read once per host in a whole site.yml run (by the preflight's one node reading,
node_facts, inside preflight_plan), and a role run alone still reads the GPUs itself (issue 19). Module
calls are counted by tests/integration/callbacks; the module runs inside an action plugin are counted
from ansible-playbook -vvv ("Using module file")."""

import json
import os
import re

from conftest import REPO_ROOT, run

GPU_FACTS = "aistack.gpu_node.gpu_facts"
PREFLIGHT_PLAN = "aistack.gpu_node.preflight_plan"
# The conda component needs the network (installer download); the manifest is given an APEX
# record because check mode builds none.
NO_NETWORK = ["--skip-tags", "conda", "-e", json.dumps({"node_manifest_apex": {"commit": "none", "wheel_key": "none"}})]


def module_calls(tmp_path, args):
    """Run ansible-playbook in check mode with the counting callback: ({host: {action: n}}, output)."""
    counts = tmp_path / "module_calls.json"
    proc = run(["ansible-playbook", "--check", "-i", "inventories/local/hosts.yml"] + args, env={
        "ANSIBLE_CALLBACK_PLUGINS": os.path.join(REPO_ROOT, "tests", "integration", "callbacks"),
        "ANSIBLE_CALLBACKS_ENABLED": "module_calls",
        "AISTACK_MODULE_CALLS": str(counts),
    })
    with open(str(counts)) as handle:
        return json.load(handle), proc.stdout


def test_site_reads_the_gpus_once_per_host(tmp_path):
    calls, output = module_calls(tmp_path, ["site.yml"] + NO_NETWORK)
    # Every role that decides on the GPUs ran.
    for role in ("preflight", "nvidia_driver", "conda_env", "apex_build", "jupyter_kernel", "node_manifest", "gpu_validate"):
        assert "TASK [aistack.gpu_node.%s : " % role in output, output
    # Changed on purpose (issue 37 item 7): the preflight reads the GPUs in its one node_facts run inside
    # preflight_plan, so no gpu_facts task runs at all; every role after it reuses ansible_facts.aistack_gpu.
    assert dict((host, (actions.get(GPU_FACTS, 0), actions.get(PREFLIGHT_PLAN))) for host, actions in calls.items()) == {
        "localhost": (0, 1)}, output


def test_the_preflight_reads_the_node_in_one_module_run(tmp_path):
    # site.yml's preflight play: the preflight role's facts, GPUs, container runtimes and free space come from
    # node_facts alone, once (setup, gpu_facts and free_space were three runs), and no later role of the play
    # gathers or reads the GPUs again. (container_toolkit_probe still runs here: this machine has podman.)
    _calls, output = module_calls(tmp_path, ["playbooks/preflight.yml", "-vvv"] + NO_NETWORK)
    role = output[output.index("TASK [aistack.gpu_node.preflight : "):output.index("TASK [aistack.gpu_node.dcgm : ")]
    ran = re.findall(r"Using module file \S*/([a-z_]+)\.py", output)
    assert re.findall(r"Using module file \S*/([a-z_]+)\.py", role) == ["node_facts"], output
    assert ran.count("node_facts") == 1 and not set(ran) & {"setup", "gpu_facts", "free_space"}, ran


def test_a_role_run_alone_reads_the_gpus_itself(tmp_path):
    playbook = tmp_path / "node_manifest.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  roles:\n    - role: aistack.gpu_node.node_manifest\n"
        "      node_manifest_path: %s\n      node_manifest_apex: {commit: none, wheel_key: none}\n" % (tmp_path / "manifest.json"))
    calls, output = module_calls(tmp_path, [str(playbook)])
    assert calls["localhost"].get(GPU_FACTS) == 1, output


def test_site_decides_and_checks_once_per_host(tmp_path):
    # site.yml's preflight play decides the driver and checks the validation input before any change;
    # the roles reuse that (and the facts it gathered) instead of deciding and checking again.
    calls, output = module_calls(tmp_path, ["site.yml"] + NO_NETWORK)
    assert "TASK [aistack.gpu_node.nvidia_driver : " in output and "TASK [aistack.gpu_node.gpu_validate : " in output, output
    once = ("aistack.gpu_node.nvidia_driver_plan", "aistack.gpu_node.gpu_validation")
    assert dict((action, calls["localhost"].get(action, 0)) for action in once) == dict.fromkeys(once, 1), output
    # No setup at all. Changed on purpose from 2 (issue 37 item 7): the preflight role's facts (min, virtual, python
    # among them) come from its node_facts run; then from 1: node_manifest reads the manifest from that run's local
    # facts (/etc/ansible/facts.d) instead of a setup of its own, and its writes (provision, then gpu_validate's
    # validation) keep node_manifest_recorded, which gpu_validate reads instead of the file.
    assert calls["localhost"].get("ansible.builtin.setup") is None, output


def test_a_later_run_of_the_role_decides_again(tmp_path):
    # The decision of the preflight entry point serves the role's next run only: a second run in the
    # same playbook (another board, other variables) must not inherit it.
    playbook = tmp_path / "driver_twice.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - {name: Decide ahead, ansible.builtin.import_role: {name: aistack.gpu_node.nvidia_driver, tasks_from: preflight}}\n"
        "- hosts: localhost\n  gather_facts: false\n  roles: [aistack.gpu_node.nvidia_driver]\n"
        "- hosts: localhost\n  gather_facts: false\n  roles: [aistack.gpu_node.nvidia_driver]\n")
    calls, output = module_calls(tmp_path, [str(playbook)])
    assert calls["localhost"].get("aistack.gpu_node.nvidia_driver_plan") == 2, output


def test_the_driver_and_container_toolkit_roles_run_alone_read_the_node_facts_in_their_planner(tmp_path):
    # Issue 37 item 7: a role run alone reads the OS facts and the GPUs in one node_facts run inside its planner
    # (nvidia_driver_plan, container_toolkit_plan) instead of a setup task and a gpu_facts task; the second role
    # reads none of them again.
    playbook = tmp_path / "driver_and_toolkit.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  roles: [aistack.gpu_node.nvidia_driver, aistack.gpu_node.container_toolkit]\n")
    calls, output = module_calls(tmp_path, [str(playbook), "-vvv"])
    ran = re.findall(r"Using module file \S*/([a-z_]+)\.py", output)
    assert ran.count("node_facts") == 1 and not set(ran) & {"setup", "gpu_facts"}, ran
    assert not set(calls["localhost"]) & {"ansible.builtin.setup", GPU_FACTS}, output
