"""The runtime: one WebGPU device, its buffers, pipelines and the pending command stream.

Every op appends to one pending command stream (pure Python, no JavaScript call); the stream is
submitted as one command buffer at a readback, at ``synchronize()``, or when it grows large.
WebGPU's queue is in order, so that is all the ordering the wasm configuration needs.
"""

from __future__ import annotations

import itertools
from array import array
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..dtypes import DType
from ..errors import (
    BackendFailure,
    DeviceLost,
    NoAdapterError,
    RuntimeStateError,
)
from ..lowering.kernels import KernelKey, render
from ..lowering.profile import AdapterProfile, binding_size
from ..lowering.program import BufferCopy, Clear, Launch, Program
from .tensor import (
    Allocation,
    AllocationDomainId,
    DeviceId,
    DeviceKind,
    MemoryKind,
    Placement,
    Tensor,
)

# The command stream's opcodes (js/bridge.mjs and transport/native.py decode them).
OP_DISPATCH, OP_COPY, OP_CLEAR = 1, 2, 3
# A stream this long is submitted without waiting for a readback, to bound memory and latency.
MAX_PENDING_DISPATCHES = 512
# Free buffers kept for reuse; beyond this they are destroyed.
POOL_BYTES = 256 << 20

_domain_ids = itertools.count(1)
_runtime_tokens = itertools.count(1)


@dataclass(frozen=True)
class RuntimeIdentity:
    """Equal for clones of one runtime, different for independently created runtimes."""

    token: int


@dataclass(frozen=True)
class AdapterInfo:
    vendor: str
    architecture: str
    device: str
    description: str
    is_fallback: bool
    features: tuple[str, ...]
    limits: dict
    context: str  # "window" or "worker" (browser), "node" (Node.js + Dawn), "native" (wgpu-native)

    @property
    def is_cpu(self) -> bool:
        """A software adapter (SwiftShader, lavapipe): kernels without barriers win there."""
        return self.is_fallback or self.architecture in ("swiftshader", "lavapipe", "llvmpipe")


def buffer_capacity(byte_len: int, max_binding: int) -> int:
    """Size class of a pooled buffer: powers of two up to 1 MiB, then whole MiB, or just the
    binding size (a multiple of 16 bytes) where the class would pass the binding limit."""
    n = binding_size(byte_len)
    if n <= 1 << 20:
        capacity = 1 << (n - 1).bit_length()
    else:
        capacity = (n + (1 << 20) - 1) & ~((1 << 20) - 1)
    return capacity if capacity <= max_binding else n


class CommandStream:
    """Dispatches, copies and clears, encoded as uint32 words for the bridge's ``submit``."""

    def __init__(self, params_align_words: int):
        self.align = params_align_words
        self.reset()

    def reset(self) -> None:
        self.words = array("I")
        self.params = array("I")
        self.dispatches = 0

    def __bool__(self) -> bool:
        return len(self.words) > 0

    def dispatch(self, pipeline: int, params: Sequence[int], grid: tuple[int, int, int],
                 buffers: Sequence[int]) -> None:
        pad = (-len(self.params)) % self.align  # storage bindings start at aligned offsets
        if pad:
            self.params.extend([0] * pad)
        offset = len(self.params)
        self.params.extend(params)
        self.words.extend((OP_DISPATCH, pipeline, offset, len(params), *grid, len(buffers),
                           *buffers))
        self.dispatches += 1

    def copy(self, src: int, src_offset: int, dst: int, dst_offset: int, size: int) -> None:
        self.words.extend((OP_COPY, src, src_offset, dst, dst_offset, size))

    def clear(self, buffer: int, offset: int, size: int) -> None:
        self.words.extend((OP_CLEAR, buffer, offset, size))


class DeviceState:
    """Shared by a runtime and its clones: the device and everything allocated on it."""

    def __init__(self, transport: Any, ordinal: int, kernels: str = "auto"):
        self.transport = transport
        self.ordinal = ordinal
        self.identity = RuntimeIdentity(next(_runtime_tokens))
        self.domain = AllocationDomainId(next(_domain_ids))
        info = transport.describe()
        self.adapter = AdapterInfo(
            vendor=info["vendor"], architecture=info["architecture"], device=info["device"],
            description=info["description"], is_fallback=bool(info["isFallbackAdapter"]),
            features=tuple(info["features"]), limits=dict(info["limits"]),
            context=info["context"])
        self.profile = AdapterProfile.of(self.adapter.is_cpu, self.adapter.limits, kernels)
        self.placement = Placement(MemoryKind.DEVICE, DeviceId(DeviceKind.WEBGPU, ordinal))
        self.stream = CommandStream(self.adapter.limits["minStorageBufferOffsetAlignment"] // 4)
        self.pipelines: dict[KernelKey, int] = {}
        self.free_buffers: dict[int, list[int]] = defaultdict(list)
        self.free_staging: dict[int, list[int]] = defaultdict(list)
        self.free_bytes = 0
        # Released while the pending stream may still read them: reusable after the next submit.
        self.released: list[tuple[int, int]] = []
        self.closed = False
        self.lost: str | None = None

    # --- state checks -----------------------------------------------------------------------
    def check_usable(self, op: str) -> None:
        if self.lost:
            raise DeviceLost(op, f"the GPU device was lost ({self.lost}); create a new runtime "
                                 "and upload the data again")
        if self.closed:
            raise RuntimeStateError(op, "this runtime was closed; create a new one")

    def raise_device_errors(self, op: str) -> None:
        lost, errors = self.transport.take_errors()
        if lost:
            self.lost = lost
            self.check_usable(op)
        if errors:
            raise BackendFailure(op, "the GPU reported: " + "; ".join(errors))

    # --- buffers ----------------------------------------------------------------------------
    def acquire_buffer(self, op: str, byte_len: int, for_upload: bool) -> tuple[int, int]:
        """A buffer of at least ``byte_len`` bytes: reused when one is free, else created.

        A buffer released while the pending stream may still read it can be the output of a
        later op at once (the GPU runs the stream in order), but not the target of an upload:
        queue writes run before the pending stream is submitted.
        """
        self.profile.check_binding(op, byte_len)
        capacity = buffer_capacity(byte_len, self.profile.max_storage_binding)
        if not for_upload:
            for index, (buffer_id, size) in enumerate(self.released):
                if size == capacity:
                    del self.released[index]
                    return buffer_id, capacity
        free = self.free_buffers.get(capacity)
        if free:
            self.free_bytes -= capacity
            return free.pop(), capacity
        return self.transport.create_buffer(capacity, False), capacity

    def release_buffer(self, buffer_id: int, capacity: int) -> None:
        if self.closed or self.lost:
            return
        self.released.append((buffer_id, capacity))

    def recycle_released(self) -> None:
        for buffer_id, capacity in self.released:
            if self.free_bytes + capacity > POOL_BYTES:
                self.transport.destroy_buffer(buffer_id)
            else:
                self.free_buffers[capacity].append(buffer_id)
                self.free_bytes += capacity
        self.released.clear()

    def allocate(self, op: str, dtype: DType, shape: tuple[int, ...],
                 for_upload: bool = False) -> Tensor:
        size = 1
        for d in shape:
            size *= d
        byte_len = size * dtype.itemsize
        if byte_len == 0:
            return Tensor(dtype, shape, Allocation(self, 0, 0, 0))
        buffer_id, capacity = self.acquire_buffer(op, byte_len, for_upload)
        return Tensor(dtype, shape, Allocation(self, buffer_id, byte_len, capacity))

    # --- pipelines and submission -----------------------------------------------------------
    def pipeline(self, key: KernelKey) -> int:
        pipeline = self.pipelines.get(key)
        if pipeline is None:
            pipeline = self.transport.create_pipeline(render(key), key.label)
            self.pipelines[key] = pipeline
        return pipeline

    async def prepare_pipelines(self, keys: Sequence[KernelKey]) -> None:
        """Compile pipelines off the main thread (``createComputePipelineAsync``)."""
        for key in keys:
            if key not in self.pipelines:
                self.pipelines[key] = await self.transport.create_pipeline_async(render(key),
                                                                                 key.label)

    def execute(self, op: str, program: Program, inputs: Sequence[Tensor], dtype: DType,
                shape: tuple[int, ...]) -> Tensor:
        """Append ``program`` to the pending stream: ``inputs`` fill its operand slots, a fresh
        tensor of ``shape`` its output slot; temporaries are allocated here and released after
        (the stream runs in order, so a later op may reuse them at once)."""
        out = self.allocate(op, dtype, shape)
        temps = [self.acquire_buffer(op, size, False) for size in program.temps]
        slots = [t.allocation.buffer_id for t in inputs] + [out.allocation.buffer_id] + \
            [buffer_id for buffer_id, _ in temps]
        for o in program.ops:
            if isinstance(o, Launch):
                self.stream.dispatch(self.pipeline(o.key), o.words, o.grid,
                                     [slots[s] for s in o.buffers])
            elif isinstance(o, BufferCopy):
                self.stream.copy(slots[o.src], o.src_offset, slots[o.dst], o.dst_offset, o.size)
            elif isinstance(o, Clear):
                self.stream.clear(slots[o.slot], o.offset, o.size)
        for buffer_id, capacity in temps:
            self.release_buffer(buffer_id, capacity)
        if self.stream.dispatches >= MAX_PENDING_DISPATCHES:
            self.flush()
        return out

    def flush(self) -> None:
        if self.stream:
            self.transport.submit(self.stream.words, self.stream.params)
            self.stream.reset()
        self.recycle_released()

    async def synchronize(self, op: str) -> None:
        self.check_usable(op)
        self.flush()
        await self.transport.synchronize()
        self.raise_device_errors(op)

    # --- transfers --------------------------------------------------------------------------
    def write(self, tensor: Tensor, data: np.ndarray) -> None:
        """Copy the bytes of a 1-D contiguous array into the tensor's buffer (queue order)."""
        payload = data.view(np.uint8)
        if payload.nbytes % 4:
            # writeBuffer moves whole 32-bit words; only Bool tensors can end mid-word.
            padded = np.zeros((payload.nbytes + 3) & ~3, np.uint8)
            padded[: payload.nbytes] = payload
            payload = padded
        self.transport.write_buffer(tensor.allocation.buffer_id, 0, payload)

    async def read_bytes(self, op: str, tensor: Tensor, byte_offset: int, dest: np.ndarray):
        """Fill ``dest`` (1-D, contiguous) from the tensor's bytes starting at ``byte_offset``
        (callers have checked the runtime is usable)."""
        nbytes = dest.nbytes
        start = byte_offset & ~3  # copyBufferToBuffer moves 4-byte aligned words
        span = ((byte_offset + nbytes + 3) & ~3) - start
        staging_capacity = buffer_capacity(span, self.profile.max_buffer)
        free = self.free_staging.get(staging_capacity)
        staging = free.pop() if free else self.transport.create_buffer(staging_capacity, True)
        try:
            self.stream.copy(tensor.allocation.buffer_id, start, staging, 0, span)
            self.flush()
            await self.transport.map_staging(staging, op)
            if start == byte_offset and span == nbytes:
                self.transport.copy_mapped(staging, dest.view(np.uint8), nbytes)
            else:
                words = np.empty(span, np.uint8)
                self.transport.copy_mapped(staging, words, span)
                lead = byte_offset - start
                dest.view(np.uint8)[...] = words[lead: lead + nbytes]
        except BaseException:
            self.transport.destroy_buffer(staging)
            raise
        self.free_staging[staging_capacity].append(staging)
        self.raise_device_errors(op)

    async def download(self, tensor: Tensor, op: str) -> np.ndarray:
        self.check_usable(op)
        out = np.empty(tensor.shape, tensor.dtype.numpy, order="F")
        if out.size:
            await self.read_bytes(op, tensor, 0, out.reshape(-1, order="F"))
        return out

    async def download_span(self, tensor: Tensor, span: range, op: str) -> np.ndarray:
        self.check_usable(op)
        out = np.empty(len(span) // tensor.dtype.itemsize, tensor.dtype.numpy)
        if out.size:
            await self.read_bytes(op, tensor, span.start, out)
        return out

    def close(self) -> None:
        if not self.closed and not self.lost:
            self.transport.destroy()
        self.closed = True


class WebGpuRuntime:
    """A handle on one WebGPU device. ``clone()`` shares the device and its identity."""

    __slots__ = ("_state",)

    def __init__(self, state: DeviceState):
        self._state = state

    @classmethod
    async def create(cls, power_preference: str | None = None,
                     kernels: str = "auto") -> WebGpuRuntime:
        """Request an adapter and a device at the adapter's real buffer limits.

        ``kernels`` picks the kernel family: "auto" (from the adapter), "cpu" (register blocks
        without barriers, best on software adapters) or "gpu" (workgroup-memory tiles)."""
        op = "webgpu_runtime_init"
        from ..transport.browser import BrowserTransport, in_browser

        if not in_browser():
            raise NoAdapterError(
                op, "no browser WebGPU here (this Python is not Pyodide); run inside Pyodide, "
                    "or use WebGpuRuntime.native() with the 'wgpu' package")
        return cls(DeviceState(await BrowserTransport.open(power_preference, op), 0, kernels))

    @classmethod
    def native(cls, power_preference: str | None = None, kernels: str = "auto") -> WebGpuRuntime:
        """A runtime on native WebGPU (wgpu-native through the ``wgpu`` package), outside any
        browser: the same planners, kernels and command streams, on GPUs a browser here cannot
        reach (the real-GPU benchmark lane) or on CPU Vulkan drivers."""
        from ..transport.native import NativeTransport

        return cls(DeviceState(NativeTransport.open(power_preference, "webgpu_runtime_init"), 0,
                               kernels))

    @classmethod
    def create_sync(cls, power_preference: str | None = None,
                    kernels: str = "auto") -> WebGpuRuntime:
        """``create`` without ``await``; needs JSPI in the browser."""
        from ..transport.browser import run_sync

        return run_sync(cls.create(power_preference, kernels), "create_sync",
                        "await WebGpuRuntime.create()")

    def clone(self) -> WebGpuRuntime:
        return WebGpuRuntime(self._state)

    def runtime_identity(self) -> RuntimeIdentity:
        return self._state.identity

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WebGpuRuntime) and other._state is self._state

    def __hash__(self) -> int:
        return hash(self._state.identity)

    @property
    def allocation_domain(self) -> AllocationDomainId:
        return self._state.domain

    @property
    def device_ordinal(self) -> int:
        return self._state.ordinal

    @property
    def placement(self) -> Placement:
        return self._state.placement

    @property
    def adapter(self) -> AdapterInfo:
        return self._state.adapter

    @property
    def state(self) -> DeviceState:
        return self._state

    def __repr__(self) -> str:
        a = self._state.adapter
        return (f"WebGpuRuntime(adapter={a.vendor}/{a.architecture}, ordinal={self.device_ordinal},"
                f" {self.allocation_domain}, context={a.context})")

    def upload(self, array: Any) -> Tensor:
        """Copy a numpy array (any memory order, any of the seven dtypes) to the device."""
        from .ops import upload

        return upload(self._state, array)

    async def synchronize(self) -> None:
        """Submit pending work and wait until the GPU finished it (the host barrier)."""
        await self._state.synchronize("webgpu_runtime_synchronize")

    def synchronize_sync(self) -> None:
        self._state.transport.run_sync(self._state.synchronize("synchronize_sync"),
                                       "synchronize_sync", "await runtime.synchronize()")

    def close(self) -> None:
        """Destroy the device now; tensors of this runtime become unusable."""
        self._state.close()
