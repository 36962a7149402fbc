"""`make bench`: the browser benchmark in Debian's headless Chromium (or, with --browser
firefox, headless Firefox) on its WebGPU adapter.

Shows the page's progress as it runs, then prints one table with every library side by side.
Writes JSON to build/bench/browser-<architecture>.json (Firefox, which withholds adapter names:
browser-firefox.json); --save also records it in the committed bench/results/.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from firefox import FirefoxDriver  # noqa: E402

from browser_env import OffsiteGuard, chromium, serve_directory  # noqa: E402

# Table columns: the libraries as the page names them, and their headings.
COLUMNS = {"tenferro-web": "ours", "numpy": "numpy", "tfjs": "TF.js", "jax-js": "jax-js",
           "onnxruntime-web": "ORT-web"}
PREFIX = "bench: "  # what page/bench.mjs puts before each line it logs to the console


TIMEOUT_S = 40 * 60
# Firefox: the page's log lines from `seen` on, and its result once there (Marionette does not
# relay the console).
FIREFOX_POLL = """
  const [seen, done] = [arguments[0], arguments[arguments.length - 1]];
  const lines = (window.benchLog ?? []).slice(seen);
  done({lines, result: lines.length || window.benchDone === undefined ? null : window.benchDone,
        agent: navigator.userAgent});
"""


def run_page(site: Path, quick: bool, browser: str) -> dict:
    """Open the page and wait for ``window.benchDone``, printing its log lines as they come."""
    started = time.perf_counter()

    def show(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f} s] {text}", flush=True)

    guard = OffsiteGuard()
    guard.start()
    with serve_directory(site) as base:
        url = f"{base}/index.html{'?quick=1' if quick else ''}"
        if browser == "firefox":
            result = in_firefox(guard, url, show, started)
        else:
            with chromium(guard) as chrome:
                page = chrome.new_page()
                page.on("console", lambda m: show(m.text.removeprefix(PREFIX))
                        if m.type == "error" or m.text.startswith(PREFIX) else None)
                page.goto(url)
                page.wait_for_function("window.benchDone !== undefined",
                                       timeout=TIMEOUT_S * 1000)
                result = page.evaluate("window.benchDone")
                result["browser"] = f"Chromium {chrome.version}"
    guard.stop()
    if "error" in result:
        sys.exit(f"benchmark failed: {result['error']}")
    result["offsite_requests"] = guard.offsite_requests()
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def in_firefox(guard: OffsiteGuard, url: str, show, started: float) -> dict:
    driver = FirefoxDriver(guard.port)
    try:
        driver.set_script_timeout(60)
        driver.get(url)
        seen = 0
        while time.perf_counter() - started < TIMEOUT_S:
            polled = driver.execute_async_script(FIREFOX_POLL, seen)
            for line in polled["lines"]:
                show(line)
            seen += len(polled["lines"])
            if polled["result"] is not None:
                result = polled["result"]
                version = polled["agent"].rpartition("Firefox/")[2]
                result["browser"] = f"Firefox {version}"
                return result
            time.sleep(1)
        sys.exit(f"the benchmark did not finish within {TIMEOUT_S} s in Firefox")
    finally:
        driver.quit()


def print_table(result: dict) -> None:
    libs = [lib for lib in COLUMNS if lib in result["libraries"]]
    peers = libs[1:]
    w = 9
    names = f"{result['adapter']['vendor']}/{result['adapter']['architecture']}"
    print(f"\nGFLOP/s on {names if names != '/' else 'an adapter whose names it withholds'} in "
          f"{result['browser']}, median trial (a trial: r products, then a readback); "
          "then ours over each; last, our kernels alone (the trial's GPU time, timestamps)")
    print(f"{'case':<18}{'r':>3}" + "".join(f"{COLUMNS[lib]:>{w}}" for lib in libs) + " |"
          + "".join(f"{'x ' + COLUMNS[lib]:>{w + 1}}" for lib in peers) + " | kernels")
    for key in ("version", "backend"):
        print(f"{key:<21}" + "".join(f"{result['libraries'][lib][key]:>{w}}" for lib in libs)
              + " |")
    for row in result["gemm"]:
        rates = "".join(f"{row['gflops'][lib]:{w}.2f}" if lib in row["gflops"] else f"{'-':>{w}}"
                        for lib in libs)
        ratios = "".join(f"{row['ours_over'][lib]:{w}.1f}x" if lib in row["ours_over"]
                         else f"{'-':>{w + 1}}" for lib in peers)
        kernels = row.get("ours_kernels_gflops")
        print(f"{row['case']:<18}{row['r']:>3}{rates} |{ratios} |"
              + (f"{kernels:8.2f}" if kernels else f"{'-':>8}"))
    adapters = ", ".join(f"{COLUMNS[lib]} {result['libraries'][lib]['adapter']}" for lib in libs
                         if result["libraries"][lib].get("adapter"))
    print(f"WebGPU adapters: {adapters}")
    print(f"C32 rate / F32 rate (8 flops per complex MAC): {result['c32_over_f32_rate']:.2f}")
    rb = result["readback_ms"]
    print(f"readback latency: 4 B {rb['4 B']:.2f} ms, 4 MiB {rb['4 MiB']:.2f} ms")
    d = result["dispatch_us_per_op"]
    print(f"chain of 100 small dot_generals: {d['python_enqueue']:.0f} us/op to enqueue from "
          f"Python, {d['enqueue_and_gpu']:.0f} us/op including the GPU")
    suite = result["workloads"]
    print(f"\nworkload suite (bench/workloads.py, small sizes), {suite['kernels']} kernel family: "
          "ms per call (median trial), our kernels alone, and GB/s or GFLOP/s")
    for row in suite["rows"]:
        kernels = f"{row['kernel_seconds'] * 1e3:9.3f}" if row["kernel_seconds"] else f"{'-':>9}"
        rate = (f"{row['bytes'] / row['seconds'] / 1e9:7.2f} GB/s"
                if row["kind"] in ("permutation", "reduction")
                else f"{row['flops'] / row['seconds'] / 1e9:7.2f} GFLOP/s")
        print(f"  {row['case']:<46}{row['seconds'] * 1e3:9.3f}{kernels}  {rate}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    parser.add_argument("--browser", choices=["chromium", "firefox"], default="chromium")
    parser.add_argument("--out", type=Path, help="default build/bench/browser-<architecture>.json")
    parser.add_argument("--save", action="store_true",
                        help="also record the results in bench/results/ (committed)")
    args = parser.parse_args()
    if args.save and args.quick:
        sys.exit("--save records full runs only (a quick run would replace the full figures)")
    result = run_page(args.site, args.quick, args.browser)
    result["command"] = " ".join(["bench/run_browser.py", *sys.argv[1:]])
    print_table(result)
    if result["offsite_requests"]:
        sys.exit(f"requests tried to leave 127.0.0.1: {result['offsite_requests']}")
    name = "browser-firefox.json" if args.browser == "firefox" else \
        f"browser-{result['adapter']['architecture']}.json"
    out = args.out or ROOT / "build" / "bench" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out} ({result['seconds']} s)")
    if args.save:
        saved = ROOT / "bench" / "results" / name
        shutil.copyfile(out, saved)
        print(f"saved as {saved.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
