"""The browser benchmark as a chart: GFLOP/s against N for every library (square f32 matmul),
an SVG written from a results file. docs/performance.md and the demo page show it.

    python tools/bench_chart.py bench/results/browser-swiftshader.json docs/bench-swiftshader.svg

`make bench SAVE=1` redraws it with the results it records.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from xml.sax.saxutils import escape

COLORS = {"tenferro-web": "#2b6cb0", "numpy": "#dd6b20", "jax-js": "#2f855a",
          "tfjs": "#9b2c2c", "onnxruntime-web": "#6b46c1"}
WIDTH, HEIGHT = 740, 320
LEFT, RIGHT, TOP, BOTTOM = 56, 230, 30, 44


def square_f32(results: dict) -> dict[str, list[tuple[int, float]]]:
    """library -> [(N, GFLOP/s)] of the square f32 cases, N ascending."""
    series: dict[str, list[tuple[int, float]]] = {}
    for row in results["gemm"]:
        if row["dtype"] != "float32" or row["batch"] != 1 or not row["m"] == row["n"] == row["k"]:
            continue
        for library, rate in row["gflops"].items():
            if rate:
                series.setdefault(library, []).append((row["m"], rate))
    return {lib: sorted(points) for lib, points in series.items()}


def chart(results: dict) -> str:
    series = square_f32(results)
    sizes = sorted({n for points in series.values() for n, _ in points})
    top = max(rate for points in series.values() for _, rate in points)
    step = next(s for s in (0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 10000)
                if top / s <= 6)
    y_max = math.ceil(top / step) * step
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(n: int) -> float:
        if len(sizes) == 1:
            return LEFT + plot_w / 2
        return LEFT + plot_w * math.log2(n / sizes[0]) / math.log2(sizes[-1] / sizes[0])

    def y(rate: float) -> float:
        return TOP + plot_h * (1 - rate / y_max)

    adapter = results.get("adapter", {})
    title = (f"square f32 matmul, GFLOP/s (higher is better): {adapter.get('vendor', '')}/"
             f"{adapter.get('architecture', '')} in {results.get('browser', 'the browser')}")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="{LEFT}" y="16" font-size="12">{escape(title)}</text>']
    ticks = [i * step for i in range(int(y_max / step) + 1)]
    for t in ticks:
        out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(t):.1f}" y2="{y(t):.1f}" '
                   f'stroke="#e2e8f0"/><text x="{LEFT - 6}" y="{y(t) + 4:.1f}" '
                   f'text-anchor="end">{t:g}</text>')
    for n in sizes:
        out.append(f'<text x="{x(n):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle">{n}'
                   '</text>')
    out.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 8}" text-anchor="middle">N (N x N '
               'times N x N)</text>')
    libraries = results.get("libraries", {})
    for row, (library, points) in enumerate(series.items()):
        color = COLORS.get(library, "#4a5568")
        path = " ".join(f"{'M' if i == 0 else 'L'}{x(n):.1f},{y(r):.1f}"
                        for i, (n, r) in enumerate(points))
        out.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        out.extend(f'<circle cx="{x(n):.1f}" cy="{y(r):.1f}" r="3" fill="{color}"><title>'
                   f'{escape(library)} N={n}: {r:.2f} GFLOP/s</title></circle>'
                   for n, r in points)
        info = libraries.get(library, {})
        label = f"{library} {info.get('version', '')} ({info.get('backend', '')})"
        ly = TOP + 14 * row + 6
        out.append(f'<rect x="{WIDTH - RIGHT + 10}" y="{ly - 8}" width="10" height="10" '
                   f'fill="{color}"/><text x="{WIDTH - RIGHT + 24}" y="{ly + 1}">'
                   f'{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("svg", type=Path)
    args = parser.parse_args()
    args.svg.write_text(chart(json.loads(args.results.read_text())))
    print(f"wrote {args.svg}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
