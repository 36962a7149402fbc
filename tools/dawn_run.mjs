// Runs an async Python entry point inside Pyodide in Node.js, on Chrome's WebGPU (Dawn):
//
//   node --import tools/dawn_host.mjs tools/dawn_run.mjs DIST [--module FILE.py]... \
//        MODULE:FUNCTION [ARG]...
//
// Pyodide and its packages come from the dist folder DIST (this project's offline dist, which
// lists tenferro-web); each --module file is copied into site-packages; then
// `await MODULE.FUNCTION([ARG, ...])` runs and its integer result is the exit status. This is the
// browser transport (js/bridge.mjs + transport/browser.py) unchanged, in another host.
import { readFileSync } from "node:fs";
import { basename, resolve } from "node:path";

const [dist, ...rest] = process.argv.slice(2);
const modules = [];
while (rest[0] === "--module") {
  rest.shift();
  modules.push(rest.shift());
}
const [entry, ...args] = rest;
if (!dist || !entry || !entry.includes(":")) {
  console.error("usage: dawn_run.mjs DIST [--module FILE.py]... MODULE:FUNCTION [ARG]...");
  process.exit(2);
}
const indexURL = resolve(dist) + "/";
const { loadPyodide } = await import(indexURL + "pyodide.mjs");
const pyodide = await loadPyodide({ indexURL });
await pyodide.loadPackage(["tenferro-web"], { messageCallback: () => {} });
const site = pyodide.runPython("import site; site.getsitepackages()[0]");
for (const file of modules) {
  pyodide.FS.writeFile(`${site}/${basename(file)}`, readFileSync(file));
}
const [module, func] = entry.split(":");
pyodide.globals.set("entry_args", pyodide.toPy(args));
const status = await pyodide.runPythonAsync(
  `import importlib\nawait importlib.import_module(${JSON.stringify(module)}).${func}(list(entry_args))`);
process.exit(Number(status ?? 0));
