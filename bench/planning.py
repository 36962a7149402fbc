"""Planning time of einsum (parse, opt_einsum's path, lowering to dot_general steps), in plain
CPython: 10, 100 and 1000 operands that all share one label (every pair a candidate), and
chains of 10 and 50 matrices (numpy's subscripts have 52 letters). Medians of 3; one line per
case.

    .venv/bin/python bench/planning.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import tenferro_web as tw

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
CASES = [("one shared label", n, ",".join(["i"] * n) + "->i", [np.empty(5, np.float32)] * n)
         for n in (10, 100, 1000)] + \
        [("chain", n, ",".join(LETTERS[i:i + 2] for i in range(n)) + f"->a{LETTERS[n]}",
          [np.empty((3, 3), np.float32)] * n) for n in (10, 50)]


def main() -> None:
    for name, n, subscripts, operands in CASES:
        for optimize in ("auto", "greedy", "optimal"):
            times = []
            for _ in range(3):
                start = time.perf_counter()
                _, plan = tw.einsum_path(subscripts, *operands, optimize=optimize)
                times.append(time.perf_counter() - start)
            print(f"{n:>5} operands, {name:<17} optimize={optimize!r:<10} "
                  f"{statistics.median(times) * 1e3:9.1f} ms  (path search: {plan.strategy})",
                  flush=True)


if __name__ == "__main__":
    main()
