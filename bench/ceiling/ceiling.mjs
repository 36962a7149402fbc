// The bandwidth ceiling through Dawn in Node.js (bench/ceiling/ceiling.wgsl, timestamp queries):
//   node --import tools/dawn_host.mjs bench/ceiling/ceiling.mjs [MiB]
// Prints `RESULT {json}`: per kernel, the median GPU time of 10 passes over the buffer and the
// GB/s (bytes read, plus bytes written for the copy). Same rule as ceiling.py (wgpu-native).
import { readFileSync } from "node:fs";

const mib = Number(process.argv[2] ?? 256);
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

const result = {};
for (const [kernel, moved] of [["copy", 2], ["sum", 1]]) {
  const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: kernel } });
  const group = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [params, src, dst].map((buffer, binding) => ({ binding, resource: { buffer } })),
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
    if (trial >= 3) times.push(Number(end - begin) / 1e9);  // the first three warm the clocks
  }
  times.sort((a, b) => a - b);
  const seconds = times[times.length >> 1];
  result[kernel] = { seconds, gbps: (moved * (mib << 20)) / seconds / 1e9 };
  console.log(`ceiling ${kernel} ${mib} MiB: ${(seconds * 1e3).toFixed(3)} ms, ${result[kernel].gbps.toFixed(0)} GB/s`);
}
console.log("RESULT " + JSON.stringify({ lane: "dawn", mib, ...result }));
process.exit(0);
