"""The preflight role publishes, from its one node_facts run, the very facts ansible.builtin.setup gathers for
gather_subset [min, virtual] on this machine, same keys and values (issue 37 item 7), plus the GPUs and the
container runtimes."""

import json

from conftest import run

# The clock's facts move between two runs; their names and the time zone do not.
MOVING_DATE_TIME = ("date", "day", "epoch", "epoch_int", "hour", "iso8601", "iso8601_basic", "iso8601_basic_short", "iso8601_micro",
                    "minute", "month", "second", "time", "weekday", "weekday_number", "weeknumber", "year")

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.setup:
        gather_subset: [min, virtual]
    - ansible.builtin.copy: {content: "{{ ansible_facts | to_json }}", dest: "%(out)s/setup.json", mode: "0600"}
    - ansible.builtin.meta: clear_facts
    - ansible.builtin.include_role:
        name: aistack.gpu_node.preflight
    - ansible.builtin.copy: {content: "{{ ansible_facts | to_json }}", dest: "%(out)s/preflight.json", mode: "0600"}
"""


def comparable(facts):
    """The facts without the clock's moving values, and the virtualization technologies sorted: ansible-core lists
    them from a set, in an order that changes from one Python process to the next (setup's own runs differ too)."""
    return dict(facts, date_time=dict((name, value) for name, value in facts["date_time"].items() if name not in MOVING_DATE_TIME),
                **dict((name, sorted(facts[name])) for name in ("virtualization_tech_guest", "virtualization_tech_host") if name in facts))


def test_the_preflight_publishes_setups_facts_and_the_gpus_and_runtimes(tmp_path):
    playbook = tmp_path / "facts.yml"
    playbook.write_text(PLAYBOOK % {"out": tmp_path})
    run(["ansible-playbook", "-i", "inventories/local/hosts.yml", str(playbook)])
    by_setup = json.loads((tmp_path / "setup.json").read_text())
    published = json.loads((tmp_path / "preflight.json").read_text())
    gpu, runtimes = published.pop("aistack_gpu"), published.pop("aistack_container_runtimes")
    assert sorted(published) == sorted(by_setup)
    assert sorted(published["date_time"]) == sorted(by_setup["date_time"])
    assert comparable(published) == comparable(by_setup)
    assert gpu["state"] in ("ok", "no_gpu", "gpu_no_driver", "mismatch", "driver_error")
    assert set(runtimes) <= {"docker", "containerd", "podman", "crio"}
