"""The timing rule of the per-op benchmarks (bench/sums.py, bench/families.py), and the
runtimes they compare. In Pyodide on Node.js + Dawn pass this
file too: ``--module bench/timing.py``.
"""

import statistics
import sys
import time

import tenferro_web as tw


async def timed(op, r: int) -> float:
    """Seconds per op: after one warm call (compiles the pipelines), trials of ``r`` ops the last
    of which is read back; median of 5."""
    await op().download()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(r - 1):
            op()
        await op().download()
        times.append((time.perf_counter() - start) / r)
    return statistics.median(times)


async def family_runtimes() -> dict[str, tw.WebGpuRuntime]:
    """One runtime per kernel family on this host's lane: Dawn inside Pyodide, else wgpu-native."""
    if sys.platform == "emscripten":
        return {k: await tw.WebGpuRuntime.create(kernels=k) for k in ("gpu", "cpu")}
    return {k: tw.WebGpuRuntime.native(kernels=k) for k in ("gpu", "cpu")}
