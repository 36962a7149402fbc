"""The numpy-shaped conveniences against numpy on the same data (native lane, both kernel
families, exact on small integers): matmul and ``@``, tensordot, inner, outer, trace, sum,
reduce_sum, ``.T``; views as operands; errors under the public op's name."""

import numpy as np
import pytest

import tenferro_web as tw


@pytest.fixture(scope="module", params=["cpu", "gpu"])
def rt(request):
    runtime = tw.WebGpuRuntime.native(kernels=request.param)
    yield runtime
    runtime.close()


def sample(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.integers(-3, 4, shape)
    return x.astype(dtype)


def same(t, want):
    got = t.download_sync()
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want.astype(got.dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("sa, sb", [
    ((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
    ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (6, 4, 2)), ((1, 3, 4), (7, 4, 2)),
    ((0, 4), (4, 3)), ((3, 0), (0, 2)), ((5, 3, 4), (5, 4, 1)),
])
def test_matmul_and_the_at_operator(rt, sa, sb, dtype):
    a, b = sample(sa, dtype, 1), sample(sb, dtype, 2)
    ta, tb = rt.upload(a), rt.upload(b)
    same(tw.matmul(ta, tb), np.matmul(a, b))
    same(ta @ tb, a @ b)


def test_at_on_views_and_dot_T(rt):
    a = sample((4, 3))
    t = rt.upload(a)
    assert t.T.shape == (3, 4) and t.T.strides == (4, 1)  # a view: no copy
    same(t.T @ t, a.T @ a)
    same(t @ t.T, a @ a.T)
    same(tw.to_contiguous(t.T.T), a)


@pytest.mark.parametrize("sa, sb, axes", [
    ((3, 4, 5), (4, 5, 2), 2), ((3, 4), (4, 5), 1), ((2, 3), (4,), 0),
    ((3, 4, 5), (5, 3, 2), ([0, 2], [1, 0])), ((3, 4), (3, 4), ([-1, 0], [1, 0])),
    ((3, 4), (5, 4), (1, 1)),
])
def test_tensordot(rt, sa, sb, axes):
    a, b = sample(sa, seed=3), sample(sb, seed=4)
    same(tw.tensordot(rt.upload(a), rt.upload(b), axes), np.tensordot(a, b, axes))


@pytest.mark.parametrize("sa, sb", [((4,), (4,)), ((2, 3), (5, 3)), ((2, 3, 4), (4,)),
                                    ((), (3, 2)), ((2, 3), ())])
def test_inner(rt, sa, sb):
    a, b = sample(sa, seed=5), sample(sb, seed=6)
    same(tw.inner(rt.upload(a), rt.upload(b)), np.inner(a, b))


@pytest.mark.parametrize("sa, sb", [((3,), (4,)), ((2, 3), (4,)), ((2, 3), (2, 2)), ((), (3,))])
def test_outer_flattens_in_numpys_order(rt, sa, sb):
    a, b = sample(sa, np.complex64, 7), sample(sb, np.complex64, 8)
    same(tw.outer(rt.upload(a), rt.upload(b)), np.outer(a, b))


@pytest.mark.parametrize("shape, kwargs", [
    ((4, 4), {}), ((3, 5), {}), ((5, 3), {"offset": 1}), ((4, 6), {"offset": 2}),
    ((4, 6), {"offset": -2}), ((3, 3), {"offset": 5}), ((2, 3, 4), {}),
    ((2, 3, 4), {"axis1": 1, "axis2": 2}), ((4, 3, 4), {"axis1": -1, "axis2": 0, "offset": 1}),
])
def test_trace(rt, shape, kwargs):
    a = sample(shape, seed=9)
    same(tw.trace(rt.upload(a), **kwargs), np.trace(a, **kwargs))


def test_trace_of_a_view(rt):
    a = sample((5, 6), seed=10)
    view = rt.upload(a).transpose_view()
    same(tw.trace(view, offset=1), np.trace(a.T, offset=1))


@pytest.mark.parametrize("shape, axis", [
    ((3, 4), None), ((3, 4), 0), ((3, 4), 1), ((3, 4), -1), ((2, 3, 4), (0, 2)),
    ((2, 3, 4), (2, 0)), ((5,), 0), ((), None), ((0, 3), 0), ((0, 3), 1), ((300, 70), None),
])
def test_sum(rt, shape, axis):
    a = sample(shape, seed=11)
    same(tw.sum(rt.upload(a), axis=axis), np.sum(a, axis=axis))
    same(tw.sum(rt.upload(a), axis=axis, keepdims=True), np.sum(a, axis=axis, keepdims=True))


def test_reduce_sum(rt):
    a = sample((2, 3, 4), np.complex64, 12)
    same(tw.reduce_sum(rt.upload(a), [0, 2]), a.sum(axis=(0, 2)))
    same(tw.reduce_sum(rt.upload(a), []), a)
    assert "reduce_sum" not in tw.UNSUPPORTED_OPS


@pytest.mark.parametrize("call, error, words", [
    (lambda t, m: tw.matmul(t, m), tw.ShapeMismatch, "^matmul: shape mismatch"),
    (lambda t, m: tw.matmul(t, t.view((), (), 0)), tw.InvalidArgument,
     "^matmul: invalid argument 'b': a rank-0 operand"),
    (lambda t, m: tw.matmul(t, np.ones((3, 2), np.float32)), tw.RuntimeStateError,
     "^matmul: expected a WebGPU tensor, got host numpy.ndarray; upload it first"),
    (lambda t, m: np.ones((4, 2), np.float32) @ t, tw.RuntimeStateError, "^matmul: .*upload"),
    (lambda t, m: tw.tensordot(t, m, 3), tw.InvalidArgument, "^tensordot: .*3 axes to sum"),
    (lambda t, m: tw.tensordot(t, m, ([0], [0, 1])), tw.InvalidArgument,
     "^tensordot: invalid argument 'axes': 1 axes of a against 2 of b"),
    (lambda t, m: tw.tensordot(t, m, "x"), tw.InvalidArgument, "^tensordot: invalid argument"),
    (lambda t, m: tw.inner(t, m), tw.ShapeMismatch, "^inner: "),
    (lambda t, m: tw.trace(m.view((5,), (1,), 0)), tw.InvalidArgument,
     "^trace: invalid argument 'a': needs at least 2 axes"),
    (lambda t, m: tw.trace(t, axis1=1, axis2=-1), tw.InvalidArgument, "both axis 1"),
    (lambda t, m: tw.trace(t, axis2=2), tw.AxisOutOfBounds, "^trace: axis axis 2 is out"),
    (lambda t, m: tw.sum(t, axis=(0, 0)), tw.DuplicateAxis, "^sum: axis 0 appears more"),
    (lambda t, m: tw.sum(t, axis=1.0), tw.InvalidArgument, "^sum: invalid argument 'axis'"),
    (lambda t, m: tw.sum(t, keepdims=1), tw.InvalidArgument, "'keepdims': 1 is not a bool"),
    (lambda t, m: tw.sum(t.runtime.upload(np.ones(3, np.int32))), tw.UnsupportedDType,
     "^sum: does not support dtype I32"),
    (lambda t, m: tw.reduce_sum(t, [2]), tw.AxisOutOfBounds, "^reduce_sum: "),
    (lambda t, m: tw.outer(t, 3), tw.InvalidArgument, "^outer: invalid argument 'b'"),
])
def test_errors_name_the_public_op_and_lose_nothing(rt, call, error, words):
    a, b = sample((2, 3), seed=13), sample((4, 5), seed=14)
    t, m = rt.upload(a), rt.upload(b)
    with pytest.raises(error, match=words):
        call(t, m)
    same(t, a)
    same(m, b)
