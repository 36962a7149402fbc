"""The Python side of the browser benchmark (runs in Pyodide, driven by page/bench.mjs).

Times, in one page and on the same sizes: this package's dot_general called from Python (so its
Python overhead is included), Pyodide's numpy matmul, and TensorFlow.js's WebGPU matMul; plus
readback latency and the per-op cost of a chain of small dispatches. Medians after a warm-up.
"""

import statistics
import time

import numpy as np

import tenferro_web as tw
from js import tfjsGemm


def median(values):
    return statistics.median(values)


async def time_ours(rt, a, b, cfg, reps):
    tw.dot_general(a, b, *cfg)
    await rt.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        tw.dot_general(a, b, *cfg)
        await rt.synchronize()
        times.append(time.perf_counter() - start)
    return median(times)


def time_numpy(a, b, reps):
    a @ b
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return median(times)


async def gemm_case(rt, name, m, n, k, batch, dtype, reps, log):
    rng = np.random.default_rng(0)
    shape_a, shape_b = ((batch, m, k), (batch, k, n)) if batch > 1 else ((m, k), (k, n))
    a = rng.standard_normal(shape_a).astype(dtype)
    b = rng.standard_normal(shape_b).astype(dtype)
    if dtype == np.complex64:
        a = a + 1j * rng.standard_normal(shape_a).astype(np.float32)
        b = b + 1j * rng.standard_normal(shape_b).astype(np.float32)
    flops = (8 if dtype == np.complex64 else 2) * m * n * k * batch
    if batch > 1:
        # Column-major [m, k, batch] on the device: batch axes last, every matrix compact.
        da, db = rt.upload(np.moveaxis(a, 0, 2)), rt.upload(np.moveaxis(b, 0, 2))
        cfg = ([1], [0], [2], [2])
    else:
        da, db = rt.upload(a), rt.upload(b)
        cfg = ([1], [0], [], [])
    ours = await time_ours(rt, da, db, cfg, reps)
    numpy_s = time_numpy(a, b, reps)
    row = {"case": name, "m": m, "n": n, "k": k, "batch": batch, "dtype": np.dtype(dtype).name,
           "ours_gflops": flops / ours / 1e9, "numpy_gflops": flops / numpy_s / 1e9}
    if dtype == np.float32:
        tf_ms = await tfjsGemm(m, n, k, batch, max(1, reps // 2))
        row["tfjs_gflops"] = flops / (tf_ms / 1e3) / 1e9
        row["vs_tfjs"] = row["ours_gflops"] / row["tfjs_gflops"]
    row["vs_numpy"] = row["ours_gflops"] / row["numpy_gflops"]
    log(f"{name}: ours {row['ours_gflops']:.2f}, numpy {row['numpy_gflops']:.2f}, "
        f"tf.js {row.get('tfjs_gflops', float('nan')):.2f} GFLOP/s")
    return row


async def readback(rt, nbytes, reps=21):
    t = rt.upload(np.ones(nbytes // 4, np.float32))
    await t.download()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        await t.download()
        times.append(time.perf_counter() - start)
    return median(times) * 1e3


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
    return median(enqueue) * 1e6, median(total) * 1e6


async def run(quick, log):
    rt = await tw.WebGpuRuntime.create()
    a = rt.adapter
    log(f"adapter {a.vendor}/{a.architecture}, kernels "
        f"{'cpu' if rt.device.profile.cpu else 'gpu'}")
    sizes = [(256, 5), (512, 3)] if quick else [(256, 7), (512, 5), (1024, 3), (2048, 1)]
    rows = []
    for size, reps in sizes:
        rows.append(await gemm_case(rt, f"f32 {size}", size, size, size, 1, np.float32, reps,
                                    log))
    rows.append(await gemm_case(rt, "f32 batch 16x256", 256, 256, 256, 16, np.float32, 3, log))
    c32 = 256 if quick else 512
    rows.append(await gemm_case(rt, f"c32 {c32}", c32, c32, c32, 1, np.complex64, 3, log))
    f32_same = next(r for r in rows if r["case"] == f"f32 {c32}")
    enqueue_us, total_us = await dispatch_chain(rt)
    result = {
        "adapter": {"vendor": a.vendor, "architecture": a.architecture,
                    "fallback": a.is_fallback},
        "gemm": rows,
        "c32_over_f32_rate": rows[-1]["ours_gflops"] / f32_same["ours_gflops"],
        "readback_ms": {"4 B": await readback(rt, 4), "4 MiB": await readback(rt, 4 << 20)},
        "dispatch_us_per_op": {"python_enqueue": enqueue_us, "enqueue_and_gpu": total_us},
        "numpy": np.__version__, "tenferro_web": tw.__version__,
    }
    log("done")
    return result
