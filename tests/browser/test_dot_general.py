"""dot_general on WebGPU against numpy.einsum on the same data, inside Pyodide."""

import pytest
from pytest_pyodide import run_in_pyodide


@run_in_pyodide(packages=["tenferro-web"])
async def test_upstream_vectors(selenium):
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()

    def col(flat, shape):
        return np.asarray(flat, np.float32).reshape(shape, order="F")

    lhs = rt.upload(col([1, 4, 2, 5, 3, 6], (2, 3)))
    rhs = rt.upload(col([7, 9, 11, 8, 10, 12], (3, 2)))
    out = await tw.dot_general(lhs, rhs, [1], [0]).download()
    np.testing.assert_array_equal(out.reshape(-1, order="F"), [58, 139, 64, 154])

    l1 = col([1, 4, 2, 5, 3, 6], (2, 3))
    lb = rt.upload(np.stack([l1, 10 * l1], axis=2))
    r1 = col([7, 9, 11, 8, 10, 12], (3, 2))
    rb = rt.upload(np.stack([r1, 10 * r1], axis=2))  # both operands scale batch 2 by 10
    out = await tw.dot_general(lb, rb, [1], [0], [2], [2]).download()
    assert out.shape == (2, 2, 2)
    np.testing.assert_array_equal(out.reshape(-1, order="F"),
                                  [58, 139, 64, 154, 5800, 13900, 6400, 15400])

    guide = await tw.dot_general(rt.upload(col(range(1, 7), (2, 3))),
                                 rt.upload(col(range(1, 7), (3, 2))), [1], [0]).download()
    np.testing.assert_array_equal(guide.reshape(-1, order="F"), [22, 28, 49, 64])

    # Non-contiguous free axes: lhs [2,3,2] contract [1] is packed on the GPU.
    lhs_flat = np.arange(12, dtype=np.float32) + 1
    rhs_flat = np.arange(6, dtype=np.float32) - 2
    out = await tw.dot_general(rt.upload(col(lhs_flat, (2, 3, 2))),
                               rt.upload(col(rhs_flat, (3, 2))), [1], [0]).download()
    assert out.shape == (2, 2, 2)
    want = [sum(lhs_flat[m0 + 2 * k + 6 * m1] * rhs_flat[k + 3 * n] for k in range(3))
            for n in range(2) for m1 in range(2) for m0 in range(2)]
    np.testing.assert_array_equal(out.reshape(-1, order="F"), want)

    shaped = tw.dot_general(rt.upload(np.ones((2, 3, 4), np.float32)),
                            rt.upload(np.ones((3, 5, 4), np.float32)), [1], [0], [2], [2])
    assert shaped.shape == (2, 5, 4)


KERNELS = ["cpu", "gpu"]  # both kernel families run on every adapter; CI's is a CPU one


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@run_in_pyodide(packages=["tenferro-web"])
async def test_shapes_against_numpy_exactly(selenium, dtype, kernels):
    """Small integer data makes f32 arithmetic exact: results must match bit for bit."""
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime(kernels)
    rng = np.random.default_rng(11)
    cases = [
        ((5, 7), (7, 3), [1], [0], [], []),
        ((7, 5), (7, 3), [0], [0], [], []),
        ((5, 7), (3, 7), [1], [1], [], []),
        ((9,), (9,), [0], [0], [], []),
        ((4, 9), (9,), [1], [0], [], []),
        ((9,), (9, 4), [0], [0], [], []),
        ((3, 4, 5, 2), (5, 4, 6), [2, 1], [0, 1], [], []),
        ((2, 3, 4), (3, 5, 4), [1], [0], [2], [2]),
        ((4, 3, 2), (2, 3, 4, 5), [1], [1], [0, 2], [2, 0]),
        ((3, 1, 5), (5, 1, 2), [2], [0], [1], [1]),
        ((3, 4), (4, 3), [], [], [0, 1], [1, 0]),             # batch only (Hadamard)
        ((2, 3), (3, 2), [0, 1], [1, 0], [], []),             # contraction only (full)
        ((65, 33), (33, 70), [1], [0], [], []),               # odd sizes across tiles
        ((33, 65), (70, 33), [0], [1], [], []),               # both read transposed
        ((70, 9, 3), (9, 66, 3), [1], [0], [2], [2]),         # batched, GPU tiles
        ((129, 3, 64), (3, 130, 64), [1], [0], [2], [2]),     # 128 x 128 tiles, M odd
        ((132, 3, 64), (3, 129, 64), [1], [0], [2], [2]),     # 128 x 128 tiles, M of 4s
        ((130, 20), (20, 3), [1], [0], [], []),               # thin output: blocked on GPUs
        ((1, 1), (1, 1), [1], [0], [], []),
        ((17, 3, 2), (3, 17), [1, 0], [0, 1], [], []),        # scalar-free contraction
    ]
    for ls, rs, lc, rc, lb, rb in cases:
        a = tw_testing.sample(rng, ls, dtype, integers=True)
        b = tw_testing.sample(rng, rs, dtype, integers=True)
        got = await tw.dot_general(rt.upload(a), rt.upload(b), lc, rc, lb, rb).download()
        want = tw_testing.dot_general_ref(a, b, lc, rc, lb, rb).astype(dtype)
        assert got.dtype == np.dtype(dtype)
        tw_testing.assert_same(got, want)


@pytest.mark.parametrize("kernels", KERNELS)
@run_in_pyodide(packages=["tenferro-web"])
async def test_random_shapes_with_float_data(selenium, kernels):
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime(kernels)
    rng = np.random.default_rng(5)
    for trial in range(12):
        dtype = ("float32", "complex64")[trial % 2]
        free_l = list(rng.integers(1, 6, rng.integers(0, 3)))
        free_r = list(rng.integers(1, 6, rng.integers(0, 3)))
        contract = list(rng.integers(1, 6, rng.integers(0, 3)))
        batch = list(rng.integers(1, 4, rng.integers(0, 2)))
        lhs_axes = ["f"] * len(free_l) + ["c"] * len(contract) + ["b"] * len(batch)
        rng.shuffle(lhs_axes)
        # Give each role its axis positions, and the rhs its own shuffled order.
        lshape, rshape, lc, rc, lb, rb = [], [], [], [], [], []
        it_f, it_c, it_b = iter(free_l), iter(range(len(contract))), iter(range(len(batch)))
        c_pos, b_pos = {}, {}
        for role in lhs_axes:
            if role == "f":
                lshape.append(next(it_f))
            elif role == "c":
                i = next(it_c)
                c_pos[i] = len(lshape)
                lshape.append(contract[i])
            else:
                i = next(it_b)
                b_pos[i] = len(lshape)
                lshape.append(batch[i])
        rhs_axes = [("c", i) for i in range(len(contract))] + \
                   [("b", i) for i in range(len(batch))] + [("f", d) for d in free_r]
        order = rng.permutation(len(rhs_axes))
        rc_pos, rb_pos = {}, {}
        for j in order:
            role, v = rhs_axes[j]
            if role == "c":
                rc_pos[v] = len(rshape)
                rshape.append(contract[v])
            elif role == "b":
                rb_pos[v] = len(rshape)
                rshape.append(batch[v])
            else:
                rshape.append(v)
        lc = [c_pos[i] for i in range(len(contract))]
        rc = [rc_pos[i] for i in range(len(contract))]
        lb = [b_pos[i] for i in range(len(batch))]
        rb = [rb_pos[i] for i in range(len(batch))]
        a = tw_testing.sample(rng, tuple(lshape), dtype)
        b = tw_testing.sample(rng, tuple(rshape), dtype)
        got = await tw.dot_general(rt.upload(a), rt.upload(b), lc, rc, lb, rb).download()
        want = tw_testing.dot_general_ref(a, b, lc, rc, lb, rb)
        k = int(np.prod(contract))
        tw_testing.assert_gemm_close(got, want, k)


@pytest.mark.parametrize("kernels", KERNELS)
@run_in_pyodide(packages=["tenferro-web"])
async def test_c32_conjugation_flags(selenium, kernels):
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime(kernels)
    rng = np.random.default_rng(3)
    a = tw_testing.sample(rng, (70, 6, 3), np.complex64, integers=True)
    b = tw_testing.sample(rng, (6, 65, 3), np.complex64, integers=True)
    da, db = rt.upload(a), rt.upload(b)
    for lconj in (False, True):
        for rconj in (False, True):
            for batch in ([], [2]):
                lb, rb = (batch, batch)
                if not batch:
                    la, lbm = a[:, :, 0], b[:, :, 0]
                    ta, tb = rt.upload(la), rt.upload(lbm)
                else:
                    la, lbm, ta, tb = a, b, da, db
                got = await tw.dot_general_with_conj(ta, tb, [1], [0], lb, rb, lconj,
                                                     rconj).download()
                want = tw_testing.dot_general_ref(la, lbm, [1], [0], lb, rb, lconj, rconj)
                tw_testing.assert_same(got, want.astype(np.complex64))
    # F32 ignores the flags (conj is the identity on reals), as upstream.
    x = tw_testing.sample(rng, (3, 4), np.float32, integers=True)
    y = tw_testing.sample(rng, (4, 2), np.float32, integers=True)
    got = await tw.dot_general_with_conj(rt.upload(x), rt.upload(y), [1], [0], [], [], True,
                                         True).download()
    tw_testing.assert_same(got, (x.astype(np.float64) @ y).astype(np.float32))


@pytest.mark.parametrize("kernels", KERNELS)
@run_in_pyodide(packages=["tenferro-web"])
async def test_views_bind_in_place_or_pack_with_negative_strides_and_offsets(selenium, kernels):
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime(kernels)
    rng = np.random.default_rng(9)
    base_np = tw_testing.sample(rng, (6, 8, 3), np.float32, integers=True)
    base = rt.upload(base_np)
    flat = base_np.reshape(-1, order="F")

    def view_np(shape, strides, offset):
        return np.lib.stride_tricks.as_strided(flat[offset:], shape, [4 * s for s in strides])

    other_np = tw_testing.sample(rng, (8, 5), np.float32, integers=True)
    other = rt.upload(other_np)
    views = [
        ((6, 8), (1, 6), 0),          # compact slice: in place
        ((6, 8), (1, 6), 48),         # second batch slice: offset
        ((6, 8), (-1, 6), 5),         # reversed rows: negative stride in place
        ((6, 8), (1, -6), 42),        # reversed columns
        ((3, 8), (2, 6), 1),          # every other row
        ((8, 6), (6, 1), 0),          # transposed view (rows of stride 6)
    ]
    for shape, strides, offset in views:
        v = base.view(shape, strides, offset)
        vn = view_np(shape, strides, offset)
        if shape[1] == 8:
            got = await tw.dot_general(v, other, [1], [0]).download()
            want = vn.astype(np.float64) @ other_np
        else:
            got = await tw.dot_general(other, v, [0], [0]).download()
            want = other_np.T.astype(np.float64) @ vn
        tw_testing.assert_same(got, want.astype(np.float32))
    # A view whose contracted group is not one stride gets packed.
    v = base.view((6, 4, 2), (1, 12, 6), 0)                   # axes (1,2) are (pair, half)
    vn = view_np((6, 4, 2), (1, 12, 6), 0)
    r = tw_testing.sample(rng, (4, 2, 5), np.float32, integers=True)
    got = await tw.dot_general(v, rt.upload(r), [1, 2], [0, 1]).download()
    tw_testing.assert_same(got, np.einsum("mab,abn->mn", vn.astype(np.float64),
                                          r).astype(np.float32))
    # The inputs are untouched.
    tw_testing.assert_same(await base.download(), base_np)


@run_in_pyodide(packages=["tenferro-web"])
async def test_empty_outputs_and_zero_sized_contractions(selenium):
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    out = tw.dot_general(rt.upload(np.ones((0, 3), np.float32)),
                         rt.upload(np.ones((3, 4), np.float32)), [1], [0])
    assert out.shape == (0, 4) and (await out.download()).shape == (0, 4)
    # Beyond upstream (which refuses): K == 0 with a non-empty output is a sum of nothing.
    for dtype in (np.float32, np.complex64):
        out = await tw.dot_general(rt.upload(np.ones((3, 0), dtype)),
                                   rt.upload(np.ones((0, 2), dtype)), [1], [0]).download()
        tw_testing.assert_same(out, np.zeros((3, 2), dtype))
    # A pooled buffer full of old data must still come back as zeros.
    junk = rt.upload(np.full((5, 5), 7.0, np.float32))
    del junk
    await rt.synchronize()
    out = await tw.dot_general(rt.upload(np.ones((5, 0), np.float32)),
                               rt.upload(np.ones((0, 5), np.float32)), [1], [0]).download()
    tw_testing.assert_same(out, np.zeros((5, 5), np.float32))


@run_in_pyodide(packages=["tenferro-web"])
async def test_validation_order_and_error_kinds(selenium):
    import numpy as np
    import pytest

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    a = rt.upload(np.ones((2, 3), np.float32))
    b = rt.upload(np.ones((3, 4), np.float32))
    dg = tw.dot_general
    with pytest.raises(tw.AxisOutOfBounds, match="dot_general: lhs_contracting_dims axis 2"):
        dg(a, b, [2], [0])
    with pytest.raises(tw.AxisOutOfBounds, match="rhs_batch_dims"):
        dg(a, b, [1], [0], [0], [5])
    with pytest.raises(tw.DuplicateAxis, match="lhs_contracting_dims"):
        dg(a, b, [1, 1], [0, 0])
    with pytest.raises(tw.AxisRoleConflict, match="lhs contracting and lhs batch"):
        dg(a, b, [1], [0], [1], [0])
    with pytest.raises(tw.InvalidArgument, match="contracting dim counts differ"):
        dg(a, b, [1], [])
    with pytest.raises(tw.ShapeMismatch, match="ContractedDimensions"):
        dg(a, b, [0], [0])
    with pytest.raises(tw.ShapeMismatch, match="IncompatibleShapes"):
        dg(a, rt.upload(np.ones((3, 3), np.float32)), [1], [0], [0], [1])
    # Bounds are checked before duplicates, duplicates before conflicts, conflicts before
    # counts, counts before sizes.
    with pytest.raises(tw.AxisOutOfBounds):
        dg(a, b, [1, 1, 9], [0])
    with pytest.raises(tw.DuplicateAxis):
        dg(a, b, [1, 1], [0], [1], [])
    with pytest.raises(tw.AxisRoleConflict):
        dg(a, b, [1], [0, 1], [1], [])
    with pytest.raises(tw.InvalidArgument):
        dg(a, b, [0], [0, 1])
    # dtype dispatch comes first of all.
    f64 = rt.upload(np.ones((2, 3), np.float64))
    with pytest.raises(tw.UnsupportedDType, match="^dot_general: does not support dtype "
                                                  "F64 on WebGPU"):
        dg(f64, rt.upload(np.ones((3, 4), np.float64)), [7], [7])
    with pytest.raises(tw.UnsupportedDType, match="C64"):
        dg(rt.upload(np.ones(3, np.complex128)), rt.upload(np.ones(3, np.complex128)), [0], [0])
    with pytest.raises(tw.UnsupportedDType, match="I32.*integer and bool products"):
        dg(rt.upload(np.ones(3, np.int32)), rt.upload(np.ones(3, np.int32)), [0], [0])
    with pytest.raises(tw.DTypeMismatch, match="expected F32, got C32"):
        dg(a, rt.upload(np.ones((3, 4), np.complex64)), [1], [0])
    # Residency is checked only after the plan: a host array with a bad config is a
    # validation error, with a good one a runtime-state error naming the fix.
    with pytest.raises(tw.AxisOutOfBounds):
        dg(np.ones((2, 3), np.float32), b, [4], [0])
    with pytest.raises(tw.RuntimeStateError, match="got host numpy.ndarray; upload it first"):
        dg(np.ones((2, 3), np.float32), b, [1], [0])
    with pytest.raises(tw.InvalidArgument, match="expected a tenferro_web Tensor"):
        dg([[1.0]], b, [1], [0])
    for err in (tw.AxisOutOfBounds, tw.ShapeMismatch, tw.DTypeMismatch):
        assert issubclass(err, tw.ValidationError)
    # Nothing was lost on the way.
    np.testing.assert_array_equal(await a.download(), np.ones((2, 3)))


@run_in_pyodide(packages=["tenferro-web"])
async def test_foreign_domain_is_refused(selenium):
    import numpy as np
    import pytest

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    other = await tw.WebGpuRuntime.create()
    try:
        a = rt.upload(np.ones((2, 3), np.float32))
        b = other.upload(np.ones((3, 2), np.float32))
        with pytest.raises(tw.ForeignDomain, match="ForeignDomain") as info:
            tw.dot_general(a, b, [1], [0])
        assert info.value.expected == rt.allocation_domain
        assert info.value.actual == other.allocation_domain
        assert isinstance(info.value, tw.HostAccessError)
        assert info.value.kind is tw.ErrorKind.RUNTIME_STATE
    finally:
        other.close()


@pytest.mark.parametrize("kernels", KERNELS)
@run_in_pyodide(packages=["tenferro-web"])
async def test_long_contractions_split_k_and_huge_grids(selenium, kernels):
    import numpy as np
    import pytest

    import tenferro_web as tw
    import tw_testing
    from tenferro_web.layout import dense_layout
    from tenferro_web.lowering.gemm import split_k_chunks
    from tenferro_web.planning.dot_general_plan import DotGeneralConfig, plan_dot_general

    rt = await tw_testing.runtime(kernels)
    rng = np.random.default_rng(17)
    # Small outputs with long K take the split-K path (partial products, then a reduction).
    for dtype in (np.float32, np.complex64):
        for ls, rs in [((100_003,), (100_003,)), ((3, 20_000), (20_000, 2))]:
            a = tw_testing.sample(rng, ls, dtype, integers=True)
            b = tw_testing.sample(rng, rs, dtype, integers=True)
            lc = [len(ls) - 1]
            got = await tw.dot_general(rt.upload(a), rt.upload(b), lc, [0]).download()
            want = tw_testing.dot_general_ref(a, b, lc, [0]).astype(dtype)
            tw_testing.assert_same(got, want)
    p = plan_dot_general(tw.DType.F32, dense_layout((100_003,)), tw.DType.F32,
                         dense_layout((100_003,)), DotGeneralConfig.of([0], [0]))
    assert split_k_chunks(p)[0] > 1
    # 70 000 tiny batched products: more workgroups than one grid dimension allows (65 535).
    a = tw_testing.sample(rng, (2, 3, 70_000), np.float32, integers=True)
    b = tw_testing.sample(rng, (3, 2, 70_000), np.float32, integers=True)
    got = await tw.dot_general(rt.upload(a), rt.upload(b), [1], [0], [2], [2]).download()
    tw_testing.assert_same(got, np.einsum("ikb,kjb->ijb", a.astype(np.float64), b
                                          ).astype(np.float32))
    x = tw_testing.sample(rng, (2, 2, 70_000), np.float32, integers=True)
    tw_testing.assert_same(await tw.transpose(rt.upload(x), [1, 0, 2]).download(),
                           np.transpose(x, [1, 0, 2]))
    # An output past the adapter's binding limit is refused before anything is allocated.
    big = rt.upload(np.ones((40_000, 1), np.float32))
    with pytest.raises(tw.LimitExceeded, match="maxStorageBufferBindingSize") as info:
        tw.dot_general(big, rt.upload(np.ones((1, 40_000), np.float32)), [1], [0])
    assert info.value.requested == 40_000 * 40_000 * 4
    assert info.value.maximum == rt.adapter.limits["maxStorageBufferBindingSize"]
    np.testing.assert_array_equal(await big.download(), np.ones((40_000, 1)))


@pytest.mark.parametrize("kernels", KERNELS)
@run_in_pyodide(packages=["tenferro-web"])
async def test_aligned_operands_with_ragged_edges(selenium, kernels):
    """Aligned column-major f32 operands take 16-byte loads on GPUs; every group of 4 that
    crosses the edge of M, N or K must fall back to element loads and zeros."""
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime(kernels)
    rng = np.random.default_rng(23)
    a_np = tw_testing.sample(rng, (72, 36, 2), np.float32, integers=True)
    b_np = tw_testing.sample(rng, (36, 132, 2), np.float32, integers=True)
    a, b = rt.upload(a_np), rt.upload(b_np)
    for m, k, n, off_a, off_b in [(70, 34, 130, 0, 0), (72, 36, 132, 0, 0),
                                  (65, 33, 129, 4, 36 * 4), (68, 17, 66, 72 * 36, 0)]:
        va = a.view((m, k), (1, 72), off_a)
        vb = b.view((k, n), (1, 36), off_b)
        fa = a_np.reshape(-1, order="F")
        fb = b_np.reshape(-1, order="F")
        want_a = np.lib.stride_tricks.as_strided(fa[off_a:], (m, k), (4, 4 * 72))
        want_b = np.lib.stride_tricks.as_strided(fb[off_b:], (k, n), (4, 4 * 36))
        got = await tw.dot_general(va, vb, [1], [0]).download()
        tw_testing.assert_same(got, (want_a.astype(np.float64) @ want_b).astype(np.float32))
    got = await tw.dot_general(a, b, [1], [0], [2], [2]).download()
    tw_testing.assert_same(got, np.einsum("mkb,knb->mnb", a_np.astype(np.float64),
                                          b_np).astype(np.float32))


@run_in_pyodide(packages=["tenferro-web"])
async def test_kernel_timer_separates_gpu_time_from_host_time(selenium):
    """kernel_timer on the adapter's 'timestamp-query' (SwiftShader and Dawn offer it): each
    dispatch inside the block named and timed in a pass of its own (a submit of two is two
    entries), within the host's clock; results unchanged."""
    import time

    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime("gpu")
    assert "timestamp-query" in rt.adapter.features, rt.adapter.features
    rng = np.random.default_rng(31)
    a_np = tw_testing.sample(rng, (96, 80), np.float32, integers=True)
    b_np = tw_testing.sample(rng, (80, 72), np.float32, integers=True)
    a, b = rt.upload(a_np), rt.upload(b_np)
    await rt.synchronize()
    start = time.perf_counter()
    async with rt.kernel_timer() as timer:
        c = tw.dot_general(a, b, [1], [0])
        got = await c.download()  # one dispatch, then the staging copy
        d = tw.transpose(c)  # these two are submitted together, at the end
        e = tw.dot_general(d, c, [1], [0])
    wall = time.perf_counter() - start
    assert [name for name, _ in timer.kernels] == ["gemm_tiled", "transpose_tiled",
                                                   "gemm_tiled"], timer.kernels
    assert all(seconds > 0 for _, seconds in timer.kernels), timer.kernels
    assert timer.seconds <= wall, (timer.seconds, wall)
    assert set(timer.by_kernel()) == {"gemm_tiled", "transpose_tiled"}, timer.by_kernel()
    want = (a_np.astype(np.float64) @ b_np).astype(np.float32)
    tw_testing.assert_same(got, want)
    tw_testing.assert_same(await d.download(), got.T)
    tw_testing.assert_same(await e.download(),
                           (want.T.astype(np.float64) @ want).astype(np.float32))


@run_in_pyodide(packages=["tenferro-web"])
async def test_bind_groups_are_reused_over_the_same_buffers_and_dropped_with_them(selenium):
    """js/bridge.mjs keeps a dispatch's bind group while its buffers live (params at a dynamic
    offset): the same operands into a pooled output reuse it; a destroyed buffer's groups go."""
    import numpy as np
    from pyodide.code import run_js

    import tenferro_web as tw

    count = run_js("""(ctx) => {
      const create = ctx.device.createBindGroup.bind(ctx.device);
      ctx.created = 0;
      ctx.device.createBindGroup = (d) => { ctx.created += 1; return create(d); };
      const live = (group) => group.ids.every((id) => ctx.buffers.has(id));
      return () => [ctx.created, ctx.bindGroups.size, [...ctx.bindGroups.values()].every(live)];
    }""")
    rng = np.random.default_rng(7)
    a = rng.integers(-4, 5, (70, 9)).astype(np.float32)
    bs = [rng.integers(-4, 5, (9, n)).astype(np.float32) for n in (66, 130, 260, 520)]
    for pool in (256 << 20, 0):
        rt = await tw.WebGpuRuntime.create(kernels="gpu", storage_pool_bytes=pool)
        counter = count(rt.device.transport._ctx)
        da, db = rt.upload(a), rt.upload(bs[0])
        seen = []
        for b in ([bs[0]] * 4 if pool else bs):
            out = tw.dot_general(da, db if pool else rt.upload(b), [1], [0])
            np.testing.assert_array_equal(await out.download(), a @ b)
            del out
            created, cached, live_only = counter().to_py()
            assert live_only
            seen.append((created, cached))
        if pool:  # the pool hands the same buffers back: the same groups serve
            assert seen[0][0] == seen[-1][0] > 0
        else:  # new buffers each time; the groups of destroyed ones are dropped
            assert [c for c, _ in seen] == sorted({c for c, _ in seen})
            assert seen[-1][1] < seen[-1][0]
        rt.close()
