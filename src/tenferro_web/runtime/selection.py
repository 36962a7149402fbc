"""Kernel selection: which WGSL kernel, specialisation and launch a planned op gets on an
adapter. Pure functions of (kernel profile, plan), so they are tested on the host and can name every
pipeline an op will need before it runs (``einsum`` compiles them asynchronously first). Plans
and launches are immutable, so they are memoised: a chain of like ops plans once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..dtypes import DType
from ..errors import InvalidArgument
from ..planning.copy_plan import CopyKind, CopyPlan
from ..planning.dot_general_plan import DotGeneralPlan, OperandBinding
from .kernels import KernelKey

WG_1D = 256
TILE = 16
# Split-K: outputs of at most this many elements with K of at least SPLIT_MIN_K are computed
# as up to SPLIT_MAX_CHUNKS partial products of SPLIT_CHUNK-long slices of K, then summed.
SPLIT_MAX_OUTPUT = 4096
SPLIT_MIN_K = 8192
SPLIT_CHUNK = 1024
SPLIT_MAX_CHUNKS = 256
_ELEMENT_TYPE = {4: "u32", 8: "vec2<u32>"}


def word(value: int) -> int:
    """A signed or unsigned int as one uint32 word (two's complement)."""
    return value & 0xFFFFFFFF


F32_ONE, F32_MINUS_ONE = 0x3F800000, 0xBF800000


@dataclass(frozen=True)
class KernelProfile:
    """Which kernel family a runtime uses: CPU adapters (SwiftShader, lavapipe) want register
    blocks without barriers, GPUs want workgroup-memory tiles. Chosen from the adapter unless
    the runtime was created with ``kernels="cpu"`` or ``"gpu"``."""

    cpu: bool

    @classmethod
    def choose(cls, adapter, kernels: str) -> KernelProfile:
        if kernels not in ("auto", "cpu", "gpu"):
            raise InvalidArgument("webgpu_runtime_init", "kernels",
                                  f"{kernels!r} is not 'auto', 'cpu' or 'gpu'")
        return cls(adapter.is_cpu if kernels == "auto" else kernels == "cpu")


@dataclass(frozen=True)
class Launch:
    key: KernelKey
    params: tuple[int, ...]
    groups: int  # workgroups; the runtime spreads them over a grid within the adapter's limits


@functools.lru_cache(maxsize=4096)
def copy_launch(profile: KernelProfile, plan: CopyPlan, itemsize: int) -> Launch | None:
    """The kernel for a copy plan, or None when a plain buffer-to-buffer copy does it."""
    if plan.size == 0:
        return None
    if itemsize == 1:
        # WGSL has no 8-bit storage: every 1-byte copy goes through the word-assembling kernel.
        key = KernelKey.of("copy_strided_bytes")
        groups = -(-plan.size // (4 * WG_1D))
    elif plan.kind is CopyKind.LINEAR:
        return None
    elif plan.kind is CopyKind.TILED and not profile.cpu:
        # Workgroup memory pays on GPUs; on CPU adapters barriers cost more than they save.
        d0, d1 = plan.dims[0], plan.dims[1]
        batch = plan.dims[2] if plan.rank == 3 else 1
        tiles_j, tiles_i = -(-d1 // TILE), -(-d0 // TILE)
        return Launch(KernelKey.of("transpose_tiled", ELEM=_ELEMENT_TYPE[itemsize]),
                      (d0, d1, plan.src_offset, tiles_j, tiles_i, batch),
                      tiles_j * tiles_i * batch)
    else:
        key = KernelKey.of("copy_strided", ELEM=_ELEMENT_TYPE[itemsize])
        groups = -(-plan.size // WG_1D)
    params = (plan.size, plan.rank, word(plan.src_offset), *plan.dims,
              *(word(s) for s in plan.src_strides))
    return Launch(key, params, groups)


def cpu_block(extent: int) -> int:
    """Rows (or columns) per invocation on CPU adapters: large register blocks win there, but
    not past the matrix (measured on SwiftShader: 16x8 per invocation ~5 GFLOP/s f32, 4x4 ~2.4)."""
    for block in (16, 8, 4):
        if extent >= 4 * block:
            return block
    return 1 if extent == 1 else 4


def tiled_key(scalar: str, tm: int, tn: int, bk: int, a_k_fast: bool, b_k_fast: bool,
              vec_a: bool = False, vec_b: bool = False) -> tuple[KernelKey, int, int]:
    """``gemm_tiled`` for a 16 x 16 workgroup: TM x TN per invocation, BK deep tiles; an f32
    operand with ``vec_*`` loads 4 elements of its contiguous axis at a time."""
    # Vector loads need at least one whole 4-wide load per invocation and tile.
    vec_a, vec_b = vec_a and bk * tm >= 64, vec_b and bk * tn >= 64
    va, vb = (4 if vec_a else 1), (4 if vec_b else 1)
    loads_a, loads_b = bk * 16 * tm // (256 * va), bk * 16 * tn // (256 * vb)
    key = KernelKey.of("gemm_tiled", SCALAR=scalar, TM=tm, TN=tn, BK=bk,
                       A_K_FAST=str(a_k_fast).lower(), B_K_FAST=str(b_k_fast).lower(),
                       VEC_A=str(vec_a).lower(), VEC_B=str(vec_b).lower(),
                       LOADS_A=loads_a, LOADS_B=loads_b)
    return key, 16 * tm, 16 * tn


def vector_loads(plan: DotGeneralPlan, binding: OperandBinding, fast_stride: int,
                 other_stride: int) -> bool:
    """Whether an f32 operand can be read 16 bytes at a time along its contiguous axis: every
    group of 4 must start 16-byte aligned, so the offset and all other strides are multiples
    of 4 (the batch stride too, and a split-K chunk step is a multiple of the K stride)."""
    return (plan.dtype is DType.F32 and fast_stride == 1 and binding.offset % 4 == 0
            and other_stride % 4 == 0 and binding.batch_stride % 4 == 0)


def split_k_chunks(plan: DotGeneralPlan) -> int:
    """Chunks of K for a small output with a long contraction: each chunk's partial result is
    one batch entry of the GEMM, then ``reduce_chunks`` sums them. One chunk means no split."""
    if plan.batch != 1 or plan.m * plan.n > SPLIT_MAX_OUTPUT or plan.k < SPLIT_MIN_K:
        return 1
    return min(SPLIT_MAX_CHUNKS, plan.k // SPLIT_CHUNK)


@functools.lru_cache(maxsize=4096)
def gemm_launch(profile: KernelProfile, plan: DotGeneralPlan, a: OperandBinding,
                b: OperandBinding, lhs_conj: bool = False, rhs_conj: bool = False,
                chunks: int = 1) -> Launch:
    """The GEMM kernel and its output tiling for one dot_general (or, with ``chunks`` > 1, the
    partial products of split-K, written as a [M, N, chunks] batch).

    CPU adapters get ``gemm_blocked`` (register blocks, no barriers, unrolled); GPUs get
    ``gemm_tiled`` (workgroup-memory tiles plus register blocks) when the output fills a tile,
    and the blocked kernel for thin outputs (matrix-vector and the like)."""
    scalar = "c32" if plan.dtype is DType.C32 else "f32"
    tm, tn = cpu_block(plan.m), min(cpu_block(plan.n), 8)
    if not profile.cpu and plan.m >= 64 and plan.n >= 64:
        # Measured on an H200 (docs/performance.md): f32 128x128 tiles 16 deep, C32 64x64 tiles
        # 8 deep; outputs too small to give every multiprocessor a 128x128 tile use 64x64.
        big = scalar == "f32" and -(-plan.m // 128) * -(-plan.n // 128) * plan.batch >= 256
        tm, bk = (8, 16) if big else (4, 8 if scalar == "c32" else 16)
        # 16-byte loads pay with 64x64 tiles (about 2x on the H200) but not with 128x128 ones,
        # where the extra registers cost more than the loads save.
        vec = tm == 4
        a_k_fast, b_k_fast = abs(a.col_stride) == 1, abs(b.row_stride) == 1
        key, block_m, block_n = tiled_key(
            scalar, tm, tm, bk, a_k_fast, b_k_fast,
            vec and vector_loads(plan, a, *((a.col_stride, a.row_stride) if a_k_fast
                                            else (a.row_stride, a.col_stride))),
            vec and vector_loads(plan, b, *((b.row_stride, b.col_stride) if b_k_fast
                                            else (b.col_stride, b.row_stride))))
    else:
        key = KernelKey.of("gemm_blocked", SCALAR=scalar, TM=tm, TN=tn, WX=8, WY=8)
        block_m, block_n = 8 * tm, 8 * tn
    tiles_m, tiles_n = -(-plan.m // block_m), -(-plan.n // block_n)
    if chunks > 1:
        k_step = -(-plan.k // chunks)
        k, batch = k_step, -(-plan.k // k_step)
        a_batch, b_batch = k_step * a.col_stride, k_step * b.row_stride
    else:
        k, batch, k_step, a_batch, b_batch = plan.k, plan.batch, 0, a.batch_stride, \
            b.batch_stride
    params = (plan.m, plan.n, k, batch, tiles_m, tiles_n,
              *(word(v) for v in (a.offset, a.row_stride, a.col_stride, a_batch,
                                  b.offset, b.row_stride, b.col_stride, b_batch)),
              F32_MINUS_ONE if lhs_conj else F32_ONE, F32_MINUS_ONE if rhs_conj else F32_ONE,
              plan.k, k_step)
    return Launch(key, params, tiles_m * tiles_n * batch)


def reduce_launch(dtype: DType, size: int, chunks: int) -> Launch:
    scalar = "c32" if dtype is DType.C32 else "f32"
    return Launch(KernelKey.of("reduce_chunks", SCALAR=scalar), (size, chunks),
                  -(-size // WG_1D))
