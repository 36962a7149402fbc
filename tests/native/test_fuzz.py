"""The kernel fuzz on the native lane (lavapipe): both kernel families, a fixed seed, exact."""

import asyncio

import pytest
from kernel_fuzz import run_fuzz

import tenferro_web as tw

SEED = 20261203
CASES = 500


@pytest.fixture(scope="module")
def runtimes():
    pair = {family: tw.WebGpuRuntime.native(kernels=family) for family in ("cpu", "gpu")}
    yield pair
    for rt in pair.values():
        rt.close()


def test_kernel_fuzz_matches_numpy_exactly(runtimes):
    failures = asyncio.run(run_fuzz(runtimes, SEED, CASES))
    assert not failures, "\n".join(failures)
