"""What differs between the browser engines where the package depends on it; each test runs in
Chromium (Dawn) and Firefox (wgpu). The other two behaviours are tested in test_runtime.py, which
both lanes run: error scopes (test_uncaptured_gpu_errors_surface_at_the_next_barrier, and in
test_einsum.py a WGSL error reported with the compiler's message) and lost devices
(test_device_loss_becomes_a_typed_error)."""

from pytest_pyodide import run_in_pyodide


@run_in_pyodide(packages=["tenferro-web"])
async def test_the_device_is_granted_the_adapter_maxima_the_bridge_asks_for(selenium):
    import tenferro_web as tw

    rt = await tw.WebGpuRuntime.create()
    try:
        adapter_limits = rt.device.transport._ctx.adapter.limits
        granted = rt.adapter.limits
        # Each engine grants what its adapter offers (the defaults are far lower), and lowering
        # plans with exactly what the device was granted.
        for name in ("maxBufferSize", "maxStorageBufferBindingSize",
                     "maxComputeWorkgroupsPerDimension", "maxComputeWorkgroupStorageSize",
                     "maxComputeInvocationsPerWorkgroup", "maxStorageBuffersPerShaderStage"):
            assert granted[name] == getattr(adapter_limits, name), (name, granted)
        assert granted["maxBufferSize"] > 256 << 20, granted  # WebGPU's default is 256 MiB
        profile = rt.device.profile
        assert (profile.max_buffer, profile.max_storage_binding) == (
            granted["maxBufferSize"], granted["maxStorageBufferBindingSize"])
    finally:
        rt.close()


@run_in_pyodide(packages=["tenferro-web"])
async def test_downloads_awaited_together_each_get_their_own_data_after_their_own_work(selenium):
    import asyncio

    import numpy as np

    import tenferro_web as tw

    rt = await tw.WebGpuRuntime.create()
    try:
        a = rt.upload(np.arange(12, dtype=np.float32).reshape(3, 4))
        b = rt.upload(np.ones((4, 5), np.float32))
        # mapAsync resolves a turn of the event loop later in Dawn and about 100 ms after the
        # submit in Firefox: downloads in flight together must not mix up their staging buffers.
        c = tw.dot_general(a, b, [1], [0])
        d = tw.transpose(a)
        got_c, got_d, got_a = await asyncio.gather(c.download(), d.download(), a.download())
        expect_a = np.arange(12, dtype=np.float32).reshape(3, 4)
        np.testing.assert_array_equal(got_c, expect_a @ np.ones((4, 5), np.float32))
        np.testing.assert_array_equal(got_d, expect_a.T)
        np.testing.assert_array_equal(got_a, expect_a)
        # Work enqueued after a download started does not change what that download returns.
        pending = asyncio.ensure_future(c.download())
        later = tw.dot_general(c, rt.upload(np.ones((5, 2), np.float32)), [1], [0])
        np.testing.assert_array_equal(await pending, got_c)
        np.testing.assert_array_equal(await later.download(), got_c @ np.ones((5, 2)))
    finally:
        rt.close()
