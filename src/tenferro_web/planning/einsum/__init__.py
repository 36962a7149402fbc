"""einsum in three pure stages: parse (numpy's syntax), paths (opt_einsum), steps (views for
diagonals and broadcasting, sums of one-operand labels, dot_general steps with folded
permutations)."""

from .parse import OP, Subscripts, parse_subscripts
from .paths import choose_path
from .steps import (
    CopyStep,
    DotStep,
    EinsumPlan,
    Step,
    SumStep,
    TransposeStep,
    ViewStep,
    plan_einsum,
)

__all__ = ["OP", "Subscripts", "parse_subscripts", "choose_path", "CopyStep", "DotStep",
           "EinsumPlan", "Step", "SumStep", "TransposeStep", "ViewStep", "plan_einsum"]
