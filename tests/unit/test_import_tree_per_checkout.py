"""The private tree through which unit tests import the collection is the checkout's own: a second
checkout's `make unit` on the same machine (a fresh clone's `make test` beside a working tree) once
turned the shared link to itself midway, and the clone's tests imported the other checkout's plugins."""

import os
import shutil

import conftest


def test_another_checkout_gets_its_own_tree_and_leaves_this_one_alone(monkeypatch, tmp_path):
    mine = conftest._collection_root()
    link = os.path.join(mine, "ansible_collections", "aistack", "gpu_node")
    other = tmp_path / "other-checkout"
    other.mkdir()
    monkeypatch.setattr(conftest, "REPO_ROOT", str(other))
    theirs = conftest._collection_root()
    try:
        assert theirs != mine
        assert os.path.realpath(os.path.join(theirs, "ansible_collections", "aistack", "gpu_node")) == str(other)
        assert os.path.realpath(link) == os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
    finally:
        if theirs != mine:
            shutil.rmtree(theirs)
