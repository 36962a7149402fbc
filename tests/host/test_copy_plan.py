"""The one copy planner shared by transpose, compaction and dot_general packing."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tenferro_web.layout import ViewLayout, dense_layout
from tenferro_web.planning.copy_plan import CopyKind, fuse_axes, plan_copy

dense = dense_layout



def transposed(src, perm):
    """transpose is compaction of the permuted view: the plan the product makes for it."""
    return plan_copy(src.permuted("transpose", perm), "transpose")

def test_identity_collapses_to_a_linear_copy():
    plan = plan_copy(dense((2, 3, 4)))
    assert plan.kind is CopyKind.LINEAR and plan.dims == (24,) and plan.size == 24


def test_rank_24_identity_is_linear():
    assert plan_copy(dense((2,) * 24)).kind is CopyKind.LINEAR


def test_size_one_axes_drop_and_partial_fusion():
    # upstream: src [1,2,100] (here a view) fuses to dims [6,4] with src strides [1,100]
    plan = plan_copy(ViewLayout((2, 3, 1, 4), (1, 2, 999, 100), 0))
    assert plan.dims == (6, 4) and plan.src_strides == (1, 100)
    assert plan.kind is CopyKind.GENERIC


def test_permutations_of_rank_3_and_more_tile_two_groups_of_axes():
    # 64^4 by (3, 1, 0, 2): B is the destination's axis 0 (source axis 3), A the source's
    # fastest of the others (source axis 0, now axis 2); the batch is the other two.
    plan = transposed(dense((64,) * 4), [3, 1, 0, 2])
    assert plan.kind is CopyKind.GROUPED and plan.groups == ((2,), (0,))
    # rank 24 reversed, 2 each: five axes of 2 each side fill a 32 x 32 tile
    plan = transposed(dense((2,) * 24), list(range(24))[::-1])
    assert plan.kind is CopyKind.GROUPED
    assert plan.groups == ((23, 22, 21, 20, 19), (0, 1, 2, 3, 4))


def test_permutations_that_cannot_fill_a_tile_or_need_none_gather_their_elements():
    # the destination's fastest axes are the source's fastest: already consecutive both ways
    assert transposed(dense((64, 8, 8, 8)), [0, 2, 1, 3]).kind is CopyKind.GENERIC
    # the source's fastest axes other than B's hold 16 elements: no tile; 32: a tile of two
    assert transposed(dense((4, 4, 64)), [2, 1, 0]).kind is CopyKind.GENERIC
    plan = transposed(dense((4, 8, 64)), [2, 1, 0])
    assert plan.kind is CopyKind.GROUPED and plan.groups == ((2, 1), (0,))
    assert transposed(dense((3, 5, 7)), [2, 1, 0]).kind is CopyKind.GENERIC


def test_2d_transpose_is_tiled_and_equals_the_view_plan():
    t = transposed(dense((2, 3)), [1, 0])
    v = plan_copy(ViewLayout((3, 2), (2, 1), 0))
    assert t == v and t.kind is CopyKind.TILED and t.dims == (3, 2)


def test_batched_transpose_is_tiled_3d():
    plan = transposed(dense((4, 5, 6)), [1, 0, 2])
    assert plan.kind is CopyKind.TILED and plan.dims == (5, 4, 6)
    assert plan.src_strides == (4, 1, 20)


def test_3d_swap_of_outer_axes_is_generic():
    plan = transposed(dense((4, 5, 6)), [2, 1, 0])
    assert plan.kind is CopyKind.GENERIC


def test_negative_strides_keep_their_offset():
    plan = plan_copy(ViewLayout((3,), (-1,), 2))
    assert plan.kind is CopyKind.GENERIC and plan.src_offset == 2 and plan.src_strides == (-1,)


def test_zero_size_and_rank_zero():
    assert plan_copy(dense((3, 0, 2))).size == 0
    assert plan_copy(dense((3, 0, 2))).kind is CopyKind.LINEAR
    scalar = plan_copy(ViewLayout((), (), 5))
    assert scalar.kind is CopyKind.LINEAR and scalar.size == 1 and scalar.src_offset == 5


def gather(flat, plan):
    """Execute a plan on the host: the kernels' index arithmetic, written independently."""
    out = np.empty(plan.size, flat.dtype)
    for f in range(plan.size):
        rest, index = f, plan.src_offset
        for d, s in zip(plan.dims, plan.src_strides):
            index += (rest % d) * s
            rest //= d
        out[f] = flat[index]
    return out


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_plans_reproduce_numpy_on_random_views(data):
    rank = data.draw(st.integers(0, 4))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    base = np.arange(int(np.prod([s + 3 for s in shape])) * 4 + 8)
    strides = tuple(data.draw(st.integers(-6, 6)) for _ in shape)
    low = sum(min(0, (d - 1) * s) for d, s in zip(shape, strides))
    high = sum(max(0, (d - 1) * s) for d, s in zip(shape, strides))
    offset = data.draw(st.integers(-low, len(base) - 1 - high))
    view = ViewLayout(shape, strides, offset)
    want = np.lib.stride_tricks.as_strided(base[offset:], shape,
                                           [s * base.itemsize for s in strides])
    plan = plan_copy(view)
    np.testing.assert_array_equal(gather(base, plan), want.reshape(-1, order="F"))
    if plan.kind is CopyKind.LINEAR:
        assert plan.src_strides == (1,)


def test_fusion_needs_the_source_to_continue():
    assert fuse_axes((2, 3), (1, 2)) == ((6,), (1,))
    assert fuse_axes((2, 3), (1, 3)) == ((2, 3), (1, 3))
    assert fuse_axes((1, 1), (5, 7)) == ((), ())


@pytest.mark.parametrize("perm", [[0, 1, 2], [2, 0, 1], [1, 2, 0]])
def test_transposes_of_dense_tensors(perm):
    shape = (3, 4, 5)
    base = np.arange(60)
    plan = transposed(dense(shape), perm)
    want = np.transpose(base.reshape(shape, order="F"), perm)
    np.testing.assert_array_equal(gather(base, plan), want.reshape(-1, order="F"))
