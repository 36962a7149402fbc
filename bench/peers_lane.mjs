// The JavaScript peers on WebGPU (jax-js, TF.js, onnxruntime-web; the npm packages of
// package.json) on the same GEMM cases as this package's lanes, with the same timing rule (r
// products enqueued back to back, then one wait for the GPU; median of 5 trials after 0.3 s of
// them), for side-by-side figures in Node.js + Dawn (bench/h200.py runs it on the H200):
//
//   node --import tools/dawn_host.mjs bench/peers_lane.mjs CASES_JSON
//
// CASES_JSON: [[name, m, n, k, batch, dtype, r], ...] (bench/gemm_cases.py's); f32 only (none of
// the three multiplies complex64). Each peer must run on WebGPU or the run fails; each last
// result is checked at sampled entries against float64 dot products. Modules come from
// node_modules beside this file, or from PEERS_MODULES (a folder holding the same tree). The
// last line is `RESULT {json}`.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { runInThisContext } from "node:vm";

const TRIALS = 5;
const root = process.env.PEERS_MODULES ?? new URL("../node_modules/", import.meta.url).pathname;
const load = async (path) => import(pathToFileURL(`${root}/${path}`).href);
const version = (pkg) => JSON.parse(readFileSync(`${root}/${pkg}/package.json`)).version;
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

// Each peer: `init()` gets WebGPU or throws; `gemm(shapeA, shapeB, a, b)` returns
// `{ run(count), last(), dispose() }`: `run` enqueues `count` products and waits until the GPU
// has done them all (the rule), `last` reads the latest product back for the check.
const peers = {
  async "jax-js"() {
    const jax = await load("@jax-js/jax/dist/index.js");
    if (!(await jax.init("webgpu")).includes("webgpu")) throw new Error("jax-js: no WebGPU");
    jax.defaultDevice("webgpu");
    const np = jax.numpy;
    return {
      info: { version: version("@jax-js/jax"), backend: jax.defaultDevice() },
      gemm(shapeA, shapeB, a, b) {
        const ja = np.array(a, { shape: shapeA }), jb = np.array(b, { shape: shapeB });
        if (ja.device !== "webgpu") throw new Error(`jax-js: operand on ${ja.device}`);
        let kept = null;
        return {
          async run(count) {
            const cs = [];
            for (let i = 0; i < count; i++) cs.push(np.matmul(ja.ref, jb.ref));
            await jax.blockUntilReady(cs);  // jax-js is lazy: this submits and waits
            kept?.dispose();
            kept = cs.pop();
            cs.forEach((c) => c.dispose());
          },
          async last() { const out = await kept.data(); kept = null; return out; },
          dispose() { kept?.dispose(); ja.dispose(); jb.dispose(); },
        };
      },
    };
  },
  async tfjs() {
    // The browser bundles the page loads (UMD: run as scripts, they set globalThis.tf); seeing
    // Node.js, TF.js asks `require` for its built-in modules.
    globalThis.require ??= createRequire(import.meta.url);
    for (const file of ["@tensorflow/tfjs-core/dist/tf-core.min.js",
                        "@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js"]) {
      runInThisContext(readFileSync(`${root}/${file}`, "utf8"), { filename: file });
    }
    const tf = globalThis.tf;
    if (!(await tf.setBackend("webgpu"))) throw new Error("TF.js: no WebGPU backend");
    await tf.ready();
    const backend = tf.backend();
    return {
      info: { version: tf.version_core, backend: tf.getBackend() },
      gemm(shapeA, shapeB, a, b) {
        const ta = tf.tensor(a, shapeA), tb = tf.tensor(b, shapeB);
        let kept = null;
        return {
          async run(count) {
            const cs = [];
            for (let i = 0; i < count; i++) cs.push(tf.matMul(ta, tb));
            // TF.js encodes lazily: end its pass and submit (as its own readback does), then
            // wait for the queue.
            backend.ensureCommandEncoderReady();
            backend.endComputePassEncoder();
            backend.submitQueue();
            await backend.device.queue.onSubmittedWorkDone();
            kept?.dispose();
            kept = cs.pop();
            cs.forEach((c) => c.dispose());
          },
          async last() { return await kept.data(); },
          dispose() { kept?.dispose(); ta.dispose(); tb.dispose(); },
        };
      },
    };
  },
  async "onnxruntime-web"() {
    // In Node.js ORT's wasm memory is shared, and Dawn for Node refuses views of shared memory
    // in writeBuffer, which Chrome takes (the spec's AllowSharedBufferSource): copy those.
    const writeBuffer = GPUQueue.prototype.writeBuffer;
    GPUQueue.prototype.writeBuffer = function (buffer, offset, data, ...rest) {
      const shared = data?.buffer instanceof SharedArrayBuffer;
      return writeBuffer.call(this, buffer, offset, shared ? data.slice() : data, ...rest);
    };
    const ort = await load("onnxruntime-web/dist/ort.webgpu.min.mjs");
    ort.env.wasm.numThreads = 1;
    const options = {
      executionProviders: ["webgpu"],  // WebGPU only: creating a session fails without it
      preferredOutputLocation: "gpu-buffer",
      extra: { session: { disable_cpu_ep_fallback: "1" } },
    };
    const { matmulModel } = await import("./page/onnx_matmul.mjs");
    await (await ort.InferenceSession.create(matmulModel([1, 1], [1, 1], [1, 1]), options)).release();
    return {
      info: { version: ort.env.versions.web, backend: "webgpu" },
      async gemm(shapeA, shapeB, a, b) {
        const shapeC = [...shapeA.slice(0, -1), shapeB[shapeB.length - 1]];
        const session = await ort.InferenceSession.create(matmulModel(shapeA, shapeB, shapeC),
                                                          options);
        const device = await ort.env.webgpu.device;  // the session's (as the page does)
        const onGpu = (data, dims) => {
          const buffer = device.createBuffer({ size: data.byteLength,
            usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
          device.queue.writeBuffer(buffer, 0, data);
          return ort.Tensor.fromGpuBuffer(buffer, { dataType: "float32", dims });
        };
        const feeds = { A: onGpu(a, shapeA), B: onGpu(b, shapeB) };
        let kept = null;
        return {
          async run(count) {
            const cs = [];
            for (let i = 0; i < count; i++) cs.push((await session.run(feeds)).C);
            if (cs[0].location !== "gpu-buffer") throw new Error(`ORT: result on ${cs[0].location}`);
            await device.queue.onSubmittedWorkDone();
            kept?.dispose();
            kept = cs.pop();
            cs.forEach((c) => c.dispose());
          },
          async last() { return await kept.getData(); },
          async dispose() {
            kept?.dispose();
            await session.release();
            for (const t of Object.values(feeds)) t.gpuBuffer.destroy();
          },
        };
      },
    };
  },
};

function random(size) {
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) out[i] = Math.random() * 2 - 1;
  return out;
}

// Largest error of 8 sampled entries of the last product, relative to sqrt(k) (the size of a
// sum of k unit products), against float64 dot products of the same operands.
function sampledError(out, a, b, m, n, k, batch) {
  let worst = 0;
  for (let s = 0; s < 8; s++) {
    const i = Math.floor(Math.random() * m), j = Math.floor(Math.random() * n);
    const bi = Math.floor(Math.random() * batch);
    let want = 0;
    for (let p = 0; p < k; p++) want += a[bi * m * k + i * k + p] * b[bi * k * n + p * n + j];
    worst = Math.max(worst, Math.abs(out[bi * m * n + i * n + j] - want) / Math.sqrt(k));
  }
  return worst;
}

const cases = JSON.parse(process.argv[2]).filter((c) => c[5] === "float32");
const lanes = {};
for (const [name, make] of Object.entries(peers)) {
  const peer = await make();
  const rows = [];
  for (const [label, m, n, k, batch, , r] of cases) {
    const shapeA = batch > 1 ? [batch, m, k] : [m, k];
    const shapeB = batch > 1 ? [batch, k, n] : [k, n];
    const a = random(m * k * batch), b = random(k * n * batch);
    const work = await peer.gemm(shapeA, shapeB, a, b);
    const warmUntil = performance.now() + 300;  // bench/gemm_cases.py's WARMUP_SECONDS
    do await work.run(r); while (performance.now() < warmUntil);  // compile, clocks up
    const times = [];
    for (let t = 0; t < TRIALS; t++) {
      const start = performance.now();
      await work.run(r);
      times.push((performance.now() - start) / 1000 / r);
    }
    const error = sampledError(await work.last(), a, b, m, n, k, batch);
    await work.dispose();
    if (!(error < 1e-3)) throw new Error(`${name} ${label}: sampled error ${error}`);
    const seconds = median(times);
    const gflops = (2 * m * n * k * batch) / seconds / 1e9;
    console.log(`${label.padEnd(20)} ${gflops.toFixed(1).padStart(10)} GFLOP/s (${name}, ` +
                `sampled error ${error.toExponential(1)})`);
    rows.push({ case: label, seconds, gflops, sampled_error: error });
  }
  lanes[name] = { ...peer.info, rows };
}
console.log("RESULT " + JSON.stringify(lanes));
