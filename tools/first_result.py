"""Time to first result of the demo page: page open -> Pyodide -> packages -> WebGPU adapter ->
first einsum result downloaded, each run in a fresh headless Chromium, sites side by side
(runs interleaved, so machine noise falls on every site alike).

    python tools/first_result.py build/site [OTHER_SITE ...] [--runs 5]

Prints the median of each mark per site (seconds since the page began to load).
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from demo import run_page

QUERY = "auto=1&expression=ij,jk-%3Eik&size=64"
MARKS = ("pyodide", "packages", "adapter", "ready", "first_result")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", type=Path, nargs="+")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    seen: dict[Path, list[dict]] = {site: [] for site in args.sites}
    for run in range(args.runs):
        for site in args.sites:
            done = run_page(site, QUERY, None)
            if done.get("error") or not done.get("timings"):
                print(f"{site}: the page failed: {done.get('error') or done.get('adapter')}")
                return 1
            seen[site].append(done["timings"])
            print(f"run {run + 1}/{args.runs} {site}: first result "
                  f"{done['timings']['first_result']:.2f} s", flush=True)
    print(f"\n{'site':<28}" + "".join(f"{m:>14}" for m in MARKS))
    for site, runs in seen.items():
        print(f"{str(site):<28}" + "".join(
            f"{statistics.median(r[m] for r in runs):>13.2f}s" for m in MARKS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
