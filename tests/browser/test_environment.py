"""The browser lane's ground truth: real Pyodide, real WebGPU adapter, JSPI, no offsite traffic."""

from pytest_pyodide import run_in_pyodide


@run_in_pyodide(packages=["tenferro-web"])
async def test_runtime_runs_on_a_real_webgpu_adapter(selenium):
    import sys

    import numpy as np

    import tenferro_web as tw
    import tw_testing
    from js import navigator

    rt = await tw_testing.runtime()
    info = rt.adapter
    assert sys.platform == "emscripten"
    assert np.__version__ == "2.0.2"
    if "Firefox/" in navigator.userAgent:
        # Firefox withholds the adapter's names; it marks lavapipe a fallback adapter.
        assert (info.vendor, info.architecture, info.description) == ("", "", ""), info
        assert info.is_fallback, info
    else:
        assert info.architecture, info      # SwiftShader reports "swiftshader"
    # kernels="auto": a software adapter gets the CPU family, in either engine
    assert info.is_cpu and rt.device.profile.cpu
    assert info.context == "window"
    assert info.limits["maxStorageBufferBindingSize"] >= 128 << 20
    assert await tw.webgpu_available()


@run_in_pyodide(packages=["tenferro-web"])
async def test_jspi_stack_switching_is_available(selenium):
    from pyodide.ffi import can_run_sync

    assert can_run_sync(), "Chromium 156 and Firefox 153 have JSPI; the sync variants rely on it"


def test_offsite_requests_are_recorded_and_refused(selenium, offsite_guard):
    """The guard that fails the session on offsite traffic must itself see such traffic."""
    url = "http://offsite-probe.invalid/tenferro"
    status = selenium.run_js(f"return (await fetch({url!r}).then(r => r.status, e => -1));")
    seen = [r for r in offsite_guard.requests() if "offsite-probe.invalid" in r]
    offsite_guard.forget(lambda r: "offsite-probe.invalid" in r)
    assert seen, "the request never reached the guard: offsite traffic would go unnoticed"
    assert status in (403, -1)
