"""The same package inside a dedicated Web Worker (where JupyterLite runs its kernel)."""

from pytest_pyodide import run_in_pyodide


@run_in_pyodide(packages=["tenferro-web"])
async def test_runtime_and_ops_work_in_a_web_worker(selenium_worker):
    import numpy as np

    import js
    import tenferro_web as tw
    import tw_testing

    assert not hasattr(js, "document") and not hasattr(js, "window")
    rt = await tw.WebGpuRuntime.create()
    assert rt.adapter.context == "worker"
    rng = np.random.default_rng(0)
    a = tw_testing.sample(rng, (5, 7), np.complex64, integers=True)
    b = tw_testing.sample(rng, (7, 4), np.complex64, integers=True)
    got = await tw.dot_general(rt.upload(a), rt.upload(b), [1], [0]).download()
    tw_testing.assert_same(got, (a.astype(np.complex128) @ b).astype(np.complex64))
    x = tw_testing.sample(rng, (3, 4, 5), np.float32)
    tw_testing.assert_same(await tw.transpose(rt.upload(x), [2, 0, 1]).download(),
                           np.transpose(x, [2, 0, 1]))
    tw_testing.assert_same(rt.upload(x).download_sync(), x)
    rt.close()
