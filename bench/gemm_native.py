"""Real-GPU lane: this package's planner, kernel selection and WGSL kernels on a native WebGPU
(wgpu-native via the `wgpu` package, Vulkan) against torch.matmul (cuBLAS, TF32 off) on the same
GPU, in one process. Figures are medians of timed batches of back-to-back launches.

    python bench/gemm_native.py --out results.json            # the product's own selection
    python bench/gemm_native.py --sweep 4096 --out sweep.json # GPU tile-shape sweep (tuning)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import statistics
import time

import numpy as np

import tenferro_web as tw
from tenferro_web.lowering.gemm import gemm_spec
from tenferro_web.lowering.program import Launch, Program
from tenferro_web.planning.dot_general_plan import DotGeneralConfig, plan_dot_general


def gflops(flops: float, seconds: float) -> float:
    return flops / seconds / 1e9


def time_ours(rt, a, b, cfg, reps: int, trials: int = 3) -> float:
    """Seconds per dot_general: `reps` launches in one submit, one host barrier."""
    args = (cfg["lc"], cfg["rc"], cfg["lb"], cfg["rb"])
    tw.dot_general(a, b, *args)
    rt.synchronize_sync()
    times = []
    for _ in range(trials):
        start = time.perf_counter()
        outs = [tw.dot_general(a, b, *args) for _ in range(reps)]
        rt.synchronize_sync()
        times.append((time.perf_counter() - start) / reps)
        del outs
    return statistics.median(times)


def time_torch(torch, a, b, batched: bool, reps: int, trials: int = 3) -> float:
    fn = torch.bmm if batched else torch.matmul
    fn(a, b)
    torch.cuda.synchronize()
    times = []
    for _ in range(trials):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn(a, b)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / reps)
    return statistics.median(times)


def case(rt, torch, name, m, k, n, dtype, batch, reps):
    rng = np.random.default_rng(0)
    shape_a, shape_b = ((m, k), (k, n)) if batch == 1 else ((batch, m, k), (batch, k, n))
    a = rng.standard_normal(shape_a, np.float32)
    b = rng.standard_normal(shape_b, np.float32)
    if dtype == "complex64":
        a = (a + 1j * rng.standard_normal(shape_a, np.float32)).astype(np.complex64)
        b = (b + 1j * rng.standard_normal(shape_b, np.float32)).astype(np.complex64)
    # torch gets [batch, m, k] row-major; this package gets the same values as the column-major
    # [m, k, batch] it prefers (batch axes last, every matrix compact).
    if batch == 1:
        cfg = {"lc": [1], "rc": [0], "lb": [], "rb": []}
        lhs, rhs = rt.upload(a), rt.upload(b)
    else:
        cfg = {"lc": [1], "rc": [0], "lb": [2], "rb": [2]}
        lhs, rhs = rt.upload(np.moveaxis(a, 0, 2)), rt.upload(np.moveaxis(b, 0, 2))
    per_mac = 8 if dtype == "complex64" else 2
    flops = per_mac * m * n * k * batch
    ours = time_ours(rt, lhs, rhs, cfg, reps)
    got = tw.dot_general(lhs, rhs, cfg["lc"], cfg["rc"], cfg["lb"], cfg["rb"]).download_sync()
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    theirs = time_torch(torch, ta, tb, batch > 1, reps)
    want = (torch.bmm(ta, tb) if batch > 1 else ta @ tb).cpu().numpy()
    if batch > 1:
        got = np.moveaxis(got, 2, 0)  # [m, n, batch] -> torch's [batch, m, n]
    error = float(np.abs(got - want).max() / np.abs(want).max())
    row = {"case": name, "m": m, "n": n, "k": k, "batch": batch, "dtype": dtype,
           "ours_gflops": round(gflops(flops, ours), 1),
           "cublas_gflops": round(gflops(flops, theirs), 1),
           "ratio": round(theirs / ours, 3), "max_rel_error_vs_torch": error}
    print(f"{name:<22}{row['ours_gflops']:>12.1f}{row['cublas_gflops']:>14.1f}"
          f"{row['ratio']:>9.2f}  err {error:.1e}", flush=True)
    return row


def sweep(rt, size: int, candidates) -> list[dict]:
    """Time gemm_tiled specialisations on one square f32 problem (tuning, not the product)."""
    rng = np.random.default_rng(0)
    a = rt.upload(rng.standard_normal((size, size), np.float32))
    b = rt.upload(rng.standard_normal((size, size), np.float32))
    plan = plan_dot_general(tw.DType.F32, a.layout, tw.DType.F32, b.layout,
                            DotGeneralConfig.of([1], [0]))
    base = gemm_spec(rt.state.profile, plan)
    rows = []
    for tm, tn, bk, vec in candidates:
        spec = dataclasses.replace(base, tiled=True, tm=tm, tn=tn, bk=bk, vec_a=vec, vec_b=vec)
        launch = Launch.of("sweep", rt.state.profile, spec, (0, 1, 2))
        program = Program(2, size * size * 4, (), (launch,))
        rt.state.execute("sweep", program, (a, b), tw.DType.F32, (size, size))
        rt.synchronize_sync()
        reps = 10
        start = time.perf_counter()
        outs = [rt.state.execute("sweep", program, (a, b), tw.DType.F32, (size, size))
                for _ in range(reps)]
        rt.synchronize_sync()
        rate = gflops(2 * size**3, (time.perf_counter() - start) / reps)
        del outs
        rows.append({"TM": tm, "TN": tn, "BK": bk, "vec4": vec, "gflops": round(rate, 1)})
        print(f"gemm_tiled TM={tm} TN={tn} BK={bk} vec4={vec}: {rate:,.0f} GFLOP/s", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--sweep", type=int, metavar="SIZE")
    args = parser.parse_args()
    rt = tw.WebGpuRuntime.native()
    adapter = rt.adapter
    print(f"adapter: {adapter.vendor} {adapter.device} ({adapter.description}), "
          f"kernels: {'cpu' if rt.state.profile.cpu else 'gpu'}", flush=True)
    if args.sweep:
        candidates = [(8, 8, 16, False), (8, 8, 16, True), (4, 4, 16, False), (4, 4, 16, True),
                      (8, 8, 16, False), (8, 8, 16, True), (4, 4, 16, False), (4, 4, 16, True)]
        result = {"adapter": adapter.device, "sweep": sweep(rt, args.sweep, candidates)}
    else:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        print(f"{'case':<22}{'ours GFLOP/s':>12}{'cuBLAS GFLOP/s':>14}{'ratio':>9}")
        rows = []
        for size, reps in ((1024, 50), (2048, 20), (4096, 10), (8192, 4)):
            rows.append(case(rt, torch, f"f32 {size}", size, size, size, "float32", 1, reps))
        rows.append(case(rt, torch, "c32 4096", 4096, 4096, 4096, "complex64", 1, 4))
        rows.append(case(rt, torch, "f32 batch 64x512", 512, 512, 512, "float32", 64, 10))
        result = {"adapter": {"vendor": adapter.vendor, "device": adapter.device,
                              "description": adapter.description},
                  "torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
                  "python": platform.python_version(), "rows": rows}
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=1)


if __name__ == "__main__":
    main()
