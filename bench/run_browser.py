"""`make bench`: the browser benchmark in Debian's headless Chromium on its WebGPU adapter.

Prints a table and writes JSON (default bench/results/browser-<architecture>.json).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from browser_env import OffsiteGuard, chromium, serve_directory  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    guard = OffsiteGuard()
    guard.start()
    started = time.perf_counter()
    with serve_directory(args.site) as base, chromium(guard) as browser:
        page = browser.new_page()
        page.on("console", lambda m: print(f"  [{m.type}] {m.text}") if m.type == "error"
                else None)
        page.goto(f"{base}/index.html{'?quick=1' if args.quick else ''}")
        page.wait_for_function("window.benchDone !== undefined", timeout=40 * 60 * 1000)
        result = page.evaluate("window.benchDone")
        browser_version = browser.version
    guard.stop()
    if "error" in result:
        sys.exit(f"benchmark failed: {result['error']}")
    result["browser"] = f"Chromium {browser_version}"
    result["offsite_requests"] = guard.offsite_requests()
    result["seconds"] = round(time.perf_counter() - started, 1)
    adapter = result["adapter"]
    print(f"adapter: {adapter['vendor']}/{adapter['architecture']} in {result['browser']}")
    print(f"{'case':<18}{'ours':>9}{'numpy':>9}{'tf.js':>9}{'x numpy':>9}{'x tf.js':>9}"
          "   (GFLOP/s, medians)")
    for r in result["gemm"]:
        tf_rate = f"{r['tfjs_gflops']:9.2f}" if "tfjs_gflops" in r else f"{'-':>9}"
        tf_ratio = f"{r['vs_tfjs']:9.1f}" if "vs_tfjs" in r else f"{'-':>9}"
        print(f"{r['case']:<18}{r['ours_gflops']:9.2f}{r['numpy_gflops']:9.2f}{tf_rate}"
              f"{r['vs_numpy']:9.1f}{tf_ratio}")
    print(f"C32 rate / F32 rate (8 flops per complex MAC): {result['c32_over_f32_rate']:.2f}")
    rb = result["readback_ms"]
    print(f"readback latency: 4 B {rb['4 B']:.2f} ms, 4 MiB {rb['4 MiB']:.2f} ms")
    d = result["dispatch_us_per_op"]
    print(f"chain of 100 small dot_generals: {d['python_enqueue']:.0f} us/op to enqueue from "
          f"Python, {d['enqueue_and_gpu']:.0f} us/op including the GPU")
    if result["offsite_requests"]:
        sys.exit(f"requests tried to leave 127.0.0.1: {result['offsite_requests']}")
    out = args.out or ROOT / "bench" / "results" / f"browser-{adapter['architecture']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out} ({result['seconds']} s)")


if __name__ == "__main__":
    main()
