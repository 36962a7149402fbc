"""Running an einsum plan: each step is one dot_general, transpose or copy on the runtime."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..planning.copy_plan import plan_copy
from ..planning.dot_general_plan import plan_dot_general
from ..planning.einsum_plan import (
    OP,
    CopyStep,
    DotStep,
    DropAxes,
    EinsumPlan,
    TransposeStep,
    plan_einsum,
)
from .kernels import KernelKey
from .ops import Operand, dot_general, materialize, operand, resident_state
from .runtime import DeviceState
from .selection import KernelProfile, copy_launch, gemm_launch, reduce_launch, split_k_chunks
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
    await state.prepare_pipelines(sorted(plan_kernels(state.profile, plan), key=str))
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


def plan_kernels(profile: KernelProfile, plan: EinsumPlan) -> set[KernelKey]:
    """Every pipeline running ``plan`` will use, from the same selectors the ops call."""
    launches = set()
    itemsize = plan.dtype.itemsize
    for step in plan.steps:
        if isinstance(step, DotStep):
            lhs, rhs = plan.layouts[step.lhs], plan.layouts[step.rhs]
            dg = plan_dot_general(plan.dtype, lhs, plan.dtype, rhs, step.config)
            for binding, layout in ((dg.lhs, lhs), (dg.rhs, rhs)):
                if binding.pack_perm is not None:
                    copy = plan_copy(layout.permuted(OP, binding.pack_perm), OP)
                    launches.add(copy_launch(profile, copy, itemsize))
            if dg.out_size and dg.k:
                chunks = split_k_chunks(dg)
                launches.add(gemm_launch(profile, dg, dg.lhs, dg.rhs, chunks=chunks))
                if chunks > 1:
                    launches.add(reduce_launch(dg.dtype, dg.out_size, chunks))
        elif isinstance(step, TransposeStep | CopyStep):
            layout = plan.layouts[step.src]
            if isinstance(step, TransposeStep):
                layout = layout.permuted(OP, step.perm)
            launches.add(copy_launch(profile, plan_copy(layout, OP), itemsize))
    return {launch.key for launch in launches if launch is not None}


def _run(plan: EinsumPlan, state: DeviceState,
         operands: Sequence[Tensor | TensorView]) -> Tensor:
    values: list[Tensor | TensorView] = list(operands)
    for step in plan.steps:
        if isinstance(step, DropAxes):
            src = values[step.src]
            layout = plan.layouts[len(values)]
            base = src.base if isinstance(src, TensorView) else src
            values.append(TensorView(base, layout))
        elif isinstance(step, DotStep):
            c = step.config
            values.append(dot_general(values[step.lhs], values[step.rhs], c.lhs_contracting,
                                      c.rhs_contracting, c.lhs_batch, c.rhs_batch))
        else:
            src = values[step.src]
            view = src if isinstance(src, TensorView) else TensorView(src, src.layout)
            layout = view.layout.permuted(OP, step.perm) if isinstance(step, TransposeStep) \
                else view.layout
            values.append(materialize(state, OP, view.base, layout))
    return values[-1]
