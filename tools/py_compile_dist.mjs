// Compiles a Pyodide dist's packages and standard library to bytecode, inside that dist's own
// Pyodide (tools/py_compile_dist.py says why):
//
//   node tools/py_compile_dist.mjs DIST PACKAGE...
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const [dist, ...packages] = process.argv.slice(2);
if (!dist || !packages.length) {
  console.error("usage: py_compile_dist.mjs DIST PACKAGE...");
  process.exit(2);
}
const indexURL = resolve(dist) + "/";
const { loadPyodide } = await import(indexURL + "pyodide.mjs");
const pyodide = await loadPyodide({ indexURL });
pyodide.FS.mkdir("/dist");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: resolve(dist) }, "/dist");
const here = dirname(fileURLToPath(import.meta.url));
const namespace = pyodide.globals.get("dict")();
pyodide.runPython(readFileSync(resolve(here, "py_compile_dist.py"), "utf8"), { globals: namespace });
namespace.get("main")(pyodide.toPy(packages));
