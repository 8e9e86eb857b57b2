# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The contract every module and action plugin result of the unit tests is held to (conftest)."""

from conftest import result_contract_problems


def test_a_result_without_rc_or_with_rc_zero_keeps_it():
    assert result_contract_problems({"changed": False}) == []
    assert result_contract_problems({"changed": True, "rc": 0}) == []


def test_a_non_zero_rc_needs_failed_set_by_the_module():
    assert result_contract_problems({"rc": 3, "failed": True, "msg": "tuned-adm failed"}) == []
    assert result_contract_problems({"rc": 1, "failed": False}) == []
    (problem,) = result_contract_problems({"rc": 2, "stdout": ""})
    assert problem.startswith("rc=2 without `failed`")


def test_a_returned_deprecation_breaks_it():
    (problem,) = result_contract_problems({"changed": False, "deprecations": [{"msg": "option x", "version": "2.0.0"}]})
    assert "option x" in problem
