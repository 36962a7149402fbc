"""The runtime's pools, against a transport that only records what it is asked (no GPU):
pipelines compile once even when requested concurrently, and staging buffers stay within their
byte cap, least recently used first out."""

import asyncio

import pytest

from tenferro_web.errors import OutOfDeviceMemory
from tenferro_web.lowering.kernels import KernelKey
from tenferro_web.lowering.profile import AdapterProfile
from tenferro_web.runtime.buffers import BufferPool
from tenferro_web.runtime.pipelines import PipelineCache


class RecordingTransport:
    largest_kept_staging: int | None = None

    def __init__(self):
        self.compiles: list[str] = []
        self.in_flight = self.most_in_flight = 0
        self.created: list[tuple[int, bool]] = []
        self.destroyed: list[int] = []

    async def create_pipeline_async(self, code, label, buffers):
        self.compiles.append(label)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await asyncio.sleep(0.01)  # a compile takes a while: others ask in the meantime
        self.in_flight -= 1
        if "fail" in code:
            raise RuntimeError(f"{label} does not compile")
        return len(self.compiles)

    def create_pipeline(self, code, label, buffers):
        self.compiles.append(label)
        return len(self.compiles)

    def create_buffer(self, byte_length, staging):
        self.created.append((byte_length, staging))
        return len(self.created)

    def destroy_buffer(self, buffer_id):
        self.destroyed.append(buffer_id)


def test_concurrent_requests_for_one_kernel_share_one_compile():
    transport = RecordingTransport()
    cache = PipelineCache(transport)
    a = KernelKey.of("copy_strided", ELEM="u32")
    b = KernelKey.of("copy_strided_bytes")

    async def main():
        await asyncio.gather(cache.prepare([a, b]), cache.prepare([a]), cache.prepare([b, a]))

    asyncio.run(main())
    assert sorted(transport.compiles) == sorted([a.label, b.label])
    assert cache.get(a) == cache.ready[a] and len(transport.compiles) == 2
    assert transport.most_in_flight == 2  # a program's kernels compile side by side


def test_a_failed_compile_is_raised_after_the_others_settle(monkeypatch):
    from tenferro_web.runtime import pipelines

    transport = RecordingTransport()
    cache = PipelineCache(transport)
    good = KernelKey.of("copy_strided", ELEM="u32")
    bad = KernelKey.of("copy_strided_bytes")
    shipped = pipelines.render
    monkeypatch.setattr(pipelines, "render",
                        lambda key: shipped(key) + ("// fail" if key == bad else ""))
    with pytest.raises(RuntimeError, match="does not compile"):
        asyncio.run(cache.prepare([good, bad]))
    # The good kernel is ready, nothing is left compiling, and the bad one is not cached.
    assert good in cache.ready and bad not in cache.ready and not cache.compiling


def test_staging_buffers_are_capped_least_recently_used_first():
    transport = RecordingTransport()
    pool = BufferPool(transport, AdapterProfile(cpu=True, max_buffer=1 << 30),
                      staging_cap=8 << 20)
    held = [pool.acquire_staging("download", size << 20) for size in (4, 4, 2, 1)]
    for buffer_id, capacity in held:
        pool.return_staging(buffer_id, capacity)
    # 4 + 4 + 2 + 1 MiB returned under an 8 MiB cap: the oldest 4 MiB buffer went.
    assert transport.destroyed == [held[0][0]] and pool.staging_bytes == 7 << 20
    again, capacity = pool.acquire_staging("download", 2 << 20)
    assert again == held[2][0] and capacity == 2 << 20  # reused, not created
    # Larger than the cap: used once, then gone.
    big, capacity = pool.acquire_staging("download", 16 << 20)
    pool.return_staging(big, capacity)
    assert transport.destroyed == [held[0][0], big] and pool.staging_bytes == 5 << 20


def test_staging_buffers_larger_than_the_transport_keeps_are_destroyed_after_use():
    transport = RecordingTransport()
    transport.largest_kept_staging = 2 << 20
    pool = BufferPool(transport, AdapterProfile(cpu=True, max_buffer=1 << 30),
                      staging_cap=64 << 20)
    small = pool.acquire_staging("download", 2 << 20)
    large = pool.acquire_staging("download", 4 << 20)
    pool.return_staging(*small)
    pool.return_staging(*large)
    assert transport.destroyed == [large[0]] and pool.staging_bytes == 2 << 20
    assert pool.acquire_staging("download", 2 << 20) == small  # kept, reused


class RefusingTransport(RecordingTransport):
    """Refuses allocations while more than ``budget`` bytes are live, as a full device does."""

    def __init__(self, budget):
        super().__init__()
        self.budget = budget
        self.live: dict[int, int] = {}

    def create_buffer(self, byte_length, staging):
        if sum(self.live.values()) + byte_length > self.budget:
            raise OutOfDeviceMemory("allocate", f"no room for {byte_length} bytes")
        buffer_id = super().create_buffer(byte_length, staging)
        self.live[buffer_id] = byte_length
        return buffer_id

    def destroy_buffer(self, buffer_id):
        super().destroy_buffer(buffer_id)
        self.live.pop(buffer_id, None)


def test_a_refused_allocation_empties_the_free_pools_and_retries_once():
    mib = 1 << 20
    transport = RefusingTransport(budget=8 * mib)
    pool = BufferPool(transport, AdapterProfile(cpu=True, max_buffer=1 << 30))
    kept = [pool.acquire("upload", 2 * mib, True) for _ in range(3)]
    for buffer_id, capacity in kept:
        pool.release(buffer_id, capacity)
    pool.after_submit()
    assert pool.free_bytes == 6 * mib
    # 6 MiB pooled + 4 MiB asked > 8 MiB: the pool gives its free buffers back and retries.
    buffer_id, capacity = pool.acquire("dot_general", 4 * mib, False)
    assert capacity == 4 * mib and pool.free_bytes == 0
    assert sorted(transport.destroyed) == sorted(i for i, _ in kept)
    # With nothing left to give back, the refusal reaches the caller under its op's name.
    with pytest.raises(OutOfDeviceMemory, match="^dot_general: no room for 8388608 bytes"):
        pool.acquire("dot_general", 8 * mib, False)


def test_the_default_storage_pool_keeps_what_the_workload_has_held():
    """A loop over a 300 MiB output: under a fixed 256 MiB cap every output is destroyed after
    the submit and the next allocated afresh (the device clears each new buffer); the default
    pool is sized from the most the workload held at once, so the outputs are reused."""
    mib = 1 << 20
    profile = AdapterProfile(cpu=False, max_storage_binding=1 << 31, max_buffer=1 << 31)

    def loop(pool, calls=4):
        operand, _ = pool.acquire("upload", 300 * mib, True)
        previous = None
        for _ in range(calls):
            out = pool.acquire("transpose", 300 * mib, False)
            if previous:
                pool.release(*previous)
            pool.after_submit()  # a large op is submitted at once
            previous = out
        return pool

    fixed_transport, default_transport = RecordingTransport(), RecordingTransport()
    fixed = loop(BufferPool(fixed_transport, profile, storage_cap=256 * mib))
    assert len(fixed_transport.created) == 1 + 4 and fixed.storage_cap == 256 * mib
    default = loop(BufferPool(default_transport, profile))
    assert len(default_transport.created) == 1 + 2  # the operand and two outputs in turn
    assert default.storage_cap == default.held_peak == 900 * mib
    # Small workloads keep the floor.
    assert BufferPool(RecordingTransport(), profile).storage_cap == 256 * mib


def test_free_storage_past_the_cap_goes_least_recently_freed_first():
    """A workload that moves on to another size: the sizes it no longer asks for leave the
    full pool first, so the new size is kept and reused (not allocated afresh every call)."""
    mib = 1 << 20
    transport = RecordingTransport()
    pool = BufferPool(transport, AdapterProfile(cpu=False, max_buffer=1 << 30),
                      storage_cap=8 * mib)
    old = [pool.acquire("transpose", 4 * mib, False) for _ in range(2)]
    for buffer_id, capacity in old:
        pool.release(buffer_id, capacity)
    pool.after_submit()
    assert pool.free_bytes == 8 * mib and not transport.destroyed
    for _ in range(3):  # the new size: each call's output released, the next one reuses it
        new = pool.acquire("sum", 2 * mib, False)
        pool.release(*new)
        pool.after_submit()
    assert transport.destroyed == [old[0][0]]  # the older of the stale 4 MiB buffers went
    assert len(transport.created) == 3 and pool.free_bytes == 6 * mib
    # Larger than the cap: destroyed once released.
    big = pool.acquire("transpose", 16 * mib, False)
    pool.release(*big)
    pool.after_submit()
    assert transport.destroyed[-1] == big[0] and pool.free_bytes == 6 * mib
