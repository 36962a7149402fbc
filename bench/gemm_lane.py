"""GEMM rates of this package on one WebGPU lane, with the adapter it ran on.

Runs in either host of the package:
  * CPython on wgpu-native (the native transport):  python bench/gemm_lane.py [--quick]
  * Pyodide on Node.js + Dawn, Chrome's WebGPU (the browser transport):
    node --import tools/dawn_host.mjs tools/dawn_run.mjs DIST --module bench/gemm_cases.py \
        --module bench/gemm_lane.py gemm_lane:main [--quick]

Timing rule, the same on every lane and for the reference (bench/h200.py times torch.matmul
alike): r products enqueued back to back, then one wait for the GPU; median of 5 such trials,
after WARMUP_SECONDS of such trials.
The last line is ``RESULT {json}``: the adapter (vendor, device, description, features, limits),
the lane, and per case the GFLOP/s and a sampled check of the result against float64 numpy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import tenferro_web as tw

sys.path.insert(0, str(Path(__file__).parent))
from gemm_cases import CASES, QUICK, TRIALS, WARMUP_SECONDS, operands  # noqa: E402

# A trial holds r outputs (640 MiB for the batched case), so the pool keeps that much, as a
# user of large batched products would set it; torch's caching allocator keeps it too.
POOL = 2 << 30


async def time_ours(rt, a, b, batched: bool, reps: int) -> tuple[float, float | None]:
    """Seconds per dot_general: ``reps`` enqueued back to back, then one host barrier; and,
    where the adapter has timestamp queries, the GPU time of one more such trial's kernels
    per dot_general (without the host's share)."""
    args = ([1], [0], [2], [2]) if batched else ([1], [0])
    warm_until = time.perf_counter() + WARMUP_SECONDS
    while True:  # compiles the pipelines, and brings the GPU's clocks up
        outs = [tw.dot_general(a, b, *args) for _ in range(reps)]
        await rt.synchronize()
        del outs
        if time.perf_counter() >= warm_until:
            break
    times = []
    for _ in range(TRIALS):
        start = time.perf_counter()
        outs = [tw.dot_general(a, b, *args) for _ in range(reps)]
        await rt.synchronize()
        times.append((time.perf_counter() - start) / reps)
        del outs
    kernel = None
    if "timestamp-query" in rt.adapter.features:
        async with rt.kernel_timer() as timer:
            outs = [tw.dot_general(a, b, *args) for _ in range(reps)]
        del outs
        kernel = timer.seconds / reps
    return statistics.median(times), kernel


async def sampled_error(rt, da, db, a, b, batched: bool) -> float:
    """Largest relative error of 8 random output entries against float64 dot products (reading
    them back with download_span, so a huge output is never copied whole)."""
    out = tw.dot_general(da, db, [1], [0], *(([2], [2]) if batched else ()))
    rng = np.random.default_rng(1)
    m, n = a.shape[0], b.shape[1]
    item = out.dtype.itemsize
    worst = 0.0
    for _ in range(8):
        i, j = int(rng.integers(m)), int(rng.integers(n))
        bi = int(rng.integers(a.shape[2])) if batched else 0
        want = np.dot(a[i, :, bi].astype(np.complex128), b[:, j, bi]) if batched else \
            np.dot(a[i, :].astype(np.complex128), b[:, j])
        index = i + m * j + m * n * bi
        got = (await out.download_span(index * item, item))[0]
        scale = np.sqrt(a.shape[1])  # |sum| of k unit normals grows like sqrt(k)
        worst = max(worst, float(abs(got - want) / scale))
    return worst


async def run_cases(rt, cases, log=print) -> list[dict]:
    rows = []
    for name, m, n, k, batch, dtype, reps in cases:
        a, b = operands(name, m, n, k, batch, dtype)
        da, db = rt.upload(a), rt.upload(b)
        seconds, kernel = await time_ours(rt, da, db, batch > 1, reps)
        flops = (8 if dtype == "complex64" else 2) * m * n * k * batch
        row = {"case": name, "m": m, "n": n, "k": k, "batch": batch, "dtype": dtype,
               "reps": reps, "seconds": seconds, "gflops": round(flops / seconds / 1e9, 1),
               "kernel_seconds": kernel,
               "kernel_gflops": kernel and round(flops / kernel / 1e9, 1),
               "sampled_error": await sampled_error(rt, da, db, a, b, batch > 1)}
        rows.append(row)
        kernel_rate = f"   kernels alone {row['kernel_gflops']:>10,.1f}" if kernel else ""
        log(f"{name:<20}{row['gflops']:>12,.1f} GFLOP/s{kernel_rate}   sampled error "
            f"{row['sampled_error']:.1e}")
        del da, db
    return rows


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small cases (a smoke run)")
    parser.add_argument("--kernels", default="auto", choices=["auto", "cpu", "gpu"])
    args = parser.parse_args(argv)
    if sys.platform == "emscripten":
        rt = await tw.WebGpuRuntime.create(kernels=args.kernels, storage_pool_bytes=POOL)
        lane = "dawn"
    else:
        rt = tw.WebGpuRuntime.native(kernels=args.kernels, storage_pool_bytes=POOL)
        lane = "wgpu-native"
    a = rt.adapter
    print(f"storage pool {POOL >> 20} MiB", flush=True)
    print(f"{lane}: {a.vendor} {a.architecture} {a.device} ({a.description}), features "
          f"{', '.join(a.features)}", flush=True)
    rows = await run_cases(rt, QUICK if args.quick else CASES,
                           log=lambda line: print(line, flush=True))
    print("RESULT " + json.dumps({
        "lane": lane, "adapter": {"vendor": a.vendor, "architecture": a.architecture,
                                  "device": a.device, "description": a.description,
                                  "features": list(a.features), "limits": a.limits},
        "kernels": "cpu" if rt.device.profile.cpu else "gpu", "rows": rows}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
