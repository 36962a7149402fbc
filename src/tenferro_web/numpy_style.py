"""numpy-shaped conveniences on device tensors: ``matmul`` (and ``a @ b``), ``tensordot``,
``inner``, ``outer``, ``trace``, ``sum`` and upstream's ``reduce_sum``, with numpy's semantics
on logical axes. Each is an einsum over generated labels (or dot_general directly), so it
lowers to the same plans: views for diagonals and broadcasting, sums, dot_general steps.
Errors name the public op (``matmul: ...``), not the einsum underneath.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

from .api import (
    TensorLike,
    dot_general,
    einsum_sync,
    operand,
    resident_device,
    to_contiguous,
    transpose,
)
from .arguments import integer, integers
from .errors import AxisOutOfBounds, DuplicateAxis, InvalidArgument, TenferroError
from .layout import ViewLayout
from .planning.einsum import OP as EINSUM
from .runtime.tensor import Tensor, TensorView

_LABELS = string.ascii_letters


class _as:  # noqa: N801 (used as a function: ``with _as(op):``)
    """Errors raised by the einsum or dot_general underneath carry the public op's name. (A
    class, not a generator: it wraps every call here.)"""

    __slots__ = ("op",)
    RENAMED = (EINSUM, "dot_general", "transpose", "to_contiguous")

    def __init__(self, op: str):
        self.op = op

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: object) -> None:
        if isinstance(error, TenferroError) and error.op in self.RENAMED:
            raise error.renamed(self.op) from None


def _axis(op: str, argument: str, axis: Any, rank: int) -> int:
    a = integer(op, argument, axis)
    if not -rank <= a < rank:
        raise AxisOutOfBounds(op, a, rank)
    return a % rank


def _axes(op: str, argument: str, axes: Any, rank: int) -> tuple[int, ...]:
    out = tuple(_axis(op, argument, a, rank) for a in integers(op, argument, axes))
    for a in out:
        if out.count(a) > 1:
            raise DuplicateAxis(op, a, argument)
    return out


def _rank(op: str, x: Any, argument: str) -> int:
    return operand(op, x, argument).layout.rank


def matmul(a: TensorLike, b: TensorLike) -> Tensor:
    """``numpy.matmul``: matrix products over the last two axes, leading axes broadcast; a 1-D
    operand is a vector (its added axis removed from the result)."""
    op = "matmul"
    ra, rb = _rank(op, a, "a"), _rank(op, b, "b")
    for name, rank in (("a", ra), ("b", rb)):
        if rank == 0:
            raise InvalidArgument(op, name, "a rank-0 operand has no axis to multiply over; "
                                            "use tw.einsum(',...->...', a, b) for a scale")
    lhs = "...ij" if ra > 1 else "j"
    rhs = "...jk" if rb > 1 else "j"
    out = ("...i" if ra > 1 else "...") + ("k" if rb > 1 else "")
    with _as(op):
        return einsum_sync(f"{lhs},{rhs}->{out}", a, b)


def tensordot(a: TensorLike, b: TensorLike, axes: Any = 2) -> Tensor:
    """``numpy.tensordot``: ``axes=N`` sums the last N axes of ``a`` with the first N of
    ``b``; ``axes=(a_axes, b_axes)`` names them. Result: a's other axes, then b's."""
    op = "tensordot"
    ra, rb = _rank(op, a, "a"), _rank(op, b, "b")
    if isinstance(axes, Sequence) and not isinstance(axes, str):
        if len(axes) != 2:
            raise InvalidArgument(op, "axes", f"{axes!r} is not an integer or a pair of axis "
                                              "sequences")
        first, second = (x if isinstance(x, Sequence) else (x,) for x in axes)
        lhs, rhs = _axes(op, "axes", first, ra), _axes(op, "axes", second, rb)
        if len(lhs) != len(rhs):
            raise InvalidArgument(op, "axes", f"{len(lhs)} axes of a against {len(rhs)} of b; "
                                              "name as many of each")
    else:
        n = integer(op, "axes", axes)
        if not 0 <= n <= min(ra, rb):
            raise InvalidArgument(op, "axes", f"{n} axes to sum, but the operands have ranks "
                                              f"{ra} and {rb}")
        lhs, rhs = tuple(range(ra - n, ra)), tuple(range(n))
    with _as(op):
        return dot_general(a, b, lhs, rhs)


def inner(a: TensorLike, b: TensorLike) -> Tensor:
    """``numpy.inner``: sums over the last axes; a rank-0 operand scales the other."""
    op = "inner"
    ra, rb = _rank(op, a, "a"), _rank(op, b, "b")
    with _as(op):
        if ra == 0 or rb == 0:
            lhs, rhs = _LABELS[:ra], _LABELS[ra:ra + rb]
            return einsum_sync(f"{lhs},{rhs}->{lhs}{rhs}", a, b)
        return dot_general(a, b, [ra - 1], [rb - 1])


def outer(a: TensorLike, b: TensorLike) -> Tensor:
    """``numpy.outer``: the operands flattened (C order, as numpy), every product."""
    op = "outer"
    with _as(op):
        return einsum_sync("i,j->ij", _flat(op, a, "a"), _flat(op, b, "b"))


def _flat(op: str, x: TensorLike, argument: str) -> TensorLike:
    """A 1-D view of ``x`` in numpy's C order: the reversed axes, compacted, are that order."""
    layout = operand(op, x, argument).layout
    if layout.rank == 1:
        return x
    with _as(op):
        compact = transpose(x) if layout.rank > 1 else to_contiguous(x)
    return compact.view((compact.size,), (1,), 0)


def trace(a: TensorLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """``numpy.trace``: the sum of the diagonal ``offset`` of axes ``axis1`` and ``axis2``; the
    other axes remain, in order. The diagonal is a strided view (no copy)."""
    op = "trace"
    src = operand(op, a, "a")
    rank = src.layout.rank
    if rank < 2:
        raise InvalidArgument(op, "a", f"needs at least 2 axes, got rank {rank}")
    k = integer(op, "offset", offset)
    i, j = _axis(op, "axis1", axis1, rank), _axis(op, "axis2", axis2, rank)
    if i == j:
        raise InvalidArgument(op, "axis2", f"axis1 and axis2 are both axis {i}")
    layout = src.layout
    shape, strides = layout.shape, layout.strides
    start = layout.offset + (k * strides[j] if k >= 0 else -k * strides[i])
    length = max(0, min(shape[i], shape[j] - k) if k >= 0 else min(shape[i] + k, shape[j]))
    rest = [x for x in range(rank) if x not in (i, j)]
    if length == 0:
        start = layout.offset  # an empty diagonal reads nothing
    diagonal = ViewLayout(tuple(shape[x] for x in rest) + (length,),
                          tuple(strides[x] for x in rest) + (strides[i] + strides[j],), start)
    resident_device(op, src)
    assert src.tensor is not None
    labels = _LABELS[:len(rest)]
    with _as(op):
        return einsum_sync(f"{labels}z->{labels}", TensorView(src.tensor, diagonal))


def sum(a: TensorLike, axis: Any = None, keepdims: bool = False) -> Tensor:  # noqa: A001
    """``numpy.sum`` over ``axis`` (None: all axes; an int or a tuple, negative allowed)."""
    op = "sum"
    rank = _rank(op, a, "a")
    if axis is None:
        summed: tuple[int, ...] = tuple(range(rank))
    elif isinstance(axis, Sequence) or hasattr(axis, "__iter__"):
        summed = _axes(op, "axis", axis, rank)
    else:
        summed = (_axis(op, "axis", axis, rank),)
    return _sum(op, a, summed, keepdims)


def reduce_sum(x: TensorLike, axes: Sequence[int]) -> Tensor:
    """Upstream's ``reduce_sum``: the sum over ``axes``; the other axes remain, in order."""
    op = "reduce_sum"
    rank = _rank(op, x, "x")
    return _sum(op, x, _axes(op, "axes", axes, rank), False)


def _sum(op: str, a: TensorLike, summed: tuple[int, ...], keepdims: bool) -> Tensor:
    if not isinstance(keepdims, bool):
        raise InvalidArgument(op, "keepdims", f"{keepdims!r} is not a bool")
    rank = _rank(op, a, "a")
    labels = _LABELS[:rank]
    kept = "".join(labels[x] for x in range(rank) if x not in summed)
    with _as(op):
        out = einsum_sync(f"{labels}->{kept}", a)
    if not keepdims:
        return out
    extents = iter(out.shape)
    shape = tuple(1 if x in summed else next(extents) for x in range(rank))
    return Tensor(out.dtype, shape, out.allocation)  # extent-1 axes added: the same bytes
