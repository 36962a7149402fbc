"""einsum on WebGPU against numpy.einsum on the same data, inside Pyodide."""

import pytest
from pytest_pyodide import run_in_pyodide

EXPRESSIONS = [
    # (subscripts, shapes)
    ("ij,jk->ik", [(5, 7), (7, 3)]),
    ("ij,jk->ik", [(70, 7), (7, 66)]),                        # GPU tiles (kernels="gpu")
    ("ij,jk", [(5, 7), (7, 3)]),                              # implicit output
    ("ij,jk->ki", [(5, 7), (7, 3)]),                          # folded by swapping operands
    ("ji,kj->ik", [(7, 5), (3, 7)]),                          # transposed inputs, in place
    ("ij,ij->", [(4, 6), (4, 6)]),                            # full contraction to rank 0
    ("i,i", [(9,), (9,)]),
    ("ij,j->i", [(4, 9), (9,)]),
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),                 # batched, needs a transpose
    ("ijb,jkb->ikb", [(4, 5, 3), (5, 2, 3)]),                 # batched, batch last: none
    ("bij,bjk->bik", [(9, 7, 5), (9, 5, 66)]),                # batch first (the batch GEMM)
    ("bhqd,bhkd->bhqk", [(2, 5, 9, 3), (2, 5, 4, 3)]),        # attention's two products,
    ("bhqk,bhkd->bhqd", [(2, 5, 9, 4), (2, 5, 4, 3)]),        # batch first
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (2, 3, 5, 6)]),     # ellipsis batch
    ("...ij,...jk", [(3, 4, 5), (3, 5, 2)]),
    ("Ab,bC->CA", [(3, 4), (4, 5)]),                          # upper-case labels
    ("ij,kl->ijkl", [(2, 3), (4, 5)]),                        # outer product (K = 1)
    ("ij,kl->lkji", [(2, 3), (4, 5)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),                          # Hadamard (batch only)
    ("ij->ji", [(6, 7)]),                                     # single operand: transpose
    ("ijk->kij", [(2, 3, 4)]),
    ("ij", [(3, 4)]),                                         # copy
    ("ixj,jk->ik", [(3, 1, 4), (4, 2)]),                      # size-1 label summed: a view
    ("ij,jk,kl->il", [(10, 30), (30, 2), (2, 20)]),           # matrix chain
    ("ij,jk,kl,lm,mn->in", [(3, 8), (8, 2), (2, 9), (9, 4), (4, 5)]),
    ("abc,cde,efa->bdf", [(2, 3, 4), (4, 3, 2), (2, 5, 2)]),  # triangle network
    ("ia,ib,ic,abc->i", [(6, 2), (6, 3), (6, 4), (2, 3, 4)]),  # hyperedge i
    ("ab,bc,cd,da->", [(3, 4), (4, 5), (5, 6), (6, 3)]),       # ring (trace of a product)
    ("ab,bc,cd,de,ef,fa->", [(2, 3), (3, 2), (2, 4), (4, 2), (2, 3), (3, 2)]),
    ("aij,bjk,ckl,dli->abcd", [(2, 3, 4), (3, 4, 2), (2, 2, 3), (3, 3, 3)]),  # MPS-like ring
    ("ab,bc,cd,de,ef,fg,gh,hi->ai",
     [(2, 3), (3, 4), (4, 2), (2, 3), (3, 2), (2, 4), (4, 3), (3, 2)]),       # 8 operands
    ("pqrs,tuqv,rw,sx,uy,vz->ptwxyz",
     [(2, 3, 2, 2), (2, 2, 3, 2), (2, 3), (2, 2), (2, 3), (2, 2)]),          # 6-operand PEPS-ish
]


@pytest.mark.parametrize("kernels", ["cpu", "gpu"])
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@run_in_pyodide(packages=["tenferro-web"])
async def test_expressions_against_numpy(selenium, dtype, kernels, expressions=EXPRESSIONS):
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime(kernels)
    rng = np.random.default_rng(21)
    for subscripts, shapes in expressions:
        arrays = [tw_testing.sample(rng, s, dtype, integers=True) for s in shapes]
        tensors = [rt.upload(a) for a in arrays]
        got = await (await tw.einsum(subscripts, *tensors)).download()
        want = np.einsum(subscripts, *[a.astype(np.complex128 if dtype == "complex64"
                                                 else np.float64) for a in arrays])
        assert got.shape == want.shape, (subscripts, got.shape, want.shape)
        tw_testing.assert_same(got, want.astype(dtype))
        sync = await tw.einsum_sync(subscripts, *tensors).download()
        tw_testing.assert_same(sync, got)


@run_in_pyodide(packages=["tenferro-web"])
async def test_random_float_data_tolerance_and_explicit_paths(selenium):
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    rng = np.random.default_rng(8)
    a, b, c = (tw_testing.sample(rng, s, np.float32) for s in [(20, 30), (30, 40), (40, 10)])
    ta, tb, tc = rt.upload(a), rt.upload(b), rt.upload(c)
    want = a.astype(np.float64) @ b @ c
    for optimize in ("auto", "optimal", "greedy", [(0, 1), (0, 1)],
                     ["einsum_path", (1, 2), (0, 1)]):
        got = await (await tw.einsum("ij,jk,kl->il", ta, tb, tc, optimize=optimize)).download()
        tw_testing.assert_gemm_close(got, want, 30 * 40, scale=4.0)
    path, plan = tw.einsum_path("ij,jk,kl->il", ta, tb, tc)
    assert path == ["einsum_path", (1, 2), (0, 1)]   # (30x40)(40x10) first is cheaper
    assert plan.flops == 2 * (30 * 40 * 10 + 20 * 30 * 10)


@run_in_pyodide(packages=["tenferro-web"])
async def test_einsum_on_views_and_errors(selenium):
    import numpy as np
    import pytest

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    rng = np.random.default_rng(1)
    base_np = tw_testing.sample(rng, (6, 4), np.float32, integers=True)
    base = rt.upload(base_np)
    rev = base.view((6, 4), (-1, 6), 5)               # rows reversed
    other_np = tw_testing.sample(rng, (4, 3), np.float32, integers=True)
    got = await (await tw.einsum("ij,jk->ik", rev, rt.upload(other_np))).download()
    tw_testing.assert_same(got, (base_np[::-1].astype(np.float64) @ other_np).astype(np.float32))

    with pytest.raises(tw.UnsupportedDType, match="summing label\\(s\\) 'j' runs F32 and C32"):
        tw.einsum_sync("ij->i", rt.upload(np.ones((2, 3), np.int32)))
    with pytest.raises(tw.SubscriptError, match="position 4"):
        await tw.einsum("ij,j?->i", base, base)
    with pytest.raises(tw.UnsupportedDType, match="einsum: does not support dtype F64"):
        await tw.einsum("ij,jk", rt.upload(np.ones((2, 2))), rt.upload(np.ones((2, 2))))
    with pytest.raises(tw.DTypeMismatch):
        await tw.einsum("ij,jk", base, rt.upload(np.ones((4, 2), np.complex64)))
    with pytest.raises(tw.RuntimeStateError, match="upload it first"):
        await tw.einsum("ij,jk", base, np.ones((4, 2), np.float32))
    tw_testing.assert_same(await base.download(), base_np)


@run_in_pyodide(packages=["tenferro-web"])
async def test_all_of_numpys_einsum_and_the_conveniences(selenium):
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    rng = np.random.default_rng(5)
    for dtype in (np.float32, np.complex64):
        wide = np.complex128 if dtype == np.complex64 else np.float64
        a = tw_testing.sample(rng, (4, 4, 3), dtype, integers=True)
        b = tw_testing.sample(rng, (1, 3, 5), dtype, integers=True)
        ta, tb = rt.upload(a), rt.upload(b)
        for spec, ops, hosts in [
            ("iij->j", (ta,), (a,)),                    # a diagonal, summed
            ("ijk->", (ta,), (a,)),                      # a full sum
            ("iik,jkl->ijl", (ta, tb), (a, b)),          # diagonal, broadcast j
            ("...k,...kl->...l", (ta, tb), (a, b)),      # ellipsis broadcasting
        ]:
            got = await (await tw.einsum(spec, *ops)).download()
            tw_testing.assert_same(got, np.einsum(spec, *(h.astype(wide) for h in hosts))
                                   .astype(dtype))
        m = rt.upload(a[:, :, 0].copy())
        tw_testing.assert_same(await (m @ m.T).download(), a[:, :, 0] @ a[:, :, 0].T)
        tw_testing.assert_same(await tw.trace(ta).download(), np.trace(a))
        tw_testing.assert_same(await tw.sum(ta, axis=(0, 2)).download(), a.sum(axis=(0, 2)))
        tw_testing.assert_same(await tw.tensordot(ta, tb, ([2], [1])).download(),
                               np.tensordot(a, b, ([2], [1])))


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@run_in_pyodide(packages=["tenferro-web"])
async def test_sum_trees_with_and_without_subgroups(selenium, dtype):
    """The GPU family's sum_tree on this adapter (subgroupAdd where it offers 'subgroups', as
    SwiftShader does through Chromium and Dawn): full sums in chunks, axis sums of long rows,
    reversed and strided views, exact against numpy on integer data."""
    import numpy as np

    import tenferro_web as tw
    import tw_testing
    from tenferro_web.lowering.einsum import lower_einsum

    rt = await tw_testing.runtime("gpu")
    rng = np.random.default_rng(41)
    data = tw_testing.sample(rng, (130, 2100), dtype, integers=True)
    x = rt.upload(data)
    wide = data.astype(np.complex128 if dtype == "complex64" else np.float64)
    # (views address the column-major buffer: element (i, j) of x at i + 130 j)
    for view, ref in [(x, wide), (x.view((130, 1050), (1, 260), 130), wide[:, 1::2]),
                      (x.view((130, 2100), (1, -130), 130 * 2099), wide[:, ::-1])]:
        for axis in (None, 0, 1):
            got = await tw.sum(view, axis=axis).download()
            want = ref.sum(axis=axis).astype(dtype)
            tw_testing.assert_same(got, np.asarray(want))
    _, plan = tw.einsum_path("ij->", x)
    [program] = [p for p in lower_einsum(rt.device.profile, plan) if p]
    tree = program.ops[0].key
    assert tree.name == "sum_tree", tree
    subgroups = "subgroups" in rt.adapter.features
    assert dict(tree.constants)["SUBGROUPS"] == str(subgroups).lower(), (tree, subgroups)


@run_in_pyodide(packages=["tenferro-web"])
async def test_a_kernel_that_fails_to_compile_fails_its_op_alone(selenium):
    import numpy as np
    import pytest

    import tenferro_web as tw
    from tenferro_web.runtime import pipelines

    rt = await tw.WebGpuRuntime.create()
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = rt.upload(a)
    shipped = pipelines.render
    # Every kernel compiled from here on has a WGSL error (as a driver's bug might make it).
    pipelines.render = lambda key: shipped(key) + "fn broken() -> f32 { return not_defined; }\n"
    try:
        with pytest.raises(tw.BackendFailure, match="gemm.*not_defined"):
            await tw.einsum("ij,kj->ik", t, t)
    finally:
        pipelines.render = shipped
    # Reported once, with the compiler's message; nothing was cached or lost: the operand is
    # intact and the same einsum now compiles and runs.
    np.testing.assert_array_equal(await t.download(), a)
    out = await (await tw.einsum("ij,kj->ik", t, t)).download()
    np.testing.assert_array_equal(out, a @ a.T)
    rt.close()


@run_in_pyodide(packages=["tenferro-web"])
async def test_a_kernel_the_device_rejects_on_first_use_loses_only_the_work_from_it_on(selenium):
    import numpy as np
    import pytest

    import tenferro_web as tw
    from tenferro_web.runtime import pipelines

    rt = await tw.WebGpuRuntime.create()
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = rt.upload(a)
    z = rt.upload(a.astype(np.complex64))
    before = tw.dot_general(t, t, [1], [1])  # its kernel compiles now; still pending
    shipped = pipelines.render
    # Kernels compiled synchronously (dot_general's path) from here on have a WGSL error: the
    # browser hands back a pipeline at once and reports the error later.
    pipelines.render = lambda key: shipped(key) + "fn broken() -> f32 { return not_defined; }\n"
    try:
        bad = tw.dot_general(z, z, [1], [1])  # complex: a new kernel
    finally:
        pipelines.render = shipped
    after = tw.dot_general(bad, z, [1], [0])  # reads what the rejected submit never wrote
    with pytest.raises(tw.BackendFailure, match="rejected.*not_defined"):
        await rt.synchronize()
    # The work enqueued before stays apart from the rejected submit and is intact; the lost
    # tensors raise a typed error on every use, never return what the GPU did not compute.
    np.testing.assert_array_equal(await before.download(), a @ a.T)
    for lost in (bad, after):
        with pytest.raises(tw.BackendFailure, match="contents were lost.*not_defined"):
            await lost.download()
        with pytest.raises(tw.BackendFailure, match="contents were lost"):
            tw.dot_general(lost, lost, [0], [0])
    # The broken kernel was not kept: the same op compiles again and runs.
    want = (a @ a.T).astype(np.complex64)
    np.testing.assert_array_equal(await tw.dot_general(z, z, [1], [1]).download(), want)
    np.testing.assert_array_equal(await z.download(), a.astype(np.complex64))
    rt.close()
