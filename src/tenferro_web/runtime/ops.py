"""Executing planned ops on a runtime: upload, copies (compaction, transpose, packing), GEMM.

Each op follows upstream's order: dtype dispatch, argument validation (pure planners), then
residency on one runtime, then dispatches appended to the pending command stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..dtypes import DType
from ..errors import ForeignDomain, InvalidArgument, RuntimeStateError, UnsupportedDType
from ..layout import ViewLayout, dense_layout
from ..lowering.copy import lower_copy
from ..lowering.gemm import lower_dot_general
from ..planning.copy_plan import COPY_DTYPES
from ..planning.dot_general_plan import DotGeneralConfig, plan_dot_general
from .runtime import DeviceState
from .tensor import Tensor, TensorView


@dataclass(frozen=True)
class Operand:
    """An op argument: its dtype and layout, and the device tensor if it has one."""

    dtype: DType
    layout: ViewLayout
    tensor: Tensor | None
    host_type: str = ""


def operand(op: str, value: Any, argument: str) -> Operand:
    if isinstance(value, Tensor):
        return Operand(value.dtype, value.layout, value)
    if isinstance(value, TensorView):
        return Operand(value.dtype, value.layout, value.base)
    if isinstance(value, np.ndarray | np.generic):
        shape = tuple(np.shape(value))
        return Operand(DType.from_numpy(np.asarray(value).dtype, op), dense_layout(shape), None,
                       type(value).__module__ + "." + type(value).__name__)
    raise InvalidArgument(op, argument, f"expected a tenferro_web Tensor or TensorView, got "
                                        f"{type(value).__name__}")


def resident_state(op: str, *operands: Operand) -> DeviceState:
    """Upstream ``ensure_resident_on_runtime``: device tensors of one allocation domain."""
    for o in operands:
        if o.tensor is None:
            raise RuntimeStateError(
                op, f"expected a WebGPU tensor, got host {o.host_type}; upload it first with "
                    "runtime.upload(array)")
    state = operands[0].tensor.allocation.state
    for o in operands[1:]:
        other = o.tensor.allocation.state
        if other.domain != state.domain:
            raise ForeignDomain(op, state.domain, other.domain)
    state.check_usable(op)
    return state


def check_copy_dtype(op: str, dtype: DType) -> None:
    if dtype not in COPY_DTYPES:
        raise UnsupportedDType(
            op, dtype, "WebGPU layout copies run F32, I32, C32 and Bool; download the tensor and "
                       "use numpy.transpose / numpy.ascontiguousarray for this dtype")


# --- copies --------------------------------------------------------------------------------


def materialize(state: DeviceState, op: str, src: Tensor, layout: ViewLayout) -> Tensor:
    """A fresh compact tensor holding the view ``layout`` of ``src`` (one planner for all)."""
    program = lower_copy(op, state.profile, layout, src.dtype)
    return state.execute(op, program, (src,), src.dtype, layout.shape)


def to_contiguous(x: Tensor | TensorView) -> Tensor:
    """Materialise a strided view (signed strides, offset) into a fresh compact tensor on the
    same device and allocation domain, with a new allocation id."""
    op = "webgpu_to_contiguous"
    src = operand(op, x, "input")
    check_copy_dtype(op, src.dtype)
    state = resident_state(op, src)
    return materialize(state, op, src.tensor, src.layout)


def transpose(x: Tensor | TensorView, perm: Sequence[int] | None = None) -> Tensor:
    """``numpy.transpose`` into a fresh compact column-major tensor."""
    op = "webgpu_transpose"
    src = operand(op, x, "input")
    check_copy_dtype(op, src.dtype)
    layout = src.layout.permuted(op, perm)
    state = resident_state(op, src)
    return materialize(state, op, src.tensor, layout)


def upload(state: DeviceState, array: Any) -> Tensor:
    op = "upload"
    state.check_usable(op)
    host = np.asarray(array)
    dtype = DType.from_numpy(host.dtype, op)
    if host.dtype != dtype.numpy:
        host = host.astype(dtype.numpy)  # big-endian input
    if host.ndim >= 2 and host.flags.c_contiguous and not host.flags.f_contiguous \
            and dtype in COPY_DTYPES:
        # Row-major bytes are the column-major tensor of the reversed shape: send them as they
        # are and reorder once, on the GPU.
        raw = state.allocate(op, dtype, host.shape[::-1], for_upload=True)
        state.write(raw, host.reshape(-1))
        return materialize(state, op, raw, raw.layout.permuted(op, None))
    out = state.allocate(op, dtype, host.shape, for_upload=True)
    if host.size:
        state.write(out, np.asfortranarray(host).reshape(-1, order="F"))
    return out


# --- dot_general ---------------------------------------------------------------------------


def dot_general_with_conj(lhs: Tensor | TensorView, rhs: Tensor | TensorView,
                          lhs_contracting: Sequence[int], rhs_contracting: Sequence[int],
                          lhs_batch: Sequence[int] = (), rhs_batch: Sequence[int] = (),
                          lhs_conj: bool = False, rhs_conj: bool = False) -> Tensor:
    """``dot_general`` with conjugation flags (ignored for F32, as conj is the identity)."""
    op = "webgpu_dot_general"
    a = operand(op, lhs, "lhs")
    b = operand(op, rhs, "rhs")
    cfg = DotGeneralConfig.of(lhs_contracting, rhs_contracting, lhs_batch, rhs_batch)
    plan = plan_dot_general(a.dtype, a.layout, b.dtype, b.layout, cfg)
    state = resident_state(op, a, b)
    complex_ = plan.dtype.is_complex  # conj is the identity on reals: one program for F32
    program = lower_dot_general(op, state.profile, plan, a.layout, b.layout,
                                lhs_conj and complex_, rhs_conj and complex_)
    return state.execute(op, program, (a.tensor, b.tensor), plan.dtype, plan.out_shape)


def dot_general(lhs: Tensor | TensorView, rhs: Tensor | TensorView,
                lhs_contracting: Sequence[int], rhs_contracting: Sequence[int],
                lhs_batch: Sequence[int] = (), rhs_batch: Sequence[int] = ()) -> Tensor:
    """Contract ``lhs`` and ``rhs``; output ``[lhs_free..., rhs_free..., batch...]``."""
    return dot_general_with_conj(lhs, rhs, lhs_contracting, rhs_contracting, lhs_batch,
                                 rhs_batch)
