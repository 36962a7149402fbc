"""`make fuzz`: the kernel fuzz against numpy, exact, on both kernel families. Prints one
reproducer line per failure; exits 1 on any.

    make fuzz N=2000 SEED=7              # cases 0..1999 of seed 7, native lane (wgpu-native)
    make fuzz SEED=7 CASE=1234           # one case, as a failure's reproducer line names it
    make fuzz LANE=dawn N=200            # in Pyodide on Node.js + Dawn (Chrome's WebGPU)

On the native lane this runs in CPython; on the Dawn lane tools/dawn_run.mjs awaits `main`
inside Pyodide. Both drive the same kernels through their own transport.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from kernel_fuzz import make_case, run_fuzz

import tenferro_web as tw


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--case", type=int, help="run this one case (and print what it is)")
    parser.add_argument("--kernels", choices=["cpu", "gpu", "both"], default="both")
    args = parser.parse_args(argv)
    families = ("cpu", "gpu") if args.kernels == "both" else (args.kernels,)
    if sys.platform == "emscripten":
        runtimes = {f: await tw.WebGpuRuntime.create(kernels=f) for f in families}
    else:
        runtimes = {f: tw.WebGpuRuntime.native(kernels=f) for f in families}
    adapter = next(iter(runtimes.values())).adapter
    print(f"adapter: {adapter.vendor} {adapter.architecture} {adapter.description} "
          f"({adapter.context})", flush=True)
    if args.case is not None:
        print(make_case(args.seed, args.case).reproducer)
        start, count = args.case, 1
    else:
        start, count = 0, args.count
    failures = await run_fuzz(runtimes, args.seed, count, start)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
