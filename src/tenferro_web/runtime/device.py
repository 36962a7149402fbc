"""One WebGPU device: its lifetime, the execution of Programs, and transfers.

Every op appends to one pending command stream (pure Python, no JavaScript call); the stream is
submitted as one command buffer at a readback, at ``synchronize()``, or when it grows large.
WebGPU's queue is in order, so that is all the ordering the wasm configuration needs. Buffers
and pipelines are the pools' business (buffers.py, pipelines.py); the device decides nothing
about kernels: it executes what lowering built.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..arguments import host_array
from ..dtypes import DType
from ..errors import (
    BackendFailure,
    DeviceLost,
    OutOfDeviceMemory,
    RuntimeStateError,
    TenferroError,
    UnsupportedError,
)
from ..lowering.copy import lower_copy
from ..lowering.kernels import KernelKey
from ..lowering.profile import AdapterProfile, profile_id
from ..lowering.program import BufferCopy, Clear, Launch, Program
from ..planning.copy_plan import COPY_DTYPES
from ..transport.protocol import CommandEncoder, Transport
from .buffers import BufferPool
from .pipelines import PipelineCache
from .tensor import (
    Allocation,
    AllocationDomainId,
    DeviceId,
    DeviceKind,
    MemoryKind,
    Placement,
    Tensor,
)

if TYPE_CHECKING:
    from .runtime import WebGpuRuntime

# A stream this long is submitted without waiting for a readback, so that the GPU works on a
# chain of small ops while Python enqueues the rest (H200, 100 chained 64^3 dot_generals per
# call: 4.7 -> 2.5 ms natively and 4.4 -> 3.9 ms through Dawn with 50 rather than 512; 25 is
# slower through Dawn, whose every submit costs about 100 us there; `bench/h200.py --sweep
# --steps dawn-small,native-small` tries 16-64 on the chain as it is now).
MAX_PENDING_DISPATCHES = 48
# A stream holding this many workgroups is submitted at once, so the GPU starts on large ops
# while Python enqueues the next ones instead of waiting for the readback (a 1024^3 GEMM is
# 256 workgroups; a chain of small ops stays one submit). Until the next barrier, each later
# stream waits for SUBMIT_GROWTH times the workgroups of the one before: the GPU still has
# that one's work to run, and every submit costs the host 70-190 us (H200, Dawn and
# wgpu-native), more than a 256 MiB sum's kernels take.
SUBMIT_WORKGROUPS = 1024
SUBMIT_GROWTH = 2
# A row-major upload of more elements than this is reordered into column-major storage by a
# copy kernel on the GPU; a smaller one by numpy on the host, where it costs less than the
# kernel's dispatch (about 2 us per 1000 elements in Pyodide, 64^2 in 22 us) and its first
# compile (5-10 ms on SwiftShader).
HOST_REORDER_ELEMENTS = 1 << 16

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
    limits: dict[str, int]
    context: str  # "window" or "worker" (browser), "node" (Node.js + Dawn), "native"

    @property
    def is_cpu(self) -> bool:
        """A software adapter (SwiftShader, lavapipe): kernels without barriers win there."""
        return self.is_fallback or self.architecture in ("swiftshader", "lavapipe", "llvmpipe")


class Device:
    """Shared by a runtime and its clones: the device and everything allocated on it."""

    def __init__(self, transport: Transport, ordinal: int, kernels: str,
                 pool_caps: tuple[int | None, int]):
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
        self.profile = AdapterProfile.of(self.adapter.is_cpu, self.adapter.limits, kernels,
                                         self.adapter.features)
        self.profile_id = profile_id(self.profile)
        self.placement = Placement(MemoryKind.DEVICE, DeviceId(DeviceKind.WEBGPU, ordinal))
        self.encoder = CommandEncoder(self.adapter.limits["minStorageBufferOffsetAlignment"] // 4)
        self.buffers = BufferPool(transport, self.profile, *pool_caps)
        self.pipelines = PipelineCache(transport)
        self.closed = False
        self.lost: str | None = None
        self.loss_reported = False
        self.runtime: WebGpuRuntime | None = None  # the handle that created this device
        # Command streams are numbered (``stream`` is the pending one). A refused allocation,
        # answered at a barrier, loses the streams from the first one that used the refused
        # buffer to that barrier; a rejected submit, the streams from it to that barrier (later
        # ones may have read what it never wrote). Their tensors raise on use: OutOfDeviceMemory,
        # or BackendFailure with the device's message (``lost_streams``: range, message or None).
        self.stream = 1
        self.unanswered: dict[int, tuple[int, int]] = {}  # buffer id -> (stream, capacity)
        self.refused: set[int] = set()
        self.lost_streams: list[tuple[range, str | None]] = []
        self.ones: dict[DType, Tensor] = {}
        self.timed: list[str] | None = None  # while a KernelTimer is open: each dispatch's kernel
        self.submit_workgroups = SUBMIT_WORKGROUPS  # a stream this large is submitted

    # --- lifetime ---------------------------------------------------------------------------
    @property
    def intact(self) -> bool:
        """Open, not lost, and no tensor's contents lost: an op needs no residency checks."""
        return not (self.closed or self.lost or self.lost_streams)

    def check_usable(self, op: str) -> None:
        if self.lost:
            advice = "create a new runtime and upload the data again"
            if not self.loss_reported:  # the device failed: said once, where it was noticed
                self.loss_reported = True
                raise DeviceLost(op, f"the GPU device was lost ({self.lost}); {advice}")
            raise RuntimeStateError(op, f"this runtime's GPU device was lost ({self.lost}); "
                                        f"{advice}")
        if self.closed:
            raise RuntimeStateError(op, "this runtime was closed; create a new one")

    def check_contents(self, op: str, tensor: Tensor) -> None:
        """Refuse a tensor whose contents a refused allocation or a rejected submit lost."""
        allocation = tensor.allocation
        rejection = next((message for lost, message in self.lost_streams
                          if allocation.stream in lost), None)
        if rejection is not None:
            raise BackendFailure(
                op, f"this tensor's contents were lost: the GPU rejected the work that computed "
                    f"it or an input of it ({rejection}); compute it again")
        if allocation.buffer_id in self.refused or any(
                allocation.stream in lost for lost, _ in self.lost_streams):
            raise OutOfDeviceMemory(
                op, "this tensor's contents were lost when the GPU ran out of memory (the "
                    "OutOfDeviceMemory raised earlier); free tensors you no longer need and "
                    "compute it again")

    def raise_device_errors(self, op: str) -> None:
        """At a barrier: turn what the device reported into typed errors. Allocations made
        before the barrier's submit have been answered by now."""
        lost, errors, refused, rejected, broken = self.transport.take_errors()
        if lost:
            self.lost = lost
            self.check_usable(op)
        if broken:  # compiled again on next use, as a failed asynchronous compile is
            self.pipelines.evict({pipeline for pipeline, _ in broken})
        failures: list[TenferroError] = []
        if refused:
            failures.append(self.refuse(op, refused, errors))
        if rejected:
            failures.append(self.reject(op, rejected, broken))
        elif broken:  # not used by any submit yet
            failures.append(BackendFailure(op, "the GPU could not create a kernel: " + "; ".join(
                message for _, message in broken)))
        for buffer_id in [i for i, (stream, _) in self.unanswered.items() if stream < self.stream]:
            del self.unanswered[buffer_id]
        if failures:
            raise failures[0]
        if errors:
            raise BackendFailure(op, "the GPU reported: " + "; ".join(errors))

    def refuse(self, op: str, refused: list[tuple[int, str]],
               errors: list[str]) -> OutOfDeviceMemory:
        """Record refused allocations: their buffers are dropped, and the streams from the
        first that used one up to now are lost."""
        self.flush()  # the pending stream may use a refused buffer too
        ids = {buffer_id for buffer_id, _ in refused}
        first = min(self.unanswered.get(i, (self.stream - 1, 0))[0] for i in ids)
        self.lost_streams.append((range(first, self.stream), None))
        self.refused |= ids
        self.buffers.forget(ids)
        sizes = sorted({self.unanswered.get(i, (0, 0))[1] for i in ids} - {0})
        return OutOfDeviceMemory(
            op, f"the GPU refused to allocate {len(ids)} buffer(s) of "
                f"{', '.join(f'{s} bytes' for s in sizes) or 'unknown size'} "
                f"({refused[0][1].splitlines()[0]}); the work that used them is lost and its "
                "tensors raise this error when used. Free tensors you no longer need (del) or "
                "work in smaller pieces, then compute them again; the runtime stays usable"
                + (f" ({len(errors)} consequent GPU error(s) not shown)" if errors else ""))

    def reject(self, op: str, rejected: list[tuple[int, str]],
               broken: list[tuple[int, str]]) -> BackendFailure:
        """Record rejected submits: the streams from the first one up to now are lost."""
        self.flush()  # the pending stream may read what a rejected one never wrote
        reason = "; ".join(message for _, message in broken or rejected)
        self.lost_streams.append((range(min(s for s, _ in rejected), self.stream), reason))
        return BackendFailure(
            op, f"the GPU rejected {len(rejected)} command stream(s), so none of their work ran "
                f"({reason}); the tensors they and the work after them computed raise this "
                "error when used. The runtime stays usable: compute them again")

    def close(self) -> None:
        if not self.closed and not self.lost:
            self.transport.destroy()
        self.closed = True

    # --- allocation and execution -----------------------------------------------------------
    def allocate(self, op: str, dtype: DType, shape: tuple[int, ...],
                 for_upload: bool = False) -> Tensor:
        byte_len = dtype.itemsize
        for d in shape:
            byte_len *= d
        if byte_len == 0:
            return Tensor(dtype, shape, Allocation(self, 0, 0, 0, 0))
        buffer_id, capacity = self.buffers.acquire(op, byte_len, for_upload)
        # An upload is written by the queue, not by a stream: only its own buffer can fail it.
        stream = 0 if for_upload else self.stream
        return Tensor(dtype, shape, Allocation(self, buffer_id, byte_len, capacity, stream))

    def release_buffer(self, buffer_id: int, capacity: int) -> None:
        if self.closed or self.lost:
            return
        if buffer_id in self.refused:
            self.buffers.discard(buffer_id, capacity)
        else:
            self.buffers.release(buffer_id, capacity)

    def execute(self, op: str, program: Program, inputs: Sequence[Tensor], dtype: DType,
                shape: tuple[int, ...]) -> Tensor:
        """Append ``program`` to the pending stream: ``inputs`` fill its operand slots, a fresh
        tensor of ``shape`` its output slot; temporaries are allocated here and released after
        (the stream runs in order, so a later op may reuse them at once)."""
        pipelines = self.pipelines.of_program(program)
        if pipelines is None:
            pipelines = self.bind(program)
        out = self.allocate(op, dtype, shape)
        slots = [t.allocation.buffer_id for t in inputs]
        slots.append(out.allocation.buffer_id)
        temps = [self.buffers.acquire(op, size, False) for size in program.temps] \
            if program.temps else ()
        if temps:
            slots.extend(buffer_id for buffer_id, _ in temps)
        encoder = self.encoder
        if self.timed is not None:
            self.timed.extend(o.key.name for o in program.launches)
        launch = 0
        for o in program.ops:
            if type(o) is Launch:
                encoder.dispatch(pipelines[launch], o.words, o.grid,
                                 [slots[s] for s in o.buffers])
                launch += 1
            elif type(o) is BufferCopy:
                encoder.copy(slots[o.src], o.src_offset, slots[o.dst], o.dst_offset, o.size)
            else:
                assert type(o) is Clear
                encoder.clear(slots[o.slot], o.offset, o.size)
        for buffer_id, capacity in temps:
            self.buffers.release(buffer_id, capacity)
        if encoder.dispatches >= MAX_PENDING_DISPATCHES \
                or encoder.workgroups >= self.submit_workgroups:
            self.flush()
        return out

    def bind(self, program: Program) -> tuple[int, ...]:
        """The pipelines of ``program``'s launches, compiled where missing, before anything of
        the op is allocated or enqueued: a kernel the transport refuses at once fails the op
        alone."""
        if self.encoder and any(o.key not in self.pipelines.ready for o in program.launches):
            # A kernel compiled on first use starts a stream: should the device reject it, the
            # work enqueued before stays out of the rejected submit.
            self.flush()
        return self.pipelines.bind(program)

    async def prepare(self, kernels: Iterable[KernelKey]) -> None:
        """Compile pipelines ahead, without blocking the page."""
        await self.pipelines.prepare(kernels)

    def flush(self) -> None:
        created = self.buffers.created
        if created:
            for buffer_id, capacity in created:
                self.unanswered[buffer_id] = (self.stream, capacity)
            created.clear()
        if self.encoder:
            self.transport.submit(self.encoder.words, self.encoder.params, self.stream)
            self.submit_workgroups = max(SUBMIT_WORKGROUPS,
                                         SUBMIT_GROWTH * self.encoder.workgroups)
            self.encoder.reset()
            self.stream += 1
        self.buffers.after_submit()

    async def synchronize(self, op: str) -> None:
        self.check_usable(op)
        self.flush()
        await self.transport.synchronize()
        self.submit_workgroups = SUBMIT_WORKGROUPS  # the GPU has run everything
        self.raise_device_errors(op)

    def begin_kernel_timing(self, op: str) -> None:
        self.check_usable(op)
        if "timestamp-query" not in self.adapter.features:
            raise UnsupportedError(
                op, "this adapter does not offer WebGPU's 'timestamp-query' feature, so kernel "
                    "time cannot be told apart from host time here; time on the host instead "
                    "(await runtime.synchronize() before reading the clock)")
        if self.timed is not None:
            raise RuntimeStateError(op, "kernels are already being timed on this device; "
                                        "close the open kernel_timer() first")
        self.flush()  # work enqueued before is not timed
        self.transport.begin_kernel_timing()
        self.timed = []

    async def end_kernel_timing(self, op: str) -> list[tuple[str, int]]:
        """Each dispatch since ``begin_kernel_timing``: its kernel's name and nanoseconds."""
        names, self.timed = self.timed or [], None
        self.check_usable(op)
        self.flush()
        durations = await self.transport.end_kernel_timing()
        self.raise_device_errors(op)
        if len(durations) != len(names):
            raise BackendFailure(op, f"{len(durations)} timestamp pairs came back for "
                                     f"{len(names)} dispatches")
        return list(zip(names, durations))

    # --- transfers --------------------------------------------------------------------------
    def upload(self, array: object) -> Tensor:
        """A device copy of a host array (any memory order, any of the seven dtypes)."""
        op = "upload"
        self.check_usable(op)
        host = host_array(op, array)
        dtype = DType.from_numpy(host.dtype, op)
        if host.dtype != dtype.numpy:
            host = host.astype(dtype.numpy)  # big-endian input
        if host.ndim >= 2 and host.flags.c_contiguous and not host.flags.f_contiguous \
                and dtype in COPY_DTYPES and host.size > HOST_REORDER_ELEMENTS:
            # Row-major bytes are the column-major tensor of the reversed shape: send them as
            # they are and reorder once, on the GPU.
            raw = self.allocate(op, dtype, host.shape[::-1], for_upload=True)
            self.write(raw, host.reshape(-1))
            layout = raw.layout.permuted(op, None)
            return self.execute(op, lower_copy(op, self.profile, layout, dtype), (raw,), dtype,
                                layout.shape)
        out = self.allocate(op, dtype, host.shape, for_upload=True)
        if host.size:
            self.write(out, np.asfortranarray(host).reshape(-1, order="F"))
        return out

    def one(self, dtype: DType) -> Tensor:
        """A one-element tensor holding 1, kept per dtype: sums bind it as a stride-0 view."""
        if dtype not in self.ones:
            self.ones[dtype] = self.upload(np.ones(1, dtype.numpy))
        return self.ones[dtype]

    def write(self, tensor: Tensor, data: np.ndarray) -> None:
        """Copy the bytes of a 1-D contiguous array into the tensor's buffer (queue order)."""
        payload = data.view(np.uint8)
        if payload.nbytes % 4:
            # writeBuffer moves whole 32-bit words; only Bool tensors can end mid-word.
            padded = np.zeros((payload.nbytes + 3) & ~3, np.uint8)
            padded[: payload.nbytes] = payload
            payload = padded
        self.transport.write_buffer(tensor.allocation.buffer_id, 0, payload)

    async def read_bytes(self, op: str, tensor: Tensor, byte_offset: int,
                         dest: np.ndarray) -> None:
        """Fill ``dest`` (1-D, contiguous) from the tensor's bytes starting at ``byte_offset``
        (callers have checked the runtime is usable)."""
        nbytes = dest.nbytes
        start = byte_offset & ~3  # copyBufferToBuffer moves 4-byte aligned words
        span = ((byte_offset + nbytes + 3) & ~3) - start
        staging, capacity = self.buffers.acquire_staging(op, span)
        try:
            self.encoder.copy(tensor.allocation.buffer_id, start, staging, 0, span)
            self.flush()
            try:
                await self.transport.map_staging(staging, op)
                self.submit_workgroups = SUBMIT_WORKGROUPS  # the GPU has run everything
            except BackendFailure:
                if self.closed:  # close() while this download waited: the caller's doing
                    raise RuntimeStateError(op, "the runtime was closed while this download "
                                                "was pending; download before closing") from None
                self.raise_device_errors(op)  # the reason, where the device gave one
                raise
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
        self.buffers.return_staging(staging, capacity)
        self.raise_device_errors(op)

    async def download(self, tensor: Tensor, op: str) -> np.ndarray:
        self.check_usable(op)
        self.check_contents(op, tensor)
        out = np.empty(tensor.shape, tensor.dtype.numpy, order="F")
        if out.size:
            await self.read_bytes(op, tensor, 0, out.reshape(-1, order="F"))
        return out

    async def download_span(self, tensor: Tensor, span: range, op: str) -> np.ndarray:
        self.check_usable(op)
        self.check_contents(op, tensor)
        out = np.empty(len(span) // tensor.dtype.itemsize, tensor.dtype.numpy)
        if out.size:
            await self.read_bytes(op, tensor, span.start, out)
        return out
