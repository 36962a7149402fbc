"""transpose_tiled's workgroup shapes side by side: 32 x ROWS invocations per 32 x 32 tile, each
moving 32 / ROWS elements, against the strided gather (the CPU family's copy), on one lane.
Same rule as bench/families.py (r transposes, then one readback; median of 5).

    .venv/bin/python bench/transpose_sweep.py                       (wgpu-native)
    node --import tools/dawn_host.mjs tools/dawn_run.mjs DIST \\
        --module bench/timing.py --module bench/transpose_sweep.py transpose_sweep:main
"""

import asyncio
import sys

import numpy as np
from timing import family_runtimes, timed

import tenferro_web as tw
from tenferro_web.lowering import copy

SHAPES = ((1024, 1024), (4096, 4096), (64, 512, 512))


async def main(argv: list[str]) -> int:
    rts = await family_runtimes()
    print(f"adapter: {rts['gpu'].adapter.description}", flush=True)
    chosen = copy.TILE_ROWS
    for shape in SHAPES:
        x = np.asfortranarray(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
        perm = (1, 0) + tuple(range(2, len(shape)))
        gb = 2 * x.nbytes / 1e9
        for label, family, rows in [("strided gather", "cpu", chosen),
                                    *((f"tiled, ROWS={r}", "gpu", r) for r in (8, 4, 2, 1))]:
            copy.TILE_ROWS = rows
            copy.lower_copy.cache_clear()
            a = rts[family].upload(x)
            assert np.array_equal(await tw.transpose(a, perm).download(), x.transpose(perm))
            seconds = await timed(lambda a=a, perm=perm: tw.transpose(a, perm), 4)
            print(f"{str(shape):<18}{label:<18}{seconds * 1e3:9.3f} ms {gb / seconds:8.1f} GB/s",
                  flush=True)
    copy.TILE_ROWS = chosen
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
