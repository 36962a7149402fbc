"""Kernel parameters as 32-bit words, range-checked where they are made.

Every kernel reads its parameters as ``array<u32>`` and reinterprets signed ones with
``bitcast<i32>``. A value that does not fit its word would wrap silently on the GPU, so lowering
refuses it with ``LimitExceeded`` naming the parameter, before anything is enqueued.
"""

from __future__ import annotations

from ..errors import LimitExceeded

U32_MAX = 2**32 - 1
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
F32_ONE, F32_MINUS_ONE = 0x3F800000, 0xBF800000
_ADVICE = "split the problem into smaller tensors"


def u32(op: str, name: str, value: int) -> int:
    """An unsigned parameter (a count, an extent, a length)."""
    if not 0 <= value <= U32_MAX:
        raise LimitExceeded(op, f"32-bit kernel parameter {name!r}", value, U32_MAX, _ADVICE)
    return value


def i32(op: str, name: str, value: int) -> int:
    """A signed parameter (an element offset or stride), as its two's-complement word."""
    if not I32_MIN <= value <= I32_MAX:
        raise LimitExceeded(op, f"32-bit signed kernel parameter {name!r}", value, I32_MAX,
                            _ADVICE)
    return value & U32_MAX


def check_index_span(op: str, what: str, low: int, high: int) -> None:
    """Kernels compute element indices in i32: everything an operand touches must fit."""
    if low < 0 or high > I32_MAX:
        raise LimitExceeded(op, f"32-bit element index of {what}", high if low >= 0 else low,
                            I32_MAX, _ADVICE)


def sign_bits(conj: bool) -> int:
    """The f32 bit pattern of the conjugation sign a GEMM kernel multiplies imaginary parts by."""
    return F32_MINUS_ONE if conj else F32_ONE
