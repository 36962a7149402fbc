"""einsum lowered to steps: size-1 summed labels dropped as views, one dot_general per pair of
the contraction path (operand order, contracting and batch orders chosen so that operands bind
in place and the last step yields the requested output order when dot_general's
``[lhs_free, rhs_free, batch]`` layout allows), then at most one transpose.

Supported beyond a single dot_general: outer products (no contracted axis, K = 1), Hadamard
products (batch only). Not on WebGPU, each a typed ``UnsupportedError`` naming the label:
repeated labels within one operand (diagonals, traces), a label of extent > 1 summed from one
operand only (a reduction), broadcasting of mismatched extents.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ...dtypes import DType
from ...errors import DTypeMismatch, UnsupportedDType, UnsupportedError
from ...layout import ViewLayout, dense_layout
from ..copy_plan import COPY_DTYPES
from ..dot_general_plan import GEMM_DTYPES, DotGeneralConfig, plan_dot_general
from .parse import OP, Subscripts, parse_subscripts, show_label
from .paths import choose_path


@dataclass(frozen=True)
class DropAxes:
    """A metadata-only view of input ``src`` without its size-1 summed axes."""

    src: int
    labels: tuple[str, ...]


@dataclass(frozen=True)
class DotStep:
    lhs: int
    rhs: int
    config: DotGeneralConfig
    labels: tuple[str, ...]
    flops: int
    packs: int  # operands the GPU must copy first (0 when both bind in place)


@dataclass(frozen=True)
class TransposeStep:
    src: int
    perm: tuple[int, ...]
    labels: tuple[str, ...]


@dataclass(frozen=True)
class CopyStep:
    src: int
    labels: tuple[str, ...]


Step = DropAxes | DotStep | TransposeStep | CopyStep


@dataclass(frozen=True)
class EinsumPlan:
    """Values are numbered: inputs 0..n-1, then one new value per step, in order."""

    subscripts: str
    labels: Subscripts
    dtype: DType
    layouts: tuple[ViewLayout, ...]  # of every value the steps read: inputs, then step results
    path: tuple[tuple[int, ...], ...]
    strategy: str  # the path search that ran (opt_einsum's name), "explicit" or "left-to-right"
    steps: tuple[Step, ...]
    flops: int
    naive_flops: int
    largest_intermediate: int

    @property
    def numpy_path(self) -> list[Any]:
        return ["einsum_path", *self.path]

    def __str__(self) -> str:
        def label_text(labels: tuple[str, ...]) -> str:
            return "".join("." if lab.startswith("…") else lab for lab in labels)

        rows = [f"  Complete contraction:  {self.subscripts}",
                f"         Naive FLOP count:  {self.naive_flops:.3e}",
                f"     Optimized FLOP count:  {self.flops:.3e}",
                f"      Theoretical speedup:  {self.naive_flops / max(self.flops, 1):.3f}",
                f"  Largest intermediate:  {self.largest_intermediate:.3e} elements",
                f"         Path searched by:  {self.strategy}",
                "-" * 74,
                f"{'step':<6}{'op':<14}{'labels':<24}{'FLOPs':>12}  {'GPU copies':>10}",
                "-" * 74]
        for n, s in enumerate(self.steps):
            if isinstance(s, DotStep):
                rows.append(f"{n:<6}{'dot_general':<14}{label_text(s.labels):<24}"
                            f"{s.flops:>12.3e}  {s.packs:>10}")
            else:
                rows.append(f"{n:<6}{type(s).__name__:<14}{label_text(s.labels):<24}"
                            f"{0:>12.3e}  {1 if not isinstance(s, DropAxes) else 0:>10}")
        return "\n".join(rows)


def _reject_unsupported(subs: Subscripts) -> None:
    counts: dict[str, int] = {}
    for labels in subs.inputs:
        for lab in set(labels):
            counts[lab] = counts.get(lab, 0) + 1
    for labels in subs.inputs:
        for lab in labels:
            if labels.count(lab) > 1:
                raise UnsupportedError(
                    OP, f"label {show_label(lab)} repeats within one operand (a diagonal or trace "
                        "needs extract_diagonal, which WebGPU does not run here); download and "
                        "use numpy.einsum, or take the diagonal first")
            if counts[lab] == 1 and lab not in subs.output and subs.sizes[lab] != 1:
                raise UnsupportedError(
                    OP, f"label {show_label(lab)} is summed from one operand only (a reduction, "
                        "which WebGPU does not run here); keep it in the output and sum after "
                        "downloading, or contract it with another operand")


def plan_einsum(subscripts: str, layouts: Sequence[ViewLayout], dtypes: Sequence[DType],
                optimize: Any = "auto") -> EinsumPlan:
    subs = parse_subscripts(subscripts, [lay.shape for lay in layouts])
    dtype = _common_dtype(dtypes, len(layouts))
    _reject_unsupported(subs)
    n = len(layouts)
    output = frozenset(subs.output)
    sizes = subs.sizes

    # Size-1 labels summed from one operand leave as views, before any contraction.
    counts = {lab: sum(lab in labels for labels in subs.inputs) for lab in sizes}
    values: list[tuple[tuple[str, ...], ViewLayout]] = list(zip(subs.inputs, layouts))
    steps: list[Step] = []
    current = list(range(n))
    for i, (labels, layout) in enumerate(list(values)):
        keep = tuple(a for a, lab in enumerate(labels) if counts[lab] > 1 or lab in output)
        if len(keep) != len(labels):
            kept_labels = tuple(labels[a] for a in keep)
            steps.append(DropAxes(i, kept_labels))
            values.append((kept_labels, ViewLayout(tuple(layout.shape[a] for a in keep),
                                                   tuple(layout.strides[a] for a in keep),
                                                   layout.offset)))
            current[i] = len(values) - 1

    choice = choose_path([values[v][0] for v in current], subs.output, sizes, optimize)
    flops = 0
    largest = 0
    computed: set[int] = set()
    pending = list(current)
    for number, pair in enumerate(choice.path):
        last = number == len(choice.path) - 1
        if len(pair) == 1:
            (i,) = pair
            pending.append(pending.pop(i))
            continue
        i, j = sorted(pair)
        a, b = pending[i], pending[j]
        del pending[j], pending[i]
        rest = set().union(*(set(values[v][0]) for v in pending)) if pending else set()
        want = tuple(subs.output) if last and not pending else None
        step = _lower_pair(values, a, b, rest | output, want, dtype)
        steps.append(step)
        flops += step.flops
        values.append((step.labels, dense_layout([sizes[x] for x in step.labels])))
        largest = max(largest, _prod(sizes[x] for x in step.labels))
        computed.add(len(values) - 1)
        pending.append(len(values) - 1)

    (result,) = pending
    labels = values[result][0]
    if labels != tuple(subs.output):
        perm = tuple(labels.index(lab) for lab in subs.output)
        steps.append(TransposeStep(result, perm, tuple(subs.output)))
    elif result not in computed:
        steps.append(CopyStep(result, labels))  # e.g. "ij->ij": a fresh tensor, as numpy
    naive = (8 if dtype.is_complex else 2) * max(n - 1, 1) * _prod(sizes.values())
    return EinsumPlan(subscripts, subs, dtype, tuple(layout for _, layout in values),
                      choice.path, choice.strategy, tuple(steps), flops, naive, largest)


def _common_dtype(dtypes: Sequence[DType], n: int) -> DType:
    dtype = dtypes[0]
    for other in dtypes[1:]:
        if other != dtype:
            raise DTypeMismatch(OP, dtype, other)
    allowed = GEMM_DTYPES if n > 1 else COPY_DTYPES
    if dtype not in allowed:
        raise UnsupportedDType(
            OP, dtype, f"WebGPU einsum runs {', '.join(str(d) for d in allowed)} here; download "
                       "the operands and use numpy.einsum, or convert them before uploading")
    return dtype


def _prod(values: Iterable[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def _lower_pair(values: Sequence[tuple[tuple[str, ...], ViewLayout]], a: int, b: int,
                keep: set[str] | frozenset[str], want: tuple[str, ...] | None,
                dtype: DType) -> DotStep:
    """One dot_general for values ``a`` and ``b``, arranged to avoid copies.

    Candidates: either operand as lhs; contracting and batch axes listed in lhs order, in rhs
    order, or (batch) in the order the final output wants. Each is scored by the elements the
    GPU must copy: packed operands, plus the output when a final transpose would remain.
    """
    best: tuple[tuple[int, int], DotStep] | None = None
    for lhs, rhs in ((a, b), (b, a)):
        (ll, llay), (rl, rlay) = values[lhs], values[rhs]
        shared = [lab for lab in ll if lab in rl]
        contract = [lab for lab in shared if lab not in keep]
        batch = [lab for lab in shared if lab in keep]
        contract_orders = {tuple(contract), tuple(sorted(contract, key=rl.index))}
        batch_orders = {tuple(batch), tuple(sorted(batch, key=rl.index))}
        if want is not None:
            batch_orders.add(tuple(sorted(batch, key=want.index)))
        for c_order, b_order in itertools.product(sorted(contract_orders),
                                                  sorted(batch_orders)):
            cfg = DotGeneralConfig(tuple(ll.index(x) for x in c_order),
                                   tuple(rl.index(x) for x in c_order),
                                   tuple(ll.index(x) for x in b_order),
                                   tuple(rl.index(x) for x in b_order))
            plan = plan_dot_general(dtype, llay, dtype, rlay, cfg)
            labels = tuple(ll[x] for x in plan.lhs_free) + tuple(rl[x] for x in plan.rhs_free) \
                + b_order
            copies = 0
            packs = 0
            for binding, layout in ((plan.lhs, llay), (plan.rhs, rlay)):
                if binding.pack_perm is not None:
                    copies += _prod(layout.shape)
                    packs += 1
            if want is not None and labels != want:
                copies += plan.out_size
            key = (copies, packs)
            if best is None or key < best[0]:
                best = (key, DotStep(lhs, rhs, cfg, labels, plan.flops, packs))
    assert best is not None
    return best[1]
