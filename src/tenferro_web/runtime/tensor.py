"""Device tensors and strided views, with their placement and allocation identity."""

from __future__ import annotations

import enum
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..arguments import integer
from ..dtypes import DType
from ..errors import InvalidArgument, MappingSpanError, UnsupportedError
from ..layout import ISIZE_MAX, ViewLayout, compact_strides, dense_layout, validate_view

if TYPE_CHECKING:
    from .device import Device
    from .runtime import WebGpuRuntime


class MemoryKind(enum.Enum):
    DEVICE = "device"
    MANAGED = "managed"  # a host-visible shared domain; browsers offer none


class DeviceKind(enum.Enum):
    WEBGPU = "webgpu"


@dataclass(frozen=True)
class DeviceId:
    kind: DeviceKind
    ordinal: int

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.ordinal}"


@dataclass(frozen=True)
class Placement:
    memory_kind: MemoryKind
    device: DeviceId
    cpu_affinity: None = None


@dataclass(frozen=True)
class AllocationDomainId:
    value: int

    def __str__(self) -> str:
        return f"domain#{self.value}"


_allocation_ids = itertools.count(1)


class Allocation:
    """One device buffer (or none, for zero bytes) and its identity; frees itself when unused."""

    __slots__ = ("device", "buffer_id", "byte_len", "capacity", "stream", "allocation_id",
                 "__weakref__")

    def __init__(self, device: Device, buffer_id: int, byte_len: int, capacity: int,
                 stream: int):
        self.device = device
        self.buffer_id = buffer_id
        self.byte_len = byte_len
        self.capacity = capacity
        self.stream = stream  # the command stream that writes it (0: the queue, an upload)
        self.allocation_id = next(_allocation_ids)

    def __del__(self) -> None:
        if self.buffer_id:
            self.device.release_buffer(self.buffer_id, self.capacity)


def mapping_range(op: str, byte_offset: int, byte_len: int, allocation_len: int,
                  itemsize: int) -> range:
    """Upstream's provider mapping-range checks: overflow, extent, then element alignment."""
    byte_offset = integer(op, "byte_offset", byte_offset)
    byte_len = integer(op, "byte_len", byte_len)
    for name, value in (("byte_offset", byte_offset), ("byte_len", byte_len)):
        if value < 0:
            raise InvalidArgument(op, name, f"{value} is negative")
    end = byte_offset + byte_len
    if end > ISIZE_MAX:
        raise MappingSpanError(op, f"WebGPU mapping span {byte_offset}+{byte_len} overflows")
    if end > allocation_len:
        raise MappingSpanError(op, f"WebGPU mapping span {byte_offset}..{end} exceeds the "
                                   f"allocation of {allocation_len} bytes")
    if byte_offset % itemsize or byte_len % itemsize:
        raise MappingSpanError(op, f"WebGPU mapping span {byte_offset}..{end} is not "
                                   f"element-aligned ({itemsize}-byte elements)")
    return range(byte_offset, end)


class NumpyOperators:
    """numpy's spelling on device tensors and views: ``.T`` and ``a @ b``."""

    __slots__ = ()

    if TYPE_CHECKING:
        def transpose_view(self, perm: Sequence[int] | None = None) -> TensorView: ...

    @property
    def T(self) -> TensorView:  # noqa: N802 (numpy's name)
        """The axes reversed, as a view (numpy's ``.T``); ``tw.transpose(t)`` copies."""
        return self.transpose_view()

    def __matmul__(self, other: Tensor | TensorView) -> Tensor:
        """``a @ b``: ``tw.matmul(a, b)``."""
        from ..numpy_style import matmul

        return matmul(self, other)  # type: ignore[arg-type]  # self is a Tensor or a view

    def __rmatmul__(self, other: object) -> Tensor:
        from ..numpy_style import matmul

        return matmul(other, self)  # type: ignore[arg-type]  # a host array: its typed error

    # numpy defers ``array @ tensor`` to ``__rmatmul__`` instead of converting the tensor.
    __array_ufunc__ = None


class Tensor(NumpyOperators):
    """An owned, compact column-major tensor resident on one WebGPU runtime."""

    __slots__ = ("dtype", "shape", "allocation", "_layout", "__weakref__")

    def __init__(self, dtype: DType, shape: tuple[int, ...], allocation: Allocation):
        self.dtype = dtype
        self.shape = shape
        self.allocation = allocation
        self._layout: ViewLayout | None = None

    # --- metadata ---------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=object))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        """Element strides: compact column-major."""
        return compact_strides(self.shape)

    @property
    def layout(self) -> ViewLayout:
        if self._layout is None:
            self._layout = dense_layout(self.shape)
        return self._layout

    @property
    def runtime(self) -> WebGpuRuntime:
        runtime = self.allocation.device.runtime
        assert runtime is not None, "every device is created by a runtime"
        return runtime

    @property
    def placement(self) -> Placement:
        return self.allocation.device.placement

    @property
    def allocation_id(self) -> int:
        return self.allocation.allocation_id

    @property
    def allocation_domain(self) -> AllocationDomainId:
        return self.allocation.device.domain

    def __repr__(self) -> str:
        return (f"Tensor(shape={self.shape}, dtype={self.dtype}, device={self.placement.device}, "
                f"allocation={self.allocation_id})")

    # --- views ------------------------------------------------------------------------------
    def view(self, shape: Sequence[int], strides: Sequence[int], offset: int = 0) -> TensorView:
        """A strided view (signed element strides, element offset) over this allocation."""
        layout = validate_view("view", shape, strides, offset, self.size)
        return TensorView(self, layout)

    def transpose_view(self, perm: Sequence[int] | None = None) -> TensorView:
        """Metadata-only transpose (no copy): shape and strides permuted together."""
        return TensorView(self, self.layout).transpose_view(perm)

    # --- transfers --------------------------------------------------------------------------
    async def download(self) -> np.ndarray:
        """Copy to a numpy array (column-major) through ``mapAsync``."""
        return await self.allocation.device.download(self, "download")

    def download_sync(self) -> np.ndarray:
        """``download`` without ``await``; needs JSPI stack switching (a typed error if absent)."""
        device = self.allocation.device
        return device.transport.run_sync(device.download(self, "download_sync"),
                                         "download_sync", "await tensor.download()")

    async def download_span(self, byte_offset: int, byte_len: int) -> np.ndarray:
        """The elements in bytes ``[byte_offset, byte_offset + byte_len)`` of the column-major
        storage, as a 1-D numpy array of this dtype."""
        span = mapping_range("download_span", byte_offset, byte_len, self.nbytes,
                             self.dtype.itemsize)
        return await self.allocation.device.download_span(self, span, "download_span")


class TensorView(NumpyOperators):
    """A strided view of a device tensor: metadata only, validated against its allocation."""

    __slots__ = ("base", "layout")

    def __init__(self, base: Tensor, layout: ViewLayout):
        self.base = base
        self.layout = layout

    @property
    def dtype(self) -> DType:
        return self.base.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.layout.shape

    @property
    def strides(self) -> tuple[int, ...]:
        return self.layout.strides

    @property
    def offset(self) -> int:
        return self.layout.offset

    @property
    def ndim(self) -> int:
        return self.layout.rank

    @property
    def runtime(self) -> WebGpuRuntime:
        return self.base.runtime

    @property
    def placement(self) -> Placement:
        return self.base.placement

    @property
    def allocation(self) -> Allocation:
        return self.base.allocation

    def transpose_view(self, perm: Sequence[int] | None = None) -> TensorView:
        return TensorView(self.base, self.layout.permuted("transpose_view", perm))

    def __repr__(self) -> str:
        return (f"TensorView(shape={self.shape}, strides={self.strides}, offset={self.offset}, "
                f"dtype={self.dtype}, base={self.base!r})")

    async def download(self) -> np.ndarray:
        raise UnsupportedError(
            "download", "transfers need an owned tensor; materialise the view on the GPU with "
                        "tenferro_web.to_contiguous(view) first, then download that tensor")

