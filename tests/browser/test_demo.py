"""The demo page, end to end in Debian's headless Chromium through Playwright."""

import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from demo import run_page  # noqa: E402

ARTIFACTS = ROOT / "build" / "artifacts"


def test_demo_runs_end_to_end_on_webgpu(site):
    done = run_page(site, "auto=1", ARTIFACTS / "demo-test.png")
    assert done["adapter"]["architecture"], done["adapter"]
    results = done["results"]
    assert len(results) == 5 and all(not r.get("error") for r in results), results
    assert all(r["agree"] for r in results), [(r["expression"], r["rel_error"]) for r in results]
    assert {r["dtype"] for r in results} == {"float32", "complex64"}
    assert done["bars"] == 2 * len(results), "the chart must draw a WebGPU and a numpy bar per run"
    assert done["adapter"]["kind"] == "CPU emulation (a software adapter)"  # SwiftShader here
    marks = done["timings"]  # startup, shown in the adapter panel (tools/first_result.py)
    assert 0 < marks["pyodide"] <= marks["adapter"] <= marks["ready"] < marks["first_result"]
    assert (ARTIFACTS / "demo-test.png").stat().st_size > 10_000
    assert done["offsite"] == [], done["offsite"]
    assert not [line for line in done["console"] if line.startswith("error")], done["console"]


def test_bad_expressions_are_explained_in_the_page(site):
    done = run_page(site, "auto=1&expression=ij,jk-%3Eikk&size=4", None)
    (result,) = done["results"]
    assert result["error"] == "SubscriptError"
    assert "output label 'k' appears more than once" in done["error_box"]
    assert "SubscriptError while running ij,jk->ikk" in done["error_box"]


def test_a_browser_without_webgpu_gets_a_clear_message(site):
    done = run_page(site, "auto=1", None, webgpu=False)
    assert done["adapter"]["error"] == "NoAdapterError"
    assert "WebGPU is not available here" in done["error_box"]
    assert done["results"] == [] and done["bars"] == 0


def test_the_demo_ships_bytecode_that_its_lock_vouches_for(site):
    """tools/py_compile_dist.mjs: the page loads compiled modules (time to first result
    4.4 -> 2.5 s here), and each rewritten wheel still matches pyodide-lock.json's sha256, or
    the browser's integrity check would refuse it."""
    import hashlib
    import json
    import zipfile

    dist = site / "pyodide"
    lock = json.loads((dist / "pyodide-lock.json").read_text())["packages"]
    for name in ("numpy", "opt-einsum", "tenferro-web"):
        wheel = dist / lock[name]["file_name"]
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == lock[name]["sha256"], name
        names = zipfile.ZipFile(wheel).namelist()
        assert not [n for n in names if n.endswith(".py")], name
        assert any(n.endswith("__init__.pyc") for n in names), name
    stdlib = zipfile.ZipFile(dist / "python_stdlib.zip").namelist()
    assert "os.pyc" in stdlib and "os.py" not in stdlib
