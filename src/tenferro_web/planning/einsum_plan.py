"""einsum: numpy subscript syntax, contraction-path search, lowering to dot_general steps.

Parsing follows numpy (explicit and implicit output, ``...``, upper- and lower-case labels).
An N-ary expression is contracted pairwise along a path: optimal by dynamic programming over
operand subsets for up to ``OPTIMAL_LIMIT`` operands, greedy beyond, or a path the caller gives
(numpy's format). Each pairwise step is one dot_general whose dimension numbers and operand
order are chosen to avoid copies: contracting and batch orders are picked so operands bind in
place, and the final step is arranged to produce the requested output order when dot_general's
``[lhs_free, rhs_free, batch]`` layout allows it; only otherwise is one transpose emitted.

Supported beyond a single dot_general: outer products (a dot_general with no contracted axis,
K = 1), Hadamard products (batch-only), labels summed from one operand when their extent is 1
(dropped as a view). Not supported on WebGPU, each a typed ``UnsupportedError`` naming the label:
repeated labels within one operand (diagonals/traces), a label of extent > 1 summed from one
operand only (a reduction), and broadcasting of mismatched ellipsis or label extents.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..dtypes import DType
from ..errors import (
    DTypeMismatch,
    InvalidArgument,
    ShapeMismatch,
    SubscriptError,
    UnsupportedDType,
    UnsupportedError,
)
from ..layout import ViewLayout, dense_layout
from .copy_plan import COPY_DTYPES
from .dot_general_plan import GEMM_DTYPES, DotGeneralConfig, plan_dot_general

OP = "einsum"
OPTIMAL_LIMIT = 10
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


# --- parsing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Subscripts:
    """Per-operand label lists and the output labels; ellipsis axes get labels ``…0, …1``."""

    inputs: tuple[tuple[str, ...], ...]
    output: tuple[str, ...]
    sizes: dict[str, int] = field(compare=False)


def _terms(text: str, start: int) -> list[tuple[list[str], int]]:
    """Split one side into terms of labels; '...' becomes the token '...'. Returns (tokens,
    start position) per term."""
    terms: list[tuple[list[str], int]] = [([], start)]
    i = 0
    while i < len(text):
        ch = text[i]
        pos = start + i
        if ch == ",":
            terms.append(([], pos + 1))
        elif ch == ".":
            if text[i:i + 3] != "...":
                raise SubscriptError(OP, "", pos, "'.' must be part of an ellipsis '...'")
            if "..." in terms[-1][0]:
                raise SubscriptError(OP, "", pos, "more than one ellipsis in one operand")
            terms[-1][0].append("...")
            i += 3
            continue
        elif ch in _LETTERS:
            terms[-1][0].append(ch)
        elif not ch.isspace():
            raise SubscriptError(OP, "", pos, f"invalid subscript character {ch!r} (labels "
                                              "are a-z and A-Z)")
        i += 1
    return terms


def parse_subscripts(subscripts: str, shapes: Sequence[Sequence[int]]) -> Subscripts:
    if not isinstance(subscripts, str):
        raise InvalidArgument(OP, "subscripts", f"expected a str, got {type(subscripts).__name__}")
    try:
        return _parse(subscripts, [tuple(s) for s in shapes])
    except SubscriptError as e:
        if e.subscripts:
            raise
        raise SubscriptError(OP, subscripts, e.position, e.message.rsplit(" at position", 1)[0]
                             ) from None


def _parse(text: str, shapes: list[tuple[int, ...]]) -> Subscripts:
    if not shapes:
        raise SubscriptError(OP, "", 0, "einsum needs at least one operand")
    arrow = text.find("->")
    if arrow != -1 and text.find("->", arrow + 2) != -1:
        raise SubscriptError(OP, "", text.find("->", arrow + 2), "more than one '->'")
    lhs_text = text if arrow == -1 else text[:arrow]
    for bad in ("-", ">"):
        if bad in lhs_text:
            raise SubscriptError(OP, "", lhs_text.index(bad), f"stray {bad!r}; the output "
                                                              "arrow is '->'")
    terms = _terms(lhs_text, 0)
    if len(terms) != len(shapes):
        raise SubscriptError(OP, "", len(lhs_text), f"{len(terms)} operand subscript(s) for "
                                                    f"{len(shapes)} operand(s)")
    inputs: list[list[str]] = []
    ellipsis_shapes: list[tuple[int, ...]] = []
    for (tokens, pos), shape in zip(terms, shapes):
        named = [t for t in tokens if t != "..."]
        if "..." in tokens:
            extra = len(shape) - len(named)
            if extra < 0:
                raise SubscriptError(OP, "", pos, f"operand of rank {len(shape)} has more "
                                                  f"labels ({len(named)}) than axes")
            cut = tokens.index("...")
            ellipsis_shapes.append(shape[cut:cut + extra])
            labels = tokens[:cut] + [f"…{j}" for j in range(extra)] + tokens[cut + 1:]
        else:
            if len(named) != len(shape):
                raise SubscriptError(OP, "", pos, f"{len(named)} label(s) for an operand of "
                                                  f"rank {len(shape)}")
            labels = named
        inputs.append(labels)
    # Ellipsis axes align from the right (numpy); label '…j' counts from the left of the
    # longest ellipsis, so rename each operand's ellipsis labels to right-aligned ones.
    width = max((len(s) for s in ellipsis_shapes), default=0)
    for labels in inputs:
        k = sum(1 for lab in labels if lab.startswith("…"))
        for idx, lab in enumerate(labels):
            if lab.startswith("…"):
                labels[idx] = f"…{width - k + int(lab[1:])}"

    sizes: dict[str, int] = {}
    for labels, shape in zip(inputs, shapes):
        for lab, extent in zip(labels, shape):
            if lab in sizes and sizes[lab] != extent:
                if 1 in (sizes[lab], extent):
                    raise UnsupportedError(
                        OP, f"label {_show(lab)} has extents {sizes[lab]} and {extent}: "
                            "broadcasting needs broadcast_in_dim, which WebGPU does not run "
                            "here; give the operands equal extents")
                raise ShapeMismatch(OP, "ExpectedActual",
                                    f"label {_show(lab)} has extents {sizes[lab]} and {extent}",
                                    label=lab, expected=sizes[lab], actual=extent)
            sizes[lab] = extent

    ellipsis = [f"…{j}" for j in range(width)]
    if arrow == -1:
        counts: dict[str, int] = {}
        for labels in inputs:
            for lab in labels:
                counts[lab] = counts.get(lab, 0) + 1
        output = [lab for lab in ellipsis if lab in counts] + \
            sorted(lab for lab, c in counts.items() if c == 1 and not lab.startswith("…"))
    else:
        out_text = text[arrow + 2:]
        out_terms = _terms(out_text, arrow + 2)
        if len(out_terms) != 1:
            raise SubscriptError(OP, "", out_terms[1][1] - 1, "the output has no ','")
        output = []
        tokens, pos = out_terms[0]
        for tok in tokens:
            if tok == "...":
                output.extend(ellipsis)
                continue
            if tok in output:
                raise SubscriptError(OP, "", arrow + 2 + out_text.index(tok),
                                     f"output label {tok!r} appears more than once")
            if tok not in sizes:
                raise SubscriptError(OP, "", arrow + 2 + out_text.index(tok),
                                     f"output label {tok!r} is not in any operand")
            output.append(tok)
        if width and "..." not in tokens and any(lab in sizes for lab in ellipsis):
            extents = [sizes[lab] for lab in ellipsis if lab in sizes]
            if any(e != 1 for e in extents):
                raise SubscriptError(OP, "", len(text), "the operands have ellipsis axes, so "
                                                        "the output needs '...'")
    return Subscripts(tuple(tuple(x) for x in inputs), tuple(output), sizes)


def _show(label: str) -> str:
    return f"'...' axis {label[1:]}" if label.startswith("…") else repr(label)


# --- contraction paths -----------------------------------------------------------------------


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def step_cost(a: frozenset, b: frozenset, sizes: dict[str, int]) -> int:
    """Multiply-adds of contracting two operands: the product of every extent involved
    (M*N*K*batch of the dot_general)."""
    return _prod(sizes[lab] for lab in a | b)


def path_cost(inputs: Sequence[frozenset], output: frozenset, sizes: dict[str, int],
              path: Sequence[tuple[int, ...]]) -> int:
    """Total step cost of a numpy-format path (positions in the shrinking operand list). A
    step over k > 2 operands (numpy's paths may have them) costs k - 1 multiplies per point."""
    ops = list(inputs)
    total = 0
    for step in path:
        if len(step) == 1:
            continue
        taken = [ops[i] for i in step]
        for i in sorted(step, reverse=True):
            del ops[i]
        rest = frozenset().union(*ops) if ops else frozenset()
        union = frozenset().union(*taken)
        total += _prod(sizes[lab] for lab in union) * (len(step) - 1)
        ops.append(union & (rest | output))
    return total


def optimal_path(inputs: Sequence[frozenset], output: frozenset,
                 sizes: dict[str, int]) -> list[tuple[int, int]]:
    """Cheapest pairwise contraction tree by dynamic programming over operand subsets."""
    n = len(inputs)
    where: dict[str, int] = {}
    for i, labels in enumerate(inputs):
        for lab in labels:
            where[lab] = where.get(lab, 0) | (1 << i)

    def kept(mask: int) -> frozenset:
        labels = frozenset().union(*(inputs[i] for i in range(n) if mask >> i & 1))
        return frozenset(lab for lab in labels if lab in output or where[lab] & ~mask)

    best: dict[int, tuple[int, tuple | None]] = {1 << i: (0, None) for i in range(n)}
    labels_of = {1 << i: kept(1 << i) for i in range(n)}
    for size in range(2, n + 1):
        for combo in itertools.combinations(range(n), size):
            mask = sum(1 << i for i in combo)
            low = mask & -mask
            best_here = None
            sub = (mask - 1) & mask
            while sub:
                if sub & low:  # each split once: the part holding the lowest operand
                    rest = mask ^ sub
                    cost = best[sub][0] + best[rest][0] + \
                        step_cost(labels_of[sub], labels_of[rest], sizes)
                    if best_here is None or cost < best_here[0]:
                        best_here = (cost, (sub, rest))
                sub = (sub - 1) & mask
            best[mask] = best_here
            labels_of[mask] = kept(mask)
    return _tree_to_path(best, (1 << n) - 1, n)


def _tree_to_path(best: dict, root: int, n: int) -> list[tuple[int, int]]:
    """Post-order contraction of the tree as numpy positions (contracted operands leave the
    list, the result is appended)."""
    current = [1 << i for i in range(n)]
    path: list[tuple[int, int]] = []

    def visit(mask: int) -> None:
        split = best[mask][1]
        if split is None:
            return
        left, right = split
        visit(left)
        visit(right)
        i, j = current.index(left), current.index(right)
        path.append((min(i, j), max(i, j)))
        for k in sorted((i, j), reverse=True):
            del current[k]
        current.append(mask)

    visit(root)
    return path


def greedy_path(inputs: Sequence[frozenset], output: frozenset,
                sizes: dict[str, int]) -> list[tuple[int, int]]:
    """numpy's greedy rule (pairs sharing a label first, smallest growth of the result), and
    a cheapest-next-step rule; whichever path costs less."""
    candidates = []
    for rule in ("growth", "cost"):
        ops = list(inputs)
        path = []
        while len(ops) > 1:
            choice = None
            pairs = [(i, j) for i in range(len(ops)) for j in range(i + 1, len(ops))]
            linked = [(i, j) for i, j in pairs if ops[i] & ops[j]]
            for i, j in linked or pairs:
                rest = frozenset().union(*(ops[k] for k in range(len(ops)) if k not in (i, j)))
                result = (ops[i] | ops[j]) & (rest | output)
                cost = step_cost(ops[i], ops[j], sizes)
                growth = _prod(sizes[x] for x in result) - _prod(sizes[x] for x in ops[i]) - \
                    _prod(sizes[x] for x in ops[j])
                key = (growth, cost) if rule == "growth" else (cost, growth)
                if choice is None or key < choice[0]:
                    choice = (key, i, j, result)
            _, i, j, result = choice
            path.append((i, j))
            del ops[j], ops[i]
            ops.append(result)
        candidates.append((path_cost(inputs, output, sizes, path), path))
    return min(candidates)[1]


def check_path(path: Sequence, n: int) -> list[tuple[int, ...]]:
    steps = list(path)
    if steps and steps[0] == "einsum_path":
        steps = steps[1:]
    count = n
    out = []
    for step in steps:
        step = tuple(step)
        if len(step) not in (1, 2) or len(set(step)) != len(step) or \
                any(not isinstance(i, int) or not 0 <= i < count for i in step):
            raise InvalidArgument(OP, "optimize", f"path step {step} is not one or two distinct "
                                                  f"positions below {count}")
        count -= len(step) - 1
        out.append(step)
    if count != 1:
        raise InvalidArgument(OP, "optimize", f"the path leaves {count} operands, not one")
    return out


# --- lowering --------------------------------------------------------------------------------


@dataclass(frozen=True)
class DropAxes:
    """A metadata-only view of input ``src`` without its size-1 summed axes."""

    src: int
    keep: tuple[int, ...]
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
    steps: tuple[Step, ...]
    flops: int
    naive_flops: int
    largest_intermediate: int

    @property
    def numpy_path(self) -> list:
        return ["einsum_path", *self.path]

    def __str__(self) -> str:
        def label_text(labels):
            return "".join("." if lab.startswith("…") else lab for lab in labels)

        rows = [f"  Complete contraction:  {self.subscripts}",
                f"         Naive FLOP count:  {self.naive_flops:.3e}",
                f"     Optimized FLOP count:  {self.flops:.3e}",
                f"      Theoretical speedup:  {self.naive_flops / max(self.flops, 1):.3f}",
                f"  Largest intermediate:  {self.largest_intermediate:.3e} elements",
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
                    OP, f"label {_show(lab)} repeats within one operand (a diagonal or trace "
                        "needs extract_diagonal, which WebGPU does not run here); download and "
                        "use numpy.einsum, or take the diagonal first")
            if counts[lab] == 1 and lab not in subs.output and subs.sizes[lab] != 1:
                raise UnsupportedError(
                    OP, f"label {_show(lab)} is summed from one operand only (a reduction, "
                        "which WebGPU does not run here); keep it in the output and sum after "
                        "downloading, or contract it with another operand")


def plan_einsum(subscripts: str, layouts: Sequence[ViewLayout], dtypes: Sequence[DType],
                optimize: str | Sequence = "auto") -> EinsumPlan:
    subs = parse_subscripts(subscripts, [lay.shape for lay in layouts])
    dtype = _common_dtype(dtypes, len(layouts))
    _reject_unsupported(subs)
    n = len(layouts)
    output = frozenset(subs.output)
    sizes = subs.sizes

    # Size-1 labels summed from one operand leave as views, before any contraction.
    counts = {lab: sum(lab in labels for labels in subs.inputs) for lab in sizes}
    values: list[tuple[tuple[str, ...], ViewLayout]] = []
    steps: list[Step] = []
    current: list[int] = []
    for i, (labels, layout) in enumerate(zip(subs.inputs, layouts)):
        values.append((labels, layout))
        current.append(i)
    for i, (labels, layout) in enumerate(list(values)):
        keep = tuple(a for a, lab in enumerate(labels) if counts[lab] > 1 or lab in output)
        if len(keep) != len(labels):
            kept_labels = tuple(labels[a] for a in keep)
            steps.append(DropAxes(i, keep, kept_labels))
            values.append((kept_labels, ViewLayout(tuple(layout.shape[a] for a in keep),
                                                   tuple(layout.strides[a] for a in keep),
                                                   layout.offset)))
            current[i] = len(values) - 1

    label_sets = [frozenset(values[v][0]) for v in current]
    if isinstance(optimize, str):
        if optimize not in ("auto", "optimal", "greedy"):
            raise InvalidArgument(OP, "optimize", f"{optimize!r} is not 'auto', 'optimal', "
                                                  "'greedy' or a path")
        if n == 1:
            path: list[tuple[int, ...]] = [(0,)]
        elif optimize == "greedy" or (optimize == "auto" and n > OPTIMAL_LIMIT):
            path = greedy_path(label_sets, output, sizes)
        else:
            path = optimal_path(label_sets, output, sizes)
    else:
        path = check_path(optimize, n)

    flops = 0
    largest = 0
    computed: set[int] = set()
    pending = list(current)
    for number, pair in enumerate(path):
        last = number == len(path) - 1
        if len(pair) == 1:
            (i,) = pair
            src = pending.pop(i)
            pending.append(src)
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
                      tuple(tuple(p) for p in path), tuple(steps), flops, naive, largest)


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


def _lower_pair(values, a: int, b: int, keep: set, want: tuple[str, ...] | None,
                dtype: DType) -> DotStep:
    """One dot_general for values ``a`` and ``b``, arranged to avoid copies.

    Candidates: either operand as lhs; contracting and batch axes listed in lhs order, in rhs
    order, or (batch) in the order the final output wants. Each is scored by the elements the
    GPU must copy: packed operands, plus the output when a final transpose would remain.
    """
    best = None
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
    return best[1]
