"""The runtime: identity, allocation domains, submission, device errors, configuration."""

from pytest_pyodide import run_in_pyodide


@run_in_pyodide(packages=["tenferro-web"])
async def test_identity_domains_and_placement(selenium):
    import numpy as np

    import tenferro_web as tw

    rt = await tw.WebGpuRuntime.create()
    other = await tw.WebGpuRuntime.create()
    try:
        clone = rt.clone()
        assert clone.runtime_identity() == rt.runtime_identity() and clone == rt
        assert other.runtime_identity() != rt.runtime_identity() and other != rt
        assert other.allocation_domain != rt.allocation_domain
        t = rt.upload(np.arange(6, dtype=np.float32))
        u = rt.upload(np.arange(6, dtype=np.float32))
        assert t.allocation_domain == rt.allocation_domain == clone.allocation_domain
        assert t.allocation_id != u.allocation_id
        assert t.runtime == rt
        p = t.placement
        assert p.memory_kind is tw.MemoryKind.DEVICE
        assert p.device == tw.DeviceId(tw.DeviceKind.WEBGPU, 0) and str(p.device) == "webgpu:0"
        assert p.cpu_affinity is None
        assert f"{rt.adapter.vendor}/{rt.adapter.architecture}" in repr(rt)
        assert str(rt.allocation_domain) in repr(rt)
    finally:
        other.close()


@run_in_pyodide(packages=["tenferro-web"])
async def test_many_ops_are_batched_into_one_submit(selenium):
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    x = rt.upload(np.eye(8, dtype=np.float32) * 2)
    # Compiled first: a kernel's first use starts a stream of its own (so that, should the
    # device reject it, the work before is not lost with it).
    await tw.transpose(tw.dot_general(x, x, [1], [0])).download()
    with tw_testing.calls_to(rt.device.transport, "submit") as submits:
        acc = x
        for _ in range(20):
            acc = tw.dot_general(acc, x, [1], [0])
            acc = tw.transpose(acc)
        assert submits == [], "ops must not submit before a host barrier"
        out = await acc.download()
        assert len(submits) == 1
    np.testing.assert_array_equal(out, np.eye(8) * 2.0**21)


@run_in_pyodide(packages=["tenferro-web"])
async def test_buffers_are_reused_after_release(selenium):
    import numpy as np

    import tw_testing

    rt = await tw_testing.runtime()
    await rt.synchronize()
    with tw_testing.calls_to(rt.device.transport, "create_buffer") as created:
        for i in range(10):
            t = rt.upload(np.full(1000, i, np.float32))
            np.testing.assert_array_equal(await t.download(), np.full(1000, i))
            del t
    # Two storage buffers (a released buffer is reusable only after the next submit, so the
    # second upload cannot take the first one) and one staging buffer, for ten rounds.
    assert len(created) == 3, created


@run_in_pyodide(packages=["tenferro-web"])
async def test_device_loss_becomes_a_typed_error(selenium):
    import numpy as np
    import pytest

    import tenferro_web as tw

    rt = await tw.WebGpuRuntime.create()
    t = rt.upload(np.ones(4, np.float32))
    device = rt.device.transport._ctx.device
    device.destroy()     # what a driver reset looks like to a page
    # The loss reaches the page through device.lost, a task later; Firefox may answer a
    # barrier first (onSubmittedWorkDone after destroy), so the loss is awaited as it arrives.
    await device.lost
    with pytest.raises(tw.DeviceLost, match="^synchronize: the GPU device was lost"):
        await rt.synchronize()
    # Reported once; from then on the runtime is unusable, like a closed one.
    with pytest.raises(tw.RuntimeStateError, match="^transpose: this runtime's GPU device was"):
        tw.transpose(t)
    with pytest.raises(tw.RuntimeStateError, match="create a new runtime"):
        await t.download()
    with pytest.raises(tw.RuntimeStateError):
        rt.upload(np.ones(2))
    assert issubclass(tw.DeviceLost, tw.BackendFailure)
    # A new runtime works.
    fresh = await tw.WebGpuRuntime.create()
    np.testing.assert_array_equal(await fresh.upload(np.ones(3)).download(), np.ones(3))
    fresh.close()


@run_in_pyodide(packages=["tenferro-web"])
async def test_uncaptured_gpu_errors_surface_at_the_next_barrier(selenium):
    import numpy as np
    import pytest
    from pyodide.ffi import to_js

    import js
    import tenferro_web as tw

    rt = await tw.WebGpuRuntime.create()
    try:
        device = rt.device.transport._ctx.device
        # An invalid buffer descriptor (usage 0) raises an uncaptured validation error.
        device.createBuffer(to_js({"size": 4, "usage": 0}, dict_converter=js.Object.fromEntries))
        with pytest.raises(tw.BackendFailure, match="the GPU reported: GPUValidationError"):
            await rt.synchronize()
        # Reported once; the runtime keeps working.
        await rt.synchronize()
        np.testing.assert_array_equal(await rt.upload(np.arange(3)).download(), np.arange(3))
    finally:
        rt.close()


@run_in_pyodide(packages=["tenferro-web"])
async def test_closed_runtime_refuses_work(selenium):
    import numpy as np
    import pytest

    import tenferro_web as tw

    rt = await tw.WebGpuRuntime.create()
    t = rt.upload(np.ones(4, np.float32))
    rt.close()
    with pytest.raises(tw.RuntimeStateError, match="closed"):
        tw.transpose(t)
    with pytest.raises(tw.RuntimeStateError, match="closed"):
        await t.download()


@run_in_pyodide(packages=["tenferro-web"])
async def test_wasm_configuration_has_no_event_domains(selenium):
    import pytest

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    assert tw.CONFIG.target == "wasm" and tw.CONFIG.event_domains is False
    assert "await runtime.synchronize()" in tw.CONFIG.host_barriers
    with pytest.raises(tw.EventDomainUnavailable, match="no event-domain module"):
        tw.event_domain_driver(rt)
    other = await tw.WebGpuRuntime.create()
    try:
        t = rt.upload([1.0, 2.0])
        with pytest.raises(tw.EventDomainUnavailable, match="download it and upload it there"):
            tw.transfer_between_runtimes(t, other)
    finally:
        other.close()
    assert issubclass(tw.EventDomainUnavailable, tw.RuntimeStateError)


@run_in_pyodide(packages=["tenferro-web"])
async def test_every_other_backend_op_is_an_explicit_unsupported_error(selenium):
    import numpy as np
    import pytest

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    t = rt.upload(np.ones((2, 2), np.float32))
    expected = {"add", "sub", "mul", "div", "neg", "conj", "abs", "exp", "log", "sqrt", "pow",
                "reduce_prod", "reduce_max", "reshape", "broadcast_in_dim", "cast", "tril",
                "gather", "scatter", "slice", "pad", "concatenate", "reverse", "cholesky",
                "qr", "svd", "eigh", "solve", "copy_into"}
    assert expected <= set(tw.UNSUPPORTED_OPS)
    assert "reduce_sum" not in tw.UNSUPPORTED_OPS  # it runs (numpy_style.py)
    for name in tw.UNSUPPORTED_OPS:
        with pytest.raises(tw.UnsupportedError) as info:
            getattr(tw, name)(t, t)
        message = str(info.value)
        assert message.startswith(f"{name}: unsupported operation on WebGPU")
        assert "download" in message and "numpy" in message
        assert info.value.kind is tw.ErrorKind.UNSUPPORTED
    np.testing.assert_array_equal(await t.download(), np.ones((2, 2)))


@run_in_pyodide(packages=["tenferro-web"])
async def test_closing_the_runtime_while_a_download_waits(selenium):
    import asyncio

    import numpy as np
    import pytest

    import tenferro_web as tw

    rt = await tw.WebGpuRuntime.create()
    a = rt.upload(np.ones((512, 512), np.float32))
    busy = tw.dot_general(a, a, [1], [0])  # keeps the queue busy for tens of milliseconds
    pending = asyncio.ensure_future(busy.download())
    await asyncio.sleep(0)  # the download is now waiting for mapAsync
    rt.close()
    with pytest.raises(tw.RuntimeStateError, match="^download: the runtime was closed while"):
        await pending
    with pytest.raises(tw.RuntimeStateError, match="was closed; create a new one"):
        await a.download()
    fresh = await tw.WebGpuRuntime.create()
    assert (await fresh.upload(np.arange(3, dtype=np.float32)).download()).tolist() == [0, 1, 2]
    fresh.close()
