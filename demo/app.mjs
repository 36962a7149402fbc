// The demo page: loads the local Pyodide, installs tenferro-web from the local lock, and
// drives demo.py. Everything it fetches comes from this origin.
import { loadPyodide } from "./pyodide/pyodide.mjs";

const $ = (id) => document.getElementById(id);
// Sizes where the work outweighs upload and readback (0.1-0.4 GFLOP each), so that even a CPU
// emulation of WebGPU shows what the kernels do against numpy.
const PRESETS = [
  ["ij,jk->ik", 512, "", "float32"],
  ["bij,bjk->bik", 256, "b=8", "float32"],
  ["ij,jk,kl->il", 512, "j=64", "float32"],
  ["abc,cde,efa->bdf", 20, "", "float32"],
  ["ij,jk->ik", 256, "", "complex64"],
];
const results = [];
// Startup, in seconds since the page began to load: shown in the adapter panel and reported to
// tools/first_result.py, which measures time to first result.
const timings = {};
const mark = (name) => { timings[name] = performance.now() / 1000; };

function progress(step, text) {
  $("progress").value = step;
  $("status").textContent = text;
}

function showError(title, message) {
  const box = $("error");
  box.replaceChildren();
  const strong = document.createElement("strong");
  strong.textContent = title;
  box.append(strong, message);
  box.hidden = false;
}

function toJs(proxy) {
  const value = proxy.toJs({ dict_converter: Object.fromEntries });
  proxy.destroy();
  return value;
}

function addRow(r) {
  const row = $("table").tBodies[0].insertRow();
  const cells = [r.expression, r.shapes, r.dtype, r.gflop.toFixed(3), r.gpu_ms.toFixed(1),
    r.numpy_ms.toFixed(1), r.rel_error.toExponential(1), r.agree ? "yes" : "NO"];
  for (const text of cells) row.insertCell().textContent = text;
  row.cells[7].className = r.agree ? "ok" : "bad";
  $("path").textContent = r.path;
  $("results").hidden = false;
}

// A grouped bar chart as inline SVG: one pair of bars (WebGPU, numpy) per run.
function drawChart() {
  const svg = $("chart");
  const ns = "http://www.w3.org/2000/svg";
  svg.replaceChildren();
  const width = 640, height = 220, top = 16, bottom = 40, left = 10;
  const max = Math.max(...results.flatMap((r) => [r.gpu_ms, r.numpy_ms]), 1e-3);
  const group = (width - left) / Math.max(results.length, 1);
  const bar = Math.min(28, group / 2.6);
  const el = (name, attrs, text) => {
    const node = document.createElementNS(ns, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    svg.append(node);
    return node;
  };
  results.forEach((r, i) => {
    const x = left + i * group + group / 2 - bar;
    [[r.gpu_ms, "#2b6cb0", "WebGPU"], [r.numpy_ms, "#dd6b20", "numpy"]].forEach(([ms, color, who], j) => {
      const h = (height - top - bottom) * (ms / max);
      el("rect", { x: x + j * bar, y: height - bottom - h, width: bar - 2, height: h, fill: color,
        class: "bar" }).append(Object.assign(document.createElementNS(ns, "title"),
        { textContent: `${who}: ${ms.toFixed(1)} ms` }));
      el("text", { x: x + j * bar + bar / 2 - 1, y: height - bottom - h - 3, "font-size": 9,
        "text-anchor": "middle" }, ms.toFixed(0));
    });
    el("text", { x: x + bar, y: height - bottom + 14, "font-size": 10, "text-anchor": "middle" },
      r.expression.length > 16 ? r.expression.slice(0, 15) + "…" : r.expression);
    el("text", { x: x + bar, y: height - bottom + 27, "font-size": 9, "text-anchor": "middle",
      fill: "#4a5568" }, r.dtype);
  });
  el("rect", { x: width - 200, y: 2, width: 10, height: 10, fill: "#2b6cb0" });
  el("text", { x: width - 186, y: 11, "font-size": 11 }, "tenferro-web");
  el("rect", { x: width - 70, y: 2, width: 10, height: 10, fill: "#dd6b20" });
  el("text", { x: width - 56, y: 11, "font-size": 11 }, "numpy");
}

async function runOne(demo, expression, size, sizes, dtype) {
  const r = toJs(await demo.run(expression, size, sizes, dtype));
  if (timings.first_result === undefined) {
    mark("first_result");
    const info = $("adapter-info");
    info.append(Object.assign(document.createElement("dt"), { textContent: "first result" }),
      Object.assign(document.createElement("dd"), {
        textContent: `${timings.first_result.toFixed(2)} s after the page began to load ` +
          `(Pyodide ${timings.pyodide.toFixed(2)} s, packages ${timings.packages.toFixed(2)} s, ` +
          `adapter ${timings.adapter.toFixed(2)} s)`,
      }));
  }
  if (r.error) {
    showError(`${r.error} while running ${expression}`, r.message);
    return r;
  }
  $("error").hidden = true;
  results.push(r);
  addRow(r);
  drawChart();
  return r;
}

async function main() {
  progress(1, "Loading Pyodide and the packages (1/3)…");
  // While Pyodide compiles, the browser brings up its WebGPU adapter (the first request starts
  // the GPU process's WebGPU; the runtime's own request later finds it ready).
  globalThis.navigator?.gpu?.requestAdapter().catch(() => null);
  const demoSource = fetch("demo.py").then((response) => response.text()); // no round trip later
  const pyodide = await loadPyodide({
    indexURL: new URL("./pyodide/", location.href).href,
    packages: ["tenferro-web"], // fetched while the interpreter starts
  });
  mark("pyodide");
  mark("packages");
  const namespace = pyodide.globals.get("dict")();
  pyodide.runPython(await demoSource, { globals: namespace });
  const demo = { start: namespace.get("start"), run: namespace.get("run") };
  progress(2, "Requesting a WebGPU adapter (2/3)…");
  const adapter = toJs(await demo.start());
  mark("adapter");
  if (adapter.error) {
    progress(2, "No WebGPU adapter.");
    showError(`${adapter.error}: WebGPU is not available here`, adapter.message);
    window.demoDone = { adapter, results };
    return;
  }
  const info = $("adapter-info");
  for (const [k, v] of Object.entries(adapter)) {
    info.append(Object.assign(document.createElement("dt"), { textContent: k }),
      Object.assign(document.createElement("dd"), { textContent: v }));
  }
  // Say plainly what the timings mean here, and offer a size a real GPU wins at.
  const emulated = adapter.kind.startsWith("CPU");
  $("adapter-note").textContent = emulated
    ? "This WebGPU adapter is a CPU emulation: the kernels run on this computer's processor, " +
      "so WebGPU cannot beat numpy by much here. On a real GPU, try a 2048 matrix product."
    : "A real GPU: the default size is 2048, a 17 GFLOP matrix product, where the GPU wins " +
      "clearly; small contractions are dominated by upload and readback.";
  if (!emulated) $("size").value = 2048;
  $("adapter").hidden = false;
  $("controls").hidden = false;
  progress(3, "Ready.");
  mark("ready");

  $("form").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("run").disabled = true;
    $("status").textContent = "Running…";
    try {
      await runOne(demo, $("expression").value.trim(), Number($("size").value),
        $("sizes").value, $("dtype").value);
    } finally {
      $("run").disabled = false;
      $("status").textContent = "Ready.";
    }
  });

  const params = new URLSearchParams(location.search);
  if (params.has("auto")) {
    const runs = params.get("expression")
      ? [[params.get("expression"), Number(params.get("size") ?? 64), params.get("sizes") ?? "",
          params.get("dtype") ?? "float32"]]
      : PRESETS;
    const outcomes = [];
    for (const args of runs) outcomes.push(await runOne(demo, ...args));
    window.demoDone = { adapter, results: outcomes, timings };
  }
}

main().catch((e) => {
  showError("The demo could not start", String(e));
  window.demoDone = { error: String(e) };
});
