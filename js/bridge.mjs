// tenferro-web's only JavaScript: a thin layer between Python (Pyodide) and navigator.gpu.
//
// Python owns every decision (buffers, pipelines, what to dispatch); this module turns compact
// descriptions into WebGPU calls. Work arrives as one command stream per flush (Uint32 words,
// see `submit`), so an op costs Python no JavaScript call until readback or synchronize().
// Uses globalThis, never window: it runs on the main thread and in Web Workers alike.

const OP_DISPATCH = 1; // pipeline, paramOffsetWords, paramCountWords, x, y, z, nBuffers, ids...
const OP_COPY = 2; //     srcId, srcOffset, dstId, dstOffset, byteLength
const OP_CLEAR = 3; //    id, offset, byteLength
// Bind groups kept for reuse (bindGroup); transport/protocol.py has the same number.
const MAX_BIND_GROUPS = 4096;

// Limits asked for at their adapter maxima: the defaults (128-256 MiB) are far below what
// adapters offer, and tensors are bounded by these.
const LIMITS = [
  "maxBufferSize",
  "maxStorageBufferBindingSize",
  "maxComputeWorkgroupsPerDimension",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY",
  "maxComputeWorkgroupSizeZ",
  "maxComputeWorkgroupStorageSize",
  "maxStorageBuffersPerShaderStage",
];
const OPTIONAL_FEATURES = ["subgroups", "shader-f16", "timestamp-query"];

// Python's memory (the wasm heap, through the Emscripten module Pyodide runs in): command
// streams, parameters and transfers are read and written in place at the addresses Python
// passes, with no proxy per call (two PyProxy + getBuffer pairs cost each submit about 50 us
// in Pyodide). Its HEAPU8 view is replaced when the heap grows, so it is looked up each time.
let pythonHeap = null;

export function usePythonMemory(module) {
  pythonHeap = module;
}

function heapBytes(address, byteLength) {
  return pythonHeap.HEAPU8.subarray(address, address + byteLength);
}

function heapWords(address, count) {
  if (address % 4) throw new BridgeError("gpu", `unaligned word array at ${address}`);
  return pythonHeap.HEAPU32.subarray(address / 4, address / 4 + count);
}

// Firefox (Gecko), in a page or a worker: device promises wait for its GPU process's poll
// (DeviceContext.reached).
const NEEDS_POLL_NUDGE =
  typeof navigator !== "undefined" && /\bFirefox\//.test(navigator.userAgent ?? "");

// Node.js (with Dawn's binding, npm `webgpu`) rather than a browser's window or worker.
const IN_NODE = Boolean(globalThis.process?.versions?.node);

// One turn of the event loop (a macrotask: setTimeout exists in windows, workers and Node).
function nextTurn() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

export class BridgeError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = "BridgeError";
    this.kind = kind; // "no-webgpu" | "no-adapter" | "device" | "lost" | "gpu"
  }
}

// Firefox's validation error for a WGSL module says only "Parsing error"; the compiler's own
// messages (line, column, what is wrong) come from getCompilationInfo, in every engine.
async function withCompilerMessages(message, module) {
  let info = null;
  try {
    info = await module.getCompilationInfo();
  } catch {
    return message;
  }
  // naga's messages draw the source under the first line: the first line says what is wrong.
  const errors = info.messages.filter((m) => m.type === "error" && !message.includes(m.message))
    .map((m) => `${m.lineNum}:${m.linePos}: ${m.message.trim().split("\n")[0]}`);
  return errors.length ? `${message} (${errors.join("; ")})` : message;
}

export function hasWebGpu() {
  return Boolean(globalThis.navigator && globalThis.navigator.gpu);
}

export async function openDevice(powerPreference) {
  if (!hasWebGpu()) {
    throw new BridgeError("no-webgpu", "navigator.gpu is missing: this browser or context has no WebGPU");
  }
  const options = powerPreference ? { powerPreference } : {};
  const adapter = await globalThis.navigator.gpu.requestAdapter(options);
  if (!adapter) {
    throw new BridgeError("no-adapter", "navigator.gpu.requestAdapter() returned no adapter");
  }
  const requiredLimits = {};
  for (const name of LIMITS) requiredLimits[name] = adapter.limits[name];
  const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f));
  let device;
  try {
    device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  } catch (e) {
    throw new BridgeError("device", `requestDevice failed: ${e.message ?? e}`);
  }
  return new DeviceContext(adapter, device);
}

export class DeviceContext {
  constructor(adapter, device) {
    this.adapter = adapter;
    this.device = device;
    this.buffers = new Map();
    this.nextBufferId = 1;
    this.pipelines = [];
    this.layouts = new Map(); // buffer accesses ("read,read_write") -> the layout they share
    this.pipelineLayouts = []; // per pipeline id
    // Bind groups by layout, params size and buffer ids: a dispatch over the same buffers as an
    // earlier one reuses its group (params come at a dynamic offset). Buffer ids are never
    // reused, and a destroyed buffer's groups are dropped with it.
    this.bindGroups = new Map(); // key -> { group, ids }
    this.bindGroupsOf = new Map(); // buffer id -> Set of keys
    // The params' dynamic offset, in the form the host's binding converts fastest: Dawn's Node
    // binding a JS Array (a chain's 48-dispatch submit 0.5 us per dispatch less), a browser's
    // a Uint32Array range (bench/ceiling/encode_page.py: the Array 0.15-0.25 us more).
    this.dynamicOffset = IN_NODE ? [0] : new Uint32Array(1);
    this.paramsBuffer = null;
    this.paramsAlign = device.limits.minStorageBufferOffsetAlignment;
    this.lostReason = null;
    this.errors = [];
    this.outOfMemory = []; // [bufferId, message] of allocations the device refused
    this.rejected = []; // [stream, message] of submits the device rejected
    this.brokenPipelines = []; // [pipelineId, message] of pipelines it could not create
    this.scopes = []; // the error scopes of all three, until a barrier has awaited them
    this.timing = null; // while kernels are timed: [{ querySet, readback, count }] per submit
    device.lost.then((info) => {
      this.lostReason = `${info.reason}: ${info.message}`;
    });
    device.addEventListener("uncapturederror", (event) => {
      this.errors.push(`${event.error.constructor.name}: ${event.error.message}`);
    });
  }

  describe() {
    const info = this.adapter.info ?? {};
    const limits = {};
    for (const name of LIMITS) limits[name] = this.device.limits[name];
    limits.minStorageBufferOffsetAlignment = this.device.limits.minStorageBufferOffsetAlignment;
    return {
      vendor: info.vendor ?? "",
      architecture: info.architecture ?? "",
      device: info.device ?? "",
      description: info.description ?? "",
      isFallbackAdapter: Boolean(info.isFallbackAdapter ?? this.adapter.isFallbackAdapter),
      features: [...this.device.features].sort(),
      limits,
      context: typeof globalThis.document !== "undefined" ? "window"
        : IN_NODE ? "node" : "worker",
    };
  }

  // Errors the device reported since the last call (uncaptured validation/internal errors,
  // refused allocations) and the loss reason; Python turns them into typed exceptions at its
  // sync points.
  takeErrors() {
    const state = {
      lost: this.lostReason, errors: this.errors, outOfMemory: this.outOfMemory,
      rejected: this.rejected, brokenPipelines: this.brokenPipelines,
    };
    this.errors = [];
    this.outOfMemory = [];
    this.rejected = [];
    this.brokenPipelines = [];
    return state;
  }

  // Allocation answers asynchronously: an out-of-memory error scope around each new buffer
  // records a refusal by id, and every barrier awaits the scopes opened before it, so Python
  // learns of a refusal at the first sync point after the allocation (likewise pipelines
  // created synchronously and submits, in validation scopes).
  createBuffer(byteLength, staging) {
    const usage = staging
      ? GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST
      : GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const id = this.nextBufferId++;
    this.device.pushErrorScope("out-of-memory");
    this.buffers.set(id, this.device.createBuffer({ size: byteLength, usage }));
    this.answer(this.outOfMemory, id);
    return id;
  }

  // Pops the innermost error scope; its error, if any, is recorded in `list` under `key`.
  answer(list, key, prefix = "") {
    this.scopes.push(this.device.popErrorScope().then(
      (error) => { if (error) list.push([key, prefix + error.message]); },
      () => {}, // a lost device rejects the scope; device.lost reports that
    ));
  }

  async scopesAnswered() {
    const pending = this.scopes;
    this.scopes = [];
    await Promise.all(pending);
  }

  destroyBuffer(id) {
    const buffer = this.buffers.get(id);
    if (buffer) {
      for (const key of [...(this.bindGroupsOf.get(id) ?? [])]) this.dropBindGroup(key);
      this.bindGroupsOf.delete(id);
      buffer.destroy();
      this.buffers.delete(id);
    }
  }

  // Every kernel binds read-only params at 0 (a dynamic offset into the shared params buffer),
  // then its buffers; `buffers` lists their accesses, so kernels alike share one layout.
  layoutFor(buffers) {
    let layout = this.layouts.get(buffers);
    if (!layout) {
      const stage = GPUShaderStage.COMPUTE;
      const entries = [{
        binding: 0,
        visibility: stage,
        buffer: { type: "read-only-storage", hasDynamicOffset: true },
      }];
      buffers.split(",").forEach((access, b) => {
        if (access !== "read" && access !== "read_write") {
          throw new BridgeError("gpu", `unknown buffer access ${access}`);
        }
        entries.push({
          binding: b + 1,
          visibility: stage,
          buffer: { type: access === "read" ? "read-only-storage" : "storage" },
        });
      });
      const groupLayout = this.device.createBindGroupLayout({ entries });
      layout = {
        id: this.layouts.size,
        groupLayout,
        pipelineLayout: this.device.createPipelineLayout({ bindGroupLayouts: [groupLayout] }),
      };
      this.layouts.set(buffers, layout);
    }
    return layout;
  }

  bindGroup(layout, paramsSize, words, start, count) {
    let key = `${layout.id}:${paramsSize}`;
    for (let b = 0; b < count; b++) key += `,${words[start + b]}`;
    const cached = this.bindGroups.get(key);
    if (cached) return cached.group;
    const ids = Array.from(words.subarray(start, start + count));
    const entries = [{ binding: 0, resource: { buffer: this.paramsBuffer, size: paramsSize } }];
    ids.forEach((id, b) => {
      entries.push({ binding: b + 1, resource: { buffer: this.buffers.get(id) } });
    });
    const group = this.device.createBindGroup({ layout: layout.groupLayout, entries });
    if (this.bindGroups.size >= MAX_BIND_GROUPS) {
      this.dropBindGroup(this.bindGroups.keys().next().value); // the oldest
    }
    this.bindGroups.set(key, { group, ids });
    for (const id of ids) {
      let keys = this.bindGroupsOf.get(id);
      if (!keys) this.bindGroupsOf.set(id, (keys = new Set()));
      keys.add(key);
    }
    return group;
  }

  dropBindGroup(key) {
    const entry = this.bindGroups.get(key);
    if (!entry) return;
    this.bindGroups.delete(key);
    for (const id of entry.ids) this.bindGroupsOf.get(id)?.delete(key);
  }

  // Upload: one copy, straight from Python's bytes at `address`.
  writeBuffer(id, byteOffset, address, byteLength) {
    this.device.queue.writeBuffer(this.buffers.get(id), byteOffset, heapBytes(address, byteLength));
  }

  // A pipeline the device cannot create is answered at the next barrier (brokenPipelines), and
  // so is each submit that used it (rejected).
  createPipeline(code, label, buffers) {
    const device = this.device;
    const layout = this.layoutFor(buffers);
    device.pushErrorScope("validation");
    const descriptor = this.pipelineDescriptor(code, label, layout);
    const id = this.addPipeline(device.createComputePipeline(descriptor), layout);
    this.scopes.push(device.popErrorScope().then(
      async (error) => {
        if (error) {
          const message = await withCompilerMessages(error.message, descriptor.compute.module);
          this.brokenPipelines.push([id, `pipeline ${label}: ${message}`]);
        }
      },
      () => {}, // a lost device rejects the scope; device.lost reports that
    ));
    return id;
  }

  // Called inside the caller's validation scope: the shader module's errors are the pipeline's.
  pipelineDescriptor(code, label, layout) {
    const module = this.device.createShaderModule({ code, label });
    return { label, layout: layout.pipelineLayout, compute: { module, entryPoint: "main" } };
  }

  addPipeline(pipeline, layout) {
    this.pipelines.push(pipeline);
    this.pipelineLayouts.push(layout);
    return this.pipelines.length - 1;
  }

  // A WGSL error is this pipeline's failure, reported here once with the compiler's message:
  // the shader module's error is scoped, or it would also surface later as an uncaptured error
  // and fail whatever op next reaches a barrier.
  async createPipelineAsync(code, label, buffers) {
    const device = this.device;
    const layout = this.layoutFor(buffers);
    device.pushErrorScope("validation");
    const descriptor = this.pipelineDescriptor(code, label, layout);
    const compiled = device.createComputePipelineAsync(descriptor);
    const [moduleError, pipeline] = await Promise.allSettled([device.popErrorScope(), compiled]);
    const failure = moduleError.value?.message ?? pipeline.reason?.message ?? pipeline.reason;
    if (failure !== undefined) {
      const message = await withCompilerMessages(String(failure), descriptor.compute.module);
      throw new BridgeError("gpu", `pipeline ${label}: ${message}`);
    }
    return this.addPipeline(pipeline.value, layout);
  }

  // Encode and submit one command stream: `commandCount` and `paramCount` uint32 words at
  // those addresses of Python's memory; params are laid out by Python at `paramsAlign`-byte
  // boundaries. `stream` numbers it for Python: a submit the device rejects (none of it runs)
  // is answered at the next barrier by that number.
  submit(commandsAddress, commandCount, paramsAddress, paramCount, stream) {
    this.device.pushErrorScope("validation");
    try {
      this.encodeAndSubmit(heapWords(commandsAddress, commandCount),
        heapWords(paramsAddress, paramCount));
    } finally {
      this.answer(this.rejected, stream);
    }
  }

  encodeAndSubmit(words, params) {
    const device = this.device;
    if (params.length > 0) {
      const bytes = params.byteLength;
      if (!this.paramsBuffer || this.paramsBuffer.size < bytes) {
        // Queue order makes the old buffer safe to drop: earlier submits already hold it. The
        // bind groups that bound it go with it.
        if (this.paramsBuffer) this.paramsBuffer.destroy();
        this.bindGroups.clear();
        this.bindGroupsOf.clear();
        this.paramsBuffer = device.createBuffer({
          size: Math.max(bytes, 1 << 16),
          usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
        });
      }
      device.queue.writeBuffer(this.paramsBuffer, 0, params);
    }
    const encoder = device.createCommandEncoder();
    // Timed: each dispatch is a compute pass of its own, with a timestamp at its beginning
    // and end (Python bounds how many dispatches a stream holds), resolved here.
    const timed = this.timing && this.timedSubmit(words);
    let passes = 0;
    let pass = null;
    let bound = null; // the pass's pipeline: a chain of one kernel sets it once
    let i = 0;
    while (i < words.length) {
      const op = words[i];
      if (op === OP_DISPATCH) {
        const pipeline = this.pipelines[words[i + 1]];
        const count = words[i + 7];
        const group = this.bindGroup(this.pipelineLayouts[words[i + 1]], words[i + 3] * 4, words,
          i + 8, count);
        if (!pass) {
          pass = encoder.beginComputePass(timed ? {
            timestampWrites: {
              querySet: timed.querySet,
              beginningOfPassWriteIndex: 2 * passes,
              endOfPassWriteIndex: 2 * passes + 1,
            },
          } : {});
          passes += 1;
          bound = null;
        }
        if (pipeline !== bound) {
          pass.setPipeline(pipeline);
          bound = pipeline;
        }
        this.dynamicOffset[0] = words[i + 2] * 4;
        if (IN_NODE) pass.setBindGroup(0, group, this.dynamicOffset);
        else pass.setBindGroup(0, group, this.dynamicOffset, 0, 1);
        pass.dispatchWorkgroups(words[i + 4], words[i + 5], words[i + 6]);
        if (timed) {
          pass.end();
          pass = null;
        }
        i += 8 + count;
        continue;
      }
      if (pass) {
        pass.end();
        pass = null;
      }
      if (op === OP_COPY) {
        encoder.copyBufferToBuffer(
          this.buffers.get(words[i + 1]), words[i + 2],
          this.buffers.get(words[i + 3]), words[i + 4], words[i + 5],
        );
        i += 6;
      } else if (op === OP_CLEAR) {
        encoder.clearBuffer(this.buffers.get(words[i + 1]), words[i + 2], words[i + 3]);
        i += 4;
      } else {
        throw new BridgeError("gpu", `unknown command word ${op} at ${i}`);
      }
    }
    if (pass) pass.end();
    if (timed && passes > 0) {
      const resolve = device.createBuffer({
        size: 16 * passes, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
      });
      timed.readback = device.createBuffer({
        size: 16 * passes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
      });
      timed.count = 2 * passes;
      encoder.resolveQuerySet(timed.querySet, 0, timed.count, resolve, 0);
      encoder.copyBufferToBuffer(resolve, 0, timed.readback, 0, 16 * passes);
      device.queue.submit([encoder.finish()]);
      resolve.destroy(); // after submit: the queue keeps what it uses alive
    } else {
      device.queue.submit([encoder.finish()]);
    }
  }

  // Kernel timing (needs the "timestamp-query" feature): every dispatch submitted between
  // begin and end runs in a compute pass of its own, timed; end returns their durations.
  beginKernelTiming() {
    this.timing = [];
  }

  timedSubmit(words) {
    let passes = 0;
    for (let i = 0; i < words.length;) {
      const op = words[i];
      if (op === OP_DISPATCH) passes += 1;
      i += op === OP_DISPATCH ? 8 + words[i + 7] : op === OP_COPY ? 6 : 4;
    }
    if (passes === 0) return null;
    const timed = {
      querySet: this.device.createQuerySet({ type: "timestamp", count: 2 * passes }),
      readback: null,
      count: 0,
    };
    this.timing.push(timed);
    return timed;
  }

  // The durations of the timed dispatches in nanoseconds, in submit order.
  async endKernelTiming() {
    const timed = this.timing ?? [];
    this.timing = null;
    const durations = [];
    try {
      for (const { readback, count } of timed) {
        if (!readback) continue;
        await this.reached(readback.mapAsync(GPUMapMode.READ));
        const stamps = new BigUint64Array(readback.getMappedRange(), 0, count);
        for (let p = 0; p < count; p += 2) durations.push(Number(stamps[p + 1] - stamps[p]));
        readback.unmap();
      }
    } catch (e) {
      throw new BridgeError(this.lostReason ? "lost" : "gpu", `timestamps: ${e.message ?? e}`);
    } finally {
      for (const { querySet, readback } of timed) {
        querySet.destroy();
        readback?.destroy();
      }
    }
    return durations;
  }

  // A device promise that settles when the device timeline gets there (mapAsync,
  // onSubmittedWorkDone). Firefox's GPU process settles those only when it polls its devices:
  // on a 100 ms timer, or at a queue submit. So in Firefox, while one is pending after a turn of
  // the event loop, an empty submit each turn asks for that poll: a 4-byte download on lavapipe
  // takes 1 ms instead of 100 (`make bench BROWSER=firefox`, docs/performance.md). Chromium
  // and Dawn in Node settle it on their own, and there the empty submits cost: 100 chained
  // small products through Chromium on SwiftShader took 148-159 us/op with them, 106-122
  // without (`make bench QUICK=1`, two runs each, alternated).
  async reached(promise) {
    if (!NEEDS_POLL_NUDGE) return promise;
    let pending = true;
    const watched = promise.finally(() => {
      pending = false;
    });
    await Promise.race([watched, nextTurn()]);
    while (pending) {
      this.device.queue.submit([]);
      await Promise.race([watched, nextTurn()]);
    }
    return watched;
  }

  async synchronize() {
    await this.reached(this.device.queue.onSubmittedWorkDone());
    await this.scopesAnswered();
  }

  // Readback, part 1: wait until the staging buffer is mapped (Python encoded the copy into it).
  async mapStaging(stagingId) {
    const staging = this.buffers.get(stagingId);
    try {
      await this.reached(staging.mapAsync(GPUMapMode.READ));
    } catch (e) {
      throw new BridgeError(this.lostReason ? "lost" : "gpu", `mapAsync failed: ${e.message ?? e}`);
    } finally {
      await this.scopesAnswered();
    }
  }

  // Readback, part 2 (synchronous, so the wasm heap cannot move underneath): one copy from the
  // mapped range into Python's bytes at `address`, then unmap.
  copyMapped(stagingId, address, byteLength) {
    const staging = this.buffers.get(stagingId);
    try {
      heapBytes(address, byteLength).set(new Uint8Array(staging.getMappedRange(), 0, byteLength));
    } finally {
      staging.unmap();
    }
  }

  destroy() {
    for (const buffer of this.buffers.values()) buffer.destroy();
    this.buffers.clear();
    if (this.paramsBuffer) this.paramsBuffer.destroy();
    this.device.destroy();
  }
}
