"""Column-major layouts and view validation (upstream TensorLayout::from_parts)."""

import pytest

from tenferro_web.errors import (
    AxisOutOfBounds,
    DuplicateAxis,
    IntegerOverflow,
    InvalidArgument,
    RankMismatch,
    ViewOutOfBounds,
)
from tenferro_web.layout import (
    ISIZE_MAX,
    ViewLayout,
    checked_product,
    compact_strides,
    validate_permutation,
    validate_view,
)


def test_compact_strides_are_column_major():
    assert compact_strides((2, 3, 4)) == (1, 2, 6)
    assert compact_strides(()) == ()
    assert compact_strides((5, 0, 2)) == (1, 5, 0)


def test_checked_product_overflows_like_isize():
    assert checked_product("op", []) == 1
    assert checked_product("op", [2**31, 2**31]) == 2**62
    with pytest.raises(InvalidArgument, match="shape product overflow"):
        checked_product("op", [2**32, 2**32])


def test_reversed_view_from_upstream_is_valid():
    v = validate_view("view", [3], [-1], 2, 3)
    assert v == ViewLayout((3,), (-1,), 2)


@pytest.mark.parametrize("shape,strides,offset,backing,error", [
    ([2, 3], [1], 0, 6, RankMismatch),
    ([2, 3], [1, 2], 1, 6, ViewOutOfBounds),     # reaches element 6
    ([3], [-1], 1, 3, ViewOutOfBounds),          # reaches element -1
    ([0, 3], [1, 2], 7, 6, ViewOutOfBounds),     # empty view: offset must be <= backing
    ([0], [1], -1, 6, ViewOutOfBounds),
    ([2, 2], [2**62, 2**62], 0, 10, IntegerOverflow),
    ([-1], [1], 0, 6, InvalidArgument),
    ([2.0], [1], 0, 6, InvalidArgument),
])
def test_invalid_views(shape, strides, offset, backing, error):
    with pytest.raises(error):
        validate_view("view", shape, strides, offset, backing)


def test_empty_views_only_check_the_offset():
    assert validate_view("view", [0, 5], [10**6, -3], 6, 6).shape == (0, 5)


def test_metadata_transpose_moves_shape_and_strides_together():
    v = ViewLayout((2, 3), (1, 2), 4).permuted("t", [1, 0])
    assert v == ViewLayout((3, 2), (2, 1), 4)


def test_permutation_validation_order_and_numpy_negative_axes():
    assert validate_permutation("t", [-1, 0, 1], 3) == (2, 0, 1)
    with pytest.raises(RankMismatch):
        validate_permutation("t", [0, 1], 3)
    with pytest.raises(AxisOutOfBounds):
        validate_permutation("t", [0, 0, 3], 3)       # bounds before duplicates
    with pytest.raises(DuplicateAxis):
        validate_permutation("t", [0, 2, -1], 3)
    with pytest.raises(InvalidArgument):
        validate_permutation("t", [0, 1.0, 2], 3)


def test_isize_bound():
    assert ISIZE_MAX == 2**63 - 1
