"""gemm_tiled's tile shapes side by side on one WebGPU lane: each candidate of
``lowering.gemm.GPU_TILES`` is made the only choice in turn, and the GEMM cases it would serve
are timed with bench/gemm_lane.py's rule (r products, one wait, median of 5).

Runs in either host of the package, like bench/gemm_lane.py:
  * CPython on wgpu-native:  python bench/gemm_sweep.py [--quick]
  * Pyodide on Node.js + Dawn:
    node --import tools/dawn_host.mjs tools/dawn_run.mjs DIST --module bench/gemm_cases.py \
        --module bench/gemm_lane.py --module bench/gemm_sweep.py gemm_sweep:main [--quick]
The last line is ``RESULT {json}``: per candidate and case, GFLOP/s and the sampled error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import tenferro_web as tw
from tenferro_web.lowering import gemm

sys.path.insert(0, str(Path(__file__).parent))
from gemm_cases import CASES, QUICK, SWEPT  # noqa: E402
from gemm_lane import POOL, run_cases  # noqa: E402

Tiles = gemm.Tiles
# (scalar, big) -> candidates; the cases of that class are timed with each.
CANDIDATES = {
    ("f32", True): (Tiles(8, 8, 8, 1), Tiles(8, 8, 8, 1, vec_c=True),
                    Tiles(8, 8, 8, 1, vec_c=True, spread_m=True), Tiles(8, 8, 8, 1, spread_m=True),
                    Tiles(16, 8, 8, 1), Tiles(4, 4, 16, 2, vec_c=True)),
    ("f32", False): (Tiles(4, 4, 16, 2), Tiles(4, 4, 16, 2, vec_c=True),
                     Tiles(4, 4, 16, 2, spread_m=True), Tiles(8, 4, 16, 1),
                     Tiles(8, 8, 8, 1, vec_c=True)),
    ("c32", True): (Tiles(4, 4, 8, 1), Tiles(8, 4, 8, 1), Tiles(4, 8, 8, 1), Tiles(8, 8, 8, 1)),
}


def case_class(case) -> tuple[str, bool]:
    name, m, n, _, batch, dtype, _ = case
    return ("c32" if dtype == "complex64" else "f32", gemm.big_output(m, n, batch))


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small cases (a smoke run)")
    parser.add_argument("--cases", default=",".join(SWEPT), help="case names, comma-separated")
    args = parser.parse_args(argv)
    if sys.platform == "emscripten":
        rt, lane = await tw.WebGpuRuntime.create(kernels="gpu", storage_pool_bytes=POOL), "dawn"
    else:
        rt, lane = tw.WebGpuRuntime.native(kernels="gpu", storage_pool_bytes=POOL), "wgpu-native"
    cases = QUICK if args.quick else [c for c in CASES if c[0] in args.cases.split(",")]
    limit = rt.device.profile.max_workgroup_bytes
    print(f"{lane}: {rt.adapter.description}, workgroup memory {limit} bytes", flush=True)
    chosen = dict(gemm.GPU_TILES)
    rows = []
    for case in cases:
        klass = case_class(case)
        for tiles in CANDIDATES.get(klass, chosen[klass]):
            if tiles.workgroup_bytes(8 if klass[0] == "c32" else 4) > limit:
                continue
            gemm.GPU_TILES[klass] = (tiles,)
            tw.api.forget_programs()  # or a repeated call reuses the last candidate's program
            label = (f"{tiles.tm}x{tiles.tn} BK={tiles.bk} buffers={tiles.buffers}"
                     + (" vec C" if tiles.vec_c else "") + (" spread M" if tiles.spread_m else ""))
            [row] = await run_cases(rt, [case], log=lambda line, label=label:
                                    print(f"{label:<34}{line}", flush=True))
            rows.append({"tiles": label, **row})
    gemm.GPU_TILES.update(chosen)
    tw.api.forget_programs()
    print("RESULT " + json.dumps({"lane": lane, "rows": rows}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
