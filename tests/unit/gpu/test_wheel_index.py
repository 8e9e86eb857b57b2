"""tests/gpu/wheel_index.py's pack and unpack (make gpu-carry, run-gpu-scenario): the wheels the host's torch
env has are left out of the carry, the big ones travel xz'ed and come back as wheels with the same files."""

import importlib.util
import os
import zipfile

from conftest import REPO_ROOT

_spec = importlib.util.spec_from_file_location("wheel_index", os.path.join(REPO_ROOT, "tests", "gpu", "wheel_index.py"))
wheel_index = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wheel_index)

FILES = {"jedi/__init__.py": b"x = 1\n" * 4000, "jedi-0.20.1.dist-info/RECORD": b"jedi/__init__.py,,\n"}


def wheel(folder, name, files=None):
    with zipfile.ZipFile(str(folder / name), "w", zipfile.ZIP_DEFLATED) as made:
        for path, data in (files or FILES).items():
            made.writestr(zipfile.ZipInfo(path, (2026, 12, 7, 0, 0, 0)), data)


def test_pack_leaves_out_the_host_repacked_and_xzs_the_big_wheels(tmp_path):
    wheel(tmp_path, "jedi-0.20.1-py2.py3-none-any.whl")
    wheel(tmp_path, "typing_extensions-4.16.0-py3-none-any.whl")
    wheel(tmp_path, "comm-0.2.3-py3-none-any.whl", {"comm/__init__.py": b""})
    left_out, packed = wheel_index.pack(str(tmp_path), ["typing-extensions"], 1000)
    assert left_out == ["typing_extensions-4.16.0-py3-none-any.whl"] and packed == ["jedi-0.20.1-py2.py3-none-any.whl"]
    assert sorted(os.listdir(str(tmp_path))) == ["comm-0.2.3-py3-none-any.whl", "jedi-0.20.1-py2.py3-none-any.whl.xz"]
    first = (tmp_path / "jedi-0.20.1-py2.py3-none-any.whl.xz").read_bytes()
    # The same wheel packs to the same bytes.
    wheel(tmp_path, "jedi-0.20.1-py2.py3-none-any.whl")
    (tmp_path / "jedi-0.20.1-py2.py3-none-any.whl.xz").unlink()
    wheel_index.pack(str(tmp_path), [], 1000)
    assert (tmp_path / "jedi-0.20.1-py2.py3-none-any.whl.xz").read_bytes() == first
    assert wheel_index.unpack(str(tmp_path)) == ["jedi-0.20.1-py2.py3-none-any.whl"]
    with zipfile.ZipFile(str(tmp_path / "jedi-0.20.1-py2.py3-none-any.whl")) as unpacked:
        assert {info.filename: unpacked.read(info) for info in unpacked.infolist()} == FILES
        assert {info.compress_type for info in unpacked.infolist()} == {zipfile.ZIP_STORED}
    # Unpacked once: a second run leaves the wheel as it is.
    assert wheel_index.unpack(str(tmp_path)) == []
