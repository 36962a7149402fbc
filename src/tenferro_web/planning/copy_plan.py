"""One planner for every layout-changing copy: transpose, compaction and dot_general packing.

The destination is always a fresh compact column-major tensor of the source view's shape, so a
plan only has to describe how to read the source. Following upstream's native permutation plan:
size-1 axes are dropped, adjacent axes that stay contiguous on both sides are fused, and the
result is classified as a linear copy, a tiled (batched) 2-D transpose, a tiled permutation of
two groups of axes (the source's fastest and the destination's fastest, as cuTT and HPTT tile
a general transposition), or a generic strided gather.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass

from ..dtypes import DType
from ..layout import ViewLayout, checked_product

# Layout copies move bits; WGSL carries 1-, 4- and 8-byte elements of these dtypes.
COPY_DTYPES = (DType.F32, DType.I32, DType.C32, DType.BOOL)
TILE = 32  # the edge of a transpose tile through workgroup memory


class CopyKind(enum.Enum):
    LINEAR = "linear"  # out[f] = src[offset + f]
    TILED = "tiled"  # a batch of compact matrices, each read transposed
    GROUPED = "grouped"  # tiles over two groups of axes, batched over the rest
    GENERIC = "generic"  # out[f] = src[offset + sum(coord_i(f) * stride_i)]


@dataclass(frozen=True)
class CopyPlan:
    kind: CopyKind
    dims: tuple[int, ...]
    src_strides: tuple[int, ...]
    src_offset: int
    size: int
    groups: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())  # GROUPED: axes of A and B

    @property
    def rank(self) -> int:
        return len(self.dims)


def fuse_axes(dims: tuple[int, ...], strides: tuple[int, ...]) -> tuple[tuple[int, ...],
                                                                         tuple[int, ...]]:
    """Drop size-1 axes and merge neighbours whose source stays contiguous.

    The destination is compact column-major, so it is contiguous across every neighbouring pair
    by construction; only the source decides.
    """
    out_dims: list[int] = []
    out_strides: list[int] = []
    for d, s in zip(dims, strides):
        if d == 1:
            continue
        if out_dims and s == out_strides[-1] * out_dims[-1]:
            out_dims[-1] *= d
        else:
            out_dims.append(d)
            out_strides.append(s)
    return tuple(out_dims), tuple(out_strides)


@functools.lru_cache(maxsize=4096)
def plan_copy(src: ViewLayout, op: str = "to_contiguous") -> CopyPlan:
    """Plan materialising ``src`` into a compact column-major tensor of ``src.shape``."""
    size = checked_product(op, src.shape)
    if size == 0:
        return CopyPlan(CopyKind.LINEAR, (0,), (1,), src.offset, 0)
    dims, strides = fuse_axes(src.shape, src.strides)
    if not dims or (len(dims) == 1 and strides[0] == 1):
        return CopyPlan(CopyKind.LINEAR, (size,), (1,), src.offset, size)
    if is_tiled_transpose(dims, strides):
        return CopyPlan(CopyKind.TILED, dims, strides, src.offset, size)
    groups = tile_groups(dims, strides)
    if groups is not None:
        return CopyPlan(CopyKind.GROUPED, dims, strides, src.offset, size, groups)
    return CopyPlan(CopyKind.GENERIC, dims, strides, src.offset, size)


def tile_groups(dims: tuple[int, ...], strides: tuple[int, ...]
                ) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The two groups of axes a tile spans: B, the destination's fastest axes, and A, the
    source's fastest of the others, each the fewest axes of at least TILE elements; or None
    where they do not fill a tile, or where the source already runs fastest along B (the
    strided gather then reads and writes consecutively)."""
    def fewest(axes: list[int]) -> list[int]:
        group, extent = [], 1
        for axis in axes:
            if extent >= TILE:
                break
            group.append(axis)
            extent *= dims[axis]
        return group if extent >= TILE else []

    b = fewest(list(range(len(dims))))
    if not b:
        return None
    a = fewest(sorted((axis for axis in range(len(dims)) if axis not in b),
                      key=lambda axis: abs(strides[axis])))
    if not a or abs(strides[a[0]]) >= abs(strides[b[0]]):
        return None
    return tuple(a), tuple(b)


def is_tiled_transpose(dims: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """A (batch of) compact matrix read transposed: source strides ``[d1, 1(, d0*d1)]``."""
    if len(dims) not in (2, 3):
        return False
    d0, d1 = dims[0], dims[1]
    if strides[0] != d1 or strides[1] != 1:
        return False
    return len(dims) == 2 or strides[2] == d0 * d1
