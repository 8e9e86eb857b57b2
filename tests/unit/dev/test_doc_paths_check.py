"""dev/doc_paths_check.py: no doc names a file outside the repository."""

import doc_paths_check


def test_the_repository_docs_name_no_outside_file():
    assert doc_paths_check.main([]) == 0


def test_the_recorded_outputs_are_not_read():
    names = doc_paths_check.documents()
    assert "README.md" in names and "roles/numa_tuning/meta/argument_specs.yml" in names
    assert not [n for n in names if n.startswith(("tests/unit/fixtures/", "tests/gpu/results/"))]


def test_each_kind_of_outside_reference_is_named(tmp_path):
    text = ("see ../shared/reference/notes.md and `shared/fixtures/x.json`\n"
            "run from /work/main or /root/ansible\n"
            "[up](../../../elsewhere.md)\n")
    found = doc_paths_check.outside_references("docs/page.md", text, root=tmp_path)
    assert [found_at[:2] for found_at in found] == [
        (1, "../shared/reference"), (1, "shared/fixtures"),
        (2, "/work/main"), (2, "/root/ansible"), (3, "../../../elsewhere.md")]


def test_paths_inside_the_repository_and_of_the_node_pass(tmp_path):
    text = ("[gpu_facts](../../plugins/modules/gpu_facts.py), tests/unit/fixtures/shared/reference/x.yml,\n"
            "the node's /var/tmp/aistack-apex-build and /usr/local/libexec/aistack, https://example.org/work/x\n")
    assert doc_paths_check.outside_references("roles/numa_tuning/README.md", text, root=tmp_path) == []


def test_a_failure_names_the_file_and_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "README.md").write_text("fine\nsee ../shared/reference/testing-here.md\n")
    monkeypatch.setattr(doc_paths_check, "ROOT", tmp_path)
    assert doc_paths_check.main(["README.md"]) == 1
    assert "README.md:2: ../shared/reference names the shared folder beside the repository" in capsys.readouterr().err
