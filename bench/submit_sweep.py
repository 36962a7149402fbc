"""How often the pending stream is submitted: the f32 1024 and 2048 and the batched GEMM cases
(bench/gemm_lane.py's rule; the GPU's own time from timestamps beside it) with each candidate of
``runtime.device.SUBMIT_WORKGROUPS``, on one lane.

    .venv/bin/python bench/submit_sweep.py                          (wgpu-native)
    node --import tools/dawn_host.mjs tools/dawn_run.mjs DIST --module bench/gemm_cases.py \\
        --module bench/gemm_lane.py --module bench/submit_sweep.py submit_sweep:main   (Dawn)
"""

import asyncio
import sys
from pathlib import Path

import tenferro_web as tw
from tenferro_web.runtime import device

sys.path.insert(0, str(Path(__file__).parent))
from gemm_cases import CASES, SUBMIT_SWEPT  # noqa: E402
from gemm_lane import POOL, run_cases  # noqa: E402

CANDIDATES = (512, 1024, 4096, 16384, 1 << 30)


async def main(argv: list[str]) -> int:
    if sys.platform == "emscripten":
        rt = await tw.WebGpuRuntime.create(kernels="gpu", storage_pool_bytes=POOL)
    else:
        rt = tw.WebGpuRuntime.native(kernels="gpu", storage_pool_bytes=POOL)
    chosen = device.SUBMIT_WORKGROUPS
    for _ in range(2):  # twice, to see the noise
        for threshold in CANDIDATES:
            device.SUBMIT_WORKGROUPS = threshold
            await run_cases(rt, [c for c in CASES if c[0] in SUBMIT_SWEPT],
                            log=lambda line, t=threshold: print(f"submit at {t:>10} {line}",
                                                                flush=True))
    device.SUBMIT_WORKGROUPS = chosen
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
