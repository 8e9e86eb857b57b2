import json

import pytest

from ansible.module_utils.testing import patch_module_args
from ansible_collections.aistack.gpu_node.plugins.modules import free_space


def run(capsys, args):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exited:
            free_space.main()
    return exited.value.code, json.loads(capsys.readouterr().out)


def test_measures_existing_and_future_paths_in_check_mode(capsys, tmp_path):
    code, result = run(capsys, {"paths": [str(tmp_path), str(tmp_path / "conda")], "_ansible_check_mode": True})
    assert code == 0 and result["changed"] is False
    assert [p["measured_at"] for p in result["paths"]] == [str(tmp_path), str(tmp_path)]
    assert [p["exists"] for p in result["paths"]] == [True, False]
    assert not (tmp_path / "conda").exists()


def test_refuses_relative_paths(capsys):
    code, result = run(capsys, {"paths": ["/opt", "opt/conda"]})
    assert code == 1
    assert result["msg"] == "paths must be absolute: opt/conda"
