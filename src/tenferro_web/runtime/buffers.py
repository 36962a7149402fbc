"""Device buffers of one runtime: storage buffers by size class, and staging buffers for
readback, each pool bounded in bytes.

Storage buffers released while the pending command stream may still read them can be the
output of a later op at once (the GPU runs the stream in order), but not the target of an
upload: queue writes run before the pending stream is submitted. They return to the free pool
after the next submit. Free storage buffers past the storage cap, and staging buffers past
``staging_cap`` bytes, are destroyed least recently used first: a workload that moves on to
other sizes does not leave the pool full of sizes it no longer asks for.

The storage cap is a page's fixed ``storage_cap``, or, by default (None), sized from the
workload: the most bytes of storage it has held at once, and at least STORAGE_CAP. A workload
whose outputs are larger than a fixed cap would allocate (and the device clear) every output
afresh; the device has already granted this much, and when it refuses an allocation the free
pools are emptied and the allocation tried once more before OutOfDeviceMemory.

New buffers are listed in ``created`` until the device has answered their allocation (the
browser answers asynchronously; see Device.settle_allocations). A transport that refuses an
allocation at once (native) gets one retry after the free pools are emptied.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict

from ..errors import OutOfDeviceMemory
from ..lowering.profile import AdapterProfile, binding_size
from ..transport.protocol import Transport

STORAGE_CAP = 256 << 20  # the least the default (workload-sized) storage pool keeps
STAGING_CAP = 64 << 20
CAPACITIES_KEPT = 4096  # byte lengths whose size class is remembered


def buffer_capacity(byte_len: int, max_binding: int) -> int:
    """Size class of a pooled buffer: powers of two up to 1 MiB, then whole MiB, or just the
    binding size (a multiple of 16 bytes) where the class would pass the binding limit."""
    return size_class(binding_size(byte_len), max_binding)


def size_class(n: int, max_binding: int) -> int:
    if n <= 1 << 20:
        capacity = 1 << (n - 1).bit_length()
    else:
        capacity = (n + (1 << 20) - 1) & ~((1 << 20) - 1)
    return capacity if capacity <= max_binding else n


class BufferPool:
    def __init__(self, transport: Transport, profile: AdapterProfile,
                 storage_cap: int | None = None, staging_cap: int = STAGING_CAP):
        self.transport = transport
        self.profile = profile
        self.fixed_storage_cap = storage_cap
        self.staging_cap = staging_cap
        self.held = 0  # storage bytes acquired and not yet back in the free pool
        self.held_peak = 0
        self.free: dict[int, list[int]] = defaultdict(list)  # by capacity, newest last
        self.free_order: OrderedDict[int, int] = OrderedDict()  # id -> capacity, oldest first
        self.free_bytes = 0
        # Released since the last submit, by capacity: outputs of later ops, not uploads.
        self.released: dict[int, list[int]] = defaultdict(list)
        self.staging: OrderedDict[int, int] = OrderedDict()  # id -> capacity, oldest first
        self.staging_bytes = 0
        self.created: list[tuple[int, int]] = []  # (id, capacity) not yet answered
        self.allocations = 0  # buffers created over the pool's life (benchmarks read it)
        self.capacities: dict[int, int] = {}  # byte length -> its size class, once checked

    def create(self, op: str, capacity: int, staging: bool) -> int:
        try:
            buffer_id = self.transport.create_buffer(capacity, staging)
        except OutOfDeviceMemory:
            self.trim()
            try:
                buffer_id = self.transport.create_buffer(capacity, staging)
            except OutOfDeviceMemory as e:
                raise OutOfDeviceMemory(op, e.message) from None
        self.created.append((buffer_id, capacity))
        self.allocations += 1
        return buffer_id

    @property
    def storage_cap(self) -> int:
        if self.fixed_storage_cap is not None:
            return self.fixed_storage_cap
        return max(STORAGE_CAP, self.held_peak)

    def trim(self) -> None:
        """Give every free buffer back to the device (after it refused an allocation)."""
        for ids in self.free.values():
            for buffer_id in ids:
                self.transport.destroy_buffer(buffer_id)
        self.free.clear()
        self.free_order.clear()
        self.free_bytes = 0
        for buffer_id in self.staging:
            self.transport.destroy_buffer(buffer_id)
        self.staging.clear()
        self.staging_bytes = 0

    def forget(self, refused: set[int]) -> None:
        """Drop buffers whose allocation the device refused from every free list (they are
        destroyed; tensors that still hold one destroy it on release)."""
        for capacity, ids in self.released.items():
            kept = [i for i in ids if i not in refused]
            self.held -= capacity * (len(ids) - len(kept))
            ids[:] = kept
        for buffer_id in refused:
            self.transport.destroy_buffer(buffer_id)
        self.trim()

    def acquire(self, op: str, byte_len: int, for_upload: bool) -> tuple[int, int]:
        """A storage buffer of at least ``byte_len`` bytes, reused when one is free: (id,
        capacity). Limits are checked first (``LimitExceeded``)."""
        capacity = self.capacities.get(byte_len)
        if capacity is None:
            if len(self.capacities) >= CAPACITIES_KEPT:
                self.capacities.clear()
            capacity = self.capacities[byte_len] = size_class(
                self.profile.check_binding(op, byte_len), self.profile.max_storage_binding)
        if not for_upload:
            released = self.released.get(capacity)
            if released:
                return released.pop(), capacity
        free = self.free.get(capacity)
        if free:
            self.free_bytes -= capacity
            buffer_id = free.pop()
            del self.free_order[buffer_id]
        else:
            buffer_id = self.create(op, capacity, False)
        self.held += capacity
        self.held_peak = max(self.held_peak, self.held)
        return buffer_id, capacity

    def release(self, buffer_id: int, capacity: int) -> None:
        self.released[capacity].append(buffer_id)

    def discard(self, buffer_id: int, capacity: int) -> None:
        """Destroy a held buffer whose allocation the device refused."""
        self.held -= capacity
        self.transport.destroy_buffer(buffer_id)

    def after_submit(self) -> None:
        """The submitted stream holds what it reads: released buffers are free again, the
        least recently freed destroyed past the cap (a buffer larger than the cap at once)."""
        cap = self.storage_cap
        for capacity, ids in self.released.items():
            self.held -= capacity * len(ids)
            for buffer_id in ids:
                if capacity > cap:
                    self.transport.destroy_buffer(buffer_id)
                    continue
                self.free[capacity].append(buffer_id)
                self.free_order[buffer_id] = capacity
                self.free_bytes += capacity
        self.released.clear()
        while self.free_bytes > cap:
            oldest, capacity = self.free_order.popitem(last=False)
            self.free[capacity].remove(oldest)
            self.free_bytes -= capacity
            self.transport.destroy_buffer(oldest)

    def acquire_staging(self, op: str, byte_len: int) -> tuple[int, int]:
        """A mappable buffer of at least ``byte_len`` bytes: the most recently returned one of
        that size class, or a new one."""
        capacity = buffer_capacity(byte_len, self.profile.max_buffer)
        for buffer_id, size in reversed(self.staging.items()):
            if size == capacity:
                del self.staging[buffer_id]
                self.staging_bytes -= capacity
                return buffer_id, capacity
        return self.create(op, capacity, True), capacity

    def return_staging(self, buffer_id: int, capacity: int) -> None:
        """Keep an unmapped staging buffer for reuse, evicting the least recently used past
        the cap (a buffer larger than the cap, or than the transport keeps, is destroyed at
        once)."""
        kept = self.transport.largest_kept_staging
        if capacity > self.staging_cap or (kept is not None and capacity > kept):
            self.transport.destroy_buffer(buffer_id)
            return
        self.staging[buffer_id] = capacity
        self.staging_bytes += capacity
        while self.staging_bytes > self.staging_cap:
            oldest, size = self.staging.popitem(last=False)
            self.staging_bytes -= size
            self.transport.destroy_buffer(oldest)
