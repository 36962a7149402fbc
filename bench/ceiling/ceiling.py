"""The bandwidth ceiling through wgpu-native (ceiling.wgsl, timestamp queries), by the rule of
ceiling.mjs (Dawn): ``python bench/ceiling/ceiling.py [MiB]``."""

import json
import statistics
import sys
from pathlib import Path

import numpy as np
import wgpu

WORKGROUPS = 8192


def main(mib: int) -> dict:
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    device = adapter.request_device_sync(
        required_features=["timestamp-query"],
        required_limits={"max-storage-buffer-binding-size":
                         adapter.limits["max-storage-buffer-binding-size"],
                         "max-buffer-size": adapter.limits["max-buffer-size"]})
    module = device.create_shader_module(code=(Path(__file__).parent / "ceiling.wgsl").read_text())
    usage = wgpu.BufferUsage
    size = mib << 20
    params = device.create_buffer_with_data(data=np.array([size // 16, 0, 0, 0], np.uint32),
                                            usage=usage.STORAGE)
    src = device.create_buffer(size=size, usage=usage.STORAGE | usage.COPY_DST)
    dst = device.create_buffer(size=size, usage=usage.STORAGE)
    query = device.create_query_set(type="timestamp", count=2)
    resolved = device.create_buffer(size=16, usage=usage.QUERY_RESOLVE | usage.COPY_SRC)
    result = {"lane": "native", "mib": mib}
    for kernel, moved in (("copy", 2), ("sum", 1)):
        pipeline = device.create_compute_pipeline(layout="auto",
                                                  compute={"module": module, "entry_point": kernel})
        group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
            {"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}}
            for i, b in enumerate((params, src, dst))])
        times = []
        for trial in range(13):
            encoder = device.create_command_encoder()
            compute = encoder.begin_compute_pass(timestamp_writes={
                "query_set": query, "beginning_of_pass_write_index": 0,
                "end_of_pass_write_index": 1})
            compute.set_pipeline(pipeline)
            compute.set_bind_group(0, group)
            compute.dispatch_workgroups(WORKGROUPS)
            compute.end()
            encoder.resolve_query_set(query, 0, 2, resolved, 0)
            device.queue.submit([encoder.finish()])
            begin, end = np.frombuffer(device.queue.read_buffer(resolved), np.uint64)
            if trial >= 3:  # the first three warm the clocks
                times.append(int(end - begin) / 1e9)
        seconds = statistics.median(times)
        result[kernel] = {"seconds": seconds, "gbps": moved * size / seconds / 1e9}
        print(f"ceiling {kernel} {mib} MiB: {seconds * 1e3:.3f} ms, "
              f"{result[kernel]['gbps']:.0f} GB/s", flush=True)
    return result


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 256)))
