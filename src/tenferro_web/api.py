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
from .lowering.profile import AdapterProfile
from .lowering.program import Program
from .lowering.reduce import lower_sum
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
# call raises exactly what planning would. Owned tensors are keyed by their shapes, which fix
# their layouts, and the profile by its id: tuples and ints hash in C, which saved a chain of
# small dot_generals about 15% of its Python time in Pyodide.
DOT_PROGRAMS_MAX = 4096
_DOT_PROGRAMS: dict[tuple[Any, ...], tuple[Program, DType, tuple[int, ...]]] = {}


def dot_general_with_conj(lhs: TensorLike, rhs: TensorLike, lhs_contracting: Sequence[int],
                          rhs_contracting: Sequence[int], lhs_batch: Sequence[int] = (),
                          rhs_batch: Sequence[int] = (), lhs_conj: bool = False,
                          rhs_conj: bool = False) -> Tensor:
    """``dot_general`` with conjugation flags (ignored for F32, as conj is the identity)."""
    op = "dot_general"
    owned_key = cfg = None
    if type(lhs) is Tensor and type(rhs) is Tensor:
        # Owned tensors (an op chain's case) planned before for this kind of device: the
        # program, without Operands, planning or lowering. Anything amiss (another device, a
        # lost one, lost contents) takes the full path below, which raises it.
        device = lhs.allocation.device
        cfg = DotGeneralConfig.of(lhs_contracting, rhs_contracting, lhs_batch, rhs_batch)
        owned_key = (device.profile_id, lhs.dtype, lhs.shape, rhs.dtype, rhs.shape, cfg,
                     lhs_conj, rhs_conj)
        seen = _DOT_PROGRAMS.get(owned_key)
        if seen is not None and rhs.allocation.device is device and device.intact:
            return device.execute(op, seen[0], (lhs, rhs), seen[1], seen[2])
    a = operand(op, lhs, "lhs")
    b = operand(op, rhs, "rhs")
    if cfg is None:  # owned tensors' axes were checked above, before their operands
        cfg = DotGeneralConfig.of(lhs_contracting, rhs_contracting, lhs_batch, rhs_batch)
    signature = (a.dtype, a.layout, b.dtype, b.layout, cfg, lhs_conj, rhs_conj)
    seen = None
    if a.tensor is not None and b.tensor is not None:
        # Planned before for this kind of device: its program, without planning or lowering.
        seen = _DOT_PROGRAMS.get((a.tensor.allocation.device.profile_id, *signature))
    if seen is None:
        with host_operands_first(op, (a, b)):
            plan = plan_dot_general(a.dtype, a.layout, b.dtype, b.layout, cfg)
    device = resident_device(op, a, b)
    assert a.tensor is not None and b.tensor is not None
    if seen is None:
        complex_ = plan.dtype.is_complex  # conj is the identity on reals: one program for F32
        program = lower_dot_general(op, device.profile, plan, a.layout, b.layout,
                                    lhs_conj and complex_, rhs_conj and complex_)
        if len(_DOT_PROGRAMS) >= DOT_PROGRAMS_MAX:
            _DOT_PROGRAMS.clear()
        seen = _DOT_PROGRAMS[(device.profile_id, *signature)] = \
            (program, plan.dtype, plan.out_shape)
    if owned_key is not None:
        _DOT_PROGRAMS[owned_key] = seen
    return device.execute(op, seen[0], (a.tensor, b.tensor), seen[1], seen[2])


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
    signature = _einsum_signature(subscripts, operands, optimize)
    seen = None if signature is None else _EINSUM_CALLS.get(signature)
    if seen is not None:
        return _run_einsum(seen, operands[0].allocation.device, operands)
    plan, device = _plan_einsum_on_device(subscripts, operands, optimize)
    return _run_einsum(_lowered(signature, device, plan), device, operands)


async def einsum(subscripts: str, *operands: TensorLike,
                 optimize: str | Sequence[Any] = "auto") -> Tensor:
    """``await tw.einsum("ij,jk->ik", a, b)``: compiles the pipelines the plan needs without
    blocking the page (``createComputePipelineAsync``), then enqueues the steps."""
    plan, device = _plan_einsum_on_device(subscripts, operands, optimize)
    schedule = _lowered(_einsum_signature(subscripts, operands, optimize), device, plan)
    await device.prepare(set().union(*(run.program.kernels for run in schedule
                                       if isinstance(run, Run))))
    return _run_einsum(schedule, device, operands)


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


class View(NamedTuple):
    """A step that only views an earlier value."""

    src: int
    layout: ViewLayout


class Run(NamedTuple):
    """A step the device executes: its program over earlier values (and the ones tensor of
    ``ones_dtype``, for a sum), into a tensor of ``shape``."""

    program: Program
    sources: tuple[int, ...]
    ones_dtype: DType | None
    dtype: DType
    shape: tuple[int, ...]


Schedule = tuple[View | Run, ...]


@functools.lru_cache(maxsize=512)
def _schedule(profile: AdapterProfile, plan: EinsumPlan) -> Schedule:
    """The plan's steps as the device runs them: each lowered (limits checked) before the
    first is enqueued, and everything a run needs worked out once."""
    schedule: list[View | Run] = []
    for n, (step, program) in enumerate(zip(plan.steps, lower_einsum(profile, plan))):
        if isinstance(step, ViewStep):
            schedule.append(View(step.src, plan.layouts[len(plan.labels.inputs) + n]))
            continue
        assert program is not None
        sources = (step.lhs, step.rhs) if isinstance(step, DotStep) else (step.src,)
        schedule.append(Run(program, sources, plan.dtype if isinstance(step, SumStep) else None,
                            plan.dtype, tuple(plan.labels.sizes[lab] for lab in step.labels)))
    return tuple(schedule)


# Schedules by call signature (subscripts, optimize, adapter profile, operand dtypes and
# shapes) for calls on owned tensors: a repeated einsum without Operands or a plan lookup.
EINSUM_CALLS_MAX = 4096
_EINSUM_CALLS: dict[tuple[Any, ...], Schedule] = {}


def _einsum_signature(subscripts: str, operands: Sequence[Any], optimize: Any
                      ) -> tuple[Any, ...] | None:
    """The call's signature when every operand is an owned tensor of one intact device and
    ``optimize`` a name or a flag (an explicit path is planned each call), else None."""
    if (type(optimize) is not str and type(optimize) is not bool) or not operands \
            or type(subscripts) is not str:
        return None
    device = None
    for x in operands:
        if type(x) is not Tensor:
            return None
        if device is None:
            device = x.allocation.device
        elif x.allocation.device is not device:
            return None
    assert device is not None
    if not device.intact:
        return None
    # Shapes fix owned tensors' layouts, and hash in C (see _DOT_PROGRAMS).
    return (subscripts, optimize, device.profile_id, *(x.dtype for x in operands),
            *(x.shape for x in operands))


def _lowered(signature: tuple[Any, ...] | None, device: Device, plan: EinsumPlan) -> Schedule:
    """The plan's schedule for this device, kept under the call's signature where it has one."""
    schedule = _schedule(device.profile, plan)
    if signature is not None:
        if len(_EINSUM_CALLS) >= EINSUM_CALLS_MAX:
            _EINSUM_CALLS.clear()
        _EINSUM_CALLS[signature] = schedule
    return schedule


def _run_einsum(schedule: Schedule, device: Device, operands: Sequence[TensorLike]) -> Tensor:
    values: list[TensorLike] = list(operands)
    for step in schedule:
        if type(step) is View:
            src = values[step.src]
            values.append(TensorView(src.base if isinstance(src, TensorView) else src,
                                     step.layout))
            continue
        assert type(step) is Run
        inputs: list[Tensor] = []
        for i in step.sources:
            value = values[i]
            inputs.append(value.base if isinstance(value, TensorView) else value)
        if step.ones_dtype is not None:
            inputs.append(device.one(step.ones_dtype))
        values.append(device.execute(EINSUM, step.program, inputs, step.dtype, step.shape))
    result = values[-1]
    assert isinstance(result, Tensor)
    return result


# --- runtimes ------------------------------------------------------------------------------

_default_runtime: WebGpuRuntime | None = None


def forget_programs() -> None:
    """Drop every einsum plan and lowered program kept for reuse (by call signature here, by
    plan in the lowering), so that the next call plans and lowers afresh: what a benchmark or a
    test that changes a kernel table or a planner constant (``lowering.gemm.GPU_TILES``,
    ``planning.einsum.steps.BATCH_FIRST_OUTPUT_COST``, ...) calls after each change. They are
    read only when a call is planned or lowered."""
    _einsum_plan.cache_clear()
    _DOT_PROGRAMS.clear()
    _EINSUM_CALLS.clear()
    _schedule.cache_clear()
    for lowered in (lower_copy, lower_dot_general, lower_einsum, lower_sum):
        lowered.cache_clear()


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
