"""dev/make_help_check.py: `make help` must list every Makefile target."""

import pathlib
import shutil

import make_help_check
import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _makefile(tmp_path, text):
    makefile = tmp_path / "Makefile"
    makefile.write_text(text)
    return makefile


def test_the_project_makefile_lists_every_target():
    makefile = REPO_ROOT / "Makefile"
    assert make_help_check.missing(makefile) == []
    assert make_help_check.main([str(makefile)]) == 0


def test_a_target_without_a_description_fails(tmp_path, capsys):
    help_rule = (REPO_ROOT / "Makefile").read_text().split("\nhelp: ", 1)[1].split("\n\n", 1)[0]
    makefile = _makefile(tmp_path, ".PHONY: help lint quiet\nVENV := x\nhelp: " + help_rule + "\n\n"
                         "lint: ## the linters\n\t@true\n\nquiet:\n\t@true\n\n$(VENV): lint\n\t@true\n")
    assert make_help_check.missing(makefile) == ["quiet"]
    assert make_help_check.main([str(makefile)]) == 1
    assert "does not list quiet" in capsys.readouterr().err


def test_a_phony_name_without_a_rule_counts_too(tmp_path):
    assert make_help_check.targets(".PHONY: help \\\n\tghost\nhelp: ## list\n") == ["help", "ghost"]
