"""Running an einsum plan: each step's lowered Program on the runtime (views need none)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..lowering.einsum import lower_einsum
from ..planning.einsum_plan import OP, DotStep, DropAxes, EinsumPlan, plan_einsum
from .ops import Operand, operand, resident_state
from .runtime import DeviceState
from .tensor import Tensor, TensorView


def einsum_path(subscripts: str, *operands: Any, optimize: str | Sequence = "auto"
                ) -> tuple[list, EinsumPlan]:
    """Like ``numpy.einsum_path``: the chosen path (numpy's format) and the plan, whose
    ``str()`` is a report with FLOP estimates. Operands may be device tensors, views or numpy
    arrays (only their shapes and dtypes are read)."""
    plan, _ = _plan(subscripts, operands, optimize)
    return plan.numpy_path, plan


def einsum_sync(subscripts: str, *operands: Tensor | TensorView,
                optimize: str | Sequence = "auto") -> Tensor:
    """Enqueue the contraction and return its device tensor (no JSPI needed: nothing waits)."""
    plan, state = _plan_on_device(subscripts, operands, optimize)
    return _run(plan, state, operands)


async def einsum(subscripts: str, *operands: Tensor | TensorView,
                 optimize: str | Sequence = "auto") -> Tensor:
    """``await tw.einsum("ij,jk->ik", a, b)``: compiles the pipelines the plan needs without
    blocking the page (``createComputePipelineAsync``), then enqueues the steps."""
    plan, state = _plan_on_device(subscripts, operands, optimize)
    keys = set().union(*(p.kernels for p in lower_einsum(state.profile, plan) if p is not None))
    await state.prepare_pipelines(sorted(keys, key=str))
    return _run(plan, state, operands)


def _plan(subscripts: str, operands: Sequence[Any], optimize
          ) -> tuple[EinsumPlan, list[Operand]]:
    ops = [operand(OP, x, f"operand {i}") for i, x in enumerate(operands)]
    plan = plan_einsum(subscripts, [o.layout for o in ops], [o.dtype for o in ops], optimize)
    return plan, ops


def _plan_on_device(subscripts: str, operands: Sequence[Any], optimize
                    ) -> tuple[EinsumPlan, DeviceState]:
    """Plan first, then check residency (the order dot_general keeps)."""
    plan, ops = _plan(subscripts, operands, optimize)
    return plan, resident_state(OP, *ops)


def _run(plan: EinsumPlan, state: DeviceState,
         operands: Sequence[Tensor | TensorView]) -> Tensor:
    """Every step is lowered (and its limits checked) before the first one is enqueued."""
    programs = lower_einsum(state.profile, plan)
    values: list[Tensor | TensorView] = list(operands)
    for step, program in zip(plan.steps, programs):
        if isinstance(step, DropAxes):
            src = values[step.src]
            base = src.base if isinstance(src, TensorView) else src
            values.append(TensorView(base, plan.layouts[len(values)]))
            continue
        sources = (step.lhs, step.rhs) if isinstance(step, DotStep) else (step.src,)
        inputs = [values[i].base if isinstance(values[i], TensorView) else values[i]
                  for i in sources]
        shape = tuple(plan.labels.sizes[lab] for lab in step.labels)
        values.append(state.execute(OP, program, inputs, plan.dtype, shape))
    return values[-1]
