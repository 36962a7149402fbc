"""Explicit transfers: upload from numpy in any memory order, download through mapAsync."""

import pytest
from pytest_pyodide import run_in_pyodide

DTYPES = ["float32", "float64", "int32", "int64", "bool", "complex64", "complex128"]
SHAPES = [(), (1,), (7,), (3, 5), (2, 3, 4), (4, 1, 3, 2), (0,), (3, 0, 2)]


@pytest.mark.parametrize("dtype", DTYPES)
@run_in_pyodide(packages=["tenferro-web"])
async def test_round_trip_every_dtype_and_shape(selenium, dtype):
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    rng = np.random.default_rng(7)
    for shape in [(), (1,), (7,), (3, 5), (2, 3, 4), (4, 1, 3, 2), (0,), (3, 0, 2)]:
        host = tw_testing.sample(rng, shape, dtype)
        for order in ("C", "F"):
            array = np.array(host, order=order)
            t = rt.upload(array)
            assert t.shape == shape and t.dtype == tw.DType.from_numpy(dtype)
            assert t.strides == tuple(int(np.prod(shape[:i])) for i in range(len(shape)))
            back = await t.download()
            tw_testing.assert_same(back, host)
            assert back.flags.f_contiguous


@pytest.mark.parametrize("dtype", DTYPES)
@run_in_pyodide(packages=["tenferro-web"])
async def test_row_major_uploads_are_reordered_on_the_host_when_small_and_on_the_gpu_when_large(
        selenium, dtype):
    import numpy as np

    import tenferro_web as tw
    import tw_testing
    from tenferro_web.planning.copy_plan import COPY_DTYPES
    from tenferro_web.runtime.device import HOST_REORDER_ELEMENTS

    rt = await tw_testing.runtime()
    rng = np.random.default_rng(11)
    rows = HOST_REORDER_ELEMENTS // 64
    for shape, on_gpu in [((rows, 64), False), ((rows + 1, 64), True),
                          ((3, rows // 3 + 1, 64), True)]:
        host = np.ascontiguousarray(tw_testing.sample(rng, shape, dtype))
        with tw_testing.calls_to(rt.device, "execute") as kernels:
            t = rt.upload(host)
        assert len(kernels) == (on_gpu and tw.DType.from_numpy(dtype) in COPY_DTYPES), shape
        tw_testing.assert_same(await t.download(), host)


@run_in_pyodide(packages=["tenferro-web"])
async def test_upload_accepts_non_contiguous_and_big_endian_views(selenium):
    import numpy as np

    import tw_testing

    rt = await tw_testing.runtime()
    rng = np.random.default_rng(1)
    base = tw_testing.sample(rng, (6, 8, 5), np.float32)
    views = [base[::2, ::-3, 1:], base.transpose(2, 0, 1), base[:, 3, ::-1], base[..., 2].T,
             np.swapaxes(base, 0, 1)[1:4]]
    for view in views:
        tw_testing.assert_same(await rt.upload(view).download(), np.array(view))
    big = np.arange(12, dtype=">f8").reshape(3, 4)
    back = await rt.upload(big).download()
    assert back.dtype == np.dtype("<f8")
    np.testing.assert_array_equal(back, big)
    c32 = (base + 1j * base[::-1]).astype(np.complex64)[:, ::2]
    tw_testing.assert_same(await rt.upload(c32).download(), np.array(c32))
    mask = (base > 0)[::-1, :, ::2]
    tw_testing.assert_same(await rt.upload(mask).download(), np.array(mask))


@run_in_pyodide(packages=["tenferro-web"])
async def test_download_sync_uses_jspi(selenium):
    import numpy as np

    import tw_testing

    rt = await tw_testing.runtime()
    host = np.arange(10, dtype=np.int64).reshape(2, 5)
    np.testing.assert_array_equal(rt.upload(host).download_sync(), host)
    rt.synchronize_sync()


def test_sync_calls_without_jspi_entry_raise_a_typed_error_naming_the_fix(selenium):
    # pyodide.runPython is a plain synchronous entry point: no stack switching is possible.
    selenium.load_package("tenferro-web")
    message = selenium.run(
        """
        import tenferro_web as tw
        try:
            tw.WebGpuRuntime.create_sync()
            result = "no error"
        except tw.JSPIUnavailable as e:
            result = f"{type(e).__name__}|{e.kind.value}|{e}"
        result
        """
    )
    name, kind, text = message.split("|", 2)
    assert (name, kind) == ("JSPIUnavailable", "runtime_state")
    assert text.startswith("create_sync:") and "await WebGpuRuntime.create()" in text


def test_a_browser_without_jspi_gets_jspi_unavailable_naming_the_async_call(selenium):
    """Safari's case (WebGPU, no JSPI), made here by hiding JSPI from a fresh page before
    Pyodide loads: the async API works, each sync variant names its async call."""
    selenium.refresh()
    # A script element runs in the page's own realm (Marionette's scripts do not, in Firefox).
    selenium.run_js("""
        const hide = document.createElement("script");
        hide.textContent = "delete WebAssembly.Suspending; delete WebAssembly.promising;";
        document.head.append(hide);
        """, pyodide_checks=False)
    try:
        selenium.load_pyodide()
        selenium.initialize_pyodide()
        selenium.load_package("tenferro-web")
        found = selenium.run_async(
            """
            import numpy as np
            from pyodide.ffi import can_run_sync
            import tenferro_web as tw

            rt = await tw.WebGpuRuntime.create()
            t = rt.upload(np.arange(6, dtype=np.float32))
            assert (await t.download()).tolist() == list(range(6))  # the async API works
            messages = [str(can_run_sync())]
            for call in (t.download_sync, rt.synchronize_sync, tw.WebGpuRuntime.create_sync):
                try:
                    call()
                    messages.append("no error")
                except tw.JSPIUnavailable as e:
                    messages.append(str(e))
            "|".join(messages)
            """)
    finally:
        # a fresh page with JSPI for the tests after this one
        selenium.refresh()
        selenium.load_pyodide()
        selenium.initialize_pyodide()
        selenium.save_state()
        selenium.restore_state()
        selenium.tw_helpers_installed = False
    jspi, download, synchronize, create = found.split("|")
    assert jspi == "False"
    assert download.startswith("download_sync:") and "await tensor.download()" in download, download
    assert synchronize.startswith("synchronize_sync:") and "await" in synchronize, synchronize
    assert create.startswith("create_sync:") and "await WebGpuRuntime.create()" in create, create


@run_in_pyodide(packages=["tenferro-web"])
async def test_zero_size_tensors_never_touch_the_gpu(selenium):
    import numpy as np

    import tw_testing

    rt = await tw_testing.runtime()
    for shape in [(0,), (2, 0), (0, 3, 4)]:
        t = rt.upload(np.zeros(shape, np.complex64))
        assert t.allocation.buffer_id == 0 and t.nbytes == 0
        back = await t.download()
        assert back.shape == shape and back.dtype == np.complex64


@run_in_pyodide(packages=["tenferro-web"])
async def test_download_span_reads_an_element_range_and_rejects_bad_spans(selenium):
    import numpy as np
    import pytest

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = rt.upload(host)
    flat = host.reshape(-1, order="F")
    np.testing.assert_array_equal(await t.download_span(8, 20), flat[2:7])
    np.testing.assert_array_equal(await t.download_span(0, 96), flat)
    assert (await t.download_span(96, 0)).size == 0
    mask = rt.upload(np.array([True, False, True, True, False, True, False]))
    np.testing.assert_array_equal(await mask.download_span(3, 3), [True, False, True])
    with pytest.raises(tw.MappingSpanError, match="exceeds the allocation"):
        await t.download_span(92, 8)
    with pytest.raises(tw.MappingSpanError, match="not element-aligned"):
        await t.download_span(2, 8)
    with pytest.raises(tw.MappingSpanError, match="overflows"):
        await t.download_span(2**63 - 4, 8)
    with pytest.raises(tw.InvalidArgument):
        await t.download_span(-4, 4)
    # A refused span loses nothing.
    np.testing.assert_array_equal(await t.download(), host)


@run_in_pyodide(packages=["tenferro-web"])
async def test_unsupported_host_dtypes_are_refused_by_name(selenium):
    import numpy as np
    import pytest

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    for dtype in (np.float16, np.uint8, np.int16, np.uint64, "U3", object):
        with pytest.raises(tw.UnsupportedDType, match="upload: does not support dtype"):
            rt.upload(np.zeros(3, dtype))
