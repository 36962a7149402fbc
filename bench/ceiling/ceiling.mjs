// The bandwidth ceiling through Dawn in Node.js (bench/ceiling/ceiling.wgsl, timestamp queries):
//   node --import tools/dawn_host.mjs bench/ceiling/ceiling.mjs [MiB] [buffers]
// Prints `RESULT {json}`: per kernel, the median GPU time of 10 passes over the buffer and the
// GB/s (bytes read, plus bytes written for the copy). Same rule as ceiling.py (wgpu-native).
// With buffers > 1 it also sums each of that many more sources, created with the runtime's
// usage and filled with random data, each after buffers of other sizes were created, filled and
// destroyed (`placement`: whether Dawn's sum speed depends on where a buffer lands).
import { readFileSync } from "node:fs";

const mib = Number(process.argv[2] ?? 256);
const placed = Number(process.argv[3] ?? 1);
const WORKGROUPS = 8192;
const vec4s = (mib << 20) / 16;
const adapter = await navigator.gpu.requestAdapter();
const device = await adapter.requestDevice({
  requiredFeatures: ["timestamp-query"],
  requiredLimits: {
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    maxBufferSize: adapter.limits.maxBufferSize,
  },
});
const code = readFileSync(new URL("./ceiling.wgsl", import.meta.url), "utf8");
const module = device.createShaderModule({ code });
const S = GPUBufferUsage.STORAGE;
const params = device.createBuffer({ size: 16, usage: S | GPUBufferUsage.COPY_DST });
device.queue.writeBuffer(params, 0, new Uint32Array([vec4s, 0, 0, 0]));
const src = device.createBuffer({ size: mib << 20, usage: S | GPUBufferUsage.COPY_DST });
const dst = device.createBuffer({ size: mib << 20, usage: S });
const query = device.createQuerySet({ type: "timestamp", count: 2 });
const resolved = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
const read = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });

// The median time of 10 passes of `kernel` from `source` (after 3 that warm the clocks).
async function timed(kernel, source) {
  const pipeline = pipelines[kernel];
  const group = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [params, source, dst].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const times = [];
  for (let trial = 0; trial < 13; trial++) {
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass({
      timestampWrites: { querySet: query, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 },
    });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(WORKGROUPS);
    pass.end();
    encoder.resolveQuerySet(query, 0, 2, resolved, 0);
    encoder.copyBufferToBuffer(resolved, 0, read, 0, 16);
    device.queue.submit([encoder.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const [begin, end] = new BigUint64Array(read.getMappedRange());
    read.unmap();
    if (trial >= 3) times.push(Number(end - begin) / 1e9);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1];
}

const pipelines = Object.fromEntries(["copy", "sum"].map((kernel) => [kernel,
  device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: kernel } })]));
const result = {};
for (const [kernel, moved] of [["copy", 2], ["sum", 1]]) {
  const seconds = await timed(kernel, src);
  result[kernel] = { seconds, gbps: (moved * (mib << 20)) / seconds / 1e9 };
  console.log(`ceiling ${kernel} ${mib} MiB: ${(seconds * 1e3).toFixed(3)} ms, ${result[kernel].gbps.toFixed(0)} GB/s`);
}
if (placed > 1) {
  const usage = S | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;  // the runtime's storage
  const chunk = new Float32Array(16 << 20).map(() => Math.random());
  const fill = (buffer, bytes) => {
    for (let at = 0; at < bytes; at += chunk.byteLength) {
      device.queue.writeBuffer(buffer, at, chunk, 0, Math.min(chunk.length, (bytes - at) / 4));
    }
  };
  const sources = [];
  const seconds = [];
  for (let b = 0; b < placed; b++) {
    const churn = [1, 3, 64, 130, 257].map((m) => {
      const buffer = device.createBuffer({ size: ((m * (b + 1)) % 300 + 1) << 20, usage });
      fill(buffer, buffer.size);
      return buffer;
    });
    const source = device.createBuffer({ size: mib << 20, usage });
    fill(source, mib << 20);
    await device.queue.onSubmittedWorkDone();
    churn.forEach((buffer) => buffer.destroy());
    sources.push(source);
    seconds.push(await timed("sum", source));
  }
  const again = await timed("sum", sources[0]);
  result.placement = { sum_seconds: seconds, first_again: again };
  console.log(`placement: sum of ${placed} random ${mib} MiB sources, ms: ` +
    seconds.map((t) => (t * 1e3).toFixed(3)).join(" ") + `; the first again ${(again * 1e3).toFixed(3)}`);
}
console.log("RESULT " + JSON.stringify({ lane: "dawn", mib, ...result }));
process.exit(0);
