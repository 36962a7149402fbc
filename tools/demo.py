"""Run the demo page (the README's main job) in headless Chromium or Firefox, or serve a site.

    python tools/demo.py SITE              # headless: run the presets, print what they computed
    python tools/demo.py SITE --browser firefox   # the same in headless Firefox (Marionette)
    python tools/demo.py SITE --serve 8000 # serve for a real browser at http://127.0.0.1:8000

The headless run exits non-zero unless every run agreed with numpy, the page reported a WebGPU
adapter, and no request tried to leave 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from firefox import FirefoxDriver

from browser_env import OffsiteGuard, chromium, serve_directory

TIMEOUT_MS = 15 * 60 * 1000


def run_page(site: Path, query: str, screenshot: Path | None, webgpu: bool = True,
             browser: str = "chromium") -> dict:
    """Open the demo with ``query`` in ``browser``, wait for ``window.demoDone``; returns it
    plus the offsite requests seen and whether the chart drew bars."""
    guard = OffsiteGuard()
    guard.start()
    try:
        with serve_directory(site) as base:
            url = f"{base}/index.html?{query}"
            opened = _in_firefox if browser == "firefox" else _in_chromium
            done = opened(guard, url, screenshot, webgpu)
    finally:
        guard.stop()
    done["browser"] = browser
    done["offsite"] = guard.offsite_requests()
    done["service_calls"] = guard.service_calls()
    return done


def _in_chromium(guard: OffsiteGuard, url: str, screenshot: Path | None, webgpu: bool) -> dict:
    with chromium(guard, webgpu) as browser:
        page = browser.new_page(viewport={"width": 1100, "height": 1100})
        console: list[str] = []
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
        page.goto(url)
        page.wait_for_function("window.demoDone !== undefined", timeout=TIMEOUT_MS)
        done = page.evaluate("window.demoDone")
        done["bars"] = page.locator("#chart rect.bar").count()
        done["error_box"] = page.locator("#error").inner_text() \
            if page.locator("#error").is_visible() else ""
        if screenshot:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
        done["console"] = console
    return done


# The page's outcome, read in Firefox once window.demoDone is set (polled in the page).
FIREFOX_WAIT = """
  const done = arguments[arguments.length - 1];
  const poll = () => {
    if (window.demoDone === undefined) return setTimeout(poll, 200);
    const box = document.getElementById("error");
    done({...window.demoDone,
          bars: document.querySelectorAll("#chart rect.bar").length,
          error_box: box && box.offsetParent !== null ? box.innerText : ""});
  };
  poll();
"""


def _in_firefox(guard: OffsiteGuard, url: str, screenshot: Path | None, webgpu: bool) -> dict:
    driver = FirefoxDriver(guard.port, webgpu=webgpu)
    try:
        driver.set_script_timeout(TIMEOUT_MS / 1000)
        driver.get(url)
        done = driver.execute_async_script(FIREFOX_WAIT)
        if screenshot:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            screenshot.write_bytes(driver.client.screenshot(full=True, format="binary"))
        done["console"] = []  # Marionette does not relay the page's console
    finally:
        driver.quit()
    return done


def report(done: dict) -> bool:
    adapter = done.get("adapter") or {}
    if done.get("error") or adapter.get("error"):
        print("demo failed:", done.get("error") or adapter)
        return False
    print(f"WebGPU adapter: {adapter['vendor']} / {adapter['architecture']} "
          f"(fallback adapter: {adapter['fallback adapter']}, runs in the {adapter['runs in']})")
    header = f"{'expression':<18}{'shapes':<30}{'dtype':<10}{'GFLOP':>8}{'WebGPU ms':>11}" \
             f"{'numpy ms':>10}{'rel err':>10}  agree"
    print(header)
    print("-" * len(header))
    ok = True
    for r in done["results"]:
        if r.get("error"):
            print(f"  {r['error']}: {r['message']}")
            ok = False
            continue
        print(f"{r['expression']:<18}{r['shapes']:<30}{r['dtype']:<10}{r['gflop']:>8.3f}"
              f"{r['gpu_ms']:>11.1f}{r['numpy_ms']:>10.1f}{r['rel_error']:>10.1e}  "
              f"{'yes' if r['agree'] else 'NO'}")
        ok = ok and r["agree"]
    print(f"chart bars drawn: {done['bars']}")
    if done["offsite"]:
        print("requests that tried to leave 127.0.0.1:", *done["offsite"], sep="\n  ")
        ok = False
    else:
        print(f"network: nothing left 127.0.0.1 (refused {len(done['service_calls'])} "
              f"{done['browser']} service calls)")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--serve", type=int, metavar="PORT", help="serve instead of running")
    parser.add_argument("--page", default="index.html", help="the page to announce when serving")
    parser.add_argument("--screenshot", type=Path, default=Path("build/artifacts/demo.png"))
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--browser", choices=["chromium", "firefox"], default="chromium",
                        help="the headless browser of the run (default: Chromium)")
    args = parser.parse_args()
    if args.serve:
        with serve_directory(args.site, args.serve) as base:
            print(f"serving {args.site} at {base}/{args.page} (Ctrl-C stops); open it in a "
                  "browser with WebGPU (Chrome/Edge 113+, Firefox 141+)", flush=True)
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return
    started = time.perf_counter()
    done = run_page(args.site, "auto=1", args.screenshot, browser=args.browser)
    ok = report(done)
    print(f"screenshot: {args.screenshot}   ({time.perf_counter() - started:.1f} s)")
    if args.json:
        args.json.write_text(json.dumps(done, indent=1))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
