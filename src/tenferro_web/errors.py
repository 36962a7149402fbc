"""The error taxonomy, mirroring upstream's ``Error`` kinds as Python exception classes.

Every error carries the ``op`` that raised it and a ``kind`` (``ErrorKind``) so callers can catch
a whole family (``except ValidationError``) or one precise reason (``except AxisOutOfBounds``).
Messages start with the op, as upstream's Display does.
"""

from __future__ import annotations

import enum
from typing import Any


class ErrorKind(enum.Enum):
    VALIDATION = "validation"
    UNSUPPORTED = "unsupported"
    RUNTIME_STATE = "runtime_state"
    BACKEND_FAILURE = "backend_failure"


def _restore(cls: type[TenferroError], args: tuple[object, ...],
             state: dict[str, object]) -> TenferroError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class TenferroError(Exception):
    """Base of every error this package raises on purpose."""

    kind: ErrorKind

    def __init__(self, op: str, message: str):
        self.op = op
        self.message = message
        super().__init__(f"{op}: {message}")

    def renamed(self, op: str) -> TenferroError:
        """The same error, raised by ``op`` (a public op built on another one)."""
        return _restore(type(self), (f"{op}: {self.message}",), {**self.__dict__, "op": op})

    def __reduce__(self) -> tuple[object, ...]:
        # Subclasses take their own arguments; pickle the finished error instead (tracebacks
        # cross from Pyodide to the host test runner this way, and multiprocessing users too).
        return (_restore, (type(self), self.args, self.__dict__))


# --- Validation: the arguments are wrong ---------------------------------------------------


class ValidationError(TenferroError):
    kind = ErrorKind.VALIDATION


class RankMismatch(ValidationError):
    def __init__(self, op: str, expected: int, actual: int, what: str = "rank"):
        self.expected, self.actual = expected, actual
        super().__init__(op, f"{what} mismatch: expected {expected}, got {actual}")


class InvalidArgument(ValidationError):
    def __init__(self, op: str, argument: str, message: str):
        self.argument = argument
        super().__init__(op, f"invalid argument {argument!r}: {message}")


class AxisOutOfBounds(ValidationError):
    def __init__(self, op: str, axis: int, rank: int, role: str = "axis"):
        self.axis, self.rank, self.role = axis, rank, role
        super().__init__(op, f"{role} axis {axis} is out of bounds for rank {rank}")


class DuplicateAxis(ValidationError):
    def __init__(self, op: str, axis: int, role: str):
        self.axis, self.role = axis, role
        super().__init__(op, f"axis {axis} appears more than once in {role}")


class AxisRoleConflict(ValidationError):
    def __init__(self, op: str, axis: int, first_role: str, second_role: str):
        self.axis, self.first_role, self.second_role = axis, first_role, second_role
        super().__init__(op, f"axis {axis} is both {first_role} and {second_role}")


class DTypeMismatch(ValidationError):
    def __init__(self, op: str, expected: Any, actual: Any):
        self.expected, self.actual = expected, actual
        super().__init__(op, f"dtype mismatch: expected {expected}, got {actual}")


class ShapeMismatch(ValidationError):
    """Paired extents disagree; ``variant`` names upstream's ShapeMismatch case."""

    def __init__(self, op: str, variant: str, message: str, **details: Any):
        self.variant = variant
        self.details = details
        super().__init__(op, f"shape mismatch ({variant}): {message}")


class ViewOutOfBounds(ValidationError):
    def __init__(self, op: str, message: str):
        super().__init__(op, f"view out of bounds: {message}")


class IntegerOverflow(ValidationError):
    def __init__(self, op: str, message: str):
        super().__init__(op, f"integer overflow: {message}")


class SubscriptError(ValidationError):
    """A malformed einsum subscript string; ``position`` indexes the offending character."""

    def __init__(self, op: str, subscripts: str, position: int, message: str):
        self.subscripts, self.position = subscripts, position
        pointer = " " * position + "^"
        super().__init__(op, f"{message} at position {position}\n  {subscripts}\n  {pointer}")


# --- Unsupported: valid request, but not on this backend -------------------------------------


class UnsupportedError(TenferroError):
    """The operation is valid but WebGPU does not run it here; the message says what to do."""

    kind = ErrorKind.UNSUPPORTED

    def __init__(self, op: str, message: str):
        super().__init__(op, f"unsupported operation on WebGPU: {message}")


class UnsupportedDType(UnsupportedError):
    def __init__(self, op: str, dtype: Any, advice: str):
        self.dtype = dtype
        TenferroError.__init__(self, op, f"does not support dtype {dtype} on WebGPU; {advice}")


class LimitExceeded(UnsupportedError):
    """A tensor or launch needs more than the adapter allows; names the WebGPU limit."""

    def __init__(self, op: str, limit: str, requested: int, maximum: int, advice: str):
        self.limit, self.requested, self.maximum = limit, requested, maximum
        TenferroError.__init__(
            self, op,
            f"needs {requested} but the adapter's {limit} is {maximum}; {advice}",
        )


# --- RuntimeState: the objects are not in a state the op can use ----------------------------


class RuntimeStateError(TenferroError):
    kind = ErrorKind.RUNTIME_STATE


class NoAdapterError(RuntimeStateError):
    """No WebGPU adapter or device could be obtained."""


class JSPIUnavailable(RuntimeStateError):
    """A synchronous call needs JSPI stack switching, which this entry point cannot do."""


class EventDomainUnavailable(RuntimeStateError):
    """Something asked for an event domain; the wasm configuration has none."""


class HostAccessError(RuntimeStateError):
    """A buffer access was refused; ``reason`` names upstream's HostAccessError case."""

    def __init__(self, op: str, reason: str, message: str):
        self.reason = reason
        super().__init__(op, f"host access refused ({reason}): {message}")


class ForeignDomain(HostAccessError):
    def __init__(self, op: str, expected: Any, actual: Any):
        self.expected, self.actual = expected, actual
        super().__init__(
            op, "ForeignDomain",
            f"tensor belongs to allocation domain {actual}, this runtime owns {expected}; "
            "download it and upload it to this runtime",
        )


class MappingSpanError(HostAccessError):
    """A byte span for a mapping overflows, exceeds the allocation or is not element-aligned."""

    def __init__(self, op: str, message: str):
        super().__init__(op, "MappingSpan", message)


# --- BackendFailure: the device or the browser failed ---------------------------------------


class BackendFailure(TenferroError):
    kind = ErrorKind.BACKEND_FAILURE


class DeviceLost(BackendFailure):
    """The GPU device was lost; every tensor of its runtime is gone with it."""


class OutOfDeviceMemory(BackendFailure):
    """The device refused an allocation. Reported at the first barrier after it; the work that
    depended on the refused buffer is lost (its tensors raise this on use) and the runtime
    stays usable."""
