"""Lowering of sums over axes (einsum's one-operand labels, tw.sum, reduce_sum).

A sum is planned as a dot_general of the operand against a stride-0 ones operand
(planning/einsum/steps.py), which gives it the same view handling as a GEMM: one stride per
group of axes, or one packing copy. The program's slots are those of that dot_general: the
operand, a one-element buffer holding 1, the output. Lowering picks what fits
``x[m, k] = offset + m * row_stride + k * col_stride`` (bench/sums.py measures each):

* that dot_general itself, on the GEMM kernels, where there are many outputs on a CPU adapter
  (the register-blocked kernel reads 16 outputs' worth per invocation: 1.4-1.7x the reduction
  kernels on llvmpipe);
* ``sum_tree``, a workgroup per (output, chunk of K) adding up a tree in workgroup memory, for
  few outputs or long, consecutive K (a full sum of 4096 x 4096: 6-7x the GEMM path, whose
  split-K leaves most of the device idle); chunks are added up by ``reduce_chunks``;
* ``sum_rows``, one invocation per output, on GPUs for many outputs whose K is not consecutive
  or shorter than a workgroup's four reads per invocation, and for short sums.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..layout import ViewLayout, view_extent
from ..planning.copy_plan import plan_copy
from ..planning.dot_general_plan import DotGeneralPlan
from .copy import copy_ops
from .gemm import ReduceSpec, lower_dot_general
from .kernels import KernelKey
from .profile import AdapterProfile
from .program import Launch, Operation, Program
from .words import check_index_span, i32, u32

WG_1D = 256
ROWS_MIN_OUTPUTS = 4096  # outputs that keep a GPU busy with one invocation each
CPU_GEMM_MIN_OUTPUTS = 64  # outputs that keep a CPU adapter's threads busy in the GEMM path
ROWS_MAX_K = 32  # sums this short are not worth a workgroup each
CHUNK_MIN = 4 * WG_1D  # K per workgroup: at least four reads per invocation
TREE_TARGET_GROUPS = 512  # workgroups a long sum is spread over, across outputs and chunks


@dataclass(frozen=True)
class SumSpec:
    """``sum_rows`` or ``sum_tree``: sums over K of ``x[offset + m * m_stride + k *
    k_stride]`` for m < M; ``chunk`` > 0 (tree) splits K into chunks written one after the
    other (``out[m + c * M]``)."""

    scalar: str
    m: int
    k: int
    offset: int
    m_stride: int
    k_stride: int
    chunk: int  # 0: sum_rows

    def __post_init__(self) -> None:
        if self.m <= 0 or self.k <= 0 or self.chunk < 0 or (self.chunk and self.chunk % WG_1D):
            raise ValueError(f"malformed sum {self}")

    @property
    def chunks(self) -> int:
        return -(-self.k // self.chunk) if self.chunk else 1

    @property
    def key(self) -> KernelKey:
        return KernelKey.of("sum_tree" if self.chunk else "sum_rows", SCALAR=self.scalar)

    @property
    def groups(self) -> int:
        return self.m * self.chunks if self.chunk else -(-self.m // WG_1D)

    def words(self, op: str) -> tuple[int, ...]:
        low, high = view_extent(op, (self.m, self.k), (self.m_stride, self.k_stride),
                                self.offset)
        check_index_span(op, "the summed operand", low, high)
        u32(op, "outputs", self.m * self.chunks)
        head: tuple[int, ...] = (u32(op, "M", self.m), u32(op, "K", self.k))
        if self.chunk:
            head += (u32(op, "chunk", self.chunk), u32(op, "chunks", self.chunks))
        return (*head, i32(op, "offset", self.offset), i32(op, "m_stride", self.m_stride),
                i32(op, "k_stride", self.k_stride))


def sum_spec(profile: AdapterProfile, scalar: str, m: int, k: int, offset: int, m_stride: int,
             k_stride: int) -> SumSpec | None:
    """The reduction kernel that fits the sum, or None where the GEMM path does (see the
    module's docstring)."""
    if profile.cpu:
        if m >= CPU_GEMM_MIN_OUTPUTS or k <= ROWS_MAX_K:
            return None
    elif k <= ROWS_MAX_K or (m >= ROWS_MIN_OUTPUTS and (abs(k_stride) != 1 or k < CHUNK_MIN)):
        return SumSpec(scalar, m, k, offset, m_stride, k_stride, 0)
    chunks = max(1, min(-(-k // CHUNK_MIN), TREE_TARGET_GROUPS // m))
    per_chunk = -(-k // chunks)
    chunk = -(-per_chunk // WG_1D) * WG_1D
    return SumSpec(scalar, m, k, offset, m_stride, k_stride, chunk)


# Slots of a sum program: those of its dot_general (the operand, the ones, the output).
SRC, ONES, OUT = 0, 1, 2


@functools.lru_cache(maxsize=1024)
def lower_sum(op: str, profile: AdapterProfile, plan: DotGeneralPlan, layout: ViewLayout,
              ones: ViewLayout) -> Program:
    """The program summing the view ``layout`` of slot 0 as ``plan`` (its dot_general against
    the stride-0 view ``ones`` of slot 1) binds it, into slot 2."""
    scalar = "c32" if plan.dtype.is_complex else "f32"
    binding = plan.lhs
    spec = sum_spec(profile, scalar, plan.m, plan.k, binding.offset, binding.row_stride,
                    binding.col_stride) if plan.out_size and plan.k else None
    if spec is None:
        return lower_dot_general(op, profile, plan, layout, ones)
    itemsize = plan.dtype.itemsize
    output_bytes = plan.out_size * itemsize
    profile.check_binding(op, output_bytes)
    temps: list[int] = []
    ops: list[Operation] = []
    src = SRC
    if binding.pack_perm is not None:
        copy = plan_copy(layout.permuted(op, binding.pack_perm), op)
        profile.check_binding(op, copy.size * itemsize)
        temps.append(copy.size * itemsize)
        src = OUT + len(temps)
        ops.extend(copy_ops(op, profile, copy, itemsize, SRC, src))
    if spec.chunks > 1:
        partial_bytes = plan.m * spec.chunks * itemsize
        profile.check_binding(op, partial_bytes)
        temps.append(partial_bytes)
        partial = OUT + len(temps)
        ops.append(Launch.of(op, profile, spec, (src, partial)))
        ops.append(Launch.of(op, profile, ReduceSpec(scalar, plan.m, spec.chunks),
                             (partial, OUT)))
    else:
        ops.append(Launch.of(op, profile, spec, (src, OUT)))
    return Program(2, output_bytes, tuple(temps), tuple(ops))
