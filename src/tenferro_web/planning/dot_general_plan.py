"""Validation and lowering of ``dot_general`` to one batched GEMM.

Semantics (upstream §3.1): free axes keep ascending order, contracting and batch axes keep their
listed (paired) order, and the output is ``[lhs_free..., rhs_free..., batch...]`` compact
column-major. Each group flattens column-major in its order, so the problem becomes
``out[m + M*n + M*N*b] = sum_k L[m, k, b] * R[k, n, b]``.

An operand is bound in place when each of its groups (rows, columns, batch) can be addressed with
one stride, unless the batch is its consecutive group (numpy's batch-first labels, column-major):
neighbouring rows and columns then lie a batch apart, every load of the GEMM touches its own
memory sector, and a copy at bandwidth costs less. Otherwise, and then, it is packed on the GPU by
the shared copy planner into a dense ``[M, K, B]`` (lhs) or ``[K, N, B]`` (rhs) tensor first.
Never a CPU fallback.

Einsum may ask for the **batch-first** layout instead (``batch_first=True``): the output is
``[batch..., lhs_free..., rhs_free...]``, ``out[b + B*m + B*M*n]``, computed by a GEMM whose lanes
run along the batch. There an operand is bound in place when its batch is consecutive (stride 1)
or broadcast (stride 0), and packed batch-first (``[B, M, K]``, ``[B, K, N]``) otherwise.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..arguments import integers
from ..dtypes import DType
from ..errors import (
    AxisOutOfBounds,
    AxisRoleConflict,
    DTypeMismatch,
    DuplicateAxis,
    InvalidArgument,
    ShapeMismatch,
    UnsupportedDType,
)
from ..layout import ViewLayout, checked_product

OP = CONFIG_OP = "dot_general"  # messages start with the public op's name
GEMM_DTYPES = (DType.F32, DType.C32)


@dataclass(frozen=True)
class DotGeneralConfig:
    """StableHLO-style dimension numbers (batch axes go last in the output, as upstream)."""

    lhs_contracting: tuple[int, ...]
    rhs_contracting: tuple[int, ...]
    lhs_batch: tuple[int, ...] = ()
    rhs_batch: tuple[int, ...] = ()
    # Hashed once: a config keys the program cache at every dot_general.
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.lhs_contracting, self.rhs_contracting,
                                                self.lhs_batch, self.rhs_batch)))

    def __hash__(self) -> int:
        return self._hash

    @classmethod
    def of(cls, lhs_contracting: Sequence[int], rhs_contracting: Sequence[int],
           lhs_batch: Sequence[int] = (), rhs_batch: Sequence[int] = ()) -> DotGeneralConfig:
        """Axes are any integers (numpy's too), in lists, tuples or integer arrays."""
        axes = (lhs_contracting, rhs_contracting, lhs_batch, rhs_batch)
        # The common case, memoised: lists or tuples of Python ints (exactly: 1.0 and True
        # hash and compare equal to 1 and must not hit the cache).
        for group in axes:
            if type(group) is not list and type(group) is not tuple:
                return cls.checked(*axes)
            for axis in group:
                if type(axis) is not int:
                    return cls.checked(*axes)
        return _config(tuple(lhs_contracting), tuple(rhs_contracting), tuple(lhs_batch),
                       tuple(rhs_batch))

    @classmethod
    def checked(cls, lhs_contracting: Sequence[int], rhs_contracting: Sequence[int],
                lhs_batch: Sequence[int], rhs_batch: Sequence[int]) -> DotGeneralConfig:
        return cls(integers(CONFIG_OP, "lhs_contracting_dims", lhs_contracting),
                   integers(CONFIG_OP, "rhs_contracting_dims", rhs_contracting),
                   integers(CONFIG_OP, "lhs_batch_dims", lhs_batch),
                   integers(CONFIG_OP, "rhs_batch_dims", rhs_batch))


@functools.lru_cache(maxsize=1024)
def _config(*axes: tuple[int, ...]) -> DotGeneralConfig:
    return DotGeneralConfig.checked(*axes)


@dataclass(frozen=True)
class OperandBinding:
    """How the GEMM reads one operand: element (row, col, batch) at
    ``offset + row*row_stride + col*col_stride + batch*batch_stride``.

    ``pack_perm`` is set when the operand must first be copied into a dense tensor in the order
    (rows, cols, batch); the strides then describe that dense tensor.
    """

    offset: int
    row_stride: int
    col_stride: int
    batch_stride: int
    pack_perm: tuple[int, ...] | None = None


@dataclass(frozen=True, eq=False)
class DotGeneralPlan:
    dtype: DType
    out_shape: tuple[int, ...]
    m: int
    n: int
    k: int
    batch: int
    lhs: OperandBinding
    rhs: OperandBinding
    lhs_free: tuple[int, ...]
    rhs_free: tuple[int, ...]
    batch_first: bool = False

    @property
    def out_size(self) -> int:
        return self.m * self.n * self.batch

    @property
    def flops(self) -> int:
        """Real floating-point operations (a complex multiply-add counts 8)."""
        per_mac = 8 if self.dtype.is_complex else 2
        return per_mac * self.m * self.n * self.k * self.batch


def check_gemm_dtypes(lhs: DType, rhs: DType) -> DType:
    """Dtype dispatch comes first, as upstream: F32 and C32 run; mixed pairs mismatch."""
    if lhs != rhs:
        raise DTypeMismatch(OP, lhs, rhs)
    if lhs not in GEMM_DTYPES:
        why = "WGSL has no f64" if lhs in (DType.F64, DType.C64) else \
            "integer and bool products are not implemented"
        raise UnsupportedDType(
            OP, lhs,
            f"WebGPU GEMM runs F32 and C32 only ({why}); download the tensors and use numpy "
            "for this dtype, or convert to float32/complex64 before uploading",
        )
    return lhs


def _check_axes(rank: int, axes: tuple[int, ...], role: str) -> None:
    for a in axes:
        if not 0 <= a < rank:
            raise AxisOutOfBounds(CONFIG_OP, a, rank, role=role)


def _check_unique(axes: tuple[int, ...], role: str) -> None:
    seen = set()
    for a in axes:
        if a in seen:
            raise DuplicateAxis(CONFIG_OP, a, role)
        seen.add(a)


def validate_config(lhs_rank: int, rhs_rank: int, cfg: DotGeneralConfig) -> None:
    """Upstream steps 1-4: bounds, duplicates, role conflicts, count mismatch."""
    roles = (
        (lhs_rank, cfg.lhs_contracting, "lhs_contracting_dims"),
        (rhs_rank, cfg.rhs_contracting, "rhs_contracting_dims"),
        (lhs_rank, cfg.lhs_batch, "lhs_batch_dims"),
        (rhs_rank, cfg.rhs_batch, "rhs_batch_dims"),
    )
    for rank, axes, role in roles:
        _check_axes(rank, axes, role)
    for _, axes, role in roles:
        _check_unique(axes, role)
    for side, contracting, batch in (("lhs", cfg.lhs_contracting, cfg.lhs_batch),
                                     ("rhs", cfg.rhs_contracting, cfg.rhs_batch)):
        for a in contracting:
            if a in batch:
                raise AxisRoleConflict(CONFIG_OP, a, f"{side} contracting", f"{side} batch")
    if len(cfg.lhs_contracting) != len(cfg.rhs_contracting):
        raise InvalidArgument(
            CONFIG_OP, "dot_general_config",
            f"lhs/rhs contracting dim counts differ ({len(cfg.lhs_contracting)} vs "
            f"{len(cfg.rhs_contracting)})")
    if len(cfg.lhs_batch) != len(cfg.rhs_batch):
        raise InvalidArgument(
            CONFIG_OP, "dot_general_config",
            f"lhs/rhs batch dim counts differ ({len(cfg.lhs_batch)} vs {len(cfg.rhs_batch)})")


def group_stride(shape: tuple[int, ...], strides: tuple[int, ...],
                 axes: Sequence[int]) -> int | None:
    """One stride addressing the column-major flattening of ``axes``, or None if none exists.

    Exact condition: every kept axis continues the previous one (``s[a] == s[p] * d[p]``);
    size-1 axes never move the address, so they are ignored.
    """
    kept = [a for a in axes if shape[a] != 1]
    if not kept:
        return 0
    for prev, a in zip(kept, kept[1:]):
        if strides[a] != strides[prev] * shape[prev]:
            return None
    return strides[kept[0]]


def bind_operand(view: ViewLayout, rows: Sequence[int], cols: Sequence[int],
                 batch: Sequence[int], batch_first: bool = False) -> OperandBinding:
    row, col, bat = (group_stride(view.shape, view.strides, g) for g in (rows, cols, batch))
    nrows = checked_product(OP, [view.shape[a] for a in rows])
    ncols = checked_product(OP, [view.shape[a] for a in cols])
    if row is not None and col is not None and bat is not None:
        # Batch-first lanes want the batch consecutive (or broadcast); batch-last GEMMs refuse it.
        if bat in (0, 1) if batch_first else not (bat == 1 and nrows * ncols > 1):
            return OperandBinding(view.offset, row, col, bat)
    if batch_first:
        nbatch = checked_product(OP, [view.shape[a] for a in batch])
        return OperandBinding(0, nbatch, nbatch * nrows, 1, pack_perm=(*batch, *rows, *cols))
    return OperandBinding(0, 1, nrows, nrows * ncols, pack_perm=(*rows, *cols, *batch))


@functools.lru_cache(maxsize=4096)
def plan_dot_general(lhs_dtype: DType, lhs: ViewLayout, rhs_dtype: DType, rhs: ViewLayout,
                     cfg: DotGeneralConfig, batch_first: bool = False) -> DotGeneralPlan:
    dtype = check_gemm_dtypes(lhs_dtype, rhs_dtype)
    validate_config(lhs.rank, rhs.rank, cfg)
    for lc, rc in zip(cfg.lhs_contracting, cfg.rhs_contracting):
        if lhs.shape[lc] != rhs.shape[rc]:
            raise ShapeMismatch(
                OP, "ContractedDimensions",
                f"lhs axis {lc} has size {lhs.shape[lc]}, rhs axis {rc} has size {rhs.shape[rc]}",
                lhs_axis=lc, lhs_size=lhs.shape[lc], rhs_axis=rc, rhs_size=rhs.shape[rc])
    for lb, rb in zip(cfg.lhs_batch, cfg.rhs_batch):
        if lhs.shape[lb] != rhs.shape[rb]:
            raise ShapeMismatch(
                OP, "IncompatibleShapes",
                f"lhs batch axis {lb} has size {lhs.shape[lb]}, rhs batch axis {rb} has size "
                f"{rhs.shape[rb]}", lhs=[lhs.shape[lb]], rhs=[rhs.shape[rb]])

    lhs_free = tuple(a for a in range(lhs.rank)
                     if a not in cfg.lhs_contracting and a not in cfg.lhs_batch)
    rhs_free = tuple(a for a in range(rhs.rank)
                     if a not in cfg.rhs_contracting and a not in cfg.rhs_batch)
    m = checked_product(OP, [lhs.shape[a] for a in lhs_free])
    n = checked_product(OP, [rhs.shape[a] for a in rhs_free])
    k = checked_product(OP, [lhs.shape[a] for a in cfg.lhs_contracting])
    b = checked_product(OP, [lhs.shape[a] for a in cfg.lhs_batch])
    checked_product(OP, [m, n, b])
    free = tuple(lhs.shape[a] for a in lhs_free) + tuple(rhs.shape[a] for a in rhs_free)
    batch = tuple(lhs.shape[a] for a in cfg.lhs_batch)
    return DotGeneralPlan(
        dtype=dtype, out_shape=batch + free if batch_first else free + batch, m=m, n=n, k=k,
        batch=b, lhs=bind_operand(lhs, lhs_free, cfg.lhs_contracting, cfg.lhs_batch, batch_first),
        rhs=bind_operand(rhs, cfg.rhs_contracting, rhs_free, cfg.rhs_batch, batch_first),
        lhs_free=lhs_free, rhs_free=rhs_free, batch_first=batch_first,
    )
