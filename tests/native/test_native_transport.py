"""Native lane: the same runtime, kernels and command streams through wgpu-native (the `wgpu`
package) on Mesa's lavapipe Vulkan driver. This is the transport the real-GPU benchmark uses, so
CI checks it against numpy even though CI has no GPU."""

import numpy as np
import pytest

import tenferro_web as tw


@pytest.fixture(scope="module", params=["cpu", "gpu"])
def rt(request):
    runtime = tw.WebGpuRuntime.native(kernels=request.param)
    assert runtime.adapter.context == "native" and runtime.adapter.device, runtime.adapter
    yield runtime
    runtime.close()


def ints(rng, shape, dtype):
    data = rng.integers(-4, 5, shape).astype(np.float64)
    if np.dtype(dtype).kind == "c":
        data = data + 1j * rng.integers(-4, 5, shape)
    return data.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_dot_general_matches_numpy_exactly(rt, dtype):
    rng = np.random.default_rng(0)
    for ls, rs, lc, rc, lb, rb in [((130, 70), (70, 129), [1], [0], [], []),
                                   ((70, 130), (129, 70), [0], [1], [], []),
                                   ((66, 9, 3), (9, 70, 3), [1], [0], [2], [2]),
                                   ((132, 68), (68, 130), [1], [0], [], []),  # 16-byte loads
                                   ((9,), (9, 4), [0], [0], [], [])]:
        a, b = ints(rng, ls, dtype), ints(rng, rs, dtype)
        got = tw.dot_general(rt.upload(a), rt.upload(b), lc, rc, lb, rb).download_sync()
        wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
        letters = "abcdefgh"
        ls_l, rs_l = [None] * len(ls), [None] * len(rs)
        sym = iter(letters)
        for x, y in [*zip(lc, rc), *zip(lb, rb)]:
            ls_l[x] = rs_l[y] = next(sym)
        lf = [x for x in range(len(ls)) if ls_l[x] is None]
        rf = [y for y in range(len(rs)) if rs_l[y] is None]
        for x in lf:
            ls_l[x] = next(sym)
        for y in rf:
            rs_l[y] = next(sym)
        out = "".join([ls_l[x] for x in lf] + [rs_l[y] for y in rf] + [ls_l[x] for x in lb])
        want = np.einsum(f"{''.join(ls_l)},{''.join(rs_l)}->{out}", a.astype(wide), b)
        np.testing.assert_array_equal(got, want.astype(dtype))


@pytest.mark.parametrize("dtype, tiles", [
    (np.float32, (8, 4, 16, 1)), (np.float32, (4, 8, 16, 1)), (np.float32, (16, 8, 8, 1)),
    (np.float32, (8, 8, 8, 1, True)), (np.float32, (4, 4, 16, 2, True)),
    (np.float32, (8, 4, 16, 1, True)),
    (np.complex64, (8, 4, 8, 1)), (np.complex64, (4, 8, 8, 1)), (np.complex64, (8, 8, 8, 1)),
])
def test_every_register_block_shape_of_gemm_tiled(dtype, tiles, monkeypatch):
    """gemm_tiled takes TM x TN blocks of any whole-vector shape, with scalar or 16-byte
    stores of C (bench/gemm_sweep.py times them); the table ships square blocks and scalar
    stores, so the others are checked here (M a multiple of 4 or not, at the tiles' edges)."""
    from tenferro_web.lowering import gemm

    scalar = "c32" if dtype == np.complex64 else "f32"
    for big in (True, False):
        monkeypatch.setitem(gemm.GPU_TILES, (scalar, big), (gemm.Tiles(*tiles),))
    tw.api.forget_programs()
    rt = tw.WebGpuRuntime.native(kernels="gpu")
    rng = np.random.default_rng(1)
    try:
        for m, n, k in [(130, 70, 37), (64, 200, 9), (257, 129, 100), (132, 70, 37)]:
            for order in ("F", "C"):
                a = np.asarray(ints(rng, (m, k), dtype), order=order)
                b = np.asarray(ints(rng, (k, n), dtype), order=order)
                got = tw.dot_general(rt.upload(a), rt.upload(b), [1], [0]).download_sync()
                wide = np.complex128 if dtype == np.complex64 else np.float64
                np.testing.assert_array_equal(got, (a.astype(wide) @ b).astype(dtype))
    finally:
        rt.close()
        tw.api.forget_programs()


@pytest.mark.parametrize("tiles, rows", [(2, 8), (4, 2), (3, 1), (8, 2)])
def test_every_transpose_tiling_of_transpose_tiled(tiles, rows, monkeypatch):
    """transpose_tiled takes any number of tiles per workgroup (bench/copy_sweep.py times
    them); the table ships one, so the others are checked here, at the matrices' edges too."""
    from tenferro_web.lowering import copy

    for itemsize in (4, 8):
        monkeypatch.setitem(copy.TRANSPOSE_TILINGS, itemsize, copy.Tiling(tiles, rows))
    tw.api.forget_programs()
    rt = tw.WebGpuRuntime.native(kernels="gpu")
    rng = np.random.default_rng(3)
    try:
        for dtype in (np.float32, np.complex64):
            for shape, perm in (((70, 300), (1, 0)), ((33, 40, 3), (1, 0, 2)),
                                ((64, 1000), (1, 0))):
                x = ints(rng, shape, dtype)
                t = rt.upload(x)
                got = tw.transpose(t, perm)
                assert "transpose_tiled" in {o.key.name for o in copy.lower_copy(
                    "transpose", rt.device.profile, t.layout.permuted("transpose", perm),
                    got.dtype).launches}
                np.testing.assert_array_equal(got.download_sync(), np.transpose(x, perm))
    finally:
        rt.close()
        tw.api.forget_programs()


def test_a_changed_kernel_table_takes_effect_after_forget_programs(monkeypatch):
    """A repeated call reuses its program (by call signature), so a changed table reaches it
    only through forget_programs(): what every sweep relies on."""
    from tenferro_web.lowering import gemm

    def tiles_used() -> set[int]:
        return {int(dict(o.key.constants)["TM"]) for program, *_ in tw.api._DOT_PROGRAMS.values()
                for o in program.launches if o.key.name == "gemm_tiled"}

    rt = tw.WebGpuRuntime.native(kernels="gpu")
    try:
        a = rt.upload(np.ones((256, 256), np.float32))
        tw.api.forget_programs()
        tw.dot_general(a, a, [1], [0])
        assert tiles_used() == {4}  # a small output's 64 x 64 tiles
        for big in (True, False):
            monkeypatch.setitem(gemm.GPU_TILES, ("f32", big), (gemm.Tiles(8, 8, 8, 1),))
        tw.dot_general(a, a, [1], [0])
        assert tiles_used() == {4}  # the kept program
        tw.api.forget_programs()
        np.testing.assert_array_equal(tw.dot_general(a, a, [1], [0]).download_sync(),
                                      np.full((256, 256), 256, np.float32))
        assert tiles_used() == {8}
    finally:
        rt.close()
        tw.api.forget_programs()


def test_copies_and_einsum(rt):
    rng = np.random.default_rng(1)
    x = ints(rng, (40, 33, 3), np.float32)
    t = rt.upload(x)
    np.testing.assert_array_equal(tw.transpose(t, [1, 0, 2]).download_sync(),
                                  np.transpose(x, [1, 0, 2]))
    view = t.view((20, 33), (-2, 40), 39)
    np.testing.assert_array_equal(tw.to_contiguous(view).download_sync(), x[::-2, :, 0])
    mask = rt.upload(x > 0)
    np.testing.assert_array_equal(tw.transpose(mask).download_sync(), np.transpose(x > 0))
    a, b, c = (ints(rng, s, np.float32) for s in [(10, 30), (30, 4), (4, 20)])
    got = tw.einsum_sync("ij,jk,kl->li", rt.upload(a), rt.upload(b), rt.upload(c))
    np.testing.assert_array_equal(got.download_sync(),
                                  np.einsum("ij,jk,kl->li", a, b, c).astype(np.float32))


def test_transfers_of_every_dtype(rt):
    rng = np.random.default_rng(2)
    for dtype in (np.float32, np.float64, np.int32, np.int64, np.bool_, np.complex64,
                  np.complex128):
        host = (rng.random((5, 3, 2)) * 100).astype(dtype)
        np.testing.assert_array_equal(rt.upload(host).download_sync(), host)


def test_downloads_larger_than_the_native_transport_keeps_free_their_staging_buffer(rt):
    from tenferro_web.runtime.buffers import buffer_capacity

    pool = rt.device.buffers
    kept = rt.device.transport.largest_kept_staging
    for elements in (kept // 8, kept // 2):  # half the limit, then twice it (f32)
        host = np.arange(elements, dtype=np.float32)
        np.testing.assert_array_equal(rt.upload(host).download_sync(), host)
        capacities = set(pool.staging.values())
        assert max(capacities) <= kept
        assert (buffer_capacity(host.nbytes, pool.profile.max_buffer) in capacities) == \
            (host.nbytes <= kept), (host.nbytes, capacities)


def test_row_major_uploads_are_reordered_on_the_host_when_small_and_on_the_gpu_when_large(rt):
    from tenferro_web.runtime.device import HOST_REORDER_ELEMENTS

    rng = np.random.default_rng(3)
    rows = HOST_REORDER_ELEMENTS // 64
    executed = []
    real = rt.device.execute
    rt.device.execute = lambda *args: executed.append(args[0]) or real(*args)
    try:
        for dtype in (np.float32, np.int32, np.complex64, np.bool_, np.float64):
            for shape, on_gpu in [((rows, 64), False), ((rows + 1, 64), True),
                                  ((2, rows // 2 + 1, 64), True)]:
                host = (rng.random(shape) * 100).astype(dtype)
                executed.clear()
                t = rt.upload(host)
                assert executed == (["upload"] if on_gpu and dtype != np.float64 else []), \
                    (dtype, shape)  # f64 has no copy kernel: always on the host
                np.testing.assert_array_equal(t.download_sync(), host)
    finally:
        del rt.device.execute


def test_numpy_valid_arguments_and_bad_host_data(rt):
    rng = np.random.default_rng(3)
    a, b = ints(rng, (3, 4), np.float32), ints(rng, (4, 5), np.float32)
    got = tw.dot_general(rt.upload(a), rt.upload(b), [np.int64(1)], [np.int32(0)]).download_sync()
    np.testing.assert_array_equal(got, a.astype(np.float64) @ b)
    with pytest.raises(tw.InvalidArgument, match="cannot make a regular array"):
        rt.upload([[1.0, 2.0], [3.0]])
    t = rt.upload(a)
    with pytest.raises(tw.InvalidArgument, match="'strides': 1.5"):
        t.view((2, 2), (1.5, 3), 0)
    with pytest.raises(tw.InvalidArgument, match="'offset': None"):
        t.view((2, 2), (1, 3), None)
    np.testing.assert_array_equal(t.download_sync(), a)  # nothing was lost on the way


def test_large_ops_are_submitted_at_once_and_small_ones_in_streams_of_bounded_length():
    """SUBMIT_WORKGROUPS: a stream of a few small ops stays one submit; one with many
    workgroups goes to the GPU at once, so it runs while Python enqueues the next ops; the
    streams after it grow by SUBMIT_GROWTH until a barrier. MAX_PENDING_DISPATCHES: a long
    chain of small ops goes in streams of that many dispatches."""
    from tenferro_web.runtime.device import MAX_PENDING_DISPATCHES, SUBMIT_GROWTH

    rt = tw.WebGpuRuntime.native(kernels="gpu")
    transport = rt.device.transport
    rng = np.random.default_rng(3)
    a, b = ints(rng, (8, 8), np.float32), ints(rng, (8, 8), np.float32)
    x, y = ints(rng, (4096, 4), np.float32), ints(rng, (4, 4096), np.float32)
    da, db, dx, dy = rt.upload(a), rt.upload(b), rt.upload(x), rt.upload(y)
    for kernel_used in (tw.dot_general(da, db, [1], [0]), tw.dot_general(dx, dy, [1], [0])):
        kernel_used.download_sync()  # compiled: a kernel's first use starts a stream of its own
    submits = []
    submit = transport.submit
    transport.submit = lambda *args: (submits.append(len(args[0])), submit(*args))[1]
    small = [tw.dot_general(da, db, [1], [0]) for _ in range(20)]
    assert submits == []
    np.testing.assert_array_equal(small[-1].download_sync(), a @ b)
    submits.clear()
    big = tw.dot_general(dx, dy, [1], [0])  # 1024 tiles of 128 x 128
    assert len(submits) == 1
    # Until the next barrier, a stream waits for SUBMIT_GROWTH times the last one's workgroups.
    more = [tw.dot_general(dx, dy, [1], [0]) for _ in range(SUBMIT_GROWTH - 1)]
    assert len(submits) == 1, "the GPU still has the last stream's work: this one waits"
    more.append(tw.dot_general(dx, dy, [1], [0]))
    assert len(submits) == 2
    got = big.download_sync()
    np.testing.assert_array_equal(got[::97, ::89], (x @ y)[::97, ::89])
    for t in more:
        np.testing.assert_array_equal(t.download_sync()[::97, ::89], (x @ y)[::97, ::89])
    submits.clear()
    tw.dot_general(dx, dy, [1], [0])
    assert len(submits) == 1, "after a barrier a large op goes to the GPU at once again"
    rt.synchronize_sync()
    submits.clear()
    shuffle = np.eye(8, dtype=np.float32)[rng.permutation(8)]  # keeps a long chain exact
    out, dp, want = da, rt.upload(shuffle), a
    for _ in range(2 * MAX_PENDING_DISPATCHES + 3):
        out = tw.dot_general(out, dp, [1], [0])
        want = want @ shuffle
    # each dispatch: 8 words and its 3 buffer ids
    assert submits == [11 * MAX_PENDING_DISPATCHES] * 2
    np.testing.assert_array_equal(out.download_sync(), want)
    rt.close()


def test_bind_groups_are_reused_over_the_same_buffers_and_dropped_with_them():
    """A dispatch over the buffers of an earlier one reuses its bind group (params come at a
    dynamic offset); a destroyed buffer's groups go with it; a grown params buffer drops them
    all. Results stay exact throughout."""
    def live_only(transport):
        return all(set(ids) <= transport._buffers.keys()
                   for _, ids in transport._bind_groups.values())

    rng = np.random.default_rng(6)
    a = ints(rng, (70, 9), np.float32)
    bs = [ints(rng, (9, n), np.float32) for n in (66, 130, 260, 520)]  # four size classes
    for pool in (256 << 20, 0):  # released buffers kept for reuse, or destroyed
        rt = tw.WebGpuRuntime.native(kernels="gpu", storage_pool_bytes=pool)
        transport = rt.device.transport
        created = []
        create = transport._device.create_bind_group
        transport._device.create_bind_group = \
            lambda created=created, create=create, **kw: (created.append(1), create(**kw))[1]
        da, db = rt.upload(a), rt.upload(bs[0])
        counts, cached = [], []
        for b in ([bs[0]] * 4 if pool else bs):
            out = tw.dot_general(da, db if pool else rt.upload(b), [1], [0])
            np.testing.assert_array_equal(out.download_sync(), a @ b)
            del out
            counts.append(len(created))
            cached.append(len(transport._bind_groups))
            assert live_only(transport)
        if pool:  # the same buffers come back from the pool: the same groups serve
            assert counts[0] == counts[-1] > 0
        else:  # new buffers every time; the groups of destroyed ones are dropped
            assert counts == sorted(set(counts))
            assert cached[-1] < counts[-1]
        rt.close()

    # A stream whose params outgrow the params buffer (a small one stands in for 64 KiB): the
    # groups that bound the old buffer must go with it.
    rt = tw.WebGpuRuntime.native(kernels="gpu")
    transport = rt.device.transport
    da, db = rt.upload(a), rt.upload(bs[0])
    transport._bind_groups.clear()
    transport._bind_groups_of.clear()
    usage = transport._wgpu.BufferUsage
    transport._params_buffer = transport._device.create_buffer(
        size=1024, usage=usage.STORAGE | usage.COPY_DST)
    np.testing.assert_array_equal(tw.dot_general(da, db, [1], [0]).download_sync(), a @ bs[0])
    assert transport._params_buffer.size == 1024 and transport._bind_groups
    # Two programs in turn: each launch writes its parameters (a repeat of the last one would
    # bind the block already written).
    dc = rt.upload(bs[1])
    outs = [tw.dot_general(da, d, [1], [0]) for _ in range(20) for d in (db, dc)]
    for out, b in zip(outs, [bs[0], bs[1]] * 20):
        np.testing.assert_array_equal(out.download_sync(), a @ b)
    assert transport._params_buffer.size > 1024
    assert live_only(transport)
    rt.close()


def test_repeated_dot_generals_reuse_their_program_and_still_check_residency():
    """api._DOT_PROGRAMS: a repeated call skips planning and lowering, but a closed runtime or
    operands of two runtimes are refused as on the first call."""
    from tenferro_web import api

    rt, other = tw.WebGpuRuntime.native(kernels="gpu"), tw.WebGpuRuntime.native(kernels="gpu")
    rng = np.random.default_rng(4)
    a, b = ints(rng, (5, 7), np.float32), ints(rng, (7, 3), np.float32)
    da, db = rt.upload(a), rt.upload(b)
    first = tw.dot_general(da, db, [1], [0])
    cached = len(api._DOT_PROGRAMS)
    again = tw.dot_general(da, db, [1], [0])
    assert len(api._DOT_PROGRAMS) == cached
    np.testing.assert_array_equal(first.download_sync(), a @ b)
    np.testing.assert_array_equal(again.download_sync(), a @ b)
    # Owned tensors are keyed by their shapes: axes equal to a kept call's but not integers
    # still raise, and a view of the same shape and another layout gets its own program.
    for axis in (True, 1.0):
        with pytest.raises(tw.InvalidArgument, match="lhs_contracting_dims"):
            tw.dot_general(da, db, [axis], [0])
    square = rt.upload(ints(rng, (7, 7), np.float32))
    np.testing.assert_array_equal(tw.dot_general(square.T, db, [1], [0]).download_sync(),
                                  square.download_sync().T @ b)
    np.testing.assert_array_equal(tw.dot_general(square, db, [1], [0]).download_sync(),
                                  square.download_sync() @ b)
    with pytest.raises(tw.ForeignDomain):
        tw.dot_general(da, other.upload(b), [1], [0])
    rt.close()
    with pytest.raises(tw.RuntimeStateError):
        tw.dot_general(da, db, [1], [0])
    other.close()


def test_repeated_einsums_reuse_their_schedule_and_still_check_residency():
    """api._EINSUM_CALLS: a repeated call on owned tensors skips planning and lowering, and
    gives what numpy gives; views, host arrays, operands of two runtimes and a closed runtime
    take the full path and its errors, as on the first call."""
    from tenferro_web import api

    rt, other = tw.WebGpuRuntime.native(kernels="gpu"), tw.WebGpuRuntime.native(kernels="gpu")
    rng = np.random.default_rng(9)
    a, b = ints(rng, (5, 7), np.float32), ints(rng, (7, 3), np.float32)
    da, db = rt.upload(a), rt.upload(b)
    for spec, args, want in (("ij,jk->ki", (da, db), (a @ b).T), ("ij->j", (da,), a.sum(0)),
                             ("ji", (da,), a.T), ("ij,ij->", (da, da), (a * a).sum())):
        first = tw.einsum_sync(spec, *args)
        cached = len(api._EINSUM_CALLS)
        again = tw.einsum_sync(spec, *args)
        assert len(api._EINSUM_CALLS) == cached > 0
        for out in (first, again):
            np.testing.assert_array_equal(out.download_sync(), want)
    view = da.T  # a view: planned through Operands, its schedule not kept by signature
    np.testing.assert_array_equal(tw.einsum_sync("ij->i", view).download_sync(), a.sum(0))
    with pytest.raises(tw.RuntimeStateError, match="upload it first"):
        tw.einsum_sync("ij,jk->ik", da, b)
    with pytest.raises(tw.ForeignDomain):
        tw.einsum_sync("ij,jk->ik", da, other.upload(b))
    # Contents lost (as a rejected submit loses them): a seen signature still raises.
    lost = tw.einsum_sync("ij,jk->ki", da, db)
    tw.einsum_sync("ij->j", lost)
    tw.dot_general(lost, lost, [1], [1])
    stream = lost.allocation.stream
    rt.device.lost_streams.append((range(stream, stream + 1), "rejected in this test"))
    with pytest.raises(tw.BackendFailure, match="contents were lost"):
        tw.einsum_sync("ij->j", lost)
    with pytest.raises(tw.BackendFailure, match="contents were lost"):
        tw.dot_general(lost, lost, [1], [1])
    rt.close()
    with pytest.raises(tw.RuntimeStateError, match="closed"):
        tw.einsum_sync("ij,jk->ki", da, db)
    other.close()


def test_kernel_timer_times_each_dispatch_apart_from_the_host():
    """kernel_timer: each dispatch enqueued inside the block, its kernel named, in a compute
    pass of its own (two in one submit are two entries; work enqueued before the block is not
    timed), durations in seconds that fit inside the host's clock."""
    import dataclasses
    import time

    rt = tw.WebGpuRuntime.native(kernels="gpu")
    rng = np.random.default_rng(5)
    a, b = ints(rng, (256, 256), np.float32), ints(rng, (256, 256), np.float32)
    da, db = rt.upload(a), rt.upload(b)
    before = tw.dot_general(da, db, [1], [0])  # pending when the timer opens: not timed
    start = time.perf_counter()
    async def timed():
        async with rt.kernel_timer() as timer:
            first = tw.dot_general(da, db, [1], [0])
            got = await first.download()  # a dispatch pass, then the staging copy: one submit
            second = tw.dot_general(first, db, [1], [0])  # these two are submitted
            third = tw.transpose(second, [1, 0])  # together, when the block ends
        return timer, got, second, third
    timer, got, second, third = rt.device.transport.run_sync(timed(), "test", "-")
    wall = time.perf_counter() - start
    assert [name for name, _ in timer.kernels] == ["gemm_tiled", "gemm_tiled",
                                                   "transpose_tiled"], timer.kernels
    assert all(seconds > 0 for _, seconds in timer.kernels), timer.kernels
    assert timer.seconds == sum(seconds for _, seconds in timer.kernels) <= wall
    by_kernel = timer.by_kernel()
    assert list(by_kernel) in (["gemm_tiled", "transpose_tiled"],
                               ["transpose_tiled", "gemm_tiled"]), by_kernel
    assert by_kernel["gemm_tiled"] == timer.kernels[0][1] + timer.kernels[1][1]
    np.testing.assert_array_equal(got, a @ b)
    np.testing.assert_array_equal(second.download_sync(), a @ b @ b)
    np.testing.assert_array_equal(third.download_sync(), (a @ b @ b).T)
    np.testing.assert_array_equal(before.download_sync(), a @ b)

    async def nested():
        async with rt.kernel_timer():
            async with rt.kernel_timer():
                pass
    with pytest.raises(tw.RuntimeStateError, match="already being timed"):
        rt.device.transport.run_sync(nested(), "test", "-")

    async def failing():
        async with rt.kernel_timer():
            raise KeyError("the block's own error")
    with pytest.raises(KeyError):
        rt.device.transport.run_sync(failing(), "test", "-")

    async def empty():
        async with rt.kernel_timer() as timer:
            pass
        return timer
    assert rt.device.transport.run_sync(empty(), "test", "-").kernels == ()  # usable again

    async def copies_only():
        async with rt.kernel_timer() as timer:
            got = await da.download()  # a submit holding the staging copy alone: no pass
        return timer, got
    timer, got = rt.device.transport.run_sync(copies_only(), "test", "-")
    assert timer.kernels == () and timer.by_kernel() == {}
    np.testing.assert_array_equal(got, a)

    rt.device.adapter = dataclasses.replace(
        rt.device.adapter, features=tuple(f for f in rt.device.adapter.features
                                          if f != "timestamp-query"))
    with pytest.raises(tw.UnsupportedError, match="timestamp-query"):
        rt.device.transport.run_sync(empty(), "test", "-")
    rt.close()


@pytest.mark.parametrize("kernels", ["cpu", "gpu"])
def test_a_kernel_the_transport_refuses_fails_its_op_before_anything_is_enqueued(kernels,
                                                                                monkeypatch):
    from tenferro_web.runtime import pipelines

    rt = tw.WebGpuRuntime.native(kernels=kernels)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t, z = rt.upload(a), rt.upload(a.astype(np.complex64))
    before = tw.dot_general(t, t, [1], [1])  # pending in the same stream
    shipped = pipelines.render
    monkeypatch.setattr(pipelines, "render", lambda key: shipped(key) + "fn broken() -> f32 "
                                                                       "{ return not_defined; }\n")
    allocated = []
    monkeypatch.setattr(rt.device, "allocate", lambda *args: allocated.append(args))
    with pytest.raises(tw.BackendFailure, match="not_defined"):
        tw.dot_general(z, z, [1], [1])  # complex: a new kernel
    # Nothing allocated or enqueued (its first use had the work before submitted on its own).
    assert not allocated and not rt.device.encoder
    monkeypatch.undo()
    np.testing.assert_array_equal(before.download_sync(), a @ a.T)
    want = (a @ a.T).astype(np.complex64)
    np.testing.assert_array_equal(tw.dot_general(z, z, [1], [1]).download_sync(), want)
    rt.close()


def test_a_submit_the_device_rejects_loses_its_work_and_what_read_it_with_a_typed_error():
    import wgpu

    rt = tw.WebGpuRuntime.native()
    transport = rt.device.transport
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = rt.upload(a)
    before = tw.dot_general(t, t, [1], [1])
    rt.synchronize_sync()
    real = transport._encode_and_submit

    def rejected(*args):
        raise wgpu.GPUValidationError("simulated: the device rejected this submit")

    transport._encode_and_submit = rejected
    bad = tw.dot_general(t, t, [1], [1])
    rt.device.flush()  # this stream is rejected: none of it runs
    transport._encode_and_submit = real
    after = tw.dot_general(bad, t, [1], [0])  # reads what the rejected stream never wrote
    with pytest.raises(tw.BackendFailure, match="rejected 1 command stream.*simulated"):
        rt.synchronize_sync()
    np.testing.assert_array_equal(before.download_sync(), a @ a.T)  # an earlier stream
    for lost in (bad, after):
        with pytest.raises(tw.BackendFailure, match="contents were lost.*simulated"):
            lost.download_sync()
    np.testing.assert_array_equal(tw.dot_general(t, t, [1], [1]).download_sync(), a @ a.T)
    rt.close()
