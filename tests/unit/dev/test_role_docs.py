"""dev/role_docs.py: Ansible markup in argument specs rendered as Markdown in the role READMEs."""

import pytest
import role_docs


@pytest.mark.parametrize("text, expected", [
    ("C(/etc/conda)", "`/etc/conda`"),
    ("O(numa_tuning_env_prefix)", "`numa_tuning_env_prefix`"),
    ("O(state=absent)", "`state=absent`"),
    ("O(aistack.gpu_node.numa_facts#module:env_prefix)", "`env_prefix`"),
    ("RV(ansible_facts.aistack_numa.plan)", "`ansible_facts.aistack_numa.plan`"),
    ("V(auto)", "`auto`"),
    ("E(CUDA_HOME)", "`CUDA_HOME`"),
    ("I(not) B(never)", "*not* **never**"),
    ("U(https://example.org/a)", "<https://example.org/a>"),
    ("L(the guide, https://example.org/guide)", "[the guide](https://example.org/guide)"),
    ("M(ansible.builtin.apt)", "[`ansible.builtin.apt`](https://docs.ansible.com/ansible/latest/collections/ansible/builtin/apt_module.html)"),
    ("M(aistack.gpu_node.gpu_facts)", "[`aistack.gpu_node.gpu_facts`](../../plugins/modules/gpu_facts.py)"),
    ("P(aistack.gpu_node.preflight#role)", "[`aistack.gpu_node.preflight`](../preflight/README.md)"),
    ("P(aistack.gpu_node.driver_version_compare#filter)",
     "[`aistack.gpu_node.driver_version_compare`](../../plugins/filter/driver_version_compare.yml)"),
    ("P(community.general.foo#module)", "`community.general.foo`"),
    ("HORIZONTALLINE", "<hr>"),
    ("a plain sentence (with parentheses)", "a plain sentence (with parentheses)"),
])
def test_each_markup_renders_as_markdown(text, expected):
    assert role_docs.markdown(text) == expected


def test_semantic_markup_takes_escapes_and_classic_markup_ends_at_the_first_parenthesis():
    # As antsibull-docs reads them: V() unescapes, C() has no escapes and closes at the first ")".
    assert role_docs.markdown(r"V(Python (<name>\))") == "`Python (<name>)`"
    assert role_docs.markdown("C(f()) called") == "`f(`) called"


def test_markup_inside_a_word_is_left_alone():
    assert role_docs.markdown("ABC(x) and fooC(y)") == "ABC(x) and fooC(y)"


def test_the_table_renders_descriptions_defaults_and_choices():
    specs = {"argument_specs": {"main": {"short_description": "Do C(it).", "options": {
        "role_mode": {"type": "str", "default": "auto", "choices": ["auto", "off"],
                      "description": ["Use V(off) to skip | nothing else.", "See O(role_opts.depth)."]},
        "role_opts": {"type": "dict", "required": True, "options": {"depth": {"type": "int", "default": 2}}},
        "role_list": {"type": "list", "elements": "str", "description": "Names."},
    }}, "preflight": {"short_description": "Checks.", "options": None}}}
    specs["argument_specs"]["preflight"]["options"] = specs["argument_specs"]["main"]["options"]
    lines = role_docs.section(specs).splitlines()
    assert lines[0] == role_docs.BEGIN and lines[-1] == role_docs.END
    assert "Do `it`." in lines
    assert ("| `role_mode` | str | `\"auto\"` | Use `off` to skip \\| nothing else. See `role_opts.depth`."
            " Choices: `auto`, `off`. |") in lines
    assert "| `role_opts` | dict | required |  |" in lines
    assert "| `role_opts.depth` | int | `2` |  |" in lines
    assert "| `role_list` | list of str |  | Names. |" in lines
    assert "Takes the variables of the entry point `main`." in lines


def test_render_replaces_only_the_marked_section_and_needs_the_markers():
    specs = {"argument_specs": {"main": {"short_description": "x", "options": {}}}}
    readme = "# Role\n\nHand-written.\n\n%s\nold\n%s\nAfter.\n" % (role_docs.BEGIN, role_docs.END)
    rendered = role_docs.render(readme, specs, "role")
    assert rendered.startswith("# Role\n\nHand-written.\n\n" + role_docs.BEGIN)
    assert rendered.endswith(role_docs.END + "\nAfter.\n") and "old" not in rendered
    with pytest.raises(SystemExit, match="markers are missing"):
        role_docs.render("# Role\n", specs, "role")


def test_defaults_and_argument_specs_must_agree(tmp_path):
    (tmp_path / "defaults").mkdir()
    (tmp_path / "defaults" / "main.yml").write_text(
        "role_a: 1\nrole_b: \"{{ other_fact }}\"\nrole_c: 3\nrole_unspecced: x\n")
    specs = {"argument_specs": {"main": {"options": {
        "role_a": {"type": "int", "default": 1}, "role_b": {"type": "str"}, "role_c": {"type": "int", "default": 4}}}}}
    assert role_docs.default_mismatches(tmp_path, specs) == [
        "%s: role_c defaults to 3 in defaults/main.yml but 4 in meta/argument_specs.yml (main)" % tmp_path.name,
        "%s: role_unspecced has a default but no argument spec" % tmp_path.name,
    ]
