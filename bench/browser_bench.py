"""The Python side of the browser benchmark (runs in Pyodide, driven by page/bench.mjs).

Times, in one page and on the same operands: this package's dot_general called from Python (so
its Python overhead is included), Pyodide's numpy matmul, and the WebGPU peers of page/bench.mjs
(TF.js, jax-js, onnxruntime-web). One rule for every library: a trial enqueues r products back to
back and ends with the readback of its last result. Per case, one warm-up trial of each library,
then rounds that time one trial of every library, in an order that rotates from round to round,
so that the machine's drift falls on all of them alike; each library's median trial counts.
Every library's last result is checked against numpy's. Plus readback latency, the per-op
cost of a chain of small dispatches, and the workload suite (bench/workloads.py: every op class
of a user's einsums) at its small sizes, on the kernel family this adapter gets. Progress goes
to ``log`` as it runs.
"""

import statistics
import time
from dataclasses import dataclass

import numpy as np
import workloads
from pyodide.ffi import to_js

import tenferro_web as tw
from js import benchPeers

OURS, NUMPY = "tenferro-web", "numpy"


@dataclass
class Case:
    name: str
    m: int
    n: int
    k: int
    batch: int
    dtype: type
    trials: int
    r: int  # products per trial: several where one is too short to time against the readback

    @property
    def libraries(self):
        peers = list(benchPeers.names) if self.dtype == np.float32 else []  # the peers: f32 only
        return [OURS, NUMPY, *peers]


def cases(quick):
    trials = {256: 5, 512: 5, 1024: 3, 2048: 1}
    sizes = [256, 512] if quick else [256, 512, 1024, 2048]
    out = [Case(f"f32 {s}", s, s, s, 1, np.float32, trials[s], max(1, 1024 // s))
           for s in sizes]
    out.append(Case("f32 batch 16x256", 256, 256, 256, 16, np.float32, 3, 1))
    c32 = 256 if quick else 512
    out.append(Case(f"c32 {c32}", c32, c32, c32, 1, np.complex64, 3, 1))
    return out


def timed(run):
    """A trial timed here: (seconds, last product)."""
    async def trial():
        start = time.perf_counter()
        out = await run()
        return time.perf_counter() - start, out

    return trial


def ours(rt, a, b, case):
    """Our trial, and the GPU time of one more (timestamp queries) where the adapter has them."""
    if case.batch > 1:
        # Column-major [m, k, batch] on the device: batch axes last, every matrix compact.
        da, db = rt.upload(np.moveaxis(a, 0, 2)), rt.upload(np.moveaxis(b, 0, 2))
        cfg = ([1], [0], [2], [2])
    else:
        da, db = rt.upload(a), rt.upload(b)
        cfg = ([1], [0], [], [])

    async def run():
        for _ in range(case.r):
            c = tw.dot_general(da, db, *cfg)
        out = await c.download()
        return np.moveaxis(out, 2, 0) if case.batch > 1 else out  # numpy's order

    async def kernel_seconds():
        if "timestamp-query" not in rt.adapter.features:
            return None
        async with rt.kernel_timer() as timer:
            await run()
        return timer.seconds

    return timed(run), kernel_seconds


def numpy_matmul(a, b, case):
    async def run():
        for _ in range(case.r):
            c = a @ b
        return c

    return timed(run)


async def peer(name, a, b, case):
    """A peer opened on the operands (page/bench.mjs): its trial, timed in the page, and how to
    close it."""
    handle = await benchPeers.open(name, to_js(list(a.shape)), to_js(list(b.shape)), a, b,
                                   case.r)

    async def trial():
        res = await benchPeers.trial(handle)
        return res.ms / 1e3, np.frombuffer(res.out.to_py(), np.float32)

    return trial, lambda: benchPeers.close(handle)


def check(library, case, out, ref):
    """Fail the run when a library's product is not numpy's (a library that skipped work, or
    computed something else, must not show up as fast)."""
    err = np.max(np.abs(np.reshape(out, ref.shape) - ref)) / np.max(np.abs(ref))
    if not err < 1e-4:
        raise AssertionError(f"{case.name}: {library} differs from numpy: max |error| is "
                             f"{err:.1e} of max |C|")


async def gemm_case(rt, case, step):
    rng = np.random.default_rng(0)
    shape_a = (case.batch, case.m, case.k) if case.batch > 1 else (case.m, case.k)
    shape_b = (case.batch, case.k, case.n) if case.batch > 1 else (case.k, case.n)
    a = rng.standard_normal(shape_a).astype(case.dtype)
    b = rng.standard_normal(shape_b).astype(case.dtype)
    if case.dtype == np.complex64:
        a = a + 1j * rng.standard_normal(shape_a).astype(np.float32)
        b = b + 1j * rng.standard_normal(shape_b).astype(np.float32)
    flops = (8 if case.dtype == np.complex64 else 2) * case.m * case.n * case.k * case.batch
    libraries = case.libraries
    trials, closers = {}, []
    trials[OURS], kernel_seconds = ours(rt, a, b, case)
    trials[NUMPY] = numpy_matmul(a, b, case)
    try:
        for name in libraries:
            if name not in trials:  # a peer
                trials[name], close = await peer(name, a, b, case)
                closers.append(close)
        step(f"{case.name}: a warm-up trial of each library")
        outs = {lib: (await trials[lib]())[1] for lib in libraries}
        times = {lib: [] for lib in libraries}
        for t in range(case.trials):
            step(f"{case.name}: round {t + 1}/{case.trials}")
            for lib in libraries[t % len(libraries):] + libraries[:t % len(libraries)]:
                seconds, outs[lib] = await trials[lib]()
                times[lib].append(seconds)
        kernel = await kernel_seconds()
    finally:
        for close in closers:
            await close()
    for library, out in outs.items():
        if library != NUMPY:
            check(library, case, out, outs[NUMPY])
    gflops = {lib: flops * case.r / statistics.median(ts) / 1e9 for lib, ts in times.items()}
    return {"case": case.name, "m": case.m, "n": case.n, "k": case.k, "batch": case.batch,
            "dtype": np.dtype(case.dtype).name, "r": case.r, "trials": case.trials,
            "gflops": gflops,
            "ours_kernels_gflops": kernel and flops * case.r / kernel / 1e9,
            "ours_over": {lib: gflops[OURS] / g for lib, g in gflops.items() if lib != OURS}}


async def readback(rt, nbytes, reps=21):
    t = rt.upload(np.ones(nbytes // 4, np.float32))
    await t.download()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        await t.download()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


async def dispatch_chain(rt, ops=100, reps=5):
    """Per-op cost of enqueueing small dot_generals from Python, and of the whole chain."""
    x = rt.upload(np.eye(8, dtype=np.float32))
    await rt.synchronize()
    enqueue, total = [], []
    for _ in range(reps):
        start = time.perf_counter()
        acc = x
        for _ in range(ops):
            acc = tw.dot_general(acc, x, [1], [0])
        queued = time.perf_counter()
        await rt.synchronize()
        enqueue.append((queued - start) / ops)
        total.append((time.perf_counter() - start) / ops)
    return statistics.median(enqueue) * 1e6, statistics.median(total) * 1e6


async def run(quick, log):
    rt = await tw.WebGpuRuntime.create()
    a = rt.adapter
    log(f"tenferro-web {tw.__version__} on {a.vendor}/{a.architecture}, kernels "
        f"{'cpu' if rt.device.profile.cpu else 'gpu'}")
    plan = cases(quick)
    suite = workloads.workloads("small")
    total = sum(1 + c.trials for c in plan) + 2 + len(suite)  # + readback, chain, the suite
    done = 0

    def step(what):
        nonlocal done
        done += 1
        log(f"step {done}/{total}: {what}")

    rows = []
    for case in plan:
        row = await gemm_case(rt, case, step)
        log(f"{case.name}: " + ", ".join(f"{lib} {g:.2f}" for lib, g in row["gflops"].items())
            + " GFLOP/s")
        rows.append(row)
    step("readback latency")
    readback_ms = {"4 B": await readback(rt, 4), "4 MiB": await readback(rt, 4 << 20)}
    step("chain of 100 small dot_generals")
    enqueue_us, total_us = await dispatch_chain(rt)
    suite_rows = []
    for case in suite:
        step(f"workload {case.name}")
        suite_rows += await workloads.run_ours(rt, "page", [case], log)
    c32, f32_same = rows[-1], next(r for r in rows if r["case"] == f"f32 {rows[-1]['m']}")
    libraries = {
        OURS: {"version": tw.__version__, "backend": "webgpu",
               "adapter": f"{a.vendor}/{a.architecture}"},
        NUMPY: {"version": np.__version__, "backend": "cpu", "adapter": None},
    }
    for name in benchPeers.names:
        libraries[name] = benchPeers.info(name).to_py()
    log("done")
    return {
        "adapter": {"vendor": a.vendor, "architecture": a.architecture,
                    "fallback": a.is_fallback},
        "libraries": libraries,
        "timing": "a trial: `r` products enqueued back to back, ending with the readback of "
                  "the last; per case one warm-up trial of each library, then `trials` rounds "
                  "timing one trial of every library in a rotating order; GFLOP/s of each "
                  "library's median trial",
        "gemm": rows,
        "c32_over_f32_rate": c32["gflops"][OURS] / f32_same["gflops"][OURS],
        "readback_ms": readback_ms,
        "dispatch_us_per_op": {"python_enqueue": enqueue_us, "enqueue_and_gpu": total_us},
        "workloads": {"kernels": "cpu" if rt.device.profile.cpu else "gpu",
                      "rows": suite_rows},
    }
