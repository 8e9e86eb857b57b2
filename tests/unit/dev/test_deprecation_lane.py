"""dev/deprecation_lane.py: which deprecations are the collection's, from ansible-core 2.21's own output."""

import deprecation_lane

ROOTS = ["/work/co", "/work/co/.cache/collections/ansible_collections/aistack/gpu_node"]

# As ansible-core 2.21 prints them with ANSIBLE_DISPLAY_TRACEBACK=deprecated (tracebacks shortened).
STDERR = """\
[WARNING]: Deprecation warnings can be disabled by setting `deprecation_warnings=False` in ansible.cfg.
[DEPRECATION WARNING]: The `get_deprecation_message` method is deprecated. This feature will be removed from ansible-core \
version 2.23.

Traceback (most recent call last):
  File "/work/co/.cache/collections/ansible_collections/aistack/gpu_node/plugins/action/preflight_plan.py", line 38, in decide
    Display().get_deprecation_message('planted')
  File "/work/co/.cache/matrix/2.21/venv/lib/python3.13/site-packages/ansible/utils/display.py", line 587, in get_deprecation_message
Message: The `get_deprecation_message` method is deprecated.

[DEPRECATION WARNING]: Conditionals should not be surrounded by templating delimiters such as {{ }} or {% %}. This feature \
will be removed from ansible-core version 2.23.
Origin: /work/co/roles/preflight/tasks/main.yml:42:9

[DEPRECATION WARNING]: Old option. This feature will be removed from collection 'community.general' version 12.0.0.

Traceback (most recent call last):
  File "/tmp/ansible_x/payload.zip/ansible_collections/community/general/plugins/modules/thing.py", line 9, in main
Message: Old option.

/work/co/.cache/matrix/2.21/venv/lib/python3.13/site-packages/ansible/_internal/_ssh/_ssh_agent.py:18: CryptographyDeprecationWarning: DSA is deprecated.
  from cryptography.hazmat.primitives.asymmetric.dsa import (
[ERROR]: Task failed.
"""


def test_each_deprecation_block_up_to_the_next_message():
    blocks = deprecation_lane.deprecation_blocks(STDERR)
    assert [deprecation_lane.headline(block)[:35] for block in blocks] == [
        "[DEPRECATION WARNING]: The `get_dep",
        "[DEPRECATION WARNING]: Conditionals",
        "[DEPRECATION WARNING]: Old option. ",
        "/work/co/.cache/matrix/2.21/venv/li",
    ]
    assert "CryptographyDeprecationWarning" not in blocks[2]


def test_the_collection_s_own_code_and_files_are_named_others_are_not():
    collection, others = deprecation_lane.judge([STDERR], [], ROOTS)
    assert [deprecation_lane.headline(text)[23:35] for text in collection] == ["Conditionals", "The `get_dep"]
    assert deprecation_lane.pointer(collection[1], ROOTS).endswith("preflight_plan.py\", line 38, in decide")
    assert deprecation_lane.pointer(collection[0], ROOTS) == "Origin: /work/co/roles/preflight/tasks/main.yml:42:9"
    # A venv under the checkout's .cache is not the collection.
    assert [text[:12] for text in others] == ["/work/co/.ca", "[DEPRECATION"]


def test_a_deprecation_a_task_of_the_collection_brought_about_is_the_collection_s():
    stderr = "[DEPRECATION WARNING]: Using 'yes' for 'follow_redirects' is deprecated. This feature will be removed from ansible-core version 2.22.\n"
    records = [dict(kind="result", action="ansible.builtin.uri", task="preflight : Fetch", task_path="/work/co/roles/preflight/tasks/main.yml:28",
                    deprecations=[dict(msg="Using 'yes' for 'follow_redirects' is deprecated.", deprecator="ansible.builtin.uri")]),
               dict(kind="result", action="ansible.builtin.uri", task="elsewhere", task_path="/srv/other/play.yml:3",
                    deprecations=[dict(msg="Another.", deprecator="ansible.builtin.uri")])]
    collection, others = deprecation_lane.judge([stderr], records, ROOTS)
    assert len(collection) == 1 and "main.yml:28" in collection[0]
    assert others == []


def test_a_failure_inferred_from_rc_is_the_collection_s_when_its_module_is():
    records = [dict(kind="rc_inferred", action="aistack.gpu_node.free_space", rc=2, task="t", task_path="/work/co/site.yml:1"),
               dict(kind="rc_inferred", action="ansible.legacy.raw", rc=1, task="t", task_path="/work/co/site.yml:2")]
    collection, others = deprecation_lane.judge([], records, ROOTS)
    assert collection == ["aistack.gpu_node.free_space returned rc=2 without `failed` (task 't' at /work/co/site.yml:1): "
                          "ansible-core inferred the failure, which 2.22 deprecates"]
    assert len(others) == 1 and others[0].startswith("ansible.legacy.raw returned rc=1")
