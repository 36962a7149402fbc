"""Programs: what an op asks of the device, as an ordered list of operations over buffer slots.

Slots ``0 .. inputs-1`` are the op's operands (read only), slot ``inputs`` its output, and the
slots after it temporaries the runtime allocates for the program and releases after it. A
``Launch`` is one compute dispatch; its parameters are a typed ``KernelSpec`` whose constructor
checks every assumption the kernel makes, so a launch that would read the wrong memory cannot be
built. Words and grid are derived once, here, and range-checked (``LimitExceeded``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from .kernels import KernelKey
from .profile import AdapterProfile


class KernelSpec(Protocol):
    """The typed parameters of one kernel launch."""

    @property
    def key(self) -> KernelKey: ...

    @property
    def groups(self) -> int: ...

    def words(self, op: str) -> tuple[int, ...]: ...


@dataclass(frozen=True)
class Launch:
    spec: KernelSpec
    buffers: tuple[int, ...]  # slots, bound in order after the params
    # Derived once from the spec (a program is built once and executed many times).
    key: KernelKey = field(compare=False)
    words: tuple[int, ...] = field(compare=False)
    grid: tuple[int, int, int] = field(compare=False)

    @classmethod
    def of(cls, op: str, profile: AdapterProfile, spec: KernelSpec,
           buffers: tuple[int, ...]) -> Launch:
        return cls(spec, buffers, spec.key, spec.words(op), profile.grid(op, spec.groups))


@dataclass(frozen=True)
class BufferCopy:
    """``copyBufferToBuffer``: ``size`` bytes, offsets in bytes, all multiples of 4."""

    src: int
    src_offset: int
    dst: int
    dst_offset: int
    size: int

    def __post_init__(self) -> None:
        if (self.src_offset | self.dst_offset | self.size) % 4:
            raise ValueError(f"buffer copies move whole 4-byte words: {self}")


@dataclass(frozen=True)
class Clear:
    """``clearBuffer``: zero ``size`` bytes from ``offset`` (multiples of 4)."""

    slot: int
    offset: int
    size: int

    def __post_init__(self) -> None:
        if (self.offset | self.size) % 4:
            raise ValueError(f"buffer clears cover whole 4-byte words: {self}")


Operation = Launch | BufferCopy | Clear


@dataclass(frozen=True)
class Program:
    inputs: int
    output_bytes: int
    temps: tuple[int, ...] = ()  # byte sizes of the temporary slots
    ops: tuple[Operation, ...] = ()
    launches: tuple[Launch, ...] = field(init=False, repr=False, compare=False)

    @property
    def output(self) -> int:
        return self.inputs

    @property
    def kernels(self) -> set[KernelKey]:
        return {o.key for o in self.launches}

    def __post_init__(self) -> None:
        object.__setattr__(self, "launches", tuple(o for o in self.ops if isinstance(o, Launch)))
        slots = self.inputs + 1 + len(self.temps)
        for o in self.ops:
            used = o.buffers if isinstance(o, Launch) else \
                (o.src, o.dst) if isinstance(o, BufferCopy) else (o.slot,)
            if any(not 0 <= s < slots for s in used):
                raise ValueError(f"{o} names a slot outside 0..{slots - 1}")
            written = o.buffers[-1] if isinstance(o, Launch) else \
                o.dst if isinstance(o, BufferCopy) else o.slot
            if written < self.inputs:
                raise ValueError(f"{o} writes operand slot {written}; operands are read only")
