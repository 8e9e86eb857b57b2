

from conftest import run_module
from ansible_collections.aistack.gpu_node.plugins.modules import free_space


def test_measures_existing_and_future_paths_in_check_mode(capsys, tmp_path):
    code, result = run_module(free_space, {"paths": [str(tmp_path), str(tmp_path / "conda")], "_ansible_check_mode": True}, capsys)
    assert code == 0 and result["changed"] is False
    assert [p["measured_at"] for p in result["paths"]] == [str(tmp_path), str(tmp_path)]
    assert [p["exists"] for p in result["paths"]] == [True, False]
    assert not (tmp_path / "conda").exists()


def test_refuses_relative_paths(capsys):
    code, result = run_module(free_space, {"paths": ["/opt", "opt/conda"]}, capsys)
    assert code == 1
    assert result["msg"] == "paths must be absolute: opt/conda"
