"""Kernel selection: which WGSL kernel, specialisation and launch a planned op gets on an
adapter. Pure functions of (adapter, plan), so they are tested on the host and can name every
pipeline an op will need before it runs (``einsum`` compiles them asynchronously first).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dtypes import DType
from ..planning.copy_plan import CopyKind, CopyPlan
from ..planning.dot_general_plan import DotGeneralPlan, OperandBinding
from .kernels import KernelKey

WG_1D = 256
TILE = 16
_ELEMENT_TYPE = {4: "u32", 8: "vec2<u32>"}


def word(value: int) -> int:
    """A signed or unsigned int as one uint32 word (two's complement)."""
    return value & 0xFFFFFFFF


F32_ONE, F32_MINUS_ONE = 0x3F800000, 0xBF800000


@dataclass(frozen=True)
class Launch:
    key: KernelKey
    params: tuple[int, ...]
    groups: int  # workgroups; the runtime spreads them over a grid within the adapter's limits


def copy_launch(adapter, plan: CopyPlan, itemsize: int) -> Launch | None:
    """The kernel for a copy plan, or None when a plain buffer-to-buffer copy does it."""
    if plan.size == 0:
        return None
    if itemsize == 1:
        # WGSL has no 8-bit storage: every 1-byte copy goes through the word-assembling kernel.
        key = KernelKey.of("copy_strided_bytes")
        groups = -(-plan.size // (4 * WG_1D))
    elif plan.kind is CopyKind.LINEAR:
        return None
    elif plan.kind is CopyKind.TILED and not adapter.is_cpu:
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


def gemm_launch(adapter, plan: DotGeneralPlan, a: OperandBinding, b: OperandBinding,
                lhs_conj: bool = False, rhs_conj: bool = False) -> Launch:
    """The GEMM kernel and its output tiling for one dot_general."""
    scalar = "c32" if plan.dtype is DType.C32 else "f32"
    tm = tn = 4
    wx = wy = 8
    tiles_m, tiles_n = -(-plan.m // (wx * tm)), -(-plan.n // (wy * tn))
    params = (plan.m, plan.n, plan.k, plan.batch, tiles_m, tiles_n,
              *(word(v) for v in (a.offset, a.row_stride, a.col_stride, a.batch_stride,
                                  b.offset, b.row_stride, b.col_stride, b.batch_stride)),
              F32_MINUS_ONE if lhs_conj else F32_ONE, F32_MINUS_ONE if rhs_conj else F32_ONE)
    return Launch(KernelKey.of("gemm_blocked", SCALAR=scalar, TM=tm, TN=tn, WX=wx, WY=wy),
                  params, tiles_m * tiles_n * plan.batch)
