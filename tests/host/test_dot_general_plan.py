"""dot_general validation order and lowering (pure; no GPU)."""

import pytest

from tenferro_web.dtypes import DType
from tenferro_web.errors import (
    AxisOutOfBounds,
    AxisRoleConflict,
    DTypeMismatch,
    DuplicateAxis,
    InvalidArgument,
    ShapeMismatch,
    UnsupportedDType,
)
from tenferro_web.layout import ViewLayout, dense_layout
from tenferro_web.planning.dot_general_plan import (
    DotGeneralConfig,
    group_stride,
    plan_dot_general,
)

F32 = DType.F32


def dense(*shape):
    return dense_layout(shape)


def plan(lhs, rhs, lc, rc, lb=(), rb=(), dtypes=(F32, F32)):
    return plan_dot_general(dtypes[0], lhs, dtypes[1], rhs, DotGeneralConfig.of(lc, rc, lb, rb))


def test_output_orders_free_then_batch():
    p = plan(dense(2, 3, 4), dense(3, 5, 4), [1], [0], [2], [2])
    assert p.out_shape == (2, 5, 4)
    assert (p.m, p.n, p.k, p.batch) == (2, 5, 3, 4)


def test_rank_zero_result_of_a_vector_dot():
    p = plan(dense(7), dense(7), [0], [0])
    assert p.out_shape == () and (p.m, p.n, p.k) == (1, 1, 7)


def test_matmul_binds_in_place():
    p = plan(dense(4, 6), dense(6, 5), [1], [0])
    assert p.lhs.pack_perm is None and (p.lhs.row_stride, p.lhs.col_stride) == (1, 4)
    assert p.rhs.pack_perm is None and (p.rhs.row_stride, p.rhs.col_stride) == (1, 6)


def test_transposed_operands_bind_in_place_with_swapped_strides():
    p = plan(dense(6, 4), dense(5, 6), [0], [1])
    assert p.lhs.pack_perm is None and (p.lhs.row_stride, p.lhs.col_stride) == (6, 1)
    assert p.rhs.pack_perm is None and (p.rhs.row_stride, p.rhs.col_stride) == (5, 1)


def test_non_consecutive_free_axes_are_packed():
    # upstream webgpu_dot_general_packs_noncontiguous_lhs_free_axes
    p = plan(dense(2, 3, 2), dense(3, 2), [1], [0])
    assert p.lhs.pack_perm == (0, 2, 1)
    assert (p.lhs.offset, p.lhs.row_stride, p.lhs.col_stride) == (0, 1, 4)
    assert p.out_shape == (2, 2, 2)


def test_contracting_axes_in_reverse_listed_order_are_packed():
    p = plan(dense(3, 4, 5), dense(5, 4), [2, 1], [0, 1])
    assert p.lhs.pack_perm == (0, 2, 1)
    assert p.rhs.pack_perm is None  # rhs contract (0,1) consecutive: k = a + 5*b


def test_batch_first_operands_are_packed_batch_last():
    # numpy's "bij,bjk->bik" on column-major tensors: b is each operand's consecutive axis
    p = plan(dense(3, 4, 5), dense(3, 5, 6), [2], [1], [0], [0])
    assert p.lhs.pack_perm == (1, 2, 0) and p.rhs.pack_perm == (1, 2, 0)
    assert (p.lhs.row_stride, p.lhs.col_stride, p.lhs.batch_stride) == (1, 4, 20)
    # batch-last operands, a batch of one element per matrix, and size-1 batches stay in place
    assert plan(dense(4, 5, 3), dense(5, 6, 3), [1], [0], [2], [2]).lhs.pack_perm is None
    assert plan(dense(3, 1, 1), dense(3, 1, 1), [2], [1], [0], [0]).lhs.pack_perm is None
    assert plan(dense(1, 4, 5), dense(1, 5, 6), [2], [1], [0], [0]).lhs.pack_perm is None


def test_views_with_negative_strides_bind_in_place():
    v = ViewLayout((4, 6), (-1, 4), 3)
    p = plan(v, dense(6, 2), [1], [0])
    assert p.lhs.pack_perm is None
    assert (p.lhs.offset, p.lhs.row_stride, p.lhs.col_stride) == (3, -1, 4)


def test_group_stride_ignores_size_one_axes():
    assert group_stride((3, 1, 4), (1, 99, 3), [0, 1, 2]) == 1
    assert group_stride((3, 1, 4), (1, 99, 4), [0, 2]) is None
    assert group_stride((1, 1), (5, 6), [0, 1]) == 0


def test_flops_count_complex_as_eight():
    p = plan(dense(2, 3), dense(3, 4), [1], [0], dtypes=(DType.C32, DType.C32))
    assert p.flops == 8 * 2 * 3 * 4
    assert plan(dense(2, 3), dense(3, 4), [1], [0]).flops == 2 * 24


@pytest.mark.parametrize("args,error,text", [
    (([2], [0]), AxisOutOfBounds, "lhs_contracting_dims axis 2 is out of bounds for rank 2"),
    (([1], [0], [0], [9]), AxisOutOfBounds, "rhs_batch_dims"),
    (([1, 1], [0, 0]), DuplicateAxis, "axis 1 appears more than once in lhs_contracting_dims"),
    (([1], [0], [1], [1]), AxisRoleConflict, "lhs contracting and lhs batch"),
    (([1], [0, 1]), InvalidArgument, "lhs/rhs contracting dim counts differ (1 vs 2)"),
    (([1], [0], [0], []), InvalidArgument, "batch dim counts differ"),
    (([0], [0]), ShapeMismatch, "ContractedDimensions"),
    (([1], [0], [0], [1]), ShapeMismatch, "IncompatibleShapes"),
])
def test_validation_errors(args, error, text):
    with pytest.raises(error) as info:
        plan(dense(2, 3), dense(3, 4), *args)
    assert text in str(info.value)


def test_validation_order():
    # out of bounds wins over a duplicate in an earlier list
    with pytest.raises(AxisOutOfBounds):
        plan(dense(2, 3), dense(3, 4), [1, 1], [0, 0], [], [7])
    # duplicates win over role conflicts
    with pytest.raises(DuplicateAxis):
        plan(dense(2, 3), dense(3, 4), [1], [0], [1, 1], [0, 0])
    # role conflicts win over count mismatches
    with pytest.raises(AxisRoleConflict):
        plan(dense(2, 3), dense(3, 4), [1], [0, 1], [1], [])
    # count mismatches win over size mismatches
    with pytest.raises(InvalidArgument):
        plan(dense(2, 3), dense(3, 4), [0], [0, 1])


def test_dtype_dispatch_comes_first():
    with pytest.raises(UnsupportedDType, match="F64 on WebGPU"):
        plan(dense(2), dense(3), [7], [7], dtypes=(DType.F64, DType.F64))
    with pytest.raises(DTypeMismatch, match="expected F32, got C32"):
        plan(dense(2), dense(3), [7], [7], dtypes=(F32, DType.C32))
    with pytest.raises(UnsupportedDType, match="BOOL"):
        plan(dense(2), dense(2), [0], [0], dtypes=(DType.BOOL, DType.BOOL))


def test_products_are_checked():
    big = ViewLayout((2**40, 2**40), (1, 2**40), 0)
    with pytest.raises(InvalidArgument, match="product overflow"):
        plan(big, ViewLayout((2**40, 2**40), (1, 2**40), 0), [0], [0])


def test_non_int_axes_are_invalid_arguments():
    with pytest.raises(InvalidArgument):
        DotGeneralConfig.of([1.0], [0])
