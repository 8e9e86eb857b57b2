# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_manifest's write_section run for real on this machine (connection local), two sections in one
play as site.yml writes them (provision, then validation): once the first write of the run has found
the file in place, a later section already as recorded is not looked at again; one that differs is
written, and a file that drifted is still seen by the first write."""

import json
import os

import pytest

from conftest import recap, run

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the manifest is owned by root:root")


def write_playbook(tmp_path, manifest, second):
    playbook = tmp_path / "sections.yml"
    tasks = []
    for section, content in (("provision", {"driver": "580.159.04"}), ("validation", second)):
        tasks.append(
            "    - name: Section %s\n      ansible.builtin.include_role:\n        name: aistack.gpu_node.node_manifest\n"
            "        tasks_from: write_section\n      vars:\n        node_manifest_path: %s\n"
            "        node_manifest_section: %s\n        node_manifest_content: %s\n"
            % (section, manifest, section, json.dumps(content)))
    playbook.write_text("- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n" + "".join(tasks))
    return playbook


def play(playbook, *args):
    proc = run(["ansible-playbook", "-i", "localhost,", "-e", "ansible_python_interpreter=/usr/bin/python3"]
               + list(args) + [str(playbook)])
    return proc, proc.stdout + proc.stderr


def task_status(output, task):
    """ok, changed or skipping: what the play printed for ``task``."""
    section = output.split("TASK [aistack.gpu_node.node_manifest : %s]" % task, 1)[1]
    return section.split("\n", 2)[1].split(":", 1)[0]


def test_a_later_section_as_recorded_is_not_looked_at_again(tmp_path):
    manifest = tmp_path / "facts.d" / "aistack.fact"
    playbook = write_playbook(tmp_path, manifest, {"status": "passed"})
    proc, output = play(playbook)
    assert recap(proc.stdout)["localhost"]["changed"] == 2, output
    assert json.loads(manifest.read_text()) == {"provision": {"driver": "580.159.04"}, "validation": {"status": "passed"}}

    proc, output = play(playbook)
    assert recap(proc.stdout)["localhost"]["changed"] == 0, output
    assert task_status(output, "Write the node manifest section provision") == "ok", output
    assert task_status(output, "Write the node manifest section validation") == "skipping", output

    # A section that differs is written.
    proc, output = play(write_playbook(tmp_path, manifest, {"status": "failed"}))
    assert task_status(output, "Write the node manifest section validation") == "changed", output
    assert json.loads(manifest.read_text())["validation"] == {"status": "failed"}

    # A file that drifted is seen by the run's first write, in check mode too, and the later one is
    # then compared with the file again.
    os.chmod(str(manifest), 0o600)
    proc, output = play(playbook, "--check")
    assert task_status(output, "Write the node manifest section provision") == "changed", output
    assert task_status(output, "Write the node manifest section validation") == "changed", output
    assert oct(os.stat(str(manifest)).st_mode & 0o777) == "0o600"


def preflight_playbook(tmp_path, manifest, preflight):
    """A run whose preflight read the manifest's folder (as site.yml's node_facts run reads /etc/ansible/facts.d;
    here the test's folder, given as that path), then the provision section written."""
    playbook = tmp_path / "after_preflight.yml"
    playbook.write_text(
        "- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n"
        "    - name: The preflight's reading of the fact folder\n      ansible.builtin.setup:\n"
        "        gather_subset: ['!all', '!min', local]\n        fact_path: %s\n"
        "    - name: The preflight's report\n      ansible.builtin.set_fact:\n        preflight_report: {problems: []}\n"
        "      when: %s\n"
        "    - name: Section provision\n      ansible.builtin.include_role:\n        name: aistack.gpu_node.node_manifest\n"
        "        tasks_from: write_section\n      vars:\n        node_manifest_path: %s\n"
        "        node_manifest_section: provision\n        node_manifest_content: {driver: 580.159.05}\n"
        % (manifest.parent, json.dumps(preflight), manifest))
    return playbook


@pytest.mark.parametrize("preflight", [True, False], ids=["after-preflight", "alone"])
def test_the_manifest_the_preflight_read_in_this_run_is_not_read_again(tmp_path, preflight):
    manifest = tmp_path / "facts.d" / "aistack.fact"
    manifest.parent.mkdir()
    manifest.write_text(json.dumps({"provision": {"driver": "580.159.04"}, "validation": {"status": "passed"}}))
    proc, output = play(preflight_playbook(tmp_path, manifest, preflight),
                        "-e", "__node_manifest_preflight_fact_path=%s" % manifest.parent)
    assert recap(proc.stdout)["localhost"]["changed"] == 1, output
    # Read once in the run either way: by the preflight, else by node_manifest itself.
    assert task_status(output, "Read the recorded node manifest") == ("skipping" if preflight else "ok"), output
    # The other section kept, as that reading had it.
    assert json.loads(manifest.read_text()) == {"provision": {"driver": "580.159.05"}, "validation": {"status": "passed"}}
