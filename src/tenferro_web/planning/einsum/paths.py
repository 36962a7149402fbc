"""Contraction paths, from opt_einsum (the path optimiser JAX, PyTorch and cuQuantum use), on
shapes alone. This module maps numpy's ``optimize`` values onto it and keeps every search
bounded:

* ``"auto"`` (the default), ``"greedy"``, ``"dp"``, ``"branch-1"``, ``"branch-2"``,
  ``"branch-all"``, ``"random-greedy"``, ``"auto-hq"``: opt_einsum's optimisers by name;
* ``True``: numpy's meaning, ``"greedy"``; ``False``: no search, operands contracted left to
  right in pairs (numpy contracts them all at once, which is the same sum);
* ``"optimal"``: opt_einsum's exhaustive search up to ``OPTIMAL_LIMIT`` operands and its
  ``"auto-hq"`` beyond (dynamic programming, then random greedy), as opt_einsum's own
  ``"auto"`` switches strategy by size, so that no call can search without bound;
* an explicit path, numpy's format (``["einsum_path", (0, 1), ...]``, the leading word
  optional); a step may name one operand (a no-op) or two;
* a tuple ``(strategy, memory_limit)``: numpy's form, the largest intermediate allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import InvalidArgument
from .parse import OP

OPTIMAL_LIMIT = 8
STRATEGIES = ("auto", "greedy", "optimal", "dp", "branch-1", "branch-2", "branch-all",
              "random-greedy", "auto-hq")

Path = list[tuple[int, ...]]


@dataclass(frozen=True)
class PathChoice:
    path: tuple[tuple[int, ...], ...]
    strategy: str  # what ran: an opt_einsum optimiser, "explicit" or "left-to-right"


def choose_path(inputs: Sequence[tuple[str, ...]], output: tuple[str, ...],
                sizes: dict[str, int], optimize: Any) -> PathChoice:
    """A pairwise contraction path for operands with these labels (numpy's format: positions in
    the shrinking operand list, each result appended at the end)."""
    n = len(inputs)
    memory_limit = None
    if isinstance(optimize, tuple) and len(optimize) == 2 and isinstance(optimize[0], str):
        optimize, memory_limit = optimize
        if not isinstance(memory_limit, int | float) or memory_limit <= 0:
            raise InvalidArgument(OP, "optimize", f"memory limit {memory_limit!r} is not a "
                                                  "positive number")
    if optimize is True:
        optimize = "greedy"
    if optimize is False:
        return PathChoice(tuple((0, 1) for _ in range(n - 1)) or ((0,),), "left-to-right")
    if isinstance(optimize, str):
        if optimize not in STRATEGIES:
            raise InvalidArgument(OP, "optimize", f"{optimize!r} is not True, False, one of "
                                                  f"{', '.join(STRATEGIES)}, or a path")
        if n <= 2:  # nothing to search: one operand, or one pair
            return PathChoice(((0,),) if n == 1 else ((0, 1),), optimize)
        import opt_einsum  # imported on first use: it costs 50 ms of a page's start in Pyodide

        strategy = optimize
        if strategy == "optimal" and n > OPTIMAL_LIMIT:
            strategy = "auto-hq"
        symbols = {lab: opt_einsum.get_symbol(i) for i, lab in enumerate(sizes)}
        equation = ",".join("".join(symbols[lab] for lab in labels) for labels in inputs) + \
            "->" + "".join(symbols[lab] for lab in output)
        shapes = [tuple(sizes[lab] for lab in labels) for labels in inputs]
        path, _ = opt_einsum.contract_path(equation, *shapes, shapes=True, optimize=strategy,
                                           memory_limit=memory_limit)
        return PathChoice(tuple(tuple(int(i) for i in step) for step in path), strategy)
    if isinstance(optimize, str | bytes) or not isinstance(optimize, Sequence):
        raise InvalidArgument(OP, "optimize", f"{optimize!r} is not True, False, a strategy "
                                              "name or a path")
    return PathChoice(tuple(check_path(optimize, n)), "explicit")


def check_path(path: Sequence[Any], n: int) -> Path:
    steps = list(path)
    if steps and steps[0] == "einsum_path":
        steps = steps[1:]
    count = n
    out: Path = []
    for raw in steps:
        step = tuple(raw) if isinstance(raw, Sequence) and not isinstance(raw, str) else (raw,)
        if len(step) not in (1, 2) or len(set(step)) != len(step) or \
                any(not isinstance(i, int) or not 0 <= i < count for i in step):
            raise InvalidArgument(OP, "optimize", f"path step {raw!r} is not one or two "
                                                  f"distinct positions below {count}")
        count -= len(step) - 1
        out.append(step)
    if count != 1:
        raise InvalidArgument(OP, "optimize", f"the path leaves {count} operands, not one")
    return out
