"""Gather once: the GPUs read once per host in a whole site.yml run (by the preflight's one node reading,
node_facts, inside preflight_plan), and a role run alone still reads the GPUs itself (issue 19). Module
calls are counted by tests/integration/callbacks; the module runs inside an action plugin are counted
from ansible-playbook -vvv ("Using module file"). The runs are made once, side by side (check mode, each with a
folder of its own), and one site.yml run serves the two tests that read it."""

import json
import os
import re

import pytest
from conftest import REPO_ROOT, run_all

GPU_FACTS = "aistack.gpu_node.gpu_facts"
PREFLIGHT_PLAN = "aistack.gpu_node.preflight_plan"
# The conda component needs the network (installer download); the manifest is given an APEX
# record because check mode builds none.
NO_NETWORK = ["--skip-tags", "conda", "-e", json.dumps({"node_manifest_apex": {"commit": "none", "wheel_key": "none"}})]


def counted(folder, args):
    """ansible-playbook in check mode with the counting callback writing into ``folder``: (args, env) for run_all."""
    return (["ansible-playbook", "--check", "-i", "inventories/local/hosts.yml"] + args, {
        "ANSIBLE_CALLBACK_PLUGINS": os.path.join(REPO_ROOT, "tests", "integration", "callbacks"),
        "ANSIBLE_CALLBACKS_ENABLED": "module_calls",
        "AISTACK_MODULE_CALLS": str(folder / "module_calls.json"),
    })


def write(folder, name, text):
    playbook = folder / name
    playbook.write_text(text)
    return str(playbook)


@pytest.fixture(scope="module", name="runs")
def fixture_runs(tmp_path_factory):
    """The module's check-mode runs, each its own ansible-playbook process with a folder of its own, started side by
    side (check mode on this machine: they share nothing they could change). One site.yml run serves both tests that
    read it (what it read of the GPUs, what it decided and checked). {name: (CompletedProcess, its folder, its args)}."""
    folders = {name: tmp_path_factory.mktemp(name) for name in ("site", "preflight", "node_manifest", "driver_twice",
                                                                "driver_and_toolkit")}
    commands = {
        "site": counted(folders["site"], ["site.yml"] + NO_NETWORK),
        "preflight": counted(folders["preflight"], ["playbooks/preflight.yml", "-vvv"] + NO_NETWORK),
        "node_manifest": counted(folders["node_manifest"], [write(
            folders["node_manifest"], "node_manifest.yml",
            "- hosts: localhost\n  gather_facts: false\n  roles:\n    - role: aistack.gpu_node.node_manifest\n"
            "      node_manifest_path: %s\n      node_manifest_apex: {commit: none, wheel_key: none}\n"
            % (folders["node_manifest"] / "manifest.json"))]),
        "driver_twice": counted(folders["driver_twice"], [write(
            folders["driver_twice"], "driver_twice.yml",
            "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
            "    - {name: Decide ahead, ansible.builtin.import_role: {name: aistack.gpu_node.nvidia_driver, tasks_from: preflight}}\n"
            "- hosts: localhost\n  gather_facts: false\n  roles: [aistack.gpu_node.nvidia_driver]\n"
            "- hosts: localhost\n  gather_facts: false\n  roles: [aistack.gpu_node.nvidia_driver]\n")]),
        "driver_and_toolkit": counted(folders["driver_and_toolkit"], [write(
            folders["driver_and_toolkit"], "driver_and_toolkit.yml",
            "- hosts: localhost\n  gather_facts: false\n  roles: [aistack.gpu_node.nvidia_driver, aistack.gpu_node.container_toolkit]\n"),
            "-vvv"]),
    }
    return dict((name, (proc, folders[name], commands[name][0])) for name, proc in run_all(commands).items())


def module_calls(runs, name):
    """One run's ({host: {action: n}}, output), failing with its output where it failed."""
    proc, folder, args = runs[name]
    if proc.returncode != 0:
        pytest.fail("%s exited %d\n--- stdout\n%s\n--- stderr\n%s" % (" ".join(args), proc.returncode, proc.stdout, proc.stderr))
    with open(str(folder / "module_calls.json")) as handle:
        return json.load(handle), proc.stdout


def test_site_reads_the_gpus_once_per_host(runs):
    calls, output = module_calls(runs, "site")
    # Every role that decides on the GPUs ran.
    for role in ("preflight", "nvidia_driver", "conda_env", "apex_build", "jupyter_kernel", "node_manifest", "gpu_validate"):
        assert "TASK [aistack.gpu_node.%s : " % role in output, output
    # Changed on purpose (issue 37 item 7): the preflight reads the GPUs in its one node_facts run inside
    # preflight_plan, so no gpu_facts task runs at all; every role after it reuses ansible_facts.aistack_gpu.
    assert dict((host, (actions.get(GPU_FACTS, 0), actions.get(PREFLIGHT_PLAN))) for host, actions in calls.items()) == {
        "localhost": (0, 1)}, output


def test_the_preflight_reads_the_node_in_one_module_run(runs):
    # site.yml's preflight play: the preflight role's facts, GPUs, container runtimes and free space come from
    # node_facts alone, once (setup, gpu_facts and free_space were three runs), and no later role of the play
    # gathers or reads the GPUs again. (container_toolkit_probe still runs here: this machine has podman.)
    _calls, output = module_calls(runs, "preflight")
    role = output[output.index("TASK [aistack.gpu_node.preflight : "):output.index("TASK [aistack.gpu_node.dcgm : ")]
    ran = re.findall(r"Using module file \S*/([a-z_]+)\.py", output)
    assert re.findall(r"Using module file \S*/([a-z_]+)\.py", role) == ["node_facts"], output
    assert ran.count("node_facts") == 1 and not set(ran) & {"setup", "gpu_facts", "free_space"}, ran


def test_a_role_run_alone_reads_the_gpus_itself(runs):
    calls, output = module_calls(runs, "node_manifest")
    assert calls["localhost"].get(GPU_FACTS) == 1, output


def test_site_decides_and_checks_once_per_host(runs):
    # site.yml's preflight play decides the driver and checks the validation input before any change;
    # the roles reuse that (and the facts it gathered) instead of deciding and checking again.
    calls, output = module_calls(runs, "site")
    assert "TASK [aistack.gpu_node.nvidia_driver : " in output and "TASK [aistack.gpu_node.gpu_validate : " in output, output
    once = ("aistack.gpu_node.nvidia_driver_plan", "aistack.gpu_node.gpu_validation")
    assert dict((action, calls["localhost"].get(action, 0)) for action in once) == dict.fromkeys(once, 1), output
    # No setup at all. Changed on purpose from 2 (issue 37 item 7): the preflight role's facts (min, virtual, python
    # among them) come from its node_facts run; then from 1: node_manifest reads the manifest from that run's local
    # facts (/etc/ansible/facts.d) instead of a setup of its own, and its writes (provision, then gpu_validate's
    # validation) keep node_manifest_recorded, which gpu_validate reads instead of the file.
    assert calls["localhost"].get("ansible.builtin.setup") is None, output


def test_a_later_run_of_the_role_decides_again(runs):
    # The decision of the preflight entry point serves the role's next run only: a second run in the
    # same playbook (another board, other variables) must not inherit it.
    calls, output = module_calls(runs, "driver_twice")
    assert calls["localhost"].get("aistack.gpu_node.nvidia_driver_plan") == 2, output


def test_the_driver_and_container_toolkit_roles_run_alone_read_the_node_facts_in_their_planner(runs):
    # Issue 37 item 7: a role run alone reads the OS facts and the GPUs in one node_facts run inside its planner
    # (nvidia_driver_plan, container_toolkit_plan) instead of a setup task and a gpu_facts task; the second role
    # reads none of them again.
    calls, output = module_calls(runs, "driver_and_toolkit")
    ran = re.findall(r"Using module file \S*/([a-z_]+)\.py", output)
    assert ran.count("node_facts") == 1 and not set(ran) & {"setup", "gpu_facts"}, ran
    assert not set(calls["localhost"]) & {"ansible.builtin.setup", GPU_FACTS}, output
