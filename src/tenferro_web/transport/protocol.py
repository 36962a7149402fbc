"""The contract between the runtime and a transport, defined once.

* The command stream: one flush of work is a list of uint32 words (the opcodes below, each
  followed by its operands) plus a block of kernel parameter words. ``CommandEncoder`` is the
  only encoder; ``decode`` is its inverse, used by the native transport, and js/bridge.mjs
  decodes the same words (a host test checks that it handles every opcode defined here).
* ``Transport``: what the runtime asks of a transport. The browser transport (Pyodide + the
  bridge, in Chromium or in Node.js + Dawn) and the native one (wgpu-native) implement it.
"""

from __future__ import annotations

from array import array
from collections.abc import Coroutine, Iterator, Sequence
from typing import Any, NamedTuple, Protocol, TypedDict, TypeVar

import numpy as np

# opcode -> the words that follow it
OP_DISPATCH = 1  # pipeline, params offset (words), params count, x, y, z, n buffers, ids...
OP_COPY = 2  # src id, src offset, dst id, dst offset, byte length
OP_CLEAR = 3  # id, offset, byte length
OPCODES = {"OP_DISPATCH": OP_DISPATCH, "OP_COPY": OP_COPY, "OP_CLEAR": OP_CLEAR}
# Bind groups a transport keeps for reuse (a dispatch over the buffers of an earlier one reuses
# its group): enough for the buffers of a long op chain. js/bridge.mjs has the same number.
MAX_BIND_GROUPS = 4096

T = TypeVar("T")


class CommandEncoder:
    """Dispatches, copies and clears of one flush, as uint32 words. Storage bindings of the
    parameters start at ``params_align_words`` boundaries (the device's offset alignment)."""

    def __init__(self, params_align_words: int):
        self.align = params_align_words
        self.reset()

    def reset(self) -> None:
        self.words = array("I")
        self.params = array("I")
        self.dispatches = 0
        self.workgroups = 0
        # The last parameter block written: a launch of the same program again (an op chain)
        # binds it where it is instead of writing it again.
        self.last_params: tuple[int, ...] | None = None
        self.last_offset = 0

    def __bool__(self) -> bool:
        return len(self.words) > 0

    def dispatch(self, pipeline: int, params: Sequence[int], grid: tuple[int, int, int],
                 buffers: Sequence[int]) -> None:
        if params is self.last_params:  # a tuple: the same object holds the same words
            offset = self.last_offset
        else:
            pad = (-len(self.params)) % self.align
            if pad:
                self.params.extend([0] * pad)
            offset = len(self.params)
            self.params.extend(params)
            if type(params) is tuple:
                self.last_params, self.last_offset = params, offset
        x, y, z = grid
        self.words.extend((OP_DISPATCH, pipeline, offset, len(params), x, y, z, len(buffers),
                           *buffers))
        self.dispatches += 1
        self.workgroups += x * y * z

    def copy(self, src: int, src_offset: int, dst: int, dst_offset: int, size: int) -> None:
        self.words.extend((OP_COPY, src, src_offset, dst, dst_offset, size))

    def clear(self, buffer: int, offset: int, size: int) -> None:
        self.words.extend((OP_CLEAR, buffer, offset, size))


class Dispatch(NamedTuple):
    pipeline: int
    params_offset: int  # in words
    params_count: int
    grid: tuple[int, int, int]
    buffers: tuple[int, ...]


class Copy(NamedTuple):
    src: int
    src_offset: int
    dst: int
    dst_offset: int
    size: int


class Clear(NamedTuple):
    buffer: int
    offset: int
    size: int


def decode(words: Sequence[int]) -> Iterator[Dispatch | Copy | Clear]:
    """The commands of an encoded stream, in order (named tuples: the native transport decodes
    every dispatch of an op chain on the host's critical path)."""
    i, end = 0, len(words)
    while i < end:
        op = words[i]
        if op == OP_DISPATCH:
            count = words[i + 7]
            yield Dispatch(words[i + 1], words[i + 2], words[i + 3],
                           (words[i + 4], words[i + 5], words[i + 6]),
                           tuple(words[i + 8: i + 8 + count]))
            i += 8 + count
        elif op == OP_COPY:
            yield Copy(*words[i + 1: i + 6])
            i += 6
        elif op == OP_CLEAR:
            yield Clear(*words[i + 1: i + 4])
            i += 4
        else:
            raise ValueError(f"unknown command word {op} at {i}")


class DeviceErrors(NamedTuple):
    """What the device reported since the last ``take_errors``."""

    lost: str | None  # the loss reason
    errors: list[str]  # uncaptured validation / internal errors
    refused: list[tuple[int, str]]  # (buffer id, message) of allocations the device refused
    rejected: list[tuple[int, str]]  # (stream, message) of submits it rejected: none of it ran
    broken: list[tuple[int, str]]  # (pipeline id, message) of pipelines it could not create


class AdapterDescription(TypedDict):
    vendor: str
    architecture: str
    device: str
    description: str
    isFallbackAdapter: bool
    features: list[str]
    limits: dict[str, int]
    context: str  # "window" or "worker" (browser), "node" (Node.js + Dawn), "native"


class Transport(Protocol):
    """What the runtime asks of a transport. Buffers and pipelines are small integer ids."""

    name: str
    # The largest readback buffer worth keeping for the next download of its size (None: any
    # the staging pool's byte cap allows); larger ones are destroyed after their readback.
    largest_kept_staging: int | None

    def describe(self) -> AdapterDescription: ...

    def take_errors(self) -> DeviceErrors:
        """What the device reported since the last call. Allocations made before a
        ``synchronize`` or ``map_staging`` returned are answered by then."""
        ...

    def create_buffer(self, byte_length: int, staging: bool) -> int: ...

    def destroy_buffer(self, buffer_id: int) -> None: ...

    def write_buffer(self, buffer_id: int, byte_offset: int, data: np.ndarray) -> None: ...

    def create_pipeline(self, code: str, label: str, buffers: tuple[str, ...]) -> int:
        """A compute pipeline whose layout binds read-only params at binding 0 with a dynamic
        offset, then ``buffers`` ("read" / "read_write") at 1..n; a dispatch's bind group is
        reused while its buffers are alive (kernels.buffer_bindings)."""
        ...

    async def create_pipeline_async(self, code: str, label: str,
                                    buffers: tuple[str, ...]) -> int: ...

    def submit(self, commands: array[int], params: array[int], stream: int) -> None:
        """Encode and submit one command stream; should the device reject it, ``take_errors``
        names ``stream``."""
        ...

    async def synchronize(self) -> None: ...

    def begin_kernel_timing(self) -> None:
        """From now on, run every dispatch submitted in a compute pass of its own, with a
        timestamp at its beginning and end (the adapter has ``timestamp-query``)."""
        ...

    async def end_kernel_timing(self) -> list[int]:
        """Stop timing; the durations in nanoseconds of the dispatches submitted since
        ``begin_kernel_timing``, in submit order."""
        ...

    async def map_staging(self, staging_id: int, op: str) -> None: ...

    def copy_mapped(self, staging_id: int, dest: np.ndarray, byte_length: int) -> None: ...

    def destroy(self) -> None: ...

    def run_sync(self, coroutine: Coroutine[Any, Any, T], op: str, alternative: str) -> T:
        """Block on ``coroutine`` (JSPI in a browser), or raise JSPIUnavailable naming
        ``alternative``."""
        ...
