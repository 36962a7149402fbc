"""Firefox alone (the Firefox lane, make test-firefox): the demo page and the JupyterLite
notebook end to end in headless Firefox on its own WebGPU (wgpu on Mesa's lavapipe here), and
Firefox with WebGPU turned off.
The package's tests themselves run in Firefox through pytest-pyodide (``--rt firefox``)."""

import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from example_notebook import check_example_notebook, lite_site, run_in_firefox  # noqa: E402

from demo import run_page  # noqa: E402


def test_the_demo_runs_in_firefox_and_says_what_the_browser_withholds(site):
    done = run_page(site, "auto=1", None, browser="firefox")
    adapter = done["adapter"]
    assert not done.get("error") and "error" not in adapter, done
    # Firefox gives pages no adapter names; lavapipe is its fallback adapter: the CPU family.
    assert adapter["vendor"] == adapter["architecture"] == "withheld by this browser", adapter
    assert adapter["fallback adapter"] == "True"
    assert adapter["kind"].startswith("CPU"), adapter
    assert len(done["results"]) == 5 and all(r["agree"] for r in done["results"]), done
    assert done["bars"] > 0 and not done["offsite"], done


def test_firefox_with_webgpu_turned_off_gets_a_no_adapter_error_that_says_how_to_turn_it_on(site):
    done = run_page(site, "auto=1", None, webgpu=False, browser="firefox")
    assert done["adapter"]["error"] == "NoAdapterError", done["adapter"]
    assert "dom.webgpu.enabled" in done["adapter"]["message"], done["adapter"]
    assert "WebGPU is not available here" in done["error_box"]
    assert done["results"] == [] and not done["offsite"]


def test_the_example_notebook_runs_in_firefox_on_webgpu_in_the_kernel_worker():
    check_example_notebook(*run_in_firefox(lite_site()))
