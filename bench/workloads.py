"""The workload suite: the op classes a user's einsums are made of (permutations, sums, batched
and batch-first products, tensor networks, GEMMs, chains of small ops), timed with one rule on
every lane, and torch on CUDA alike (bench/h200.py runs all three on the H200).

    python bench/workloads.py [--size small|h200] [--lane native|torch]       # CPython
    node --import tools/dawn_host.mjs tools/dawn_run.mjs DIST \\
        --module bench/workloads.py workloads:main [--size small|h200]         # Pyodide + Dawn

The timing rule: operands uploaded once; one warm call (it compiles the pipelines), then calls
for WARMUP_SECONDS; at the H200's sizes, then CLOCK_BURST_SECONDS of the lane's own 2048^2 f32
matmuls back to back (a GPU clocks down while a host-bound lane keeps it partly idle, and comes
back up only under load: every lane starts its trials at the clock a busy GPU runs at); then 5
trials of ``reps`` calls, each trial ending in ``await rt.synchronize()`` (torch:
``torch.cuda.synchronize()``); the median per call. "enqueue_seconds" is the same trials up to
the last call's return: the host's share (enqueueing, and the submits it made), without the
final wait. Each call's output is dropped at once, as a loop in a user's code drops it.
"kernel_seconds" is one more trial under ``rt.kernel_timer()``, per call, and "kernels_us" that
trial's dispatches of one call, in order: each one's kernel and mean microseconds. Every case
whose reference is cheap is checked against numpy on the same values. The last line is
``RESULT {json}``: one row per case with ``case``, ``lane``, ``seconds``, ``enqueue_seconds``,
``kernel_seconds``, ``kernels_us``, ``bytes`` (memory a call must move at least), ``flops`` and
``window`` (the wall-clock seconds since the epoch when its trials began and ended:
bench/h200.py reads the GPU's clock over it).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import operator
import statistics
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

TRIALS = 5
WARMUP_SECONDS = 0.3
CLOCK_BURST_SECONDS = 0.25  # the H200's SM clock climbs from 345 to 1980 MHz within 0.2 s of load
CHECK_MAX_BYTES = 300 << 20  # operands and output a numpy check may hold (Pyodide's memory)
CHECK_MAX_FLOPS = 2e9  # what numpy in Pyodide computes in a few seconds


@dataclass(frozen=True)
class Workload:
    """One case: operands (shape, dtype), the call as numpy's einsum or transpose spelling it
    (``spec``), and the repetitions per trial."""

    name: str
    kind: str  # "permutation", "reduction", "batched", "network", "gemm", "chain"
    shapes: tuple[tuple[int, ...], ...]
    dtype: str
    spec: str | tuple[int, ...]  # einsum subscripts, or the axes of a permutation
    reps: int = 10
    repeat: int = 1  # einsums per call over the same operands (the MPS norm: one per site)

    @property
    def itemsize(self) -> int:
        return np.dtype(self.dtype).itemsize

    @property
    def out_shape(self) -> tuple[int, ...]:
        if isinstance(self.spec, tuple):
            return tuple(self.shapes[0][a] for a in self.spec)
        if self.kind == "chain":
            return self.shapes[0]
        inputs, output = self.spec.split("->")
        sizes = {label: n for labels, shape in zip(inputs.split(","), self.shapes)
                 for label, n in zip(labels, shape)}
        return tuple(sizes[label] for label in output)

    @property
    def bytes(self) -> int:
        """Bytes a call must move at least: read every operand once, write the output once
        (a sum's output is negligible: its read bytes)."""
        size = sum(int(np.prod(s)) for s in self.shapes) + int(np.prod(self.out_shape))
        return size * self.itemsize * self.repeat

    @property
    def flops(self) -> int:
        """Real floating-point operations of the cheapest path (a complex multiply-add is 8)."""
        if self.kind in ("permutation", "reduction"):
            return int(np.prod(self.shapes[0])) if self.kind == "reduction" else 0
        scale = 8 if np.dtype(self.dtype).kind == "c" else 2
        if self.kind == "chain":
            n = self.shapes[0][0]
            return scale * n ** 3 * self.repeat
        # no memory limit: numpy's default one rules out every intermediate larger than the
        # operands, and with it the cheap paths of a tensor network
        path = np.einsum_path(self.spec, *(np.empty(s, np.float32) for s in self.shapes),
                              optimize=("optimal", 1e30))[1]
        naive = next(line for line in path.splitlines() if "Optimized FLOP count" in line)
        return int(float(naive.split(":")[1]) * scale / 2) * self.repeat

    def operands(self) -> list[np.ndarray]:
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        out = []
        for shape in self.shapes:
            x = rng.standard_normal(shape, np.float32)
            if self.dtype == "complex64":
                x = (x + 1j * rng.standard_normal(shape, np.float32)).astype(np.complex64)
            if self.kind in ("network", "chain"):
                # keeps a long chain's values finite: each step's factor has norm about 1
                x /= np.float32(np.sqrt(max(shape)))
            out.append(x)
        return out


def workloads(size: str) -> list[Workload]:
    """The cases at the H200's sizes, or at sizes SwiftShader runs in seconds (``small``)."""
    big = size == "h200"
    f32, c32 = "float32", "complex64"
    t, p, r2 = (4096, 8192) if big else (256, 512), 64 if big else 16, 24 if big else 14
    s = 8192 if big else 1024
    b, h, q, d = (8, 8, 1024, 64) if big else (2, 2, 128, 16)
    lb, li, lj, lk = (32, 1021, 1023, 1019) if big else (8, 61, 67, 59)
    chi, chi4, w = (512, 256, 16) if big else (64, 32, 4)
    ijk = (256, 64, 64, 256) if big else (32, 16, 16, 32)
    g, gc = (4096, 2048) if big else (256, 128)
    mps, sites = (64, 24) if big else (16, 8)
    chain = 64 if big else 16
    i, j, k, m = ijk
    return [
        Workload(f"transpose {t[0]}^2 f32", "permutation", ((t[0], t[0]),), f32, (1, 0)),
        Workload(f"transpose {t[1]}^2 f32", "permutation", ((t[1], t[1]),), f32, (1, 0)),
        Workload(f"permute {p}^4 f32 (3,1,0,2)", "permutation", ((p,) * 4,), f32, (3, 1, 0, 2)),
        Workload(f"permute {p}^4 c32 (3,1,0,2)", "permutation", ((p,) * 4,), c32, (3, 1, 0, 2)),
        Workload(f"permute 2^{r2} f32 reversed", "permutation", ((2,) * r2,), f32,
                 tuple(range(r2))[::-1]),
        Workload(f"sum {s}^2 f32 all", "reduction", ((s, s),), f32, "ab->"),
        Workload(f"sum {s}^2 f32 axis 0", "reduction", ((s, s),), f32, "ab->b"),
        Workload(f"sum {s}^2 f32 axis 1", "reduction", ((s, s),), f32, "ab->a"),
        Workload(f"sum batched {s // 8}x{s // 8}x64 axis 1", "reduction",
                 ((s // 8, s // 8, 64),), f32, "abc->ac"),
        Workload(f"einsum bhqd,bhkd->bhqk b{b} h{h} q{q} d{d}", "batched",
                 ((b, h, q, d), (b, h, q, d)), f32, "bhqd,bhkd->bhqk"),
        Workload(f"einsum bhqk,bhkd->bhqd b{b} h{h} q{q} d{d}", "batched",
                 ((b, h, q, q), (b, h, q, d)), f32, "bhqk,bhkd->bhqd"),
        Workload(f"einsum bhqk,bhkd->bhqd c32 b{b} h{h} q{q // 2} d{d}", "batched",
                 ((b, h, q // 2, q // 2), (b, h, q // 2, d)), c32, "bhqk,bhkd->bhqd"),
        Workload(f"einsum bij,bjk->bik 100x{q - 1}x{d + 3}x{q - 3}", "batched",
                 ((100, q - 1, d + 3), (100, d + 3, q - 3)) if big else
                 ((10, q - 1, d + 3), (10, d + 3, q - 3)), f32, "bij,bjk->bik"),
        # the same spelling with a long contraction: compute-bound, where a batch-first GEMM
        # must not lose to packing the operands for the tiled one
        Workload(f"einsum bij,bjk->bik {lb}x{li}x{lj}x{lk}", "batched",
                 ((lb, li, lj), (lb, lj, lk)), f32, "bij,bjk->bik"),
        Workload(f"einsum ab,asc,bsd->cd chi{chi} d4", "network",
                 ((chi, chi), (chi, 4, chi), (chi, 4, chi)), f32, "ab,asc,bsd->cd"),
        Workload(f"einsum awb,asc,wstv,btd->cvd chi{chi4} w{w} d4", "network",
                 ((chi4, w, chi4), (chi4, 4, chi4), (w, 4, 4, w), (chi4, 4, chi4)), f32,
                 "awb,asc,wstv,btd->cvd"),
        Workload(f"einsum ijk,jkl,klm->im {i},{j},{k},{m}", "network",
                 ((i, j, k), (j, k, j), (k, j, m)), f32, "ijk,jkl,klm->im"),
        Workload(f"matmul f32 {g}", "gemm", ((g, g), (g, g)), f32, "ij,jk->ik"),
        Workload(f"matmul c32 {gc}", "gemm", ((gc, gc), (gc, gc)), c32, "ij,jk->ik"),
        Workload(f"MPS norm chi{mps} {sites} sites", "network",
                 ((mps, mps), (mps, 2, mps), (mps, 2, mps)), f32, "ab,asc,bsd->cd", reps=3,
                 repeat=sites),
        Workload(f"100 chained {chain}^3 dot_generals", "chain", ((chain, chain),) * 2, f32,
                 "ij,jk->ik", reps=3, repeat=100),
    ]


def reference(case: Workload, arrays: list[np.ndarray]) -> np.ndarray:
    """numpy's result of one call on the same values."""
    return np.asarray(call(case, np.transpose, operator.matmul,
                           lambda spec, *xs: np.einsum(spec, *xs, optimize=True))(*arrays))


def checked(case: Workload) -> bool:
    return case.bytes // case.repeat <= CHECK_MAX_BYTES and case.flops <= CHECK_MAX_FLOPS


def call(case: Workload, permute: Callable[..., Any], matmul: Callable[..., Any],
         einsum: Callable[..., Any]) -> Callable[..., Any]:
    """One call of the case, from a library's permute(x, axes), matmul(x, w) and
    einsum(spec, *xs)."""
    if isinstance(case.spec, tuple):
        return lambda x: permute(x, case.spec)
    if case.kind == "chain":
        def chain(x, w):
            for _ in range(case.repeat):
                x = matmul(x, w)
            return x
        return chain
    if case.repeat > 1:  # the MPS norm: the environment carried over the sites
        def sites(env, a, a2):
            for _ in range(case.repeat):
                env = einsum(case.spec, env, a, a2)
            return env
        return sites
    return lambda *xs: einsum(case.spec, *xs)


def call_ours(case: Workload) -> Callable[..., Any]:
    """One call on this package's device tensors (enqueued; nothing waits)."""
    import tenferro_web as tw

    return call(case, tw.transpose, lambda x, w: tw.dot_general(x, w, [1], [0]),
                tw.einsum_sync)


def call_torch(case: Workload) -> Callable[..., Any]:
    import torch

    def einsum(spec: str, *xs):
        if case.kind == "reduction":  # torch's own reduction kernels, as a user calls them
            inputs, output = spec.split("->")
            return xs[0].sum(dim=[n for n, label in enumerate(inputs) if label not in output])
        return torch.einsum(spec, *xs)

    return call(case, lambda x, axes: x.permute(*axes).contiguous(), operator.matmul, einsum)


Burst = Callable[[], Any] | None  # the lane's clock burst (an awaitable), or None


async def timed(call: Callable[[], Any], wait: Callable[[], Any], reps: int,
                burst: Burst) -> tuple[float, float, float]:
    """Seconds per call by the module's rule (``wait`` is the lane's host barrier), the same
    up to the last call's return (the host's share: enqueueing and the submits it made, not
    the final wait), and the wall clock when the trials began."""
    call()
    await wait()
    warm_until = time.perf_counter() + WARMUP_SECONDS
    while time.perf_counter() < warm_until:
        for _ in range(reps):
            call()
        await wait()
    if burst is not None:
        await burst()
    began = time.time()
    times, enqueued = [], []
    for _ in range(TRIALS):
        start = time.perf_counter()
        for _ in range(reps):
            call()
        enqueued.append((time.perf_counter() - start) / reps)
        await wait()
        times.append((time.perf_counter() - start) / reps)
    return statistics.median(times), statistics.median(enqueued), began


def clock_burst(matmul: Callable[[], Any], wait: Callable[[], Any]) -> Callable[[], Any]:
    """CLOCK_BURST_SECONDS of ``matmul`` eight at a time, each eight ending in ``wait``."""
    async def burst() -> None:
        until = time.perf_counter() + CLOCK_BURST_SECONDS
        while time.perf_counter() < until:
            outs = [matmul() for _ in range(8)]
            await wait()
            del outs
    return burst


def row(case: Workload, lane: str, seconds: float, kernel: float | None, **extra) -> dict:
    return {"case": case.name, "kind": case.kind, "lane": lane, "seconds": seconds,
            "kernel_seconds": kernel, "bytes": case.bytes, "flops": case.flops, **extra}


def describe(r: dict) -> str:
    kernel = f"kernels {r['kernel_seconds'] * 1e3:8.3f} ms" if r["kernel_seconds"] else ""
    if r.get("kernels_us"):
        shown = r["kernels_us"][:6]
        more = f", {len(r['kernels_us']) - 6} more" if len(r["kernels_us"]) > 6 else ""
        kernel += " (" + ", ".join(f"{name} {us}" for name, us in shown) + f"{more} us)"
    rate = f"{r['bytes'] / r['seconds'] / 1e9:9.1f} GB/s" if r["kind"] in (
        "permutation", "reduction") else f"{r['flops'] / r['seconds'] / 1e9:9.1f} GFLOP/s"
    allocated = f"  {r['allocations']} allocations" if r.get("allocations") else ""
    host = f"host {r['enqueue_seconds'] * 1e3:.3f} ms  " if "enqueue_seconds" in r else ""
    return (f"{r['lane']:<7}{r['case']:<48}{r['seconds'] * 1e3:9.3f} ms {rate}  {host}{kernel}"
            f"{allocated}")


async def profiled(call: Callable[[], Any], wait: Callable[[], Any], reps: int, log) -> None:
    """Where one trial's host time goes (cProfile, the functions of most own time)."""
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(reps):
        call()
    await wait()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(14)
    log("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:4000])


async def run_ours(rt, lane: str, cases: list[Workload], log=print, profile: bool = False,
                   trim_pool: bool = False, burst: Burst = None) -> list[dict]:
    timestamps = "timestamp-query" in rt.adapter.features
    rows = []
    for case in cases:
        if trim_pool:  # every earlier case's buffers back to the device first
            await rt.synchronize()
            rt.device.buffers.trim()
        arrays = case.operands()
        tensors = [rt.upload(a) for a in arrays]
        call = call_ours(case)
        pool = rt.device.buffers
        created = pool.allocations
        seconds, enqueue, began = await timed(lambda c=call, t=tensors: c(*t),
                                              rt.synchronize, case.reps, burst)
        # buffers allocated while timed (a pooled workload allocates none after its warm call)
        allocated = pool.allocations - created
        kernel, per_kernel = None, None
        if timestamps:
            async with rt.kernel_timer() as timer:
                for _ in range(case.reps):
                    call(*tensors)
            kernel = timer.seconds / case.reps
            # one call's dispatches in order: each one's kernel and mean microseconds
            n = len(timer.kernels) // case.reps
            per_kernel = [[timer.kernels[d][0], round(statistics.fmean(
                timer.kernels[c * n + d][1] for c in range(case.reps)) * 1e6, 1)]
                for d in range(n)]
        ended = time.time()
        if profile:
            await profiled(lambda c=call, t=tensors: c(*t), rt.synchronize, case.reps, log)
        error = None
        if checked(case):
            got = await call(*tensors).download()
            want = reference(case, arrays)
            scale = float(np.max(np.abs(want))) if want.size else 1.0
            error = float(np.max(np.abs(got - want)) / scale) if want.size else 0.0
            if error > 1e-4:
                raise AssertionError(f"{case.name}: relative error {error:.2e} against numpy")
        rows.append(row(case, lane, seconds, kernel, enqueue_seconds=enqueue,
                        relative_error=error,
                        kernels_us=per_kernel, allocations=allocated, window=[began, ended]))
        log(describe(rows[-1]))
    return rows


def batch_tile_settings(tiles: str) -> list[tuple[str, dict[str, Any]]]:
    """--batch-tiles: gemm_batch_tiled's f32 tile, TMxTN x BK, one setting per candidate."""
    from tenferro_web.lowering import gemm

    settings = []
    for text in tiles.split(","):
        tm, tn, bk = map(int, text.split("x"))
        settings.append((f"gemm_batch_tiled f32 tile {text}",
                         {"lowering.gemm.BATCH_TILES": {**gemm.BATCH_TILES, "f32": (tm, tn)},
                          "lowering.gemm.BATCH_BK": (bk,)}))
    return settings


def constant_settings(assignment: str) -> list[tuple[str, dict[str, Any]]]:
    """--set MODULE.NAME=V1,V2,...: a constant of tenferro_web.MODULE, one setting per
    value (Python literals; separated by ';' instead where a value holds commas)."""
    target, _, values = assignment.partition("=")
    return [(f"{target}={value}", {target: ast.literal_eval(value)})
            for value in values.split(";" if ";" in values else ",")]


async def sweep_settings(rt, lane: str, cases: list[Workload],
                         settings: list[tuple[str, dict[str, Any]]], log=print,
                         burst: Burst = None) -> list[dict]:
    """The cases once per setting of the package's constants (``MODULE.NAME`` of
    tenferro_web); rows name theirs."""
    import importlib

    import tenferro_web as tw

    def place(target: str) -> tuple[Any, str]:
        module, _, name = target.rpartition(".")
        return importlib.import_module(f"tenferro_web.{module}"), name

    chosen = {target: getattr(*place(target)) for _, values in settings for target in values}
    rows = []
    try:
        for label, values in settings:
            # each setting alone: the others back at their defaults
            for target, value in {**chosen, **values}.items():
                setattr(*place(target), value)
            tw.api.forget_programs()
            log(label)
            try:
                rows.extend({**r, "setting": label}
                            for r in await run_ours(rt, lane, cases, log, burst=burst))
            except tw.TenferroError as error:  # e.g. more workgroup memory than the device has
                log(f"  {type(error).__name__}: {error}")
    finally:
        for target, value in chosen.items():
            setattr(*place(target), value)
        tw.api.forget_programs()
    return rows


async def run_torch(cases: list[Workload], log=print, burst: bool = False) -> list[dict]:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    async def wait() -> None:
        torch.cuda.synchronize()

    warmer = None
    if burst:
        square = torch.rand(2048, 2048, device="cuda")
        warmer = clock_burst(lambda: square @ square, wait)
    rows = []
    for case in cases:
        tensors = [torch.from_numpy(a).cuda() for a in case.operands()]
        call = call_torch(case)
        seconds, enqueue, began = await timed(lambda c=call, t=tensors: c(*t), wait,
                                              case.reps, warmer)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(case.reps):
            call(*tensors)
        end.record()
        torch.cuda.synchronize()
        rows.append(row(case, "torch", seconds, start.elapsed_time(end) / 1e3 / case.reps,
                        enqueue_seconds=enqueue, window=[began, time.time()]))
        log(describe(rows[-1]))
    return rows


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="small", choices=["small", "h200"])
    parser.add_argument("--lane", default="native", choices=["native", "torch"],
                        help="in CPython: this package on wgpu-native, or torch on CUDA")
    parser.add_argument("--kernels", default="auto", choices=["auto", "cpu", "gpu"])
    parser.add_argument("--only", default="",
                        help="cases whose name contains one of these ('|' between)")
    parser.add_argument("--profile", action="store_true",
                        help="also profile one trial of each case on the host (cProfile)")
    parser.add_argument("--batch-tiles", default="",
                        help="gemm_batch_tiled's f32 tiles to try in turn, TMxTNxBK (',' "
                             "between): each runs the cases with that tile alone")
    parser.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=V1,V2",
                        help="a constant of tenferro_web.MODULE to try at each value "
                             "in turn (repeatable; each setting alone; ';' between values "
                             "that hold commas)")
    parser.add_argument("--trim-pool", action="store_true",
                        help="give the storage pool's free buffers back to the device before "
                             "each case (does an earlier case's memory slow a later one?)")
    args = parser.parse_args(argv)
    only = args.only.split("|")
    cases = [c for c in workloads(args.size) if any(o in c.name for o in only)]
    log = lambda line: print(line, flush=True)  # noqa: E731
    result: dict[str, Any] = {}
    if args.lane == "torch" and sys.platform != "emscripten":
        import torch

        result["version"] = f"torch {torch.__version__}"
        rows = await run_torch(cases, log, burst=args.size == "h200")
    else:
        import tenferro_web as tw

        if sys.platform == "emscripten":
            rt, lane = await tw.WebGpuRuntime.create(kernels=args.kernels), "dawn"
        else:
            rt, lane = tw.WebGpuRuntime.native(kernels=args.kernels), "native"
        log(f"{lane}: {rt.adapter.vendor} {rt.adapter.description}, kernels "
            f"{'cpu' if rt.device.profile.cpu else 'gpu'}")
        warmer = None
        if args.size == "h200":
            square = rt.upload(np.random.default_rng(0).random((2048, 2048), np.float32))
            warmer = clock_burst(lambda: tw.dot_general(square, square, [1], [0]), rt.synchronize)
        if args.batch_tiles or args.set:
            settings = batch_tile_settings(args.batch_tiles) if args.batch_tiles else []
            settings += [s for assignment in args.set for s in constant_settings(assignment)]
            rows = await sweep_settings(rt, lane, cases, settings, log, warmer)
        else:
            rows = await run_ours(rt, lane, cases, log, args.profile, args.trim_pool, warmer)
    print("RESULT " + json.dumps({**result, "rows": rows}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
