"""Sums over axes: ``tw.sum`` (the kernel its lowering chooses, named in the output) against a
dot_general of the operand with a stride-0 ones operand (always the GEMM kernels), side by side
in one run, each trial r sums then one readback; median of 5. Natively (lavapipe, both kernel
families) or in Pyodide on Node.js + Dawn (SwiftShader):

    .venv/bin/python bench/sums.py
    node --import tools/dawn_host.mjs tools/dawn_run.mjs build/pyodide \\
        --module bench/timing.py --module bench/sums.py sums:main [gpu|cpu]

On a GPU-family device with subgroups (Dawn), sum_tree is also timed without them.
"""

import asyncio
import dataclasses
import sys

import numpy as np
from timing import timed

import tenferro_web as tw
from tenferro_web.lowering.einsum import lower_einsum

CASES = [((2048, 2048), 0), ((2048, 2048), 1), ((2048, 2048), None), ((64, 65536), 0),
         ((65536, 64), 1), ((16, 16, 4096), (0, 1)), ((4096, 4096), None)]


def chosen(rt, x, axis) -> str:
    """The kernels tw.sum's lowering picked for this operand on this adapter."""
    _, plan = tw.einsum_path("abc"[:x.ndim] + "->" + "", x) if axis is None else \
        tw.einsum_path("abc"[:x.ndim] + "->" + "".join(
            "abc"[a] for a in range(x.ndim)
            if a not in (axis if isinstance(axis, tuple) else (axis,))), x)
    programs = lower_einsum(rt.device.profile, plan)
    return "+".join(o.key.name for p in programs if p for o in p.ops if hasattr(o, "key"))


async def compare(rt, log) -> None:
    for shape, axis in CASES:
        x = rt.upload(np.ones(shape, np.float32))
        summed = tuple(range(len(shape))) if axis is None else \
            (axis if isinstance(axis, tuple) else (axis,))
        ones = rt.upload(np.ones(1, np.float32)).view(
            tuple(shape[a] for a in summed), (0,) * len(summed), 0)
        gb = np.prod(shape) * 4 / 1e9
        ours = await timed(lambda x=x, axis=axis: tw.sum(x, axis=axis), 3)
        gemm = await timed(lambda x=x, ones=ones, summed=summed: tw.dot_general(
            x, ones, summed, range(len(summed))), 3)
        log(f"{str(shape):>16} axis={str(axis):<7} tw.sum {ours * 1e3:8.2f} ms "
            f"({gb / ours:5.2f} GB/s, {chosen(rt, x, axis)})   GEMM path {gemm * 1e3:8.2f} ms "
            f"({gb / gemm:5.2f} GB/s)   {gemm / ours:5.2f}x")


async def subgroups_or_not(rt, log) -> None:
    """sum_tree with subgroupAdd (what the lowering picks where the device has subgroups)
    against the same device told it has none (the tree in workgroup memory), side by side."""
    plain = await tw.WebGpuRuntime.create(kernels="gpu")
    plain.device.profile = dataclasses.replace(plain.device.profile, subgroups=False)
    for shape, axis in CASES:
        x, y = rt.upload(np.ones(shape, np.float32)), plain.upload(np.ones(shape, np.float32))
        if "sum_tree" not in chosen(rt, x, axis):
            continue
        with_subgroups = await timed(lambda x=x, axis=axis: tw.sum(x, axis=axis), 3)
        tree = await timed(lambda y=y, axis=axis: tw.sum(y, axis=axis), 3)
        log(f"{str(shape):>16} axis={str(axis):<7} sum_tree with subgroups "
            f"{with_subgroups * 1e3:8.2f} ms   without {tree * 1e3:8.2f} ms   "
            f"{tree / with_subgroups:5.2f}x")


async def main(argv: list[str] | None = None) -> int:
    """``argv`` (tools/dawn_run.mjs passes the command line's): the kernel family, else auto."""
    rt = await tw.WebGpuRuntime.create(kernels=argv[0] if argv else "auto")
    print(f"adapter {rt.adapter.vendor}/{rt.adapter.architecture} ({rt.adapter.context})")
    await compare(rt, print)
    if rt.device.profile.subgroups and not rt.device.profile.cpu:
        await subgroups_or_not(rt, print)
    return 0


if __name__ == "__main__":
    for family in ("cpu", "gpu"):
        native = tw.WebGpuRuntime.native(kernels=family)
        print(f"native lane, {family} kernels: {native.adapter.vendor}/"
              f"{native.adapter.architecture}")
        asyncio.run(compare(native, print))
    sys.exit(0)
