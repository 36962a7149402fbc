"""Lowering of copy plans (transpose, compaction, dot_general packing) to kernels.

The kernel is chosen to fit the plan: a plain buffer copy for LINEAR plans; on GPUs the
workgroup-tile transpose for TILED plans whose matrix extents fill a 32 x 32 tile (a tile with
2 x 2 useful elements would leave almost every invocation idle at a barrier), and the grouped
tile for GROUPED plans; the strided gather for the rest, and for every plan on CPU adapters
(barriers cost them more than coalescing saves). Every kernel indexes in 32-bit words: the spans
and parameters are checked here.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from ..dtypes import DType
from ..layout import ViewLayout, compact_strides, view_extent
from ..planning.copy_plan import TILE, CopyKind, CopyPlan, plan_copy
from .kernels import KernelKey
from .profile import AdapterProfile
from .program import BufferCopy, Launch, Operation, Program
from .words import check_index_span, i32, u32

WG_1D = 256
_ELEMENT_TYPE = {4: "u32", 8: "vec2<u32>"}


@dataclass(frozen=True)
class StridedCopySpec:
    """``copy_strided`` (4- or 8-byte elements) or ``copy_strided_bytes`` (1-byte elements,
    four per invocation): ``dst[f] = src[offset + sum_i coord_i(f) * strides[i]]``."""

    itemsize: int
    size: int
    offset: int
    dims: tuple[int, ...]
    strides: tuple[int, ...]

    def __post_init__(self) -> None:
        if self.itemsize not in (1, *_ELEMENT_TYPE) or len(self.dims) != len(self.strides):
            raise ValueError(f"malformed strided copy {self}")
        count = 1
        for d in self.dims:
            count *= d
        if count != self.size or self.size == 0:
            raise ValueError(f"strided copy of {self.size} elements over dims {self.dims}")

    @property
    def key(self) -> KernelKey:
        if self.itemsize == 1:
            return KernelKey.of("copy_strided_bytes")
        return KernelKey.of("copy_strided", ELEM=_ELEMENT_TYPE[self.itemsize])

    @property
    def groups(self) -> int:
        per_group = WG_1D * (4 if self.itemsize == 1 else 1)
        return -(-self.size // per_group)

    def words(self, op: str) -> tuple[int, ...]:
        low, high = view_extent(op, self.dims, self.strides, self.offset)
        check_index_span(op, "the copy source", low, high)
        return (u32(op, "size", self.size), u32(op, "rank", len(self.dims)),
                i32(op, "offset", self.offset), *(u32(op, "extent", d) for d in self.dims),
                *(i32(op, "stride", s) for s in self.strides))


@dataclass(frozen=True)
class Tiling:
    """How a tile kernel spreads its 32 x 32 tiles: ``tiles`` per workgroup, moved one after
    the other with the next one's loads issued before this one's stores (``transpose_tiled``:
    consecutive tiles along j; ``permute_tiled``: one (A, B) tile at consecutive batch indices,
    its tables of offsets built once for all of them), and a workgroup of 32 x ``rows``
    invocations, each moving 32 / ``rows`` elements of a tile."""

    tiles: int
    rows: int

    def __post_init__(self) -> None:
        if not 1 <= self.tiles <= 32 or self.rows not in (1, 2, 4, 8, 16, 32):
            raise ValueError(f"malformed tiling {self}")


# By element size. Several consecutive tiles per workgroup, the next one's loads in flight across
# the barrier, and 32 x 8 invocations: bench/copy_sweep.py on an H100 (both lanes alike; kernel
# ms, one tile of 32 x 2 before -> this): f32 8192^2 0.666 -> 0.443, 4096^2 0.164 -> 0.137,
# (2^20, 64) 0.659 -> 0.439, (64, 2^20) 0.655 -> 0.566 (2 tiles of 32 x 2: 0.506), (100, 1044483)
# 0.986 -> 0.884; c32 4096^2 0.310 -> 0.224 (4 tiles; 8 are 3% slower). On the H200 one tile
# per workgroup timed alike at rows 8 / 4 / 2 / 1. CPU adapters get the strided gather.
TRANSPOSE_TILINGS = {4: Tiling(tiles=8, rows=8), 8: Tiling(tiles=4, rows=8)}
# A GPU's memory line. Where a destination row (d0 elements) is not a whole number of lines,
# each line is written by the workgroups of two or more tiles along i; those go consecutively
# (``i_fast``) so that a line's parts reach the cache together rather than a grid apart.
LINE_BYTES = 128


@dataclass(frozen=True)
class TiledTransposeSpec:
    """``transpose_tiled``: a batch of compact d0 x d1 matrices read transposed, 32 x 32 tiles
    through workgroup memory, ``tiling.tiles`` of them along j per workgroup:
    ``dst[i + d0*j + d0*d1*b] = src[offset + i*d1 + j + d0*d1*b]``."""

    itemsize: int
    d0: int
    d1: int
    batch: int
    offset: int
    tiling: Tiling

    def __post_init__(self) -> None:
        if self.d0 < TILE or self.d1 < TILE or self.batch < 1 or self.offset < 0 \
                or self.itemsize not in _ELEMENT_TYPE:
            raise ValueError(f"tiled transposes need both extents >= {TILE}: {self}")

    @property
    def tiles(self) -> tuple[int, int]:
        """The workgroups' groups of tiles along j, and the tiles along i."""
        return -(-self.d1 // (TILE * self.tiling.tiles)), -(-self.d0 // TILE)

    @property
    def key(self) -> KernelKey:
        return KernelKey.of("transpose_tiled", ELEM=_ELEMENT_TYPE[self.itemsize],
                            ROWS=self.tiling.rows, TILES=self.tiling.tiles)

    @property
    def groups(self) -> int:
        groups_j, tiles_i = self.tiles
        return groups_j * tiles_i * self.batch

    @property
    def i_fast(self) -> bool:
        """Whether consecutive workgroups go along i (destination rows that split lines)."""
        return self.d0 * self.itemsize % LINE_BYTES != 0

    def words(self, op: str) -> tuple[int, ...]:
        check_index_span(op, "the transpose source", self.offset,
                         self.offset + self.d0 * self.d1 * self.batch - 1)
        groups_j, tiles_i = self.tiles
        return (u32(op, "d0", self.d0), u32(op, "d1", self.d1), u32(op, "offset", self.offset),
                u32(op, "groups_j", groups_j), u32(op, "tiles_i", tiles_i),
                u32(op, "batch", self.batch), int(self.i_fast))


# By element size. The setup (tables of offsets, each a loop of div/mod over the params, and
# a barrier) is paid once per 4 tiles. Each invocation holds 32 / rows elements of this batch
# and as many of the next (prefetched): 16 words at most, or the 8-byte kernel loses
# occupancy. H200 kernel times, ms (rows 2 / 8; one batch per workgroup, rows 2, before):
# 64^4 f32 (3,1,0,2) 0.051 / 0.047 (0.061); (256, 256, 1024) f32 (2,1,0) 0.214 / 0.367
# (0.353); 2^24 f32 reversed 0.064 / 0.056 (0.141); 64^4 c32 0.103 / 0.077 (0.200);
# (64, 4096, 64) c32 (2,1,0) 0.241 / 0.078 (0.284). 16 batches per workgroup: alike or slower.
# On an H100 (bench/copy_sweep.py, both lanes alike), 8 batches per workgroup for f32: 64^4
# 0.197 -> 0.188, 2^24 reversed 0.248 -> 0.220, (256, 256, 1024) 0.630 -> 0.596 ms; rows 8 was
# faster still there (0.152, 0.194, 0.549) but lost 1.7x on the H200's (256, 256, 1024) above.
GROUPED_TILINGS = {4: Tiling(tiles=8, rows=2), 8: Tiling(tiles=4, rows=8)}


@dataclass(frozen=True)
class GroupedTileSpec:
    """``permute_tiled``: 32 x 32 tiles over the groups of axes ``a`` (the source's fastest)
    and ``b`` (the destination's fastest), a workgroup per tile and chunk of
    ``tiling.tiles`` consecutive indices over the other axes; the destination is compact
    column-major over ``dims``."""

    itemsize: int
    dims: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    a: tuple[int, ...]
    b: tuple[int, ...]
    tiling: Tiling

    def __post_init__(self) -> None:
        if self.itemsize not in _ELEMENT_TYPE or not self.a or not self.b \
                or set(self.a) & set(self.b):
            raise ValueError(f"malformed grouped tile {self}")

    @property
    def rest(self) -> tuple[int, ...]:
        return tuple(axis for axis in range(len(self.dims))
                     if axis not in self.a and axis not in self.b)

    def extent(self, axes: tuple[int, ...]) -> int:
        return math.prod(self.dims[axis] for axis in axes)

    @property
    def tiles(self) -> tuple[int, int, int]:
        return (-(-self.extent(self.a) // TILE), -(-self.extent(self.b) // TILE),
                self.extent(self.rest))

    @property
    def key(self) -> KernelKey:
        t = self.tiling
        return KernelKey.of("permute_tiled", ELEM=_ELEMENT_TYPE[self.itemsize], ROWS=t.rows,
                            BATCHES=t.tiles)

    @property
    def groups(self) -> int:
        tiles_a, tiles_b, batches = self.tiles
        return tiles_a * tiles_b * -(-batches // self.tiling.tiles)

    def words(self, op: str) -> tuple[int, ...]:
        low, high = view_extent(op, self.dims, self.strides, self.offset)
        check_index_span(op, "the permutation source", low, high)
        dst_strides = compact_strides(self.dims)
        check_index_span(op, "the permutation destination", 0, math.prod(self.dims) - 1)
        axes = (*self.a, *self.b, *self.rest)
        return (*(u32(op, "tiles", n) for n in self.tiles), i32(op, "offset", self.offset),
                u32(op, "extent", self.extent(self.a)), u32(op, "extent", self.extent(self.b)),
                len(self.a), len(self.b), len(self.rest),
                *(w for axis in axes for w in (u32(op, "extent", self.dims[axis]),
                                               i32(op, "stride", self.strides[axis]),
                                               u32(op, "stride", dst_strides[axis]))))


def copy_ops(op: str, profile: AdapterProfile, plan: CopyPlan, itemsize: int, src: int,
             dst: int) -> tuple[Operation, ...]:
    """The operations that fill slot ``dst`` (compact) from the view of slot ``src``."""
    if plan.size == 0:
        return ()
    spec: StridedCopySpec | TiledTransposeSpec | GroupedTileSpec
    if itemsize == 1:
        # WGSL has no 8-bit storage: every 1-byte copy goes through the word-assembling kernel.
        spec = StridedCopySpec(1, plan.size, plan.src_offset, plan.dims, plan.src_strides)
    elif plan.kind is CopyKind.LINEAR:
        return (BufferCopy(src, plan.src_offset * itemsize, dst, 0, plan.size * itemsize),)
    elif plan.kind is CopyKind.TILED and not profile.cpu and min(plan.dims[:2]) >= TILE:
        # Workgroup memory pays on GPUs, when the tile fills; on CPU adapters barriers cost
        # more than they save.
        batch = plan.dims[2] if plan.rank == 3 else 1
        spec = TiledTransposeSpec(itemsize, plan.dims[0], plan.dims[1], batch, plan.src_offset,
                                  TRANSPOSE_TILINGS[itemsize])
    elif plan.kind is CopyKind.GROUPED and not profile.cpu:
        spec = GroupedTileSpec(itemsize, plan.dims, plan.src_strides, plan.src_offset,
                               *plan.groups, GROUPED_TILINGS[itemsize])
    else:
        spec = StridedCopySpec(itemsize, plan.size, plan.src_offset, plan.dims, plan.src_strides)
    return (Launch.of(op, profile, spec, (src, dst)),)


@functools.lru_cache(maxsize=4096)
def lower_copy(op: str, profile: AdapterProfile, layout: ViewLayout, dtype: DType) -> Program:
    """Materialise the view ``layout`` of slot 0 into a fresh compact tensor (slot 1)."""
    plan = plan_copy(layout, op)
    output_bytes = plan.size * dtype.itemsize
    profile.check_binding(op, output_bytes)
    return Program(1, output_bytes, (), copy_ops(op, profile, plan, dtype.itemsize, 0, 1))
