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
from .gemm import ReduceSpec, launch_into_output, lower_dot_general, operand_slot
from .kernels import KernelKey
from .profile import AdapterProfile
from .program import Operation, Program
from .words import check_index_span, i32, u32

WG_1D = 256
ROWS_MIN_OUTPUTS = 4096  # outputs that keep a GPU busy with one invocation each
CPU_GEMM_MIN_OUTPUTS = 64  # outputs that keep a CPU adapter's threads busy in the GEMM path
CPU_INVOCATIONS = 256  # invocations a sum with few outputs is spread over on a CPU adapter
ROWS_MAX_K = 32  # sums this short are not worth a workgroup each
# The GPU family's sizes (chosen on the H200, bench/workloads.py): a GPU hides memory latency
# only with many loads in flight, so a sum is spread over enough workgroups, or invocations, to
# fill any GPU, and its partial sums are added up by a second, small pass.
TREE_WG = 256
CHUNK_MIN = 16 * TREE_WG  # K per chunk of a tree: at least sixteen reads per invocation
TREE_TARGET_GROUPS = 8192  # workgroups a long sum is spread over, across outputs and chunks
# Outputs times chunks of sum_rows. Fewer chunks make the second pass cheaper (its invocations
# add up one output's chunks one after another) at no cost to the first: on an H100 (h200.py
# --sweep --steps dawn-grids,native-grids), sum 8192^2 over axis 1 took 126 / 119 us of kernels
# (Dawn / native) at 2^20 and 109 / 104 at 2^18, the batched sum 114 / 107 and 108 / 102.
ROWS_TARGET_INVOCATIONS = 1 << 18
ROWS_MIN_CHUNK = 64  # K per chunk of sum_rows: at least this many reads per invocation
LANES = {"f32": 4, "c32": 2}  # scalars per 16-byte load


@dataclass(frozen=True)
class SumSpec:
    """``sum_tree`` (a workgroup per output and chunk) or ``sum_rows`` (an invocation per
    output and chunk, or per LANES outputs with ``vec``): sums over chunks of K of
    ``x[offset + m * m_stride + b * b_stride + k * k_stride]`` for m < M, b < B, written
    ``out[o + c * M * B]`` with o = m + M * b (the output itself when there is one chunk).
    ``vec``: 16-byte loads (sum_tree: along K, whose stride is 1; sum_rows: along M, whose
    stride is 1, with offset, k_stride, b_stride and M multiples of LANES)."""

    scalar: str
    tree: bool
    subgroups: bool  # sum_tree adds up each subgroup's partial sums with subgroupAdd
    vec: bool
    m: int
    k: int
    offset: int
    m_stride: int
    k_stride: int
    chunk: int
    batch: int = 1
    b_stride: int = 0

    def __post_init__(self) -> None:
        if self.m <= 0 or self.k <= 0 or self.batch <= 0 or not 0 < self.chunk <= self.k:
            raise ValueError(f"malformed sum {self}")
        lanes = LANES[self.scalar]
        if self.vec and (self.k_stride != 1 if self.tree else (
                self.m_stride != 1 or self.offset % lanes or self.k_stride % lanes
                or self.b_stride % lanes or self.m % lanes)):
            raise ValueError(f"a sum whose loads cannot be 16 bytes wide: {self}")

    @property
    def chunks(self) -> int:
        return -(-self.k // self.chunk)

    @property
    def key(self) -> KernelKey:
        if self.tree:
            return KernelKey.of("sum_tree", SCALAR=self.scalar, WG=TREE_WG,
                                SUBGROUPS=str(self.subgroups).lower(),
                                VEC=str(self.vec).lower())
        return KernelKey.of("sum_rows", SCALAR=self.scalar, VEC=str(self.vec).lower())

    @property
    def outputs(self) -> int:
        return self.m * self.batch

    @property
    def groups(self) -> int:
        outputs = self.outputs * self.chunks
        if self.tree:
            return outputs
        return -(-(outputs // LANES[self.scalar] if self.vec else outputs) // WG_1D)

    def words(self, op: str) -> tuple[int, ...]:
        low, high = view_extent(op, (self.m, self.k, self.batch),
                                (self.m_stride, self.k_stride, self.b_stride), self.offset)
        check_index_span(op, "the summed operand", low, high)
        u32(op, "outputs", self.outputs * self.chunks)
        return (u32(op, "M", self.m), u32(op, "K", self.k), u32(op, "chunk", self.chunk),
                u32(op, "chunks", self.chunks), i32(op, "offset", self.offset),
                i32(op, "m_stride", self.m_stride), i32(op, "k_stride", self.k_stride),
                u32(op, "batch", self.batch), i32(op, "b_stride", self.b_stride))


def sum_spec(profile: AdapterProfile, scalar: str, m: int, k: int, offset: int, m_stride: int,
             k_stride: int, split: bool = True, batch: int = 1,
             b_stride: int = 0) -> SumSpec | None:
    """The reduction kernel that fits the sum, or None where the GEMM path does (see the
    module's docstring); ``split=False``: in one chunk (the second pass over partial sums).
    The thresholds count the outputs of every batch entry."""
    lanes = LANES[scalar]

    def spec(tree: bool, chunks: int) -> SumSpec:
        vec = not profile.cpu and (k_stride == 1 if tree else (
            m_stride == 1 and offset % lanes == 0 and k_stride % lanes == 0
            and b_stride % lanes == 0 and m % lanes == 0))
        chunks = chunks if split else 1
        return SumSpec(scalar, tree, tree and profile.subgroups, vec, m, k, offset, m_stride,
                       k_stride, -(-k // chunks), batch, b_stride)

    outputs = m * batch
    if profile.cpu:
        if outputs >= CPU_GEMM_MIN_OUTPUTS or k <= ROWS_MAX_K:
            return None
        return spec(False, max(1, min(-(-CPU_INVOCATIONS // outputs), k // WG_1D)))
    if k <= ROWS_MAX_K:
        return spec(False, 1)
    if outputs >= ROWS_MIN_OUTPUTS and (abs(k_stride) != 1 or k < CHUNK_MIN):
        return spec(False, max(1, min(-(-ROWS_TARGET_INVOCATIONS // outputs),
                                      k // ROWS_MIN_CHUNK)))
    return spec(True, max(1, min(-(-k // CHUNK_MIN), -(-TREE_TARGET_GROUPS // outputs))))


def partial_sums_spec(profile: AdapterProfile, scalar: str, m: int,
                      chunks: int) -> SumSpec | ReduceSpec:
    """The second pass of a sum split into chunks: adds up ``partial[m + c * M]`` over c. On
    GPUs a sum kernel in one chunk (a workgroup's tree for few, long sums); ``reduce_chunks``
    (an invocation per output) on CPU adapters, as for the GEMM's split-K."""
    second = None if profile.cpu else sum_spec(profile, scalar, m, chunks, 0, 1, m, split=False)
    return second if second is not None else ReduceSpec(scalar, m, chunks)


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
                    binding.col_stride, batch=plan.batch, b_stride=binding.batch_stride) \
        if plan.out_size and plan.k else None
    if spec is None:
        return lower_dot_general(op, profile, plan, layout, ones)
    itemsize = plan.dtype.itemsize
    output_bytes = plan.out_size * itemsize
    profile.check_binding(op, output_bytes)
    temps: list[int] = []
    ops: list[Operation] = []
    src = operand_slot(op, profile, binding, layout, itemsize, SRC, temps, ops)
    launch_into_output(op, profile, spec, (src,), spec.outputs, spec.chunks, scalar, itemsize,
                       temps, ops, partial_sums_spec(profile, scalar, spec.outputs, spec.chunks))
    return Program(2, output_bytes, tuple(temps), tuple(ops))
