"""The real-GPU run (the `device` tool's H200): both transports of this package on the GPU, and
cuBLAS in the same run. Self-contained: everything it needs is in the bundle that
`make h200-bundle` writes to build/h200 (a Node.js binary from npm, Dawn for Node, a pruned
Pyodide dist with this package, the Vulkan loader packages, the wgpu wheels).

    python3 bench/h200.py --bundle build/h200 --out DIR [--fuzz N] [--quick]
                          [--workloads | --sweep]

1. Vulkan: Debian's loader and libglvnd, unpacked into a private folder (LD_LIBRARY_PATH); the
   NVIDIA ICD at /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json.
2. Dawn (Chrome's WebGPU) in Node.js, driving Pyodide + this package's browser transport: the
   adapter's info, features and limits, the kernel fuzz on both kernel families, the GEMM cases.
3. wgpu-native in CPython (the native transport): the same fuzz and GEMM cases.
4. torch.matmul / torch.bmm (cuBLAS, TF32 off) on the same cases with the same timing rule, and
   the JavaScript peers jax-js, TF.js and onnxruntime-web (npm, each on WebGPU) on the same
   Dawn (bench/peers_lane.mjs), f32 cases.
5. bench/sums.py in both lanes: the sum kernels the lowering picks against the GEMM path.
Prints a table of ratios and writes DIR/h200-lanes.json and one log per step. With --workloads:
the fuzz in both lanes, then bench/workloads.py (every op class a user's einsums are made of)
through Dawn, wgpu-native and torch, and each lane's bandwidth ceiling (bench/ceiling/), with
Dawn's timestamp quantization off; writes DIR/h200-workloads.json. With --sweep: the
fuzz, then gemm_tiled's tile candidates in both lanes (bench/gemm_sweep.py) against cuBLAS,
the two kernel families per op class (bench/families.py) and the copy kernels' tilings
(bench/copy_sweep.py).
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from gemm_cases import (  # noqa: E402
    CASES,
    QUICK,
    SWEPT,
    TRIALS,
    WARMUP_SECONDS,
    operands,
)

NVIDIA_ICD = "/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json"
FUZZ_SEED = 20261205
# gemm_batch_tiled's f32 tiles (TM x TN x BK) swept on the batch-first workloads, and the
# einsum planner's charge for a batch-first product (output copies, and flops per copy)
BATCH_SWEEP = ["--size", "h200", "--only", "einsum b", "--batch-tiles",
               "8x8x8,8x8x4,8x4x8,4x8x8,16x8x4,8x16x4",
               "--set", "planning.einsum.steps.BATCH_FIRST_OUTPUT_COST=0,1,2,4",
               "--set",
               "planning.einsum.steps.BATCH_FIRST_FLOPS_PER_COPY=1,128,512,2048,1000000000000"]
# split-K's fill target on the cases of small products, and the sums' grids
FILL_SWEEP = ["--size", "h200", "--only", "einsum a|einsum i|MPS|chained|matmul c32",
              "--set", "lowering.gemm.SPLIT_FILL_GROUPS=0,128,256,512,1024"]
# Chains of small ops: gemm_blocked for the products whose gemm_tiled grid is a few workgroups
# (lowering.gemm's SMALL_PRODUCT: below how many workgroups, and the block per invocation), and
# how many dispatches a stream holds before it is submitted (the GPU idles until the first
# submit; every submit costs the host about 100 us)
SMALL_SWEEP = ["--size", "h200", "--only", "einsum a|einsum i|MPS|chained",
               "--set", "lowering.gemm.SMALL_PRODUCT=(0,1);(2,1);(2,2);(4,1);(4,2);(8,2);(16,2);"
                        "(16,4)",
               "--set", "runtime.device.MAX_PENDING_DISPATCHES=16,24,32,48,64"]
SUMS_SWEEP = ["--size", "h200", "--only", "sum 8192|sum batched",
              "--set", "lowering.reduce.TREE_TARGET_GROUPS=1024,2048,4096,8192",
              "--set", "lowering.reduce.ROWS_TARGET_INVOCATIONS=32768,65536,131072,262144,1048576"]


def unpack(bundle: Path, work: Path) -> dict[str, str]:
    """Unpack the bundle into ``work``; returns the environment the lanes run in."""
    libs = work / "vulkan"
    for deb in sorted((bundle / "debs").glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(libs)], check=True)
    for packed in ("node", "webgpu/dist/linux-x64/dawn.node"):
        target = work / packed
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(lzma.decompress((bundle / f"{packed}.xz").read_bytes()))
        target.chmod(0o755)
    for name in ("index.js", "package.json"):
        shutil.copy(bundle / "webgpu" / name, work / "webgpu" / name)
    # dawn_host.mjs imports "webgpu": resolvable from a node_modules folder above it.
    (work / "node_modules").mkdir(exist_ok=True)
    (work / "node_modules" / "webgpu").symlink_to(work / "webgpu")
    shutil.copy(ROOT / "tools" / "dawn_host.mjs", work / "dawn_host.mjs")
    shutil.copytree(bundle / "peers", work / "peers")
    for packed in (work / "peers").rglob("*.xz"):
        packed.with_suffix("").write_bytes(lzma.decompress(packed.read_bytes()))
    with tarfile.open(bundle / "pyodide.tar.xz") as tar:
        tar.extractall(work / "pyodide", filter="data")
    site = work / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                    "--no-compile", "--target", str(site),
                    *map(str, sorted((bundle / "wheels").glob("*.whl")))], check=True)
    env = dict(os.environ)
    lib_dirs = [str(p) for p in libs.glob("usr/lib/x86_64-linux-gnu")]
    env["LD_LIBRARY_PATH"] = ":".join([*lib_dirs, env.get("LD_LIBRARY_PATH", "")])
    env["VK_ICD_FILENAMES"] = NVIDIA_ICD
    env["PYTHONPATH"] = ":".join([str(site), str(ROOT / "tests" / "fuzz")])
    env["PYTHONUNBUFFERED"] = "1"
    env["PEERS_MODULES"] = str(work / "peers")
    return env


def versions(bundle: Path, work: Path, env: dict) -> dict[str, str]:
    """What each lane ran: this package, Dawn for Node, Node.js, Pyodide, wgpu and wgpu-native
    (torch and the JavaScript peers record theirs in their own steps)."""
    [wheel] = (bundle / "wheels").glob("tenferro_web-*.whl")
    probe = ("import wgpu, wgpu.backends.wgpu_native as native; "
             "print(wgpu.__version__, native.__version__)")
    wgpu_py, wgpu_native = subprocess.run([sys.executable, "-c", probe], env=env, check=True,
                                          capture_output=True, text=True).stdout.split()
    lock = json.loads((work / "pyodide" / "pyodide-lock.json").read_text())
    return {
        "tenferro-web": wheel.name.split("-")[1],
        "webgpu (Dawn for Node.js, npm)": json.loads(
            (bundle / "webgpu" / "package.json").read_text())["version"],
        "node": subprocess.run([str(work / "node"), "--version"], check=True,
                               capture_output=True, text=True).stdout.strip(),
        "pyodide": lock["info"]["version"],
        "wgpu (Python)": wgpu_py,
        "wgpu-native": wgpu_native,
    }


def run_logged(cmd: list[str], env: dict, log: Path, timeout: int) -> tuple[int, str]:
    started = time.perf_counter()
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                              cwd=ROOT)
        code, text = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as error:
        code, text = 124, f"{error.stdout or ''}{error.stderr or ''}\nTIMEOUT after {timeout} s"
    text = "\n".join(line for line in text.splitlines() if "XDG_RUNTIME_DIR" not in line)
    log.write_text(f"$ {' '.join(cmd)}\n{text}\n(exit {code}, "
                   f"{time.perf_counter() - started:.1f} s)\n")
    tail = "\n".join(text.splitlines()[-6:])
    print(f"[{log.stem}] exit {code} in {time.perf_counter() - started:.0f} s\n{tail}",
          flush=True)
    return code, text


def result_of(text: str) -> dict | None:
    lines = [line for line in text.splitlines() if line.startswith("RESULT ")]
    return json.loads(lines[-1][len("RESULT "):]) if lines else None


def fuzz_summary(code: int, text: str) -> dict:
    found = re.findall(r"fuzz: (\d+) cases x (\d+) kernel families, seed (\d+): (\d+) failures",
                       text)
    failures = [line for line in text.splitlines() if line.startswith("FAIL ")]
    if not found:
        return {"exit": code, "error": text.splitlines()[-3:] if text else "no output"}
    cases, families, seed, failed = map(int, found[-1])
    return {"exit": code, "cases": cases, "families": families, "seed": seed,
            "failures": failed, "failure_lines": failures[:50]}


def time_torch(cases) -> list[dict]:
    import numpy as np
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rows = []
    for name, m, n, k, batch, dtype, reps in cases:
        a, b = operands(name, m, n, k, batch, dtype)
        if batch > 1:  # the same values as [batch, m, k] row-major
            a, b = np.moveaxis(a, 2, 0), np.moveaxis(b, 2, 0)
        ta, tb = torch.from_numpy(np.ascontiguousarray(a)).cuda(), \
            torch.from_numpy(np.ascontiguousarray(b)).cuda()
        fn = torch.bmm if batch > 1 else torch.matmul
        warm_until = time.perf_counter() + WARMUP_SECONDS
        while True:  # as the lanes do: the GPU's clocks up before timing
            outs = [fn(ta, tb) for _ in range(reps)]
            torch.cuda.synchronize()
            del outs
            if time.perf_counter() >= warm_until:
                break
        times = []
        for _ in range(TRIALS):  # the same rule as ours: r products, one wait, median of 5
            start = time.perf_counter()
            outs = [fn(ta, tb) for _ in range(reps)]
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) / reps)
            del outs
        seconds = statistics.median(times)
        flops = (8 if dtype == "complex64" else 2) * m * n * k * batch
        rows.append({"case": name, "seconds": seconds, "gflops": round(flops / seconds / 1e9, 1)})
        print(f"cuBLAS {name:<20}{rows[-1]['gflops']:>12,.1f} GFLOP/s", flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/tenferro-h200"))
    parser.add_argument("--fuzz", type=int, default=500, help="fuzz cases per lane")
    parser.add_argument("--quick", action="store_true", help="small GEMM cases (a smoke run)")
    mode = parser.add_mutually_exclusive_group()  # one kind of run per call
    mode.add_argument("--workloads", action="store_true",
                      help="the fuzz, then bench/workloads.py and the bandwidth ceilings in "
                           "Dawn, wgpu-native and torch")
    mode.add_argument("--sweep", action="store_true",
                      help="the fuzz, gemm_tiled's tile candidates (bench/gemm_sweep.py) and the "
                           "copy kernels' tilings (bench/copy_sweep.py)")
    parser.add_argument("--steps", help="only these steps, comma-separated (a run's step names "
                                        "are its logs' names), so that a run fits one call")
    parser.add_argument("--icd", default=NVIDIA_ICD)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    env = unpack(args.bundle.resolve(), args.work)
    env["VK_ICD_FILENAMES"] = args.icd
    node = [str(args.work / "node"), f"--import={args.work / 'dawn_host.mjs'}",
            str(ROOT / "tools" / "dawn_run.mjs"), str(args.work / "pyodide")]
    gemm_args = ["--quick"] if args.quick else []

    def per_op(name: str) -> list[str]:
        """A per-op benchmark (bench/timing.py's rule) in Pyodide on Node.js + Dawn."""
        return node + ["--module", str(ROOT / "bench/timing.py"), "--module",
                       str(ROOT / f"bench/{name}.py"), f"{name}:main"]

    def with_gemm_lane(name: str, *extra: str) -> list[str]:
        """A benchmark built on bench/gemm_lane.py in Pyodide on Node.js + Dawn."""
        return node + ["--module", str(ROOT / "bench/gemm_cases.py"), "--module",
                       str(ROOT / "bench/gemm_lane.py"), "--module", str(ROOT / f"bench/{name}.py"),
                       f"{name}:main", *extra]

    def native(name: str, *extra: str) -> list[str]:
        return [sys.executable, str(ROOT / f"bench/{name}.py"), *extra]

    fuzz_args = ["--seed", str(FUZZ_SEED), "--count", str(args.fuzz)]
    report: dict = {"python": platform.python_version(), "command": " ".join(sys.argv),
                    "versions": versions(args.bundle.resolve(), args.work, env),
                    "nvidia_smi": nvidia_smi()}
    steps = {
        "dawn-fuzz": node + ["--module", str(ROOT / "tests/fuzz/kernel_fuzz.py"), "--module",
                             str(ROOT / "tools/fuzz.py"), "fuzz:main", *fuzz_args],
        "dawn-gemm": node + ["--module", str(ROOT / "bench/gemm_cases.py"), "--module",
                             str(ROOT / "bench/gemm_lane.py"), "gemm_lane:main", *gemm_args],
        "native-fuzz": [sys.executable, str(ROOT / "tools/fuzz.py"), *fuzz_args],
        "native-gemm": native("gemm_lane", *gemm_args),
        "dawn-sums": per_op("sums"),
        "peers-gemm": [*node[:2], str(ROOT / "bench/peers_lane.mjs"),
                       json.dumps(QUICK if args.quick else CASES)],
        "native-sums": native("sums"),
    }
    if args.sweep:
        steps = {"dawn-fuzz": steps["dawn-fuzz"], "native-fuzz": steps["native-fuzz"],
                 "dawn-sweep": with_gemm_lane("gemm_sweep", *gemm_args),
                 "native-sweep": native("gemm_sweep", *gemm_args),
                 "dawn-families": per_op("families"),
                 "native-families": native("families"),
                 "dawn-copies": node + ["--module", str(ROOT / "bench/copy_sweep.py"),
                                        "copy_sweep:main", *gemm_args],
                 "native-copies": native("copy_sweep", *gemm_args),
                 # gemm_batch_tiled's tiles on the batch-first workloads
                 "dawn-batch": node + ["--module", str(ROOT / "bench/workloads.py"),
                                       "workloads:main", *BATCH_SWEEP],
                 "native-batch": native("workloads", *BATCH_SWEEP),
                 "torch-batch": native("workloads", *BATCH_SWEEP[:4], "--lane", "torch"),
                 "dawn-fill": node + ["--module", str(ROOT / "bench/workloads.py"),
                                      "workloads:main", *FILL_SWEEP],
                 "native-fill": native("workloads", *FILL_SWEEP),
                 "torch-fill": native("workloads", *FILL_SWEEP[:4], "--lane", "torch"),
                 "dawn-small": node + ["--module", str(ROOT / "bench/workloads.py"),
                                       "workloads:main", *SMALL_SWEEP],
                 "native-small": native("workloads", *SMALL_SWEEP),
                 "torch-small": native("workloads", *SMALL_SWEEP[:4], "--lane", "torch"),
                 "dawn-grids": node + ["--module", str(ROOT / "bench/workloads.py"),
                                       "workloads:main", *SUMS_SWEEP],
                 "native-grids": native("workloads", *SUMS_SWEEP)}
    if args.workloads:
        return run_workloads(args, env, node, steps)
    for step, cmd in chosen(steps, args.steps).items():
        timed = step.endswith(("copies", "batch", "fill", "small", "grids", "sweep"))  # timestamps
        code, text = run_logged(cmd, {**env, "TENFERRO_DAWN_OPTIONS": UNQUANTIZED} if timed
                                else env, args.out / f"{step}.log", timeout=420 if timed else 240)
        if step.endswith("fuzz"):
            report[step] = fuzz_summary(code, text)
        elif step.endswith(("sums", "families")):
            words = ("ms", "lane", "adapter", "worst", "submit at")
            report[step] = {"exit": code, "lines": [line for line in text.splitlines()
                                                    if any(w in line for w in words)]}
        else:
            report[step] = result_of(text) or {"exit": code, "error": text.splitlines()[-5:]}
    try:
        import torch

        cases = QUICK if args.quick else CASES
        if args.sweep:
            cases = [c for c in cases if args.quick or c[0] in SWEPT]
        report["torch"] = {"version": torch.__version__, "gpu": torch.cuda.get_device_name(),
                           "rows": time_torch(cases)}
    except Exception as error:  # no torch or no CUDA: the lanes' figures still stand
        report["torch"] = {"error": f"{type(error).__name__}: {error}"}
    (args.out / "h200-lanes.json").write_text(json.dumps(report, indent=1))
    print_table(report)
    return 0


def nvidia_smi() -> str | None:
    """The GPU's name and driver, as nvidia-smi gives them (the lent machine's card varies)."""
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True)
    except FileNotFoundError:
        return None
    return smi.stdout.strip()


def clock_sampler(path: Path) -> subprocess.Popen | None:
    """nvidia-smi writing the SM clock every 20 ms to ``path`` (None without nvidia-smi)."""
    try:
        return subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm",
                                 "--format=csv,noheader,nounits", "-lms", "20"],
                                stdout=path.open("w"), stderr=subprocess.DEVNULL)
    except FileNotFoundError:
        return None


def note_clocks(rows: list[dict], samples: Path) -> None:
    """Each row's SM clock over its trials' window: [lowest, highest] MHz sampled in it (the
    sample nearest its start where none fell inside)."""
    clock = []
    for line in samples.read_text().splitlines():
        stamp, _, mhz = line.partition(",")
        try:  # nvidia-smi's local time, as time.time() in the lanes reads it
            clock.append((datetime.strptime(stamp.strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp(),
                          int(mhz)))
        except ValueError:
            continue
    for r in rows:
        if not clock or not r.get("window"):
            continue
        begin, end = r["window"]
        inside = [mhz for t, mhz in clock if begin <= t <= end]
        if not inside:
            inside = [min(clock, key=lambda sample: abs(sample[0] - begin))[1]]
        r["sm_mhz"] = [min(inside), max(inside)]


def chosen(steps: dict, names: str | None) -> dict:
    """The steps named in ``--steps`` (all without it); an unknown name is an error."""
    if names is None:
        return steps
    wanted = names.split(",")
    unknown = [name for name in wanted if name not in steps]
    if unknown:
        raise SystemExit(f"unknown steps {unknown}; this run has {list(steps)}")
    return {name: cmd for name, cmd in steps.items() if name in wanted}


PROFILED = "bij,bjk|chained|MPS|8192^2 f32 all|transpose 8192"
ORDER_PROBE = "transpose|permute|sum 8192|sum batched"
# Dawn rounds timestamp queries to 2^16 ns unless told not to (a page cannot; a Node host can).
UNQUANTIZED = "disable-dawn-features=timestamp_quantization"


def run_workloads(args, env: dict, node: list[str], steps: dict) -> int:
    """The fuzz in both lanes, then the workload suite and the bandwidth ceilings per lane."""
    workloads = ["--module", str(ROOT / "bench/workloads.py"), "workloads:main", "--size", "h200"]
    plan = {"dawn-fuzz": steps["dawn-fuzz"], "native-fuzz": steps["native-fuzz"],
            "dawn-ceiling": [*node[:2], str(ROOT / "bench/ceiling/ceiling.mjs")],
            # the Node binding's JavaScript cost per dispatch, part of the Dawn lane's host time
            "dawn-encode": [*node[:2], str(ROOT / "bench/ceiling/encode.mjs")],
            "native-ceiling": [sys.executable, str(ROOT / "bench/ceiling/ceiling.py")],
            "dawn-workloads": node + workloads,
            "native-workloads": [sys.executable, str(ROOT / "bench/workloads.py"), "--size",
                                 "h200", "--lane", "native"],
            "torch-workloads": [sys.executable, str(ROOT / "bench/workloads.py"), "--size",
                                "h200", "--lane", "torch"],
            # where the host time of the cases far from their kernels' time goes
            "dawn-profile": node + workloads + ["--profile", "--only", PROFILED],
            "native-profile": [sys.executable, str(ROOT / "bench/workloads.py"), "--size", "h200",
                               "--profile", "--only", PROFILED],
            "dawn-sums": steps["dawn-sums"],
            # the sums after the permutations, as in the suite, and with the pool emptied before
            # each case: whether the slow Dawn sums follow the memory the earlier cases left
            "dawn-order": node + workloads + ["--only", ORDER_PROBE],
            "dawn-order-trimmed": node + workloads + ["--only", ORDER_PROBE, "--trim-pool"],
            # the plain vec4 sum over 12 sources, each placed after other buffers came and went
            "dawn-placement": [*node[:2], str(ROOT / "bench/ceiling/ceiling.mjs"), "256", "12"]}
    report: dict = {"python": platform.python_version(), "command": " ".join(sys.argv),
                    "versions": versions(args.bundle.resolve(), args.work, env),
                    "nvidia_smi": nvidia_smi(), "rows": []}
    for step, cmd in chosen(plan, args.steps).items():
        sampler = clock_sampler(args.out / f"{step}.clocks")
        code, text = run_logged(cmd, {**env, "TENFERRO_DAWN_OPTIONS": UNQUANTIZED},
                                args.out / f"{step}.log", timeout=420)
        if sampler:
            sampler.terminate()
            sampler.wait()
        if step.endswith("fuzz"):
            report[step] = fuzz_summary(code, text)
        elif step.endswith(("profile", "sums", "order", "trimmed")):
            continue  # read in their logs
        elif step.endswith(("ceiling", "placement", "encode")):
            report[step] = result_of(text) or {"exit": code, "error": text.splitlines()[-5:]}
        else:
            result = result_of(text)
            if result and sampler:
                note_clocks(result["rows"], args.out / f"{step}.clocks")
            report["rows"].extend(result["rows"] if result else [])
            if result and "version" in result:  # torch's, from its own lane
                report["versions"][step.removesuffix("-workloads")] = result["version"]
            if not result:
                report[step] = {"exit": code, "error": text.splitlines()[-5:]}
    (args.out / "h200-workloads.json").write_text(json.dumps(report, indent=1))
    print_workloads(report)
    return 0


def print_workloads(report: dict) -> None:
    """Per case: torch's time, then per lane the wall clock and the kernels' time with their
    ratios to torch (torch / ours: 1 is torch's speed) and, for memory-bound cases, the kernels'
    GB/s as a share of the lane's vec4 ceiling (copy for permutations, sum for reductions)."""
    rows = {(r["case"], r["lane"]): r for r in report["rows"]}
    cases = list(dict.fromkeys(r["case"] for r in report["rows"]))
    mhz = lambda r: f"{r['sm_mhz'][0]:>6}" if r and r.get("sm_mhz") else f"{'':>6}"  # noqa: E731
    print(f"\n{'case':<46}{'torch ms':>9}{'MHz':>6}" + "".join(
        f"{lane + ' wall':>13}{'x torch':>8}{'kernels':>9}{'x torch':>8}{'of ceil':>8}{'MHz':>6}"
        for lane in ("dawn", "native")) + "\n(MHz: the lowest SM clock sampled over the trials)")
    for case in cases:
        torch = rows.get((case, "torch"))
        line = f"{case:<46}{torch['seconds'] * 1e3 if torch else 0:>9.3f}{mhz(torch)}"
        for lane in ("dawn", "native"):
            r = rows.get((case, lane))
            if not r:
                line += f"{'-':>52}"
                continue
            kernel = r["kernel_seconds"] or 0
            ratio = torch["seconds"] / r["seconds"] if torch else 0
            kratio = torch["kernel_seconds"] / kernel if torch and kernel else 0
            ceiling = (report.get(f"{lane}-ceiling") or {}).get(
                {"permutation": "copy", "reduction": "sum"}.get(r["kind"], ""), {})
            share = r["bytes"] / kernel / 1e9 / ceiling["gbps"] if kernel and ceiling else 0
            line += (f"{r['seconds'] * 1e3:>13.3f}{ratio:>8.2f}{kernel * 1e3:>9.3f}"
                     f"{kratio:>8.2f}" + (f"{share:>8.2f}" if share else f"{'':>8}") + mhz(r))
        print(line)
    # Whether a host-bound case waits on the host or on the GPU: the trials' time up to the
    # last call's return against the wall clock and the kernels.
    for case in cases:
        shares = [f"{lane} host {r['enqueue_seconds'] * 1e3:.3f} of {r['seconds'] * 1e3:.3f} ms"
                  for lane in ("dawn", "native", "torch")
                  if (r := rows.get((case, lane))) and r.get("enqueue_seconds")
                  and r["kind"] in ("chain", "network")]
        if shares:
            print(f"{case}: " + ", ".join(shares))
    for lane in ("dawn", "native"):
        c = report.get(f"{lane}-ceiling") or {}
        if "copy" in c:
            print(f"{lane} ceiling: copy {c['copy']['gbps']:.0f} GB/s, sum {c['sum']['gbps']:.0f} "
                  f"GB/s ({c['mib']} MiB, vec4 loads)")
    for name, row in (report.get("dawn-encode") or {}).get("variants", {}).items():
        print(f"dawn encode {name}: {row['encode_us']:.2f} us per dispatch")
    for step in ("dawn-fuzz", "native-fuzz"):
        s = report.get(step, {})
        print(f"{step}: {s.get('cases')} cases x {s.get('families')} families, "
              f"{s.get('failures')} failures (exit {s.get('exit')})")


def print_table(report: dict) -> None:
    cublas = {r["case"]: r["gflops"] for r in report.get("torch", {}).get("rows", [])}
    for step in ("dawn-sweep", "native-sweep"):
        for row in (report.get(step) or {}).get("rows", []):
            base = cublas.get(row["case"])
            kernel = row.get("kernel_gflops")
            label = row["tiles"]
            print(f"{step[:15]:<16}{row['case']:<20}{label:<24}"
                  f"{row['gflops']:>10,.0f} GFLOP/s{row['gflops'] / base if base else 0:>7.3f} "
                  f"of cuBLAS; kernels {kernel / base if base and kernel else 0:.3f}")
    print(f"\n{'case':<20}{'Dawn GFLOP/s':>14}{'ratio':>7}{'native GFLOP/s':>16}{'ratio':>7}"
          f"{'cuBLAS GFLOP/s':>16}{'kernels alone: Dawn / native ratio':>36}")
    lanes = [report.get("dawn-gemm") or {}, report.get("native-gemm") or {}]
    names = [r["case"] for r in (lanes[0].get("rows") or lanes[1].get("rows") or [])]
    for name in names:
        cells = []
        rates = []
        kernels = []  # the GPU time of the compute passes alone (timestamp queries)
        for lane in lanes:
            row = next((r for r in lane.get("rows", []) if r["case"] == name), {})
            rate = row.get("gflops")
            ratio = rate / cublas[name] if rate and cublas.get(name) else None
            cells.append(f"{rate or 0:>14,.0f}{ratio or 0:>7.3f}")
            rates.append(rate)
            kernel = row.get("kernel_gflops")
            kernels.append(f"{kernel / cublas[name]:.3f}" if kernel and cublas.get(name) else "-")
        print(f"{name:<20}{cells[0]}{cells[1]:>23}{cublas.get(name, 0):>16,.0f}"
              f"{' / '.join(kernels):>36}")
    # The JavaScript peers on the same Dawn adapter (bench/peers_lane.mjs), and ours over each.
    peers = {lib: {r["case"]: r["gflops"] for r in lane.get("rows", [])}
             for lib, lane in (report.get("peers-gemm") or {}).items() if isinstance(lane, dict)}
    ours = {r["case"]: r["gflops"] for r in lanes[0].get("rows", [])}
    print(f"\n{'case':<20}{'Dawn (ours)':>12}" + "".join(f"{lib:>17}" for lib in peers)
          + "".join(f"{'ours / ' + lib:>24}" for lib in peers))
    for name in names:
        rates = [peers[lib].get(name) for lib in peers]
        print(f"{name:<20}{ours.get(name, 0):>12,.0f}"
              + "".join(f"{r or 0:>17,.0f}" for r in rates)
              + "".join(f"{ours[name] / r:>23.2f}x" if r and ours.get(name) else f"{'-':>24}"
                        for r in rates))
    for step in ("dawn-sums", "native-sums", "dawn-families", "native-families"):
        print(f"{step}:", *report.get(step, {}).get("lines", []), sep="\n  ")
    for step in ("dawn-fuzz", "native-fuzz"):
        s = report.get(step, {})
        print(f"{step}: {s.get('cases')} cases x {s.get('families')} families, "
              f"{s.get('failures')} failures (exit {s.get('exit')})")


if __name__ == "__main__":
    sys.exit(main())
