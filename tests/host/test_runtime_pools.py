"""The runtime's pools, against a transport that only records what it is asked (no GPU):
pipelines compile once even when requested concurrently, and staging buffers stay within their
byte cap, least recently used first out."""

import asyncio

from tenferro_web.lowering.kernels import KernelKey
from tenferro_web.lowering.profile import AdapterProfile
from tenferro_web.runtime.buffers import BufferPool
from tenferro_web.runtime.pipelines import PipelineCache


class RecordingTransport:
    def __init__(self):
        self.compiles: list[str] = []
        self.created: list[tuple[int, bool]] = []
        self.destroyed: list[int] = []

    async def create_pipeline_async(self, code, label):
        self.compiles.append(label)
        await asyncio.sleep(0.01)  # a compile takes a while: others ask in the meantime
        return len(self.compiles)

    def create_pipeline(self, code, label):
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


def test_staging_buffers_are_capped_least_recently_used_first():
    transport = RecordingTransport()
    pool = BufferPool(transport, AdapterProfile(cpu=True, max_buffer=1 << 30),
                      staging_cap=8 << 20)
    held = [pool.acquire_staging(size << 20) for size in (4, 4, 2, 1)]
    for buffer_id, capacity in held:
        pool.return_staging(buffer_id, capacity)
    # 4 + 4 + 2 + 1 MiB returned under an 8 MiB cap: the oldest 4 MiB buffer went.
    assert transport.destroyed == [held[0][0]] and pool.staging_bytes == 7 << 20
    again, capacity = pool.acquire_staging(2 << 20)
    assert again == held[2][0] and capacity == 2 << 20  # reused, not created
    big, capacity = pool.acquire_staging(16 << 20)  # larger than the cap: used once, then gone
    pool.return_staging(big, capacity)
    assert transport.destroyed == [held[0][0], big] and pool.staging_bytes == 5 << 20
