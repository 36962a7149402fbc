"""Column-major layouts and strided views, validated exactly as upstream's ``TensorLayout``.

Device tensors are compact column-major: axis 0 varies fastest, ``stride[0] = 1`` and
``stride[i] = stride[i-1] * shape[i-1]``. A view is ``(shape, strides, offset)`` over a backing
allocation of ``backing_len`` elements; strides are signed and in elements.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from .arguments import integer, integers
from .errors import (
    AxisOutOfBounds,
    DuplicateAxis,
    IntegerOverflow,
    InvalidArgument,
    RankMismatch,
    ViewOutOfBounds,
)

# Upstream indexes with isize/usize; Python ints never overflow, so the same bound is explicit.
ISIZE_MAX = 2**63 - 1


def checked_product(op: str, dims: Sequence[int], argument: str = "shape") -> int:
    """Product of ``dims`` (1 when empty); ``InvalidArgument`` when it overflows isize."""
    total = 1
    for d in dims:
        total *= d
        if total > ISIZE_MAX:
            raise InvalidArgument(op, argument, f"{argument} product overflow for {list(dims)}")
    return total


def check_shape(op: str, shape: Sequence[int]) -> tuple[int, ...]:
    out = integers(op, "shape", shape)
    for axis, d in enumerate(out):
        if d < 0:
            raise InvalidArgument(op, "shape", f"extent {d} of axis {axis} is negative")
    checked_product(op, out)
    return out


def compact_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for d in shape:
        strides.append(step)
        step *= d
    return tuple(strides)


@dataclass(frozen=True)
class ViewLayout:
    """A validated strided view: element ``c`` lives at ``offset + sum(c[i] * strides[i])``."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int

    def __hash__(self) -> int:
        # Hashed once, on first use: layouts key the plan and program caches of every op.
        value: int | None = self.__dict__.get("_hash")
        if value is None:
            value = hash((self.shape, self.strides, self.offset))
            object.__setattr__(self, "_hash", value)
        return value

    @property
    def rank(self) -> int:
        return len(self.shape)

    def permuted(self, op: str, perm: Sequence[int] | None) -> ViewLayout:
        """Metadata-only transpose: shape and strides move together, the offset stays.
        ``perm=None`` reverses the axes, as numpy.transpose does."""
        if perm is None:
            return ViewLayout(self.shape[::-1], self.strides[::-1], self.offset)
        axes = validate_permutation(op, perm, self.rank)
        return ViewLayout(tuple(self.shape[a] for a in axes),
                          tuple(self.strides[a] for a in axes), self.offset)


def dense_layout(shape: Sequence[int]) -> ViewLayout:
    """The layout of an owned tensor: compact column-major, offset 0. One object per shape, so
    the tensors an op chain makes share a layout already hashed (each new layout made and
    hashed cost a chained op about 4 us in Pyodide)."""
    return _dense_layout(tuple(shape))


@functools.lru_cache(maxsize=4096)
def _dense_layout(shape: tuple[int, ...]) -> ViewLayout:
    return ViewLayout(shape, compact_strides(shape), 0)


def view_extent(op: str, shape: Sequence[int], strides: Sequence[int],
                offset: int) -> tuple[int, int]:
    """Lowest and highest element index the view touches (non-empty views only)."""
    low = high = offset
    for d, s in zip(shape, strides):
        span = (d - 1) * s
        low += min(0, span)
        high += max(0, span)
        if abs(span) > ISIZE_MAX or abs(low) > ISIZE_MAX or abs(high) > ISIZE_MAX:
            raise IntegerOverflow(op, f"view span of shape {list(shape)} with strides "
                                      f"{list(strides)} overflows isize")
    return low, high


def validate_view(op: str, shape: Sequence[int], strides: Sequence[int], offset: int,
                  backing_len: int) -> ViewLayout:
    """Upstream ``TensorLayout::from_parts``: rank, bounds and overflow checks, in that order."""
    shape = check_shape(op, shape)
    strides = integers(op, "strides", strides)
    offset = integer(op, "offset", offset)
    if len(shape) != len(strides):
        raise RankMismatch(op, len(shape), len(strides), what="shape/strides rank")
    if any(d == 0 for d in shape):
        if not 0 <= offset <= backing_len:
            raise ViewOutOfBounds(op, f"empty view offset {offset} is outside 0..={backing_len}")
        return ViewLayout(shape, strides, offset)
    low, high = view_extent(op, shape, strides, offset)
    if low < 0 or high >= backing_len:
        raise ViewOutOfBounds(
            op, f"shape {list(shape)}, strides {list(strides)}, offset {offset} reaches "
                f"elements {low}..={high} of an allocation of {backing_len}")
    return ViewLayout(shape, strides, offset)


def normalize_axis(op: str, axis: int, rank: int, role: str) -> int:
    """numpy's axis rule: ``-rank <= axis < rank``, negatives count from the end."""
    axis = integer(op, role, axis)
    if not -rank <= axis < rank:
        raise AxisOutOfBounds(op, axis, rank, role=role)
    return axis % rank


def validate_permutation(op: str, perm: Sequence[int], rank: int) -> tuple[int, ...]:
    """Upstream ``validate_permutation_axes``: length, bounds, then duplicates."""
    perm = integers(op, "permutation", perm)
    if len(perm) != rank:
        raise RankMismatch(op, rank, len(perm), what="permutation length")
    axes = tuple(normalize_axis(op, axis, rank, "permutation") for axis in perm)
    seen = set()
    for axis in axes:
        if axis in seen:
            raise DuplicateAxis(op, axis, "permutation")
        seen.add(axis)
    return axes
