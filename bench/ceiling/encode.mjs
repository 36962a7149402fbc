// The JavaScript cost of encoding one dispatch the way js/bridge.mjs does (setBindGroup with a
// dynamic offset, then dispatchWorkgroups), in the host it runs in:
//   node --import tools/dawn_host.mjs bench/ceiling/encode.mjs   (Dawn's Node binding, npm webgpu)
//   .venv/bin/python bench/ceiling/encode_page.py                (Chromium's binding, a page)
// Per variant: 2000 dispatches of one workgroup in one compute pass, the encoding timed on the
// host's clock (median and best of 15 passes, after one untimed), the submit apart. The
// variants tell how much of a dispatch is the bind group call: the offset from a Uint32Array
// range (the bridge's form in browsers), as a JS Array (its form in Node), with no dynamic
// offset, and the bind group alone. Prints `RESULT {json}` in Node; a page reads
// `globalThis.encodeResult`.
const DISPATCHES = 2000;
const PASSES = 15;

const adapter = await navigator.gpu.requestAdapter();
const device = await adapter.requestDevice();
const code = `
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < params[0]) { c[g.x] = a[g.x]; }
}`;
const module = device.createShaderModule({ code });
const storage = (type, hasDynamicOffset) => ({
  visibility: GPUShaderStage.COMPUTE, buffer: { type, hasDynamicOffset },
});
const S = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
const params = device.createBuffer({ size: 1 << 16, usage: S });
const buffers = [0, 1, 2].map(() => device.createBuffer({ size: 16384, usage: S }));

// The bridge's shape: parameters bound at a dynamic offset, operands and output after them.
function setup(dynamic) {
  const layout = device.createBindGroupLayout({
    entries: [storage("read-only-storage", dynamic), storage("read-only-storage", false),
      storage("storage", false)].map((entry, binding) => ({ binding, ...entry })),
  });
  const pipeline = device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
    compute: { module, entryPoint: "main" },
  });
  // Three groups over rotating buffers, as a chain's outputs alternate between pooled buffers.
  const groups = [0, 1, 2].map((i) => device.createBindGroup({
    layout,
    entries: [params, buffers[i], buffers[(i + 1) % 3]].map((buffer, binding) => (
      { binding, resource: binding === 0 ? { buffer, size: 256 } : { buffer } })),
  }));
  return { pipeline, groups };
}

const dynamic = setup(true);
const fixed = setup(false);
const offset = new Uint32Array(1);
const offsetArray = [0];
// Each variant: the bind group layout it needs, and what it encodes per dispatch.
const variants = {
  "setBindGroup (Uint32Array offset) + dispatch": [dynamic, (pass, group) => {
    pass.setBindGroup(0, group, offset, 0, 1);
    pass.dispatchWorkgroups(1);
  }],
  "setBindGroup (Array offset) + dispatch": [dynamic, (pass, group) => {
    pass.setBindGroup(0, group, offsetArray);
    pass.dispatchWorkgroups(1);
  }],
  "setBindGroup (no dynamic offset) + dispatch": [fixed, (pass, group) => {
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(1);
  }],
  "setBindGroup (Uint32Array offset) alone": [dynamic, (pass, group) => {
    pass.setBindGroup(0, group, offset, 0, 1);
  }],
};

async function timed({ pipeline, groups }, encode) {
  const encodeUs = [];
  const submitUs = [];
  for (let trial = -1; trial < PASSES; trial++) { // trial -1 warms up, untimed
    const start = performance.now();
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    for (let i = 0; i < DISPATCHES; i++) encode(pass, groups[i % 3]);
    pass.end();
    const commands = encoder.finish();
    const encoded = performance.now();
    device.queue.submit([commands]);
    if (trial >= 0) {
      submitUs.push(((performance.now() - encoded) * 1e3) / DISPATCHES);
      encodeUs.push(((encoded - start) * 1e3) / DISPATCHES);
    }
    await device.queue.onSubmittedWorkDone();
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
  return { encode_us: median(encodeUs), best_encode_us: Math.min(...encodeUs),
    submit_us: median(submitUs) };
}

const result = { host: navigator.userAgent, dispatches: DISPATCHES, variants: {} };
for (const [name, [binding, encode]] of Object.entries(variants)) {
  const row = (result.variants[name] = await timed(binding, encode));
  console.log(`encode ${name}: ${row.encode_us.toFixed(2)} us per dispatch (best ` +
    `${row.best_encode_us.toFixed(2)}), submit ${row.submit_us.toFixed(2)}`);
}
globalThis.encodeResult = result;
if (globalThis.process?.versions?.node) {
  console.log("RESULT " + JSON.stringify(result));
  process.exit(0);
}
