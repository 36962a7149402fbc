"""Device memory a runtime holds through the download workload of issue 11: sixteen sizes
from 4 to 64 MiB, uploaded and downloaded one after another. Reports the peak and the final
bytes of live GPU buffers (the bridge's), with the default pool caps and with no caps.

    node --import tools/dawn_host.mjs tools/dawn_run.mjs build/pyodide \\
        --module bench/memory.py memory:main
"""

import numpy as np

import tenferro_web as tw

MIB = 1 << 20


async def workload(**caps: int) -> tuple[int, int]:
    rt = await tw.WebGpuRuntime.create(**caps)
    buffers = rt.device.transport._ctx.buffers
    peak = 0
    try:
        for i in range(16):
            n = (4 * MIB + i * (60 * MIB) // 15) // 4
            t = rt.upload(np.full(n, i, np.float32))
            out = await t.download()
            assert out[0] == i and out[-1] == i
            del t, out
            peak = max(peak, sum(b.size for b in buffers.values()))
        await rt.synchronize()
        return peak, sum(b.size for b in buffers.values())
    finally:
        rt.close()


async def main(*_: str) -> int:
    unbounded = 1 << 40
    for name, caps in (("default caps", {}),
                       ("no caps", {"storage_pool_bytes": unbounded,
                                    "staging_pool_bytes": unbounded})):
        peak, final = await workload(**caps)
        print(f"{name:>13}: peak {peak / MIB:7.1f} MiB, held after {final / MIB:7.1f} MiB "
              f"(largest transfer 64 MiB)")
    return 0
