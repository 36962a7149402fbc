"""Device memory: a refused allocation is a typed error that loses only the work that used it,
and the pools keep what a runtime holds bounded. Runs in Chromium and in Node.js + Dawn."""

from pytest_pyodide import run_in_pyodide


@run_in_pyodide(packages=["tenferro-web"])
async def test_a_refused_allocation_is_a_typed_error_and_the_runtime_stays_usable(selenium):
    import numpy as np
    import pytest

    import tenferro_web as tw

    rt = await tw.WebGpuRuntime.create()
    try:
        host = np.arange(12, dtype=np.float32).reshape(3, 4)
        a = rt.upload(host)
        before = tw.transpose(a)
        await rt.synchronize()
        # One whole storage binding, from a stride-0 view (no host data): software adapters
        # cannot back it (SwiftShader refuses 1 GiB), so the device answers out-of-memory.
        limit = rt.adapter.limits["maxStorageBufferBindingSize"]
        one = rt.upload(np.ones(1, np.float32))
        huge = tw.to_contiguous(one.view((limit // 4,), (0,), 0))
        derived = tw.to_contiguous(huge.view((4,), (1,), 0))
        with pytest.raises(tw.OutOfDeviceMemory,
                           match=r"^synchronize: the GPU refused to allocate 1 buffer\(s\) of "
                                 rf"{limit // 4 * 4} bytes .* the runtime stays usable"):
            await rt.synchronize()
        assert issubclass(tw.OutOfDeviceMemory, tw.BackendFailure)
        # What depended on the refused buffer raises on every use, never returns zeros.
        for lost in (huge, derived):
            with pytest.raises(tw.OutOfDeviceMemory, match="contents were lost"):
                await lost.download()
        with pytest.raises(tw.OutOfDeviceMemory, match="^transpose: this tensor's contents"):
            tw.transpose(derived)
        # Work finished before the refusal is intact, and new work runs.
        np.testing.assert_array_equal(await before.download(), host.T)
        np.testing.assert_array_equal(await a.download(), host)
        np.testing.assert_array_equal(await tw.transpose(a).download(), host.T)
        await rt.synchronize()  # reported once
        del huge, derived
        np.testing.assert_array_equal(
            await tw.dot_general(a, before, [1], [0]).download(), host @ host.T)
    finally:
        rt.close()


@run_in_pyodide(packages=["tenferro-web"])
async def test_downloads_of_many_sizes_hold_a_bounded_amount_of_device_memory(selenium):
    import numpy as np

    import tenferro_web as tw

    mib = 1 << 20
    rt = await tw.WebGpuRuntime.create(storage_pool_bytes=8 * mib, staging_pool_bytes=4 * mib)
    try:
        buffers = rt.device.transport._ctx.buffers  # the bridge's live GPUBuffers

        def held() -> int:
            return sum(buffer.size for buffer in buffers.values())

        # Sixteen sizes from 1 to 4 MiB (the 4-64 MiB workload, scaled down 16x so
        # SwiftShader stays quick; `make bench` measures the full one).
        peak = 0
        for i in range(16):
            n = (mib + i * (3 * mib) // 15) // 4
            t = rt.upload(np.full(n, i, np.float32))
            out = await t.download()
            assert out[0] == i and out[-1] == i and out.size == n
            del t
            peak = max(peak, held())
        await rt.synchronize()
        largest = 4 * mib
        # One tensor plus its staging copy at a time, then the pools' caps: never the sum of
        # all sizes (40 MiB), and a small multiple of the largest transfer at the end.
        assert peak <= 8 * mib + 4 * mib + 2 * largest, peak
        assert held() <= 8 * mib + 4 * mib, held()
    finally:
        rt.close()
