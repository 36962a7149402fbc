"""Lowering of sums over axes (einsum's one-operand labels, tw.sum, reduce_sum).

A sum is planned as a dot_general of the operand against a stride-0 ones operand
(planning/einsum/steps.py), which gives it the same view handling as a GEMM: one stride per
group of axes, or one packing copy. The program's slots are those of that dot_general: the
operand, a one-element buffer holding 1, the output. Lowering picks what fits
``x[m, k] = offset + m * row_stride + k * col_stride`` (bench/sums.py measures each):

* on CPU adapters: that dot_general itself, on the GEMM kernels, where there are many outputs
  (the register-blocked kernel reads 16 outputs' worth per invocation); ``sum_rows`` over
  chunks of K for few outputs, so that a full sum keeps every thread busy without barriers
  (which SwiftShader makes dear), the chunks then added up by ``reduce_chunks``;
* on GPUs: ``sum_tree``, a workgroup per (output, chunk of K) adding up a tree in workgroup
  memory (where the device has subgroups: each subgroup's sum, then one barrier), for few
  outputs or long, consecutive K; ``sum_rows`` for many outputs whose K is not
  consecutive or shorter than four reads per invocation of a workgroup, and for short sums.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..layout import ViewLayout, view_extent
from ..planning.dot_general_plan import DotGeneralPlan
from .gemm import launch_into_output, lower_dot_general, operand_slot
from .kernels import KernelKey
from .profile import AdapterProfile
from .program import Operation, Program
from .words import check_index_span, i32, u32

WG_1D = 256
ROWS_MIN_OUTPUTS = 4096  # outputs that keep a GPU busy with one invocation each
CPU_GEMM_MIN_OUTPUTS = 64  # outputs that keep a CPU adapter's threads busy in the GEMM path
CPU_INVOCATIONS = 256  # invocations a sum with few outputs is spread over on a CPU adapter
ROWS_MAX_K = 32  # sums this short are not worth a workgroup each
# sum_tree's workgroup size: 64, not 256, is two fewer barrier levels and four times the
# reads per invocation (5x faster on SwiftShader, where barriers are dear; bench/sums.py).
TREE_WG = 64
CHUNK_MIN = 16 * TREE_WG  # K per chunk: at least sixteen reads per invocation of a tree
TREE_TARGET_GROUPS = 512  # workgroups a long sum is spread over, across outputs and chunks


@dataclass(frozen=True)
class SumSpec:
    """``sum_tree`` (a workgroup per output and chunk) or ``sum_rows`` (an invocation per
    output and chunk): sums over chunks of K of ``x[offset + m * m_stride + k * k_stride]``
    for m < M, written ``out[m + c * M]`` (the output itself when there is one chunk)."""

    scalar: str
    tree: bool
    subgroups: bool  # sum_tree adds up each subgroup's partial sums with subgroupAdd
    m: int
    k: int
    offset: int
    m_stride: int
    k_stride: int
    chunk: int

    def __post_init__(self) -> None:
        if self.m <= 0 or self.k <= 0 or not 0 < self.chunk <= self.k:
            raise ValueError(f"malformed sum {self}")

    @property
    def chunks(self) -> int:
        return -(-self.k // self.chunk)

    @property
    def key(self) -> KernelKey:
        if self.tree:
            return KernelKey.of("sum_tree", SCALAR=self.scalar, WG=TREE_WG,
                                SUBGROUPS=str(self.subgroups).lower())
        return KernelKey.of("sum_rows", SCALAR=self.scalar)

    @property
    def groups(self) -> int:
        outputs = self.m * self.chunks
        return outputs if self.tree else -(-outputs // WG_1D)

    def words(self, op: str) -> tuple[int, ...]:
        low, high = view_extent(op, (self.m, self.k), (self.m_stride, self.k_stride),
                                self.offset)
        check_index_span(op, "the summed operand", low, high)
        u32(op, "outputs", self.m * self.chunks)
        return (u32(op, "M", self.m), u32(op, "K", self.k), u32(op, "chunk", self.chunk),
                u32(op, "chunks", self.chunks), i32(op, "offset", self.offset),
                i32(op, "m_stride", self.m_stride), i32(op, "k_stride", self.k_stride))


def sum_spec(profile: AdapterProfile, scalar: str, m: int, k: int, offset: int, m_stride: int,
             k_stride: int) -> SumSpec | None:
    """The reduction kernel that fits the sum, or None where the GEMM path does (see the
    module's docstring)."""
    def spec(tree: bool, chunks: int) -> SumSpec:
        return SumSpec(scalar, tree, tree and profile.subgroups, m, k, offset, m_stride,
                       k_stride, -(-k // chunks))

    if profile.cpu:
        if m >= CPU_GEMM_MIN_OUTPUTS or k <= ROWS_MAX_K:
            return None
        return spec(False, max(1, min(-(-CPU_INVOCATIONS // m), k // WG_1D)))
    if k <= ROWS_MAX_K or (m >= ROWS_MIN_OUTPUTS and (abs(k_stride) != 1 or k < CHUNK_MIN)):
        return spec(False, 1)
    return spec(True, max(1, min(-(-k // CHUNK_MIN), TREE_TARGET_GROUPS // m)))


# A sum program has the slots of its dot_general: the operand, the ones, the output.
SRC = 0


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
    src = operand_slot(op, profile, binding, layout, itemsize, SRC, temps, ops)
    launch_into_output(op, profile, spec, (src,), plan.m, spec.chunks, scalar, itemsize, temps,
                       ops)
    return Program(2, output_bytes, tuple(temps), tuple(ops))
