"""Python dispatch: the time to plan and enqueue one op on tiny operands (8 x 8 f32), where the
GPU work is negligible, per public op, and the same with the op's share of encoding, submitting
and waiting; median of 7 rounds of 200 ops, each round then waiting for the GPU. Natively
(CPython, wgpu-native) or in Pyodide on Node.js + Dawn (the browser transport, whose enqueue
makes no JavaScript call):

    .venv/bin/python bench/dispatch.py
    node --import tools/dawn_host.mjs tools/dawn_run.mjs build/pyodide \\
        --module bench/dispatch.py dispatch:main
"""

import asyncio
import statistics
import time

import numpy as np

import tenferro_web as tw

ROUND = 200


async def per_op(rt, op) -> tuple[float, float]:
    """Seconds per op to enqueue, and with its share of the submits and the final wait (each
    op's output is released at once, so the pool hands the same buffers back)."""
    op()
    await rt.synchronize()
    enqueue, whole = [], []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(ROUND):
            op()
        enqueue.append((time.perf_counter() - start) / ROUND)
        await rt.synchronize()
        whole.append((time.perf_counter() - start) / ROUND)
    return statistics.median(enqueue), statistics.median(whole)


async def measure(rt) -> None:
    x = rt.upload(np.eye(8, dtype=np.float32))
    ops = {
        "dot_general": lambda: tw.dot_general(x, x, [1], [0]),
        "transpose": lambda: tw.transpose(x),
        "einsum ij,jk->ik": lambda: tw.einsum_sync("ij,jk->ik", x, x),
        "a @ b": lambda: x @ x,
        "sum(axis=0)": lambda: tw.sum(x, axis=0),
    }
    for name, op in ops.items():
        enqueue, whole = await per_op(rt, op)
        print(f"{name:<18} {enqueue * 1e6:7.1f} us per op to enqueue, {whole * 1e6:7.1f} us with "
              "its submit and the wait")


async def main(*_: str) -> int:
    rt = await tw.WebGpuRuntime.create()
    print(f"Pyodide on {rt.adapter.vendor}/{rt.adapter.architecture} ({rt.adapter.context})")
    await measure(rt)
    return 0


if __name__ == "__main__":
    native = tw.WebGpuRuntime.native()
    print(f"CPython, native lane on {native.adapter.vendor}")
    asyncio.run(measure(native))
