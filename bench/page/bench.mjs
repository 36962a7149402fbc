// Side-by-side benchmark in one page: tenferro-web from Python (Pyodide), Pyodide's numpy, and
// TensorFlow.js's WebGPU backend, on the same sizes. The Python side is browser_bench.py.
import { loadPyodide } from "./pyodide/pyodide.mjs";

const log = (line) => { document.getElementById("log").textContent += "\n" + line; };

// TF.js matMul timed to its result: `data()` is the only barrier TF.js guarantees (its queue
// is flushed lazily), so the readback is included; at these sizes it is under 1% of the time.
// Medians of `reps` after one warm-up.
async function tfjsGemm(m, n, k, batch, reps) {
  const shapeA = batch > 1 ? [batch, m, k] : [m, k];
  const shapeB = batch > 1 ? [batch, k, n] : [k, n];
  const a = tf.randomNormal(shapeA), b = tf.randomNormal(shapeB);
  const once = async () => {
    const start = performance.now();
    const c = tf.matMul(a, b);
    await c.data();
    const ms = performance.now() - start;
    c.dispose();
    return ms;
  };
  await once();
  const times = [];
  for (let r = 0; r < reps; r++) times.push(await once());
  a.dispose(); b.dispose();
  times.sort((x, y) => x - y);
  return times[Math.floor(times.length / 2)];
}

async function main() {
  await tf.setBackend("webgpu");
  await tf.ready();
  log(`tf.js ${tf.version_core} backend ${tf.getBackend()}`);
  const pyodide = await loadPyodide({ indexURL: new URL("./pyodide/", location.href).href });
  await pyodide.loadPackage("tenferro-web");
  globalThis.tfjsGemm = tfjsGemm;  // browser_bench.py imports it from js
  const ns = pyodide.globals.get("dict")();
  pyodide.runPython(await (await fetch("browser_bench.py")).text(), { globals: ns });
  const quick = new URLSearchParams(location.search).has("quick");
  const result = await ns.get("run")(quick, log);
  window.benchDone = result.toJs({ dict_converter: Object.fromEntries });
}

main().catch((e) => { log(String(e)); window.benchDone = { error: String(e) }; });
