// Side-by-side benchmark in one page: tenferro-web from Python (Pyodide), Pyodide's numpy, and
// three JavaScript libraries on WebGPU (TF.js, jax-js, onnxruntime-web), on the same operands.
// The Python side is browser_bench.py: it opens each peer on a case's operands
// (`benchPeers.open`) and interleaves their trials with its own (`benchPeers.trial`).
// Every line logged here also goes to the console and to window.benchLog, where
// bench/run_browser.py shows it as progress (Chromium's console, Firefox's log).
import { loadPyodide } from "./pyodide/pyodide.mjs";
import * as jax from "./jax-js/index.js";
import * as ort from "./ort/ort.webgpu.min.mjs";
import { matmulModel } from "./onnx_matmul.mjs";

window.benchLog = [];
const log = (line) => {
  document.getElementById("log").textContent += "\n" + line;
  console.log(`bench: ${line}`);
  window.benchLog.push(line);
};
const adapterName = (device) => `${device.adapterInfo.vendor}/${device.adapterInfo.architecture}`;
const numel = (shape) => shape.reduce((x, y) => x * y, 1);

// Each peer: `init()` gets WebGPU or throws (no silent fallback to a CPU backend) and returns
// what the results record; `open(shapeA, shapeB, a, b, r)` takes row-major f32 operands,
// [batch,] m x k and [batch,] k x n, and returns { trial, close }: `trial()` enqueues r products
// back to back and reads the last one back (the only barrier every library offers) and returns
// it, for the Python side to check against numpy; `close()` frees what `open` made.
const tfjs = {
  async init() {
    if (!(await tf.setBackend("webgpu"))) throw new Error("TF.js: no WebGPU backend");
    await tf.ready();
    const adapter = adapterName(tf.backend().device);
    return { version: tf.version_core, backend: tf.getBackend(), adapter };
  },
  async open(shapeA, shapeB, a, b, r) {
    const ta = tf.tensor(a, shapeA), tb = tf.tensor(b, shapeB);
    const trial = async () => {
      const cs = [];
      for (let i = 0; i < r; i++) cs.push(tf.matMul(ta, tb));
      const out = await cs[r - 1].data();  // TF.js flushes its queue lazily: data() is the barrier
      cs.forEach((c) => c.dispose());
      return out;
    };
    return { trial, close: async () => { ta.dispose(); tb.dispose(); } };
  },
};

// jax-js is lazy: a product runs when something waits on it, and one dropped unread never runs.
// So a trial keeps its r products and waits on all of them (blockUntilReady submits each), then
// reads the last back.
const jaxjs = {
  async init() {
    if (!(await jax.init("webgpu")).includes("webgpu")) throw new Error("jax-js: no WebGPU device");
    jax.defaultDevice("webgpu");
    const pkg = await (await fetch("jax-js/package.json")).json();  // jax-js exports no version
    const adapter = adapterName(jax.getWebGPUDevice());
    return { version: pkg.version, backend: jax.defaultDevice(), adapter };
  },
  async open(shapeA, shapeB, a, b, r) {
    const np = jax.numpy;
    const ja = np.array(a, { shape: shapeA }), jb = np.array(b, { shape: shapeB });
    if (ja.device !== "webgpu") throw new Error(`jax-js: operand on ${ja.device}, not webgpu`);
    const trial = async () => {
      const cs = [];
      for (let i = 0; i < r; i++) cs.push(np.matmul(ja.ref, jb.ref));  // .ref: keep the operands
      await jax.blockUntilReady(cs);
      cs.slice(0, -1).forEach((c) => c.dispose());
      return await cs[r - 1].data();  // data() consumes the last one
    };
    return { trial, close: async () => { ja.dispose(); jb.dispose(); } };
  },
};

// onnxruntime-web runs ONNX graphs only, so each case builds a one-node model C = MatMul(A, B)
// (below). Operands live in GPU buffers and results stay there (`gpu-buffer`), so a run moves no
// data; the last result of a trial is read back with getData().
const ortOptions = {
  executionProviders: ["webgpu"],  // WebGPU only: creating a session fails without it
  preferredOutputLocation: "gpu-buffer",
  // Fail instead of running a node the WebGPU EP does not take on ORT's CPU EP.
  extra: { session: { disable_cpu_ep_fallback: "1" } },
};
const onnx = {
  async init() {
    ort.env.wasm.wasmPaths = new URL("./ort/", location.href).href;  // local files, never a CDN
    ort.env.wasm.numThreads = 1;  // the page is not cross-origin isolated: no worker threads
    // A first session starts the WebGPU EP (or throws); its device then names the adapter.
    const tiny = matmulModel([1, 1], [1, 1], [1, 1]);
    await (await ort.InferenceSession.create(tiny, ortOptions)).release();
    const adapter = adapterName(await ort.env.webgpu.device);
    return { version: ort.env.versions.web, backend: "webgpu", adapter };
  },
  async open(shapeA, shapeB, a, b, r) {
    const shapeC = [...shapeA.slice(0, -1), shapeB[shapeB.length - 1]];
    const model = matmulModel(shapeA, shapeB, shapeC);
    const session = await ort.InferenceSession.create(model, ortOptions);
    const device = await ort.env.webgpu.device;
    const onGpu = (data, dims) => {
      const buffer = device.createBuffer({
        size: data.byteLength,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
      });
      device.queue.writeBuffer(buffer, 0, data);
      return ort.Tensor.fromGpuBuffer(buffer, { dataType: "float32", dims });
    };
    const feeds = { A: onGpu(a, shapeA), B: onGpu(b, shapeB) };
    const trial = async () => {
      const cs = [];
      for (let i = 0; i < r; i++) cs.push((await session.run(feeds)).C);
      if (cs[0].location !== "gpu-buffer") throw new Error(`ORT: result on ${cs[0].location}`);
      const out = await cs[r - 1].getData();
      cs.forEach((c) => c.dispose());
      return out;
    };
    const close = async () => {
      await session.release();
      for (const t of Object.values(feeds)) t.gpuBuffer.destroy();
    };
    return { trial, close };
  },
};

const peers = { tfjs, "jax-js": jaxjs, "onnxruntime-web": onnx };

async function main() {
  for (const [name, peer] of Object.entries(peers)) {
    peer.info = await peer.init();
    log(`${name} ${peer.info.version} on ${peer.info.backend} (${peer.info.adapter})`);
  }
  const opened = new Map();  // id -> { trial, close } of a peer on one case's operands
  let nextId = 0;
  globalThis.benchPeers = {  // browser_bench.py imports it from js
    names: Object.keys(peers),
    info: (name) => peers[name].info,
    // Operands arrive as numpy arrays (PyProxies): copy each out as a Float32Array.
    async open(name, shapeA, shapeB, a, b, r) {
      const [fa, fb] = [a, b].map((x) => {
        const view = x.getBuffer("f32");
        try { return view.data.slice(); } finally { view.release(); }
      });
      if (fa.length !== numel(shapeA) || fb.length !== numel(shapeB)) {
        throw new Error("operands do not match their shapes");
      }
      opened.set(++nextId, await peers[name].open(shapeA, shapeB, fa, fb, r));
      return nextId;
    },
    // One trial, timed here: its milliseconds and its last product.
    async trial(id) {
      const start = performance.now();
      const out = await opened.get(id).trial();
      return { ms: performance.now() - start, out };
    },
    async close(id) {
      await opened.get(id).close();
      opened.delete(id);
    },
  };
  log("loading Pyodide and tenferro-web");
  const pyodide = await loadPyodide({ indexURL: new URL("./pyodide/", location.href).href });
  await pyodide.loadPackage("tenferro-web");
  // The workload suite (bench/workloads.py), importable by browser_bench.py.
  const site = pyodide.runPython("import site; site.getsitepackages()[0]");
  pyodide.FS.writeFile(`${site}/workloads.py`, await (await fetch("workloads.py")).text());
  const ns = pyodide.globals.get("dict")();
  pyodide.runPython(await (await fetch("browser_bench.py")).text(), { globals: ns });
  const quick = new URLSearchParams(location.search).has("quick");
  const result = await ns.get("run")(quick, log);
  window.benchDone = result.toJs({ dict_converter: Object.fromEntries });
}

main().catch((e) => { log(String(e.stack || e)); window.benchDone = { error: String(e) }; });
