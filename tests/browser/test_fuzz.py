"""The kernel fuzz (tests/fuzz/kernel_fuzz.py) inside Pyodide on the browser transport: both
kernel families, a fixed seed, exact against numpy. In Chromium (SwiftShader) and in Node.js with
Dawn alike; cases are split into chunks so that each test stays far inside its time limit."""

import pytest
from pytest_pyodide import run_in_pyodide


@pytest.mark.parametrize("chunk", range(4))
@run_in_pyodide(packages=["tenferro-web"])
async def test_kernel_fuzz_matches_numpy_exactly(selenium, chunk):
    import kernel_fuzz

    import tw_testing

    seed, size = 20261204, 25  # the code runs inside Pyodide: constants live here
    runtimes = {family: await tw_testing.runtime(family) for family in ("cpu", "gpu")}
    failures = await kernel_fuzz.run_fuzz(runtimes, seed, size, start=chunk * size)
    assert not failures, "\n".join(failures)
