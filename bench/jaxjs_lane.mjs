// jax-js (npm @jax-js/jax, WebGPU device) on the same GEMM cases as this package's lanes, with
// the same timing rule (r products enqueued back to back, then one wait for all of them; median
// of 5 trials), for side-by-side figures in Node.js + Dawn (bench/h200.py runs it on the H200):
//
//   node --import tools/dawn_host.mjs bench/jaxjs_lane.mjs CASES_JSON
//
// CASES_JSON: [[name, m, n, k, batch, dtype, r], ...] (bench/gemm_cases.py's). jax-js has no
// complex dtype: those cases are skipped. The module comes from JAXJS_MODULE (a path), else from
// node_modules. The last line is `RESULT {json}`.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const TRIALS = 5;
const modulePath = process.env.JAXJS_MODULE ?? "node_modules/@jax-js/jax/dist/index.js";
const jax = await import(pathToFileURL(modulePath).href);
const pkg = JSON.parse(readFileSync(new URL("../package.json", pathToFileURL(modulePath))));
if (!(await jax.init("webgpu")).includes("webgpu")) throw new Error("jax-js: no WebGPU device");
jax.defaultDevice("webgpu");
const np = jax.numpy;

function random(size) {
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) out[i] = Math.random() * 2 - 1;
  return out;
}

const rows = [];
for (const [name, m, n, k, batch, dtype, r] of JSON.parse(process.argv[2])) {
  if (dtype !== "float32") continue;
  const shapeA = batch > 1 ? [batch, m, k] : [m, k];
  const shapeB = batch > 1 ? [batch, k, n] : [k, n];
  const a = np.array(random(shapeA.reduce((x, y) => x * y)), { shape: shapeA });
  const b = np.array(random(shapeB.reduce((x, y) => x * y)), { shape: shapeB });
  if (a.device !== "webgpu") throw new Error(`jax-js: operand on ${a.device}, not webgpu`);
  const run = async (count) => {
    const cs = [];
    for (let i = 0; i < count; i++) cs.push(np.matmul(a.ref, b.ref));  // .ref keeps operands
    await jax.blockUntilReady(cs);
    cs.forEach((c) => c.dispose());
  };
  await run(1);  // compile, warm
  const times = [];
  for (let t = 0; t < TRIALS; t++) {
    const start = performance.now();
    await run(r);
    times.push((performance.now() - start) / 1000 / r);
  }
  times.sort((x, y) => x - y);
  const seconds = times[Math.floor(TRIALS / 2)];
  const gflops = (2 * m * n * k * batch) / seconds / 1e9;
  console.log(`${name.padEnd(20)} ${gflops.toFixed(1).padStart(10)} GFLOP/s (jax-js)`);
  rows.push({ case: name, seconds, gflops });
  a.dispose(); b.dispose();
}
console.log("RESULT " + JSON.stringify({ lane: "jax-js", version: pkg.version,
  backend: jax.defaultDevice(), rows }));
