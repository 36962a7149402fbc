"""Helpers shared by the browser tests, installed into Pyodide as ``tw_testing``.

References are numpy computations on the same data in the same interpreter, never the code
under test.
"""

from __future__ import annotations

import contextlib

import numpy as np
from kernel_fuzz import dot_general_ref  # noqa: F401  (the one reference, re-exported)

import tenferro_web as tw

# f32 has a 24-bit significand: sums of K products of values of magnitude <= 1 carry a rounding
# error below K * 2**-24 * sum|a||b|; 4x that bound keeps the check tight but never flaky.
F32_EPS = 2.0**-24


_runtimes: dict[str, tw.WebGpuRuntime] = {}


async def runtime(kernels: str = "auto") -> tw.WebGpuRuntime:
    """One shared runtime per kernel family: "auto" (the adapter's own choice, the CPU kernels
    on SwiftShader), "gpu" (the workgroup-memory kernels real GPUs get) or "cpu"."""
    if kernels == "auto":
        return await tw.default_runtime()
    if kernels not in _runtimes:
        _runtimes[kernels] = await tw.WebGpuRuntime.create(kernels=kernels)
    return _runtimes[kernels]


def sample(rng: np.random.Generator, shape, dtype, integers: bool = False) -> np.ndarray:
    """Random data of a numpy dtype; ``integers`` gives small integer values so that f32
    products and sums are exact and results can be compared bit for bit."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)

    def real(s):
        return rng.integers(-4, 5, size=s).astype(np.float64) if integers else \
            rng.standard_normal(s)

    if dtype.kind == "c":
        return (real(shape) + 1j * real(shape)).astype(dtype)
    return real(shape).astype(dtype)


def assert_gemm_close(got: np.ndarray, want: np.ndarray, k: int, scale: float = 1.0) -> None:
    """f32 accumulation tolerance: 4 * K * eps * scale, scale bounding sum |a||b| / K."""
    assert got.shape == want.shape, (got.shape, want.shape)
    atol = 4 * max(k, 1) * F32_EPS * scale * max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=0, atol=atol)


def assert_same(got: np.ndarray, want: np.ndarray) -> None:
    """Bitwise equal values, shape and dtype (copies must not change a single bit)."""
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


@contextlib.contextmanager
def calls_to(obj, name: str):
    """Record the arguments of every call of ``obj.<name>`` while still making the call."""
    real = getattr(obj, name)
    calls: list[tuple] = []

    def spy(*args):
        calls.append(args)
        return real(*args)

    setattr(obj, name, spy)
    try:
        yield calls
    finally:
        setattr(obj, name, real)
