"""The public operations, thin: each resolves its arguments, plans (pure), finds the one device
its operands live on, lowers the plan to a Program for that device's profile, and has the
device execute it. Upstream's order holds: dtype dispatch and argument validation first (the
planners), then residency, then work appended to the pending command stream.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .dtypes import DType
from .errors import (
    DTypeMismatch,
    ForeignDomain,
    InvalidArgument,
    RuntimeStateError,
    UnsupportedDType,
)
from .layout import ViewLayout, dense_layout
from .lowering.copy import lower_copy
from .lowering.einsum import lower_einsum
from .lowering.gemm import lower_dot_general
from .lowering.program import Program
from .planning.copy_plan import COPY_DTYPES
from .planning.dot_general_plan import DotGeneralConfig, plan_dot_general
from .planning.einsum import OP as EINSUM
from .planning.einsum import DotStep, EinsumPlan, SumStep, ViewStep, plan_einsum
from .runtime.device import Device
from .runtime.runtime import WebGpuRuntime
from .runtime.tensor import Tensor, TensorView

TensorLike = Tensor | TensorView


class Operand(NamedTuple):
    """An op argument: its dtype and layout, and the device tensor if it has one (a tuple:
    made twice per op, so cheap to make)."""

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


def resident_device(op: str, *operands: Operand) -> Device:
    """Upstream ``ensure_resident_on_runtime``: device tensors of one allocation domain."""
    device: Device | None = None
    for o in operands:
        if o.tensor is None:
            raise RuntimeStateError(
                op, f"expected a WebGPU tensor, got host {o.host_type}; upload it first with "
                    "runtime.upload(array)")
        if device is None:
            device = o.tensor.allocation.device
        elif o.tensor.allocation.device is not device:
            raise ForeignDomain(op, device.domain, o.tensor.allocation.device.domain)
    assert device is not None
    device.check_usable(op)
    if device.lost_streams:
        for o in operands:
            assert o.tensor is not None
            device.check_contents(op, o.tensor)
    return device


class host_operands_first:  # noqa: N801 (used as a function: ``with host_operands_first(...)``)
    """Planning checks dtypes before residency, as upstream; but a dtype error about a host
    array says little: what the caller must do is upload it, so that is the error raised.
    (A class, not a generator: it wraps every dot_general and einsum.)"""

    __slots__ = ("op", "operands")

    def __init__(self, op: str, operands: Sequence[Operand]):
        self.op, self.operands = op, operands

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: object) -> None:
        if kind is not None and issubclass(kind, DTypeMismatch | UnsupportedDType):
            resident_device(self.op, *self.operands)


def check_copy_dtype(op: str, dtype: DType) -> None:
    if dtype not in COPY_DTYPES:
        raise UnsupportedDType(
            op, dtype, "WebGPU layout copies run F32, I32, C32 and Bool; download the tensor and "
                       "use numpy.transpose / numpy.ascontiguousarray for this dtype")


def _materialize(op: str, x: TensorLike, perm: Sequence[int] | None, permute: bool) -> Tensor:
    src = operand(op, x, "input")
    check_copy_dtype(op, src.dtype)
    layout = src.layout.permuted(op, perm) if permute else src.layout
    device = resident_device(op, src)
    assert src.tensor is not None
    return device.execute(op, lower_copy(op, device.profile, layout, src.dtype), (src.tensor,),
                          src.dtype, layout.shape)


def to_contiguous(x: TensorLike) -> Tensor:
    """Materialise a strided view (signed strides, offset) into a fresh compact tensor on the
    same device and allocation domain, with a new allocation id."""
    return _materialize("to_contiguous", x, None, permute=False)


def transpose(x: TensorLike, perm: Sequence[int] | None = None) -> Tensor:
    """``numpy.transpose`` into a fresh compact column-major tensor."""
    return _materialize("transpose", x, perm, permute=True)


# dot_general's programs by call signature (adapter profile, operand dtypes and views, dimension
# numbers, conjugation): one lookup per repeated call instead of a plan and a lowering lookup
# (about 10% of its dispatch time in Pyodide). Only successful plans are kept, so a repeated
# call raises exactly what planning would.
DOT_PROGRAMS_MAX = 4096
_DOT_PROGRAMS: dict[tuple[Any, ...], tuple[Program, DType, tuple[int, ...]]] = {}


def dot_general_with_conj(lhs: TensorLike, rhs: TensorLike, lhs_contracting: Sequence[int],
                          rhs_contracting: Sequence[int], lhs_batch: Sequence[int] = (),
                          rhs_batch: Sequence[int] = (), lhs_conj: bool = False,
                          rhs_conj: bool = False) -> Tensor:
    """``dot_general`` with conjugation flags (ignored for F32, as conj is the identity)."""
    op = "dot_general"
    a = operand(op, lhs, "lhs")
    b = operand(op, rhs, "rhs")
    cfg = DotGeneralConfig.of(lhs_contracting, rhs_contracting, lhs_batch, rhs_batch)
    signature = (a.dtype, a.layout, b.dtype, b.layout, cfg, lhs_conj, rhs_conj)
    if a.tensor is not None and b.tensor is not None:
        # Planned before for this kind of device: its program, without planning or lowering.
        seen = _DOT_PROGRAMS.get((a.tensor.allocation.device.profile, signature))
        if seen is not None:
            device = resident_device(op, a, b)
            return device.execute(op, seen[0], (a.tensor, b.tensor), seen[1], seen[2])
    with host_operands_first(op, (a, b)):
        plan = plan_dot_general(a.dtype, a.layout, b.dtype, b.layout, cfg)
    device = resident_device(op, a, b)
    assert a.tensor is not None and b.tensor is not None
    complex_ = plan.dtype.is_complex  # conj is the identity on reals: one program for F32
    program = lower_dot_general(op, device.profile, plan, a.layout, b.layout,
                                lhs_conj and complex_, rhs_conj and complex_)
    if len(_DOT_PROGRAMS) >= DOT_PROGRAMS_MAX:
        _DOT_PROGRAMS.clear()
    _DOT_PROGRAMS[device.profile, signature] = (program, plan.dtype, plan.out_shape)
    return device.execute(op, program, (a.tensor, b.tensor), plan.dtype, plan.out_shape)


def dot_general(lhs: TensorLike, rhs: TensorLike, lhs_contracting: Sequence[int],
                rhs_contracting: Sequence[int], lhs_batch: Sequence[int] = (),
                rhs_batch: Sequence[int] = ()) -> Tensor:
    """Contract ``lhs`` and ``rhs``; output ``[lhs_free..., rhs_free..., batch...]``."""
    return dot_general_with_conj(lhs, rhs, lhs_contracting, rhs_contracting, lhs_batch,
                                 rhs_batch)


# --- einsum ------------------------------------------------------------------------------


def einsum_path(subscripts: str, *operands: Any, optimize: str | Sequence[Any] = "auto"
                ) -> tuple[list[Any], EinsumPlan]:
    """Like ``numpy.einsum_path``: the chosen path (numpy's format) and the plan, whose
    ``str()`` is a report with FLOP estimates. Operands may be device tensors, views or numpy
    arrays (only their shapes and dtypes are read)."""
    plan = _plan_einsum(subscripts, _einsum_operands(operands), optimize)
    return plan.numpy_path, plan


def einsum_sync(subscripts: str, *operands: TensorLike,
                optimize: str | Sequence[Any] = "auto") -> Tensor:
    """Enqueue the contraction and return its device tensor (no JSPI needed: nothing waits)."""
    plan, device = _plan_einsum_on_device(subscripts, operands, optimize)
    return _run_einsum(plan, device, operands, lower_einsum(device.profile, plan))


async def einsum(subscripts: str, *operands: TensorLike,
                 optimize: str | Sequence[Any] = "auto") -> Tensor:
    """``await tw.einsum("ij,jk->ik", a, b)``: compiles the pipelines the plan needs without
    blocking the page (``createComputePipelineAsync``), then enqueues the steps."""
    plan, device = _plan_einsum_on_device(subscripts, operands, optimize)
    programs = lower_einsum(device.profile, plan)
    await device.prepare(set().union(*(p.kernels for p in programs if p is not None)))
    return _run_einsum(plan, device, operands, programs)


def _plan_einsum(subscripts: str, ops: Sequence[Operand], optimize: str | Sequence[Any]
                 ) -> EinsumPlan:
    """The plan of this call signature: made once (parsing and the path search cost far more
    than enqueueing), unless ``optimize`` is an unhashable explicit path."""
    layouts, dtypes = tuple(o.layout for o in ops), tuple(o.dtype for o in ops)
    try:
        hash((subscripts, optimize))
    except TypeError:
        return plan_einsum(subscripts, layouts, dtypes, optimize)
    # The types are part of the key: True == 1 and 1 == 1.0, but only True is a valid optimize.
    return _einsum_plan(subscripts, type(subscripts), layouts, dtypes, optimize, type(optimize))


@functools.lru_cache(maxsize=512)
def _einsum_plan(subscripts: str, _: type, layouts: tuple[ViewLayout, ...],
                 dtypes: tuple[DType, ...], optimize: str | Sequence[Any], __: type
                 ) -> EinsumPlan:
    return plan_einsum(subscripts, layouts, dtypes, optimize)


def _einsum_operands(operands: Sequence[Any]) -> list[Operand]:
    return [operand(EINSUM, x, f"operand {i}") for i, x in enumerate(operands)]


def _plan_einsum_on_device(subscripts: str, operands: Sequence[Any],
                           optimize: str | Sequence[Any]) -> tuple[EinsumPlan, Device]:
    """Plan first, then check residency (the order dot_general keeps)."""
    ops = _einsum_operands(operands)
    with host_operands_first(EINSUM, ops):
        plan = _plan_einsum(subscripts, ops, optimize)
    return plan, resident_device(EINSUM, *ops)


def _run_einsum(plan: EinsumPlan, device: Device, operands: Sequence[TensorLike],
                programs: Sequence[Program | None]) -> Tensor:
    """Every step was lowered (and its limits checked) before the first one is enqueued."""
    values: list[TensorLike] = list(operands)
    for step, program in zip(plan.steps, programs):
        if isinstance(step, ViewStep):
            src = values[step.src]
            base = src.base if isinstance(src, TensorView) else src
            values.append(TensorView(base, plan.layouts[len(values)]))
            continue
        assert program is not None
        sources = [values[i] for i in
                   ((step.lhs, step.rhs) if isinstance(step, DotStep) else (step.src,))]
        inputs = [v.base if isinstance(v, TensorView) else v for v in sources]
        if isinstance(step, SumStep):
            inputs.append(device.one(plan.dtype))
        shape = tuple(plan.labels.sizes[lab] for lab in step.labels)
        values.append(device.execute(EINSUM, program, inputs, plan.dtype, shape))
    result = values[-1]
    assert isinstance(result, Tensor)
    return result


# --- runtimes ------------------------------------------------------------------------------

_default_runtime: WebGpuRuntime | None = None


async def webgpu_available() -> bool:
    """True when this context offers a WebGPU adapter (never raises)."""
    from .transport.browser import BrowserTransport

    return await BrowserTransport.available()


async def default_runtime() -> WebGpuRuntime:
    """One shared runtime per interpreter, created on first use (again after a close or a
    device loss)."""
    global _default_runtime
    device = _default_runtime.device if _default_runtime is not None else None
    if _default_runtime is None or device is None or device.closed or device.lost:
        _default_runtime = await WebGpuRuntime.create()
    return _default_runtime
