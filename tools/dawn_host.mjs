// Chrome's WebGPU (Dawn) in Node.js, as a browser would offer it: `node --import
// tools/dawn_host.mjs ...` gives the process `navigator.gpu` and the GPU* globals (GPUBufferUsage,
// GPUMapMode, ...) from the npm package `webgpu`, which ships Dawn as a prebuilt Node addon.
// Pyodide's JavaScript and this package's bridge then run unchanged. Dawn options (its toggles,
// `backend=vulkan`, `adapter=...`) come space-separated from TENFERRO_DAWN_OPTIONS.
import { create, globals } from "webgpu";

Object.assign(globalThis, globals);
const options = (process.env.TENFERRO_DAWN_OPTIONS ?? "").split(" ").filter(Boolean);
Object.defineProperty(globalThis, "navigator", {
  value: { gpu: create(options), userAgent: `Node.js/${process.versions.node} Dawn` },
  configurable: true,
  writable: true,
});
