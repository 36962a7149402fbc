"""The copy kernels' tilings side by side on one WebGPU lane: each candidate of
``lowering.copy.TRANSPOSE_TILINGS`` (transpose_tiled: tiles per workgroup, rows) and of
``GROUPED_TILINGS`` (permute_tiled: batches per workgroup, rows) is made the only choice in
turn, and the permutations it would serve are timed by ``rt.kernel_timer()`` (r calls, the
median of 3 timed trials), each checked against numpy once.

Runs in either host of the package:
  * CPython on wgpu-native:  python bench/copy_sweep.py [--quick]
  * Pyodide on Node.js + Dawn (timestamp quantization off: TENFERRO_DAWN_OPTIONS=
    disable-dawn-features=timestamp_quantization):
    node --import tools/dawn_host.mjs tools/dawn_run.mjs DIST --module bench/copy_sweep.py \
        copy_sweep:main [--quick]
The last line is ``RESULT {json}``: per candidate and case, the kernels' time and GB/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys

import numpy as np

import tenferro_web as tw
from tenferro_web.lowering import copy

F32, C32 = np.float32, np.complex64
# (kernel, shape, dtype, axes): which kernel the case's plan takes on a GPU (asserted).
CASES = [
    ("transpose_tiled", (8192, 8192), F32, (1, 0)),
    ("transpose_tiled", (4096, 4096), F32, (1, 0)),
    ("transpose_tiled", (1 << 20, 64), F32, (1, 0)),  # a batched product's batch-first output
    ("transpose_tiled", (64, 1 << 20), F32, (1, 0)),  # a batch-first operand packed batch-last
    ("transpose_tiled", (100, 1044483), F32, (1, 0)),
    ("transpose_tiled", (4096, 4096), C32, (1, 0)),
    ("permute_tiled", (64, 64, 64, 64), F32, (3, 1, 0, 2)),
    ("permute_tiled", (64, 64, 64, 64), C32, (3, 1, 0, 2)),
    ("permute_tiled", (2,) * 24, F32, tuple(range(23, -1, -1))),
    ("permute_tiled", (256, 256, 1024), F32, (2, 1, 0)),
    ("permute_tiled", (64, 4096, 64), C32, (2, 1, 0)),
]
QUICK = [
    ("transpose_tiled", (512, 512), F32, (1, 0)),
    ("transpose_tiled", (4096, 64), F32, (1, 0)),
    ("transpose_tiled", (300, 200), C32, (1, 0)),
    ("permute_tiled", (32, 32, 8, 32), F32, (3, 1, 0, 2)),
    ("permute_tiled", (2,) * 14, C32, tuple(range(13, -1, -1))),
]
CANDIDATES = {
    "transpose_tiled": [copy.Tiling(tiles, rows) for tiles in (1, 2, 4, 8)
                        for rows in (2, 8)],
    "permute_tiled": [copy.Tiling(tiles, rows) for tiles in (1, 4, 8)
                      for rows in (2, 8)],
}
TABLES = {"transpose_tiled": copy.TRANSPOSE_TILINGS, "permute_tiled": copy.GROUPED_TILINGS}
REPS = 10


async def time_case(rt, x, axes, kernel: str) -> float:
    """Seconds of kernels per call, the median of 3 timed trials of REPS calls (after the
    checked call, which compiled the kernel and waited for it)."""
    trials = []
    for _ in range(3):
        async with rt.kernel_timer() as timer:
            for _ in range(REPS):
                tw.transpose(x, axes)
        assert {name for name, _ in timer.kernels} == {kernel}, timer.kernels
        trials.append(timer.seconds / REPS)
    return statistics.median(trials)


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small cases (a smoke run)")
    args = parser.parse_args(argv)
    if sys.platform == "emscripten":
        rt, lane = await tw.WebGpuRuntime.create(kernels="gpu"), "dawn"
    else:
        rt, lane = tw.WebGpuRuntime.native(kernels="gpu"), "wgpu-native"
    print(f"{lane}: {rt.adapter.description or rt.adapter.vendor}", flush=True)
    chosen = {kernel: dict(table) for kernel, table in TABLES.items()}
    rng = np.random.default_rng(0)
    rows = []
    try:
        for kernel, shape, dtype, axes in QUICK if args.quick else CASES:
            host = rng.standard_normal(shape).astype(dtype)
            want = np.ascontiguousarray(np.transpose(host, axes))
            x = rt.upload(host)
            itemsize = host.itemsize
            for tiling in CANDIDATES[kernel]:
                TABLES[kernel][itemsize] = tiling
                tw.api.forget_programs()
                np.testing.assert_array_equal(await tw.transpose(x, axes).download(), want)
                seconds = await time_case(rt, x, axes, kernel)
                label = ", ".join(f"{k} {v}" for k, v in vars(tiling).items())
                gbps = 2 * host.nbytes / seconds / 1e9
                print(f"{kernel} {label:<16} {str(shape):<22} {np.dtype(dtype).name:<10}"
                      f"{seconds * 1e3:8.3f} ms {gbps:7.0f} GB/s", flush=True)
                rows.append({"kernel": kernel, "tiling": vars(tiling), "shape": shape,
                             "dtype": np.dtype(dtype).name, "axes": axes,
                             "kernel_seconds": seconds, "gbps": gbps})
            del x
    finally:
        for kernel, table in TABLES.items():
            table.update(chosen[kernel])
        tw.api.forget_programs()
    print("RESULT " + json.dumps({"lane": lane, "rows": rows}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
