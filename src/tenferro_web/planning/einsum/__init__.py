"""einsum in three pure stages: parse (numpy's syntax), paths (opt_einsum), steps (lowering to
dot_general steps with folded permutations)."""

from .parse import OP, Subscripts, parse_subscripts
from .paths import choose_path
from .steps import CopyStep, DotStep, DropAxes, EinsumPlan, Step, TransposeStep, plan_einsum

__all__ = ["OP", "Subscripts", "parse_subscripts", "choose_path", "CopyStep", "DotStep",
           "DropAxes", "EinsumPlan", "Step", "TransposeStep", "plan_einsum"]
