"""The repository's copies of ../shared equal the originals wherever ../shared is present."""

import filecmp
import os

import pytest

from conftest import SHARED, SHARED_COPIES, SHARED_NOT_COPIED, SHARED_ORIGINAL


@pytest.mark.parametrize("relative", SHARED_COPIES)
def test_copy_equals_the_shared_original(relative):
    original = os.path.join(SHARED_ORIGINAL, relative)
    copy = os.path.join(SHARED, relative)
    assert os.path.exists(copy), "missing copy of ../shared/%s" % relative
    if not os.path.exists(SHARED_ORIGINAL):
        pytest.skip("no ../shared beside this clone: the copies are the reference")
    if os.path.isdir(original):
        comparison = filecmp.dircmp(original, copy)
        left_out = [os.path.basename(p) for p in SHARED_NOT_COPIED if os.path.dirname(p) == relative]
        missing = [name for name in comparison.left_only if name not in left_out]
        assert (missing, comparison.right_only, comparison.diff_files) == ([], [], []), \
            "refresh tests/unit/fixtures/shared/%s from ../shared" % relative
    else:
        assert filecmp.cmp(original, copy, shallow=False), "refresh tests/unit/fixtures/shared/%s from ../shared" % relative


@pytest.mark.parametrize("relative", SHARED_NOT_COPIED)
def test_left_out_files_stay_out(relative):
    assert not os.path.exists(os.path.join(SHARED, relative))
