"""Lowering of an einsum plan: one Program per step (None for the steps that are only views);
sums are lowered by reduce.py (their second operand is the device's one-element ones)."""

from __future__ import annotations

import functools

from ..planning.dot_general_plan import plan_dot_general
from ..planning.einsum import OP, DotStep, EinsumPlan, SumStep, TransposeStep, ViewStep
from .copy import lower_copy
from .gemm import lower_dot_general
from .profile import AdapterProfile
from .program import Program
from .reduce import lower_sum


@functools.lru_cache(maxsize=512)
def lower_einsum(profile: AdapterProfile, plan: EinsumPlan) -> tuple[Program | None, ...]:
    programs: list[Program | None] = []
    for step in plan.steps:
        if isinstance(step, ViewStep):
            programs.append(None)
        elif isinstance(step, SumStep):
            src = plan.layouts[step.src]
            dg = plan_dot_general(plan.dtype, src, plan.dtype, step.ones, step.config)
            programs.append(lower_sum(OP, profile, dg, src, step.ones))
        elif isinstance(step, DotStep):
            lhs, rhs = plan.layouts[step.lhs], plan.layouts[step.rhs]
            dg = plan_dot_general(plan.dtype, lhs, plan.dtype, rhs, step.config,
                                  step.batch_first)
            programs.append(lower_dot_general(OP, profile, dg, lhs, rhs))
        else:
            layout = plan.layouts[step.src]
            if isinstance(step, TransposeStep):
                layout = layout.permuted(OP, step.perm)
            programs.append(lower_copy(OP, profile, layout, plan.dtype))
    return tuple(programs)
