"""Lowering of a dot_general plan to a Program: packs, the GEMM launch, split-K's reduction.

Every GEMM parameter is derived in one place (``GemmSpec``), from the values the kernel will
actually use: per-job offsets, row and column strides, the step between batch entries or K
chunks, and K per job. Vector loads are decided from exactly those values, and the spec refuses
to exist when a vector load would start at an address that is not 16-byte aligned.

Kernel families (measured; docs/kernels.md): CPU adapters get ``gemm_blocked`` (register blocks,
no barriers). GPUs get ``gemm_tiled`` (workgroup-memory tiles plus register blocks) when the
output is at least 64 x 64, and ``gemm_blocked`` for thin outputs. A batch-first plan (einsum's
numpy-style batches) runs ``gemm_batch_tiled`` on GPUs; CPU adapters run ``gemm_blocked`` on the
operands in place, then a copy puts the batch first.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..dtypes import DType
from ..layout import ViewLayout, dense_layout
from ..planning.copy_plan import plan_copy
from ..planning.dot_general_plan import DotGeneralPlan, OperandBinding
from .copy import WG_1D, copy_ops
from .kernels import KernelKey
from .profile import AdapterProfile
from .program import Clear, KernelSpec, Launch, Operation, Program
from .words import i32, sign_bits, u32

# Split-K: outputs of at most this many elements with K of at least SPLIT_MIN_K are computed
# as partial products over slices of K (each one batch entry of the GEMM), then summed.
SPLIT_MAX_OUTPUT = 4096
SPLIT_MIN_K = 8192
SPLIT_CHUNK = 1024
SPLIT_MAX_CHUNKS = 256
# On GPUs, a product whose output gives gemm_tiled fewer than SPLIT_FILL_GROUPS workgroups (the
# number big_output deems enough to fill a large GPU) is split too, into chunks of K of at least
# SPLIT_FILL_MIN_CHUNK, until it gives about that many.
SPLIT_FILL_GROUPS = 256
SPLIT_FILL_MIN_CHUNK = 256
# On GPUs, a product that split-K leaves whole and whose gemm_tiled grid gives fewer than
# SMALL_PRODUCT[0] workgroups runs gemm_blocked with SMALL_PRODUCT[1] x SMALL_PRODUCT[1] per
# invocation: more workgroups, each with a shorter path, for a product whose time is latency
# (a 64^3 one is a single gemm_tiled workgroup). (0, _): gemm_tiled always. A GPU's choice:
# `bench/h200.py --sweep --steps dawn-small,native-small` times the chain and the networks at
# each candidate.
SMALL_PRODUCT = (0, 1)
# Chunk lengths are multiples of this, so every chunk of a K-contiguous operand starts
# 16-byte aligned when the operand does (vector loads stay usable).
SPLIT_STEP_ALIGN = 64
VEC = 4  # f32 elements per 16-byte vector load


@dataclass(frozen=True)
class OperandAccess:
    """How every GEMM job reads one operand: element (row, col) of job ``j`` (a batch entry,
    or a chunk of K under split-K) is at ``offset + row*row_stride + col*col_stride + j*step``.
    For A rows are M and columns K; for B rows are K and columns N."""

    offset: int
    row_stride: int
    col_stride: int
    step: int

    def vec4_aligned(self, along_cols: bool) -> bool:
        """Whether every group of 4 consecutive elements along rows (or columns) that starts at
        a multiple of 4 is one aligned 16-byte load: the axis is contiguous, and the offset, the
        other stride and the job step keep every group start a multiple of 4 elements."""
        fast, other = (self.col_stride, self.row_stride) if along_cols else \
            (self.row_stride, self.col_stride)
        return fast == 1 and self.offset % VEC == 0 and other % VEC == 0 \
            and self.step % VEC == 0


@dataclass(frozen=True)
class GemmSpec:
    """One launch of ``gemm_tiled`` or ``gemm_blocked``:
    ``c[m + M*n + M*N*j] = sum_{k < K_j} A(m, k, j) * B(k, n, j)``, where job ``j`` covers
    ``k_step*j + [0, K_j)`` of a contraction of ``k_total`` (``K_j = min(k, k_total - j*k_step)``;
    ``k_step = 0`` and ``k_total = k`` for an ordinary batch)."""

    scalar: str  # "f32" or "c32"
    tiled: bool
    tm: int
    tn: int
    bk: int  # tile depth (tiled only)
    buffers: int  # 2: double-buffered tiles (tiled only)
    a_k_fast: bool  # tile loads follow A's columns (K) rather than its rows (M)
    b_k_fast: bool  # tile loads follow B's rows (K) rather than its columns (N)
    vec_a: bool
    vec_b: bool
    vec_c: bool  # 16-byte stores of C
    spread_m: bool  # rows 16 apart per invocation: a warp stores consecutive rows of C
    m: int
    n: int
    k: int
    batch: int
    a: OperandAccess
    b: OperandAccess
    a_conj: bool
    b_conj: bool
    k_total: int
    k_step: int

    WG = 16  # gemm_tiled's workgroup is 16 x 16
    BLOCKED_WG = 8  # gemm_blocked's is 8 x 8

    def __post_init__(self) -> None:
        if self.tiled:
            lanes, threads = self.lanes, self.WG * self.WG
            if self.tm % lanes or self.tn % lanes or self.bk % lanes \
                    or (self.bk * self.WG * self.tm // lanes) % threads \
                    or (self.bk * self.WG * self.tn // lanes) % threads \
                    or self.buffers not in (1, 2):
                raise ValueError(f"tiles must be whole vectors, loaded by every invocation "
                                 f"alike: {self}")
        if self.vec_a or self.vec_b or self.vec_c:
            if not self.tiled or self.scalar != "f32":
                raise ValueError(f"vector loads and stores are an f32 gemm_tiled variant: {self}")
        if self.vec_c and self.m % 4:
            raise ValueError(f"C's 16-byte stores need M a multiple of 4: {self}")
        if self.spread_m and (not self.tiled or self.scalar != "f32" or self.vec_c):
            raise ValueError(f"rows 16 apart are an f32 gemm_tiled variant for scalar stores of "
                             f"C: {self}")
        if self.vec_a and not self.a.vec4_aligned(self.a_k_fast):
            raise ValueError(f"A's 16-byte loads would start unaligned: {self}")
        if self.vec_b and not self.b.vec4_aligned(not self.b_k_fast):
            raise ValueError(f"B's 16-byte loads would start unaligned: {self}")
        if self.k_step and (self.batch - 1) * self.k_step >= self.k_total:
            raise ValueError(f"split-K has an empty chunk: {self}")
        if min(self.m, self.n, self.k, self.batch) < 1:
            raise ValueError(f"empty GEMMs are not launched: {self}")

    @property
    def lanes(self) -> int:
        """Scalars per 16-byte vector: gemm_tiled's tiles are vectors in workgroup memory."""
        return 4 if self.scalar == "f32" else 2

    @property
    def block(self) -> tuple[int, int]:
        """Output rows x columns of one workgroup."""
        wg = self.WG if self.tiled else self.BLOCKED_WG
        return wg * self.tm, wg * self.tn

    @property
    def tiles(self) -> tuple[int, int]:
        bm, bn = self.block
        return -(-self.m // bm), -(-self.n // bn)

    @property
    def groups(self) -> int:
        tiles_m, tiles_n = self.tiles
        return tiles_m * tiles_n * self.batch

    def job_k(self, j: int) -> int:
        """Contraction length of job ``j`` (what the kernel computes from its params)."""
        return min(self.k, self.k_total - min(self.k_total, j * self.k_step))

    @property
    def key(self) -> KernelKey:
        if not self.tiled:
            return KernelKey.of("gemm_blocked", SCALAR=self.scalar, TM=self.tm, TN=self.tn,
                                WX=self.BLOCKED_WG, WY=self.BLOCKED_WG)
        # Each invocation loads LOADS_A groups of LANES scalars of A per tile, likewise B.
        groups = self.WG * self.WG * self.lanes
        return KernelKey.of(
            "gemm_tiled", SCALAR=self.scalar, TM=self.tm, TN=self.tn, BK=self.bk,
            BUFFERS=self.buffers, LANES=self.lanes,
            A_K_FAST=str(self.a_k_fast).lower(), B_K_FAST=str(self.b_k_fast).lower(),
            VEC_A=str(self.vec_a).lower(), VEC_B=str(self.vec_b).lower(),
            VEC_C=str(self.vec_c).lower(), SPREAD_M=str(self.spread_m).lower(),
            LOADS_A=self.bk * self.WG * self.tm // groups,
            LOADS_B=self.bk * self.WG * self.tn // groups)

    def words(self, op: str) -> tuple[int, ...]:
        tiles_m, tiles_n = self.tiles
        u32(op, "last chunk start", (self.batch - 1) * self.k_step)
        return gemm_words(op, self.m, self.n, self.k, self.batch, tiles_m, tiles_n, self.a,
                          self.b, self.a_conj, self.b_conj, self.k_total, self.k_step)


def gemm_words(op: str, m: int, n: int, k: int, batch: int, tiles_m: int, tiles_n: int,
               a: OperandAccess, b: OperandAccess, a_conj: bool, b_conj: bool, k_total: int,
               k_step: int) -> tuple[int, ...]:
    """The params layout of gemm_common.wgsl, range-checked."""
    return (u32(op, "M", m), u32(op, "N", n), u32(op, "K", k), u32(op, "batch", batch),
            u32(op, "tiles_m", tiles_m), u32(op, "tiles_n", tiles_n),
            i32(op, "a offset", a.offset), i32(op, "a row stride", a.row_stride),
            i32(op, "a column stride", a.col_stride), i32(op, "a step", a.step),
            i32(op, "b offset", b.offset), i32(op, "b row stride", b.row_stride),
            i32(op, "b column stride", b.col_stride), i32(op, "b step", b.step),
            sign_bits(a_conj), sign_bits(b_conj), u32(op, "K total", k_total),
            u32(op, "K step", k_step))


@dataclass(frozen=True)
class BatchTiledSpec:
    """One launch of ``gemm_batch_tiled``: ``c[bi + B*m + B*M*n] = sum_k A(m, k, bi) *
    B(k, n, bi)`` (a batch-first dot_general on a GPU). A workgroup is one warp of 32 per batch
    entry, ``NB`` entries, over an output tile of ``8*tm x 4*tn``, ``bk`` deep."""

    scalar: str
    tm: int
    tn: int
    bk: int
    m: int
    n: int
    k: int
    batch: int
    a: OperandAccess
    b: OperandAccess
    a_conj: bool
    b_conj: bool

    NB = 8  # batch entries per workgroup: 8 f32 fill a 32-byte sector

    def __post_init__(self) -> None:
        lanes = self.lanes
        if self.tm % lanes or self.tn % lanes or (self.bk * self.tm) % 4 \
                or (self.bk * self.tn) % 8:
            raise ValueError(f"tiles must be whole vectors, loaded by every invocation "
                             f"alike: {self}")
        if abs(self.a.step) > 1 or abs(self.b.step) > 1:
            raise ValueError(f"the batch must be consecutive or broadcast: {self}")
        if min(self.m, self.n, self.k, self.batch) < 1:
            raise ValueError(f"empty GEMMs are not launched: {self}")

    @property
    def lanes(self) -> int:
        return 4 if self.scalar == "f32" else 2

    @property
    def tiles(self) -> tuple[int, int]:
        return -(-self.m // (8 * self.tm)), -(-self.n // (4 * self.tn))

    @property
    def groups(self) -> int:
        tiles_m, tiles_n = self.tiles
        return -(-self.batch // self.NB) * tiles_m * tiles_n

    @property
    def shared_vectors(self) -> int:
        """16-byte vectors of workgroup memory: the A and B tiles (rows padded by one vector),
        or the output stage (4 column groups of 8*tm rows x NB entries, padded)."""
        bm, bn, lanes = 8 * self.tm, 4 * self.tn, self.lanes
        tiles = self.bk * self.NB * (bm // lanes + 1 + bn // lanes + 1)
        stage = -(-4 * (bm * (self.NB + 1) + 1) // lanes)
        return max(tiles, stage)

    @property
    def key(self) -> KernelKey:
        return KernelKey.of("gemm_batch_tiled", SCALAR=self.scalar, TM=self.tm, TN=self.tn,
                            BK=self.bk, NB=self.NB, LANES=self.lanes,
                            SHARED=self.shared_vectors, LOADS_A=self.bk * self.tm // 4,
                            LOADS_B=self.bk * self.tn // 8, STORES=self.tm)

    def words(self, op: str) -> tuple[int, ...]:
        tiles_m, tiles_n = self.tiles
        u32(op, "workgroups", self.groups)
        u32(op, "output elements", self.batch * self.m * self.n - 1)
        return gemm_words(op, self.m, self.n, self.k, self.batch, tiles_m, tiles_n, self.a,
                          self.b, self.a_conj, self.b_conj, self.k, 0)


@dataclass(frozen=True)
class ReduceSpec:
    """``reduce_chunks``: ``out[f] = sum_s partial[f + s*size]`` (split-K's second half)."""

    scalar: str
    size: int
    chunks: int

    @property
    def key(self) -> KernelKey:
        return KernelKey.of("reduce_chunks", SCALAR=self.scalar)

    @property
    def groups(self) -> int:
        return -(-self.size // WG_1D)

    def words(self, op: str) -> tuple[int, ...]:
        u32(op, "partial products", self.size * self.chunks)
        return (u32(op, "size", self.size), u32(op, "chunks", self.chunks))


# Products of fewer multiply-adds than this get small register blocks: a large block's unrolled
# kernel takes longer to compile than such a product takes to run (SwiftShader through Dawn,
# gemm_blocked: 16x8 423 ms, 8x8 192 ms, 4x4 64 ms), and the first call pays the compile.
SMALL_GEMM_MACS = 1 << 22


def cpu_block(extent: int, macs: int) -> int:
    """Rows (or columns) per invocation of gemm_blocked: large register blocks win on CPU
    adapters (SwiftShader: 16x8 per invocation ~5 GFLOP/s f32, 4x4 ~2.4), but not past the
    matrix, nor for small products."""
    for block in (16, 8) if macs >= SMALL_GEMM_MACS else ():
        if extent >= 4 * block:
            return block
    return 1 if extent == 1 else 4


def split_k_chunks(plan: DotGeneralPlan, output_groups: int | None = None) -> tuple[int, int]:
    """(chunks, chunk length) of K for a small output with a long contraction, or for an output
    of ``output_groups`` gemm_tiled workgroups (None: not tiled) that leaves a GPU idle; (1, 0)
    means no split. Chunks are whole multiples of SPLIT_STEP_ALIGN, the last one cut at K."""
    if plan.batch != 1:
        return 1, 0
    if plan.m * plan.n <= SPLIT_MAX_OUTPUT and plan.k >= SPLIT_MIN_K:
        wanted = min(SPLIT_MAX_CHUNKS, plan.k // SPLIT_CHUNK)
    elif output_groups is not None and output_groups < SPLIT_FILL_GROUPS:
        wanted = min(SPLIT_MAX_CHUNKS, -(-SPLIT_FILL_GROUPS // output_groups),
                     plan.k // SPLIT_FILL_MIN_CHUNK)
    else:
        return 1, 0
    if wanted < 2:
        return 1, 0
    step = -(-plan.k // wanted)
    step = -(-step // SPLIT_STEP_ALIGN) * SPLIT_STEP_ALIGN
    return -(-plan.k // step), step


@dataclass(frozen=True)
class Tiles:
    """gemm_tiled's shape: TM x TN scalars per invocation (tiles of 16*TM rows and 16*TN
    columns), BK deep, single- or double-buffered; with ``vec_c`` an f32 output whose M is a
    multiple of 4 is written in 16-byte stores (an invocation's 4 consecutive rows of a
    column at once) rather than one scalar per store; with ``spread_m`` an f32 output stored
    one scalar at a time (any M, or any M that ``vec_c`` leaves) with K at most SPREAD_MAX_K is
    spread so that a warp's store covers 16 consecutive rows."""

    tm: int
    tn: int
    bk: int
    buffers: int
    vec_c: bool = False
    spread_m: bool = False

    def workgroup_bytes(self, itemsize: int) -> int:
        return self.buffers * self.bk * 16 * (self.tm + self.tn) * itemsize

    def output_groups(self, m: int, n: int) -> int:
        """gemm_tiled's workgroups for an M x N output (one batch entry)."""
        return -(-m // (GemmSpec.WG * self.tm)) * -(-n // (GemmSpec.WG * self.tn))


# Preferred first; the first that fits the device's workgroup memory is used. "big": see
# big_output. bench/gemm_sweep.py on an H100, kernels alone as a share of cuBLAS, Dawn /
# wgpu-native: big f32 8 x 8 with C in 16-byte stores 4096 0.559 / 0.690 (scalar stores 0.565 /
# 0.682), batch 64 x 512 0.576 / 0.696 (0.515 / 0.670), batch 64 x 1024 with K 64 0.754 / 0.801
# (0.480 / 0.635); 16 x 8 gave wgpu-native 0.739 at 4096 but Dawn 0.487. Small f32 (1024):
# 4 x 4 BK 16 double-buffered 0.564 / 0.664, vector stores 0.546 / 0.685, 8 x 4 0.514 / 0.687.
# C32 4096: 4 x 4 0.672 / 0.625, every other block slower in both lanes.
# spread_m pays where the stores of C weigh (K short) and costs where the multiply-adds do (an
# H100, bench/results/h100-spread-sweep.json, scalar stores against spread, kernels GFLOP/s
# Dawn / wgpu-native): batch 100 x 1023^2 with K 67 18.4 -> 19.4 / 17.8 -> 20.6 thousand,
# batch 64 x 1024^2 with K 64 (a proxy with scalar stores) 15.0 -> 21.3 / 19.7 -> 21.5; with K
# 512-4096 Dawn moved -3% to +5% and wgpu-native lost 16-25% (4096 35.2 -> 28.9, 1024 24.6 ->
# 18.5).
SPREAD_MAX_K = 128
GPU_TILES: dict[tuple[str, bool], tuple[Tiles, ...]] = {
    ("f32", True): (Tiles(8, 8, 8, 1, vec_c=True, spread_m=True),),
    ("f32", False): (Tiles(4, 4, 16, 2), Tiles(4, 4, 16, 1)),
    ("c32", True): (Tiles(4, 4, 8, 1),),
    ("c32", False): (Tiles(4, 4, 8, 1),),
}


def big_output(m: int, n: int, batch: int) -> bool:
    """Whether an output gives at least 256 tiles of 128 x 128 (enough to fill a large GPU),
    none of them half empty: an output 64 wide (a batch of attention heads) takes 64 x 64."""
    return m >= 128 and n >= 128 and -(-m // 128) * -(-n // 128) * batch >= 256


def gpu_tiles(profile: AdapterProfile, scalar: str, plan: DotGeneralPlan) -> Tiles:
    choices = GPU_TILES[scalar, big_output(plan.m, plan.n, plan.batch)]
    return next((t for t in choices
                 if t.workgroup_bytes(plan.dtype.itemsize) <= profile.max_workgroup_bytes),
                choices[-1])


def gemm_spec(profile: AdapterProfile, plan: DotGeneralPlan, a_conj: bool = False,
              b_conj: bool = False) -> GemmSpec:
    """The GEMM launch of one dot_general, reading each operand as its plan binds it (in place,
    or the packed copy)."""
    a, b = plan.lhs, plan.rhs
    scalar = "c32" if plan.dtype is DType.C32 else "f32"
    tiled = not profile.cpu and plan.m >= 64 and plan.n >= 64
    tiles = gpu_tiles(profile, scalar, plan) if tiled else None
    output_groups = tiles.output_groups(plan.m, plan.n) if tiles else None
    chunks, k_step = split_k_chunks(plan, output_groups)
    small_groups, small_block = SMALL_PRODUCT
    latency_bound = output_groups is not None and chunks == 1 \
        and output_groups * plan.batch < small_groups
    if latency_bound:
        tiled, tiles = False, None
    if chunks > 1:
        k, batch = k_step, chunks
        a_access = OperandAccess(a.offset, a.row_stride, a.col_stride, k_step * a.col_stride)
        b_access = OperandAccess(b.offset, b.row_stride, b.col_stride, k_step * b.row_stride)
    else:
        k, batch = plan.k, plan.batch
        a_access = OperandAccess(a.offset, a.row_stride, a.col_stride, a.batch_stride)
        b_access = OperandAccess(b.offset, b.row_stride, b.col_stride, b.batch_stride)
    if tiles:
        tm, tn = tiles.tm, tiles.tn
        bk, buffers = tiles.bk, tiles.buffers
        a_k_fast, b_k_fast = abs(a_access.col_stride) == 1, abs(b_access.row_stride) == 1
        vec_a = scalar == "f32" and a_access.vec4_aligned(a_k_fast)
        vec_b = scalar == "f32" and b_access.vec4_aligned(not b_k_fast)  # B's K axis is its rows
        vec_c = tiles.vec_c and scalar == "f32" and plan.m % 4 == 0
        spread_m = tiles.spread_m and scalar == "f32" and not vec_c and k <= SPREAD_MAX_K
    else:
        macs = plan.m * plan.n * plan.k * plan.batch
        tm, tn, bk, buffers = cpu_block(plan.m, macs), min(cpu_block(plan.n, macs), 8), 0, 0
        if latency_bound:
            tm = tn = small_block
        a_k_fast = b_k_fast = vec_a = vec_b = vec_c = spread_m = False
    return GemmSpec(scalar, tiled, tm, tn, bk, buffers, a_k_fast, b_k_fast, vec_a, vec_b, vec_c,
                    spread_m,
                    plan.m, plan.n, k, batch, a_access, b_access, a_conj, b_conj,
                    plan.k, k_step if chunks > 1 else 0)


# gemm_batch_tiled's (TM, TN) per scalar; BK is the deepest of BATCH_BK that fits the
# device's workgroup memory.
BATCH_TILES = {"f32": (8, 8), "c32": (4, 4)}
BATCH_BK = (8, 4)


def batch_tiled_spec(profile: AdapterProfile, plan: DotGeneralPlan, a_conj: bool = False,
                     b_conj: bool = False) -> BatchTiledSpec:
    """The launch of a batch-first dot_general on a GPU, reading each operand as its plan
    binds it."""
    a, b = plan.lhs, plan.rhs
    scalar = "c32" if plan.dtype is DType.C32 else "f32"
    tm, tn = BATCH_TILES[scalar]
    specs = [BatchTiledSpec(scalar, tm, tn, bk, plan.m, plan.n, plan.k, plan.batch,
                            OperandAccess(a.offset, a.row_stride, a.col_stride, a.batch_stride),
                            OperandAccess(b.offset, b.row_stride, b.col_stride, b.batch_stride),
                            a_conj, b_conj) for bk in BATCH_BK]
    return next((s for s in specs if 16 * s.shared_vectors <= profile.max_workgroup_bytes),
                specs[-1])


# Slots of a dot_general program.
LHS, RHS, OUT = 0, 1, 2


@functools.lru_cache(maxsize=4096)
def lower_dot_general(op: str, profile: AdapterProfile, plan: DotGeneralPlan,
                      lhs: ViewLayout, rhs: ViewLayout, lhs_conj: bool = False,
                      rhs_conj: bool = False) -> Program:
    """The program computing ``plan`` from operand slots 0 (lhs view ``lhs``) and 1 (rhs view
    ``rhs``) into slot 2; packed operands and split-K partials are temporaries."""
    itemsize = plan.dtype.itemsize
    output_bytes = plan.out_size * itemsize
    profile.check_binding(op, output_bytes)
    if plan.out_size == 0:
        return Program(2, output_bytes)
    if plan.k == 0:
        # Beyond upstream (which refuses K == 0): an empty sum is zero.
        return Program(2, output_bytes, (), (Clear(OUT, 0, -(-output_bytes // 4) * 4),))
    temps: list[int] = []
    ops: list[Operation] = []
    slots = tuple(operand_slot(op, profile, binding, layout, itemsize, slot, temps, ops)
                  for slot, binding, layout in ((LHS, plan.lhs, lhs), (RHS, plan.rhs, rhs)))
    # (A batch of one is the same either way: the batch-last path.)
    if plan.batch_first and plan.batch > 1 and not profile.cpu:
        ops.append(Launch.of(op, profile, batch_tiled_spec(profile, plan, lhs_conj, rhs_conj),
                             (*slots, OUT)))
        return Program(2, output_bytes, tuple(temps), tuple(ops))
    spec = gemm_spec(profile, plan, lhs_conj, rhs_conj)
    if plan.batch_first and plan.batch > 1:
        # CPU adapters: the barrier-free GEMM reads the operands in place into [M, N, B], and
        # a copy puts the batch first.
        temps.append(output_bytes)
        product = OUT + len(temps)
        ops.append(Launch.of(op, profile, spec, (*slots, product)))
        batch_last = dense_layout((plan.m, plan.n, plan.batch))
        copy = plan_copy(batch_last.permuted(op, (2, 0, 1)), op)
        ops.extend(copy_ops(op, profile, copy, itemsize, product, OUT))
        return Program(2, output_bytes, tuple(temps), tuple(ops))
    launch_into_output(op, profile, spec, slots, plan.out_size, spec.batch if spec.k_step else 1,
                       spec.scalar, itemsize, temps, ops)
    return Program(2, output_bytes, tuple(temps), tuple(ops))


def operand_slot(op: str, profile: AdapterProfile, binding: OperandBinding, layout: ViewLayout,
                 itemsize: int, slot: int, temps: list[int], ops: list[Operation]) -> int:
    """The slot a kernel reads the operand of ``slot`` from, as ``binding`` binds it: the slot
    itself, or a temporary that a packing copy (appended to ``ops``) fills."""
    if binding.pack_perm is None:
        return slot
    copy = plan_copy(layout.permuted(op, binding.pack_perm), op)
    profile.check_binding(op, copy.size * itemsize)
    temps.append(copy.size * itemsize)
    packed = OUT + len(temps)
    ops.extend(copy_ops(op, profile, copy, itemsize, slot, packed))
    return packed


def launch_into_output(op: str, profile: AdapterProfile, spec: KernelSpec,
                       inputs: tuple[int, ...], size: int, chunks: int, scalar: str,
                       itemsize: int, temps: list[int], ops: list[Operation],
                       second: KernelSpec | None = None) -> None:
    """Launch ``spec`` into the output slot, or, when it writes ``chunks`` > 1 partial results
    of ``size`` elements each, into a temporary that ``second`` (by default
    ``reduce_chunks``) adds up into it."""
    if chunks == 1:
        ops.append(Launch.of(op, profile, spec, (*inputs, OUT)))
        return
    partial_bytes = size * chunks * itemsize
    profile.check_binding(op, partial_bytes)
    temps.append(partial_bytes)
    partial = OUT + len(temps)
    ops.append(Launch.of(op, profile, spec, (*inputs, partial)))
    ops.append(Launch.of(op, profile, second or ReduceSpec(scalar, size, chunks),
                         (partial, OUT)))
