"""The two kernel families side by side on one adapter, per class of op: the GPU family (what
real GPUs get) against the CPU family (what CPU adapters get), each timed with the same rule
(r ops, then one readback; median of 5). Performance II asks that no class be more than 2x
slower in the GPU family on SwiftShader. In Pyodide on Node.js + Dawn (SwiftShader):

    node --import tools/dawn_host.mjs tools/dawn_run.mjs build/pyodide \\
        --module bench/timing.py --module bench/families.py families:main
or natively (lavapipe): .venv/bin/python bench/families.py
"""

import asyncio
import sys

import numpy as np
from timing import family_runtimes, timed

import tenferro_web as tw

F32, C32 = np.float32, np.complex64
# (class, shape of each operand, dtype, the op on uploaded tensors, r)
CASES = [
    ("GEMM f32 256^3", [(256, 256), (256, 256)], F32,
     lambda a, b: tw.dot_general(a, b, [1], [0]), 2),
    ("GEMM c32 128^3", [(128, 128), (128, 128)], C32,
     lambda a, b: tw.dot_general(a, b, [1], [0]), 2),
    ("GEMM thin 256x8, K 256", [(256, 256), (256, 8)], F32,
     lambda a, b: tw.dot_general(a, b, [1], [0]), 4),
    ("batched 64 x 32^3", [(32, 32, 64), (32, 32, 64)], F32,
     lambda a, b: tw.dot_general(a, b, [1], [0], [2], [2]), 4),
    ("batched 4096 x 4^3", [(4, 4, 4096), (4, 4, 4096)], F32,
     lambda a, b: tw.dot_general(a, b, [1], [0], [2], [2]), 4),
    ("split-K 8x8, K 65536", [(8, 65536), (65536, 8)], F32,
     lambda a, b: tw.dot_general(a, b, [1], [0]), 4),
    ("transpose 1024^2", [(1024, 1024)], F32, lambda a: tw.transpose(a, (1, 0)), 4),
    ("transpose (2, 2, 70000)", [(2, 2, 70000)], F32, lambda a: tw.transpose(a, (1, 0, 2)), 4),
    ("sum 2048^2 axis 0", [(2048, 2048)], F32, lambda a: tw.sum(a, axis=0), 2),
    ("sum 2048^2 axis 1", [(2048, 2048)], F32, lambda a: tw.sum(a, axis=1), 2),
    ("sum 2048^2 all", [(2048, 2048)], F32, lambda a: tw.sum(a), 2),
    ("sum 64 x 65536 axis 0", [(64, 65536)], F32, lambda a: tw.sum(a, axis=0), 2),
]


async def main(argv: list[str]) -> int:
    runtimes = await family_runtimes()
    print(f"adapter: {runtimes['gpu'].adapter.description}", flush=True)
    print(f"{'class':<28}{'GPU family':>12}{'CPU family':>12}{'GPU / CPU':>11}", flush=True)
    rng = np.random.default_rng(0)
    worst = 0.0
    for name, shapes, dtype, op, r in CASES:
        arrays = [np.asfortranarray(rng.integers(-4, 5, s).astype(dtype)) for s in shapes]
        seconds = {}
        results = []
        for family, rt in runtimes.items():
            tensors = [rt.upload(a) for a in arrays]
            seconds[family] = await timed(lambda op=op, tensors=tensors: op(*tensors), r)
            results.append(await op(*tensors).download())
        assert np.array_equal(results[0], results[1]), name
        ratio = seconds["gpu"] / seconds["cpu"]
        worst = max(worst, ratio)
        print(f"{name:<28}{seconds['gpu'] * 1e3:>9.2f} ms{seconds['cpu'] * 1e3:>9.2f} ms"
              f"{ratio:>10.2f}x", flush=True)
    print(f"worst class: the GPU family {worst:.2f}x the CPU family's time", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
