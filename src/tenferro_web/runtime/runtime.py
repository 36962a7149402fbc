"""The public handle on one WebGPU device: creation (browser or native), clones, uploads and
the host barrier. The device it shares with its clones lives in device.py."""

from __future__ import annotations

from typing import Any

from ..arguments import integer
from ..errors import InvalidArgument, NoAdapterError
from .buffers import STAGING_CAP
from .device import AdapterInfo, Device, RuntimeIdentity
from .tensor import AllocationDomainId, Placement, Tensor


class WebGpuRuntime:
    """A handle on one WebGPU device. ``clone()`` shares the device and its identity."""

    __slots__ = ("_device",)

    def __init__(self, device: Device):
        self._device = device
        if device.runtime is None:
            device.runtime = self

    @classmethod
    async def create(cls, power_preference: str | None = None, kernels: str = "auto", *,
                     storage_pool_bytes: int | None = None,
                     staging_pool_bytes: int = STAGING_CAP) -> WebGpuRuntime:
        """Request an adapter and a device at the adapter's real buffer limits.

        ``kernels`` picks the kernel family: "auto" (from the adapter), "cpu" (register blocks
        without barriers, best on software adapters) or "gpu" (workgroup-memory tiles).
        Released buffers are kept for reuse up to ``storage_pool_bytes`` (tensor storage;
        by default None: as much as the workload has held at once, at least 256 MiB) and
        ``staging_pool_bytes`` (readback buffers, least recently used evicted first). When
        the device refuses an allocation, the pools are emptied and it is tried once more."""
        op = "WebGpuRuntime.create"
        from ..transport.browser import BrowserTransport, in_browser

        if not in_browser():
            raise NoAdapterError(
                op, "no browser WebGPU here (this Python is not Pyodide); run inside Pyodide, "
                    "or use WebGpuRuntime.native() with the 'wgpu' package")
        caps = pool_caps(op, storage_pool_bytes, staging_pool_bytes)
        return cls(Device(await BrowserTransport.open(power_preference, op), 0, kernels, caps))

    @classmethod
    def native(cls, power_preference: str | None = None, kernels: str = "auto", *,
               storage_pool_bytes: int | None = None,
               staging_pool_bytes: int = STAGING_CAP) -> WebGpuRuntime:
        """A runtime on native WebGPU (wgpu-native through the ``wgpu`` package), outside any
        browser: the same planners, kernels and command streams, on GPUs a browser here cannot
        reach (the real-GPU benchmark lane) or on CPU Vulkan drivers."""
        from ..transport.native import NativeTransport

        op = "WebGpuRuntime.native"
        caps = pool_caps(op, storage_pool_bytes, staging_pool_bytes)
        return cls(Device(NativeTransport.open(power_preference, op), 0, kernels, caps))

    @classmethod
    def create_sync(cls, power_preference: str | None = None, kernels: str = "auto", *,
                    storage_pool_bytes: int | None = None,
                    staging_pool_bytes: int = STAGING_CAP) -> WebGpuRuntime:
        """``create`` without ``await``; needs JSPI in the browser."""
        from ..transport.browser import run_sync

        return run_sync(cls.create(power_preference, kernels,
                                   storage_pool_bytes=storage_pool_bytes,
                                   staging_pool_bytes=staging_pool_bytes),
                        "create_sync", "await WebGpuRuntime.create()")

    def clone(self) -> WebGpuRuntime:
        return WebGpuRuntime(self._device)

    def runtime_identity(self) -> RuntimeIdentity:
        return self._device.identity

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WebGpuRuntime) and other._device is self._device

    def __hash__(self) -> int:
        return hash(self._device.identity)

    @property
    def allocation_domain(self) -> AllocationDomainId:
        return self._device.domain

    @property
    def device_ordinal(self) -> int:
        return self._device.ordinal

    @property
    def placement(self) -> Placement:
        return self._device.placement

    @property
    def adapter(self) -> AdapterInfo:
        return self._device.adapter

    @property
    def device(self) -> Device:
        return self._device

    def __repr__(self) -> str:
        a = self._device.adapter
        return (f"WebGpuRuntime(adapter={a.vendor}/{a.architecture}, ordinal={self.device_ordinal},"
                f" {self.allocation_domain}, context={a.context})")

    def upload(self, array: Any) -> Tensor:
        """Copy a numpy array (any memory order, any of the seven dtypes) to the device."""
        return self._device.upload(array)

    async def synchronize(self) -> None:
        """Submit pending work and wait until the GPU finished it (the host barrier)."""
        await self._device.synchronize("synchronize")

    def synchronize_sync(self) -> None:
        self._device.transport.run_sync(self._device.synchronize("synchronize_sync"),
                                       "synchronize_sync", "await runtime.synchronize()")

    def kernel_timer(self) -> KernelTimer:
        """GPU time of the work enqueued inside ``async with runtime.kernel_timer() as timer:``,
        apart from host time: inside the block each kernel dispatch runs in a compute pass of
        its own, and the adapter writes a timestamp at its beginning and end (WebGPU's
        ``timestamp-query``; UnsupportedError where the adapter lacks it). On leaving the
        block, pending work is submitted and read back: ``timer.kernels`` (each dispatch's
        kernel name and seconds, in order), ``timer.seconds`` (their sum) and
        ``timer.by_kernel()`` (seconds per kernel name). Buffer copies and clears (uploads,
        readback staging, zero fills) are not counted."""
        return KernelTimer(self._device)

    def close(self) -> None:
        """Destroy the device now; tensors of this runtime become unusable."""
        self._device.close()


class KernelTimer:
    """See ``WebGpuRuntime.kernel_timer``."""

    def __init__(self, device: Device):
        self._device = device
        self.kernels: tuple[tuple[str, float], ...] = ()

    @property
    def seconds(self) -> float:
        return sum(seconds for _, seconds in self.kernels)

    def by_kernel(self) -> dict[str, float]:
        """Seconds per kernel name, the most expensive first."""
        totals: dict[str, float] = {}
        for name, seconds in self.kernels:
            totals[name] = totals.get(name, 0.0) + seconds
        return dict(sorted(totals.items(), key=lambda item: -item[1]))

    async def __aenter__(self) -> KernelTimer:
        self._device.begin_kernel_timing("kernel_timer")
        return self

    async def __aexit__(self, exc_type: object, *_: object) -> None:
        try:
            timed = await self._device.end_kernel_timing("kernel_timer")
        except Exception:
            if exc_type is None:
                raise
            return  # the block's own error is the one to see
        self.kernels = tuple((name, ns * 1e-9) for name, ns in timed)


def pool_caps(op: str, storage_pool_bytes: object, staging_pool_bytes: object
              ) -> tuple[int | None, int]:
    """The pools' caps in bytes (None: the storage pool sized from the workload)."""
    storage = None if storage_pool_bytes is None else \
        integer(op, "storage_pool_bytes", storage_pool_bytes)
    staging = integer(op, "staging_pool_bytes", staging_pool_bytes)
    for name, cap in (("storage_pool_bytes", storage), ("staging_pool_bytes", staging)):
        if cap is not None and cap < 0:
            raise InvalidArgument(op, name, f"must be >= 0 bytes, got {cap}")
    return storage, staging
