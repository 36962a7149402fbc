"""Argument normalisation, one place for every public entry point.

Integers are whatever ``operator.index`` accepts (Python and numpy integers), never bools or
floats; sequences of them may be lists, tuples or integer arrays; host data must make a regular
numpy array. Anything else is an ``InvalidArgument`` naming the op, the argument and the value,
raised before the op touches a tensor.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .errors import InvalidArgument


def integer(op: str, argument: str, value: Any) -> int:
    if isinstance(value, bool | np.bool_):
        raise InvalidArgument(op, argument, f"{value!r} is a bool, not an integer")
    try:
        return operator.index(value)
    except TypeError:
        raise InvalidArgument(op, argument, f"{value!r} is not an integer") from None


def integers(op: str, argument: str, values: Any) -> tuple[int, ...]:
    """A sequence of integers (a list, a tuple, a 1-D integer array)."""
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise InvalidArgument(op, argument, f"{values!r} is not a sequence of integers")
    return tuple(integer(op, argument, v) for v in values)


def host_array(op: str, value: Any) -> np.ndarray:
    """``numpy.asarray(value)``, or a typed error when numpy cannot make a regular array of it
    (ragged nesting). Its dtype is the caller's to check (UnsupportedDType names it)."""
    try:
        return np.asarray(value)
    except (ValueError, TypeError) as error:
        raise InvalidArgument(op, "array", f"numpy cannot make a regular array of it ({error}); "
                                           "give equal-length rows of numbers") from None
