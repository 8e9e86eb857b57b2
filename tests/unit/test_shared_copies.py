"""The repository's copies of ../shared equal the originals wherever ../shared is present."""

import filecmp
import os

import pytest

from conftest import SHARED, SHARED_COPIES, SHARED_ORIGINAL


@pytest.mark.parametrize("relative", SHARED_COPIES)
def test_copy_equals_the_shared_original(relative):
    original = os.path.join(SHARED_ORIGINAL, relative)
    copy = os.path.join(SHARED, relative)
    assert os.path.exists(copy), "missing copy of ../shared/%s" % relative
    if not os.path.exists(SHARED_ORIGINAL):
        pytest.skip("no ../shared beside this clone: the copies are the reference")
    if os.path.isdir(original):
        comparison = filecmp.dircmp(original, copy)
        assert (comparison.left_only, comparison.right_only, comparison.diff_files) == ([], [], []), \
            "refresh tests/unit/fixtures/shared/%s from ../shared" % relative
    else:
        assert filecmp.cmp(original, copy, shallow=False), "refresh tests/unit/fixtures/shared/%s from ../shared" % relative
