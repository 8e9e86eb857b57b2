"""The scenarios' refusal helper (molecule/resources/tasks/refuse.yml) can fail.

Each test runs the helper on this machine against a throwaway role and a snapshot folder of its
own: a role that accepts everything, one that fails for another reason, one that refuses but
changes a file, and one that refuses properly (the only play that may pass).
"""

import os
import textwrap

import pytest
from conftest import REPO_ROOT, VENV_BIN, recap, run

HELPER = os.path.join(REPO_ROOT, "molecule", "resources", "tasks", "refuse.yml")
# Where the helper keeps the last listing it took on the node (here, this machine).
LISTING = "/run/aistack-refusal-before.txt"

ROLES = {
    # Accepts every input: the helper must fail the play.
    "accepts_all": """
        - name: Do nothing with the input
          ansible.builtin.debug:
            msg: "accepted {{ bad_input }}"
        """,
    # Fails, but not with the expected message.
    "fails_otherwise": """
        - name: Fail for an unrelated reason
          ansible.builtin.fail:
            msg: "the disk is on fire"
        """,
    # Refuses with the expected message, after writing into the snapshot folder.
    "refuses_after_change": """
        - name: Change a managed file first
          ansible.builtin.copy:
            dest: "{{ managed_dir }}/config"
            content: "changed\\n"
            mode: "0644"

        - name: Refuse
          ansible.builtin.fail:
            msg: "bad_input must be a number, got {{ bad_input }}"
        """,
    # Refuses with the expected message, after giving a managed file another owner (same bytes, mode, mtime).
    "refuses_after_chown": """
        - name: Give a managed file to another user
          ansible.builtin.file:
            path: "{{ managed_dir }}/config"
            owner: "1"
            group: "1"

        - name: Refuse
          ansible.builtin.fail:
            msg: "bad_input must be a number, got {{ bad_input }}"
        """,
    # Refuses in a loop item: the task's own message is only "One or more items failed".
    "refuses_in_loop": """
        - name: Check each input
          ansible.builtin.assert:
            that: item is number
            fail_msg: "bad_input must be a number, got {{ item }}"
          loop: ["{{ bad_input }}"]
        """,
    # Refuses before touching anything.
    "refuses": """
        - name: Refuse
          ansible.builtin.fail:
            msg: "bad_input must be a number, got {{ bad_input }}"
        """,
}


@pytest.fixture(name="playbook")
def fixture_playbook(tmp_path):
    """A playbook on localhost that runs the helper against role NAME, snapshotting tmp_path/managed."""
    managed = tmp_path / "managed"
    managed.mkdir()
    (managed / "config").write_text("original\n")
    for name, tasks in ROLES.items():
        (tmp_path / "roles" / name / "tasks").mkdir(parents=True)
        (tmp_path / "roles" / name / "tasks" / "main.yml").write_text("---\n" + textwrap.dedent(tasks))

    def write(role, extra_vars):
        path = tmp_path / ("play-%s.yml" % role)
        text = textwrap.dedent("""\
            - name: Feed {role} a bad input through the refusal helper
              hosts: localhost
              gather_facts: false
              tasks:
                - name: Refuse a string where a number belongs
                  ansible.builtin.include_tasks: {helper}
                  vars:
                    refusal_role: {role}
                    refusal_expect: ["bad_input must be a number", "got seven"]
                    refusal_snapshot_paths: ["{managed}"]
                    managed_dir: "{managed}"
                    bad_input: seven
            """).format(role=role, helper=HELPER, managed=managed)
        path.write_text(text + "".join("        %s: %s\n" % item for item in extra_vars.items()))
        return path

    def play(role, **extra_vars):
        proc = run(["ansible-playbook", "-i", "localhost,", "-c", "local", str(write(role, extra_vars)),
                    "-e", "ansible_python_interpreter=%s" % os.path.join(VENV_BIN, "python")],
                   env={"ANSIBLE_ROLES_PATH": str(tmp_path / "roles")}, check=False)
        return proc, recap(proc.stdout).get("localhost", {})

    return play


@pytest.mark.parametrize("role, messages", [
    # Accepts every input: the sentinel's message must not pass for a refusal.
    ("accepts_all", ["accepts_all accepted an input it must refuse",
                     'accepted an input it must refuse (expected a failure naming ["bad_input must be a number", "got seven"])']),
    ("fails_otherwise", ["fails_otherwise failed without", "the disk is on fire"]),
    ("refuses_after_change", ["refuses_after_change changed the node while refusing", "/managed/config f 644"]),
])
def test_the_play_fails_unless_the_role_refused_as_designed(playbook, role, messages):
    proc, counts = playbook(role)
    assert proc.returncode == 2, proc.stdout
    assert counts["failed"] == 1
    for message in messages:
        assert message in proc.stdout


@pytest.mark.parametrize("role", ["refuses_in_loop", "refuses"])
def test_a_refusal_that_names_the_problem_and_changes_nothing_passes(playbook, role):
    proc, counts = playbook(role)
    assert proc.returncode == 0, proc.stdout
    assert counts["failed"] == 0 and counts["rescued"] == 1


def test_a_reused_listing_still_finds_a_change(playbook):
    """refusal_reuse_listing (bad_inputs' cases one after the other): a run that reuses the listing the run
    before it took after its role lists once, and still finds the change its own role made."""
    first, counts = playbook("refuses")
    assert counts["failed"] == 0, first.stdout
    proc, counts = playbook("refuses_after_change", refusal_reuse_listing="true")
    assert proc.returncode == 2, proc.stdout
    assert counts["failed"] == 1
    before = proc.stdout.split("TASK [Snapshot the managed paths before the refusal]", 1)[1].split("TASK [", 1)[0]
    assert "skipping: [localhost]" in before
    assert "refuses_after_change changed the node while refusing" in proc.stdout
    assert "/managed/config f 644" in proc.stdout


def test_a_reused_listing_that_is_not_there_fails(playbook):
    """refusal_reuse_listing where no run before it left a listing on the node (a case moved first, a node
    made again): diff has nothing to compare, and the helper fails instead of finding no change."""
    if os.path.exists(LISTING):
        os.remove(LISTING)
    proc, counts = playbook("refuses", refusal_reuse_listing="true")
    assert proc.returncode == 2, proc.stdout
    assert counts["failed"] == 1
    assert "no listing of the node from before the role" in proc.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_change_of_owner_is_found(playbook):
    """The listing has each file's owner and group (as numbers): a refusal that only gave a managed
    file to another user fails, naming the file with its new owner."""
    proc, counts = playbook("refuses_after_chown")
    assert proc.returncode == 2, proc.stdout
    assert counts["failed"] == 1
    assert "refuses_after_chown changed the node while refusing" in proc.stdout
    assert "/managed/config f 644 1:1 " in proc.stdout
