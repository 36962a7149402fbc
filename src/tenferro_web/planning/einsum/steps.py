"""einsum lowered to steps, all of numpy's einsum:

1. each operand becomes a view where needed (metadata only): a label repeated within it is one
   axis whose stride is the sum of the repeated axes' strides (a diagonal); an extent-1 axis
   against a wider one gets that extent and stride 0 (broadcasting); a size-1 label summed from
   it alone is dropped;
2. labels of extent > 1 summed from one operand alone are summed first (``SumStep``, as
   opt_einsum pre-reduces), before any pairwise contraction, all of them in one pass;
3. one dot_general per pair of the contraction path (operand order, contracting and batch
   orders chosen so that operands bind in place and the last step yields the requested output
   order when dot_general's ``[lhs_free, rhs_free, batch]`` layout allows); outer products
   (K = 1) and Hadamard products (batch only) included; a batch of at least BATCH_FIRST_MIN
   may come first in the result where that saves copies (numpy's batch-first labels);
4. at most one transpose, or a copy when no step computed the result.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ...dtypes import DType
from ...errors import DTypeMismatch, UnsupportedDType
from ...layout import ViewLayout, dense_layout
from ..copy_plan import COPY_DTYPES
from ..dot_general_plan import GEMM_DTYPES, DotGeneralConfig, DotGeneralPlan, plan_dot_general
from .parse import OP, Subscripts, parse_subscripts, show_label
from .paths import choose_path


@dataclass(frozen=True)
class ViewStep:
    """A metadata-only view of input ``src``: diagonals, broadcast axes, size-1 sums dropped."""

    src: int
    labels: tuple[str, ...]


@dataclass(frozen=True)
class SumStep:
    """Labels summed from value ``src`` alone, planned as a dot_general of ``src`` (lhs)
    against ``ones`` (a stride-0 rhs of the summed extents), contracting every summed axis: the
    plan gives the operand's binding (one stride per group, or a packing copy) and the FLOPs;
    lowering runs it on the reduction kernels."""

    src: int
    config: DotGeneralConfig
    ones: ViewLayout
    labels: tuple[str, ...]
    flops: int
    packs: int


@dataclass(frozen=True)
class DotStep:
    lhs: int
    rhs: int
    config: DotGeneralConfig
    labels: tuple[str, ...]
    flops: int
    packs: int  # operands the GPU must copy first (0 when both bind in place)
    batch_first: bool = False  # the result is [batch, lhs_free, rhs_free] (plan_dot_general)


@dataclass(frozen=True)
class TransposeStep:
    src: int
    perm: tuple[int, ...]
    labels: tuple[str, ...]


@dataclass(frozen=True)
class CopyStep:
    src: int
    labels: tuple[str, ...]


Step = ViewStep | SumStep | DotStep | TransposeStep | CopyStep


@dataclass(frozen=True, eq=False)
class EinsumPlan:
    """Values are numbered: inputs 0..n-1, then one new value per step, in order. Compared
    and hashed by identity: a plan is made once per call signature and its lowering cached."""

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
            if isinstance(s, DotStep | SumStep):
                name = "dot_general" if isinstance(s, DotStep) else "sum"
                rows.append(f"{n:<6}{name:<14}{label_text(s.labels):<24}"
                            f"{s.flops:>12.3e}  {s.packs:>10}")
            else:
                name = {ViewStep: "view", TransposeStep: "transpose", CopyStep: "copy"}[type(s)]
                rows.append(f"{n:<6}{name:<14}{label_text(s.labels):<24}"
                            f"{0:>12.3e}  {0 if isinstance(s, ViewStep) else 1:>10}")
        return "\n".join(rows)


def plan_einsum(subscripts: str, layouts: Sequence[ViewLayout], dtypes: Sequence[DType],
                optimize: Any = "auto") -> EinsumPlan:
    subs = parse_subscripts(subscripts, [lay.shape for lay in layouts])
    dtype = _common_dtype(dtypes, len(layouts))
    n = len(layouts)
    output = frozenset(subs.output)
    sizes = subs.sizes
    counts = {lab: sum(lab in labels for labels in subs.inputs) for lab in sizes}

    values: list[tuple[tuple[str, ...], ViewLayout]] = list(zip(subs.inputs, layouts))
    steps: list[Step] = []
    current = list(range(n))
    computed: set[int] = set()
    flops = 0
    for i, (labels, layout) in enumerate(list(values)):
        view = _operand_view(labels, layout, sizes, counts, output)
        if view != (labels, layout):
            steps.append(ViewStep(i, view[0]))
            values.append(view)
            current[i] = len(values) - 1
        summed = [lab for lab in view[0] if counts[lab] == 1 and lab not in output]
        if summed:
            if dtype not in GEMM_DTYPES:
                raise UnsupportedDType(
                    OP, dtype, f"summing label(s) {', '.join(map(show_label, summed))} runs "
                               "F32 and C32 on WebGPU; download and use numpy.einsum")
            total = _lower_sum(values, current[i], summed, dtype)
            steps.append(total)
            flops += total.flops
            values.append((total.labels, dense_layout([sizes[x] for x in total.labels])))
            current[i] = len(values) - 1
            computed.add(current[i])

    choice = choose_path([values[v][0] for v in current], subs.output, sizes, optimize)
    largest = max((_prod(sizes[x] for x in values[v][0]) for v in computed), default=0)
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


def _operand_view(labels: tuple[str, ...], layout: ViewLayout, sizes: dict[str, int],
                  counts: dict[str, int], output: frozenset[str]
                  ) -> tuple[tuple[str, ...], ViewLayout]:
    """One operand's diagonals, broadcast axes and dropped size-1 sums, as one view."""
    axes: dict[str, tuple[int, int]] = {}  # label -> (extent, stride), first appearance order
    for lab, extent, stride in zip(labels, layout.shape, layout.strides):
        # A repeated label is a diagonal: one axis, the strides added up.
        axes[lab] = (extent, axes[lab][1] + stride if lab in axes else stride)
    for lab, (extent, _) in axes.items():
        if extent == 1 and sizes[lab] != 1:
            axes[lab] = (sizes[lab], 0)  # broadcast
    kept = tuple(lab for lab in axes
                 if not (counts[lab] == 1 and lab not in output and sizes[lab] == 1))
    return kept, ViewLayout(tuple(axes[lab][0] for lab in kept),
                            tuple(axes[lab][1] for lab in kept), layout.offset)


def _lower_sum(values: Sequence[tuple[tuple[str, ...], ViewLayout]], src: int,
               summed: Sequence[str], dtype: DType) -> SumStep:
    labels, layout = values[src]
    summed_axes = tuple(labels.index(lab) for lab in summed)

    def planned(batch: tuple[int, ...]
                ) -> tuple[DotGeneralConfig, ViewLayout, DotGeneralPlan]:
        ones = ViewLayout(tuple(layout.shape[a] for a in (*summed_axes, *batch)),
                          (0,) * (len(summed) + len(batch)), 0)
        cfg = DotGeneralConfig(summed_axes, tuple(range(len(summed))), batch,
                               tuple(range(len(summed), len(summed) + len(batch))))
        return cfg, ones, plan_dot_general(dtype, layout, dtype, ones, cfg)

    cfg, ones, plan = planned(())
    if plan.lhs.pack_perm is not None:
        # Kept axes that share no stride (x[a, b, c] summed over b): one of them as the batch,
        # the slowest first, reads the operand in place instead of packing it.
        kept_axes = [a for a in range(len(labels)) if a not in summed_axes]
        for axis in sorted(kept_axes, key=lambda a: -abs(layout.strides[a])):
            candidate = planned((axis,))
            if candidate[2].lhs.pack_perm is None:
                cfg, ones, plan = candidate
                break
    kept = tuple(labels[a] for a in (*plan.lhs_free, *cfg.lhs_batch))
    packs = int(plan.lhs.pack_perm is not None)
    return SumStep(src, cfg, ones, kept, plan.flops, packs)


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


# A batch this large fills a 32-byte memory sector with consecutive f32 entries: the batch-first
# GEMM's lanes read and write whole sectors.
BATCH_FIRST_MIN = 8
# What a batch-first product costs beyond its copies, in element copies (measured, below): so
# many copies of its output, and one copy per so many f32 flops (C32: per twice as many, its
# elements being twice as large).
BATCH_FIRST_OUTPUT_COST = 2
BATCH_FIRST_FLOPS_PER_COPY = 512


def _lower_pair(values: Sequence[tuple[tuple[str, ...], ViewLayout]], a: int, b: int,
                keep: set[str] | frozenset[str], want: tuple[str, ...] | None,
                dtype: DType) -> DotStep:
    """One dot_general for values ``a`` and ``b``, arranged to avoid copies.

    Candidates: either operand as lhs; contracting and batch axes listed in lhs order, in rhs
    order, or (batch) in the order the final output wants; the batch last in the result, or
    (a batch of at least BATCH_FIRST_MIN) first. Each is scored by the elements the GPU must
    copy: packed operands, plus the output when a final transpose would remain, plus, for the
    batch first, what the batch-first GEMM costs beyond the tiled one in copies (its output's
    and its flops' charges). Ties keep the batch last (the tiled GEMM).
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
        nbatch = _prod(llay.shape[ll.index(x)] for x in batch)
        firsts = (False, True) if batch and nbatch >= BATCH_FIRST_MIN else (False,)
        for first, c_order, b_order in itertools.product(firsts, sorted(contract_orders),
                                                         sorted(batch_orders)):
            cfg = DotGeneralConfig(tuple(ll.index(x) for x in c_order),
                                   tuple(rl.index(x) for x in c_order),
                                   tuple(ll.index(x) for x in b_order),
                                   tuple(rl.index(x) for x in b_order))
            plan = plan_dot_general(dtype, llay, dtype, rlay, cfg, first)
            free = tuple(ll[x] for x in plan.lhs_free) + tuple(rl[x] for x in plan.rhs_free)
            labels = b_order + free if first else free + b_order
            copies = 0
            packs = 0
            for binding, layout in ((plan.lhs, llay), (plan.rhs, rlay)):
                if binding.pack_perm is not None:
                    copies += _prod(layout.shape)
                    packs += 1
            if want is not None and labels != want:
                copies += plan.out_size
            if first:
                # The batch-first GEMM writes its output through workgroup memory in runs of 8
                # batch entries, and multiplies slower than the tiled GEMM (an H100,
                # bench/h200.py --sweep --steps ...-batch: 19-21 thousand GFLOP/s against
                # 25-31). So it pays where it saves packing a large operand, unless the output
                # is large (bhqd,bhkd->bhqk: 0.76-0.79 ms against 0.59-0.61 for packing, the
                # tiled GEMM and the output's transpose) or the product long (bij,bjk->bik
                # 32 x 1021 x 1023 x 1019: 3.1-3.2 ms against 2.6-2.8); bhqk,bhkd->bhqd
                # (0.43-0.45 ms against 0.54-0.66) stays batch-first.
                copies += BATCH_FIRST_OUTPUT_COST * plan.out_size \
                    + plan.flops * 4 // (BATCH_FIRST_FLOPS_PER_COPY * dtype.itemsize)
            key = (copies, packs)
            if best is None or key < best[0]:
                best = (key, DotStep(lhs, rhs, cfg, labels, plan.flops, packs, first))
    assert best is not None
    return best[1]
