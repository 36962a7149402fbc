"""The JupyterLite site: the example notebook runs in the Pyodide kernel (a Web Worker) on the
browser's WebGPU adapter, offline, and prints the numbers numpy expects."""

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402

from browser_env import OffsiteGuard, chromium, serve_directory  # noqa: E402

LITE = ROOT / "build" / "lite"
NOTEBOOK = "tenferro_web_example.ipynb"


@pytest.fixture(scope="module")
def lite_site():
    if not (LITE / "static" / "pyodide" / "pyodide-lock.json").exists():
        pytest.fail(f"no JupyterLite site at {LITE}: run `make test`, which builds it")
    return LITE


ARTIFACTS = ROOT / "build" / "artifacts"
KERNEL_IDLE = """() => {
  const status = document.querySelector(".jp-Notebook-ExecutionIndicator");
  const kernel = document.querySelector(".jp-KernelName");
  return status && kernel && status.dataset.status === "idle"
      && kernel.textContent.trim() !== "No Kernel";
}"""


def run_notebook(site: Path) -> tuple[dict[str, str], list[str]]:
    """Open the notebook, wait for its kernel, Run All, and collect what it printed.

    Once in six cold runs of the whole suite no cell ever started: Run All had been clicked
    while the kernel was still starting (the console showed Pyodide loading its packages, the
    prompts stayed empty). So Run All waits for the kernel; and should the UI still run
    nothing, the page is opened afresh (at most twice, logged in build/artifacts). A cell that
    started and did not finish fails at once, with a screenshot, prompts, outputs and console."""
    guard = OffsiteGuard()
    guard.start()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        with serve_directory(site) as base, chromium(guard) as browser:
            for attempt in range(3):
                console: list[str] = []
                page = browser.new_page(viewport={"width": 1200, "height": 1400})
                page.on("console", lambda m, log=console: log.append(f"[{m.type}] {m.text}"))
                page.goto(f"{base}/notebooks/index.html?path={NOTEBOOK}")
                page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
                # Run All only once the kernel has started and is idle: before that the
                # indicator reads "idle" for "No Kernel", and a Run All then may run nothing.
                for _ in range(2):  # and still idle a second later
                    page.wait_for_function(KERNEL_IDLE, timeout=120_000)
                    page.wait_for_timeout(1000)
                page.get_by_role("menuitem", name="Run").first.click()
                page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
                try:
                    page.locator(".jp-OutputArea-output", has_text="all checks passed"
                                 ).wait_for(timeout=150_000)
                    break
                except PlaywrightTimeout:
                    prompts = [p.strip() for p in
                               page.locator(".jp-InputPrompt").all_inner_texts()]
                    started = any(p not in ("", "[ ]:") for p in prompts)
                    if started or attempt == 2:
                        page.screenshot(path=str(ARTIFACTS / "jupyterlite-stuck.png"),
                                        full_page=True)
                        outputs = page.locator(".jp-OutputArea-output").all_inner_texts()
                        pytest.fail(f"the notebook did not finish (attempt {attempt + 1}): "
                                    f"prompts {prompts}, outputs {outputs}, console "
                                    f"{console[-20:]}; screenshot "
                                    "build/artifacts/jupyterlite-stuck.png")
                    with (ARTIFACTS / "jupyterlite-retries.log").open("a") as log:
                        log.write(f"attempt {attempt + 1}: no cell started; prompts {prompts}; "
                                  f"console {console[-20:]}\n")
                    page.close()
            texts = page.locator(".jp-OutputArea-output").all_inner_texts()
            page.screenshot(path=str(ARTIFACTS / "jupyterlite.png"), full_page=True)
    finally:
        guard.stop()
    printed = {}
    for text in texts:
        for line in text.splitlines():
            key, _, value = line.partition(":")
            printed[key.strip()] = value.strip()
    return printed, guard.offsite_requests()


def test_example_notebook_runs_on_webgpu_in_the_kernel_worker(lite_site):
    printed, offsite = run_notebook(lite_site)
    assert "in a worker" in printed["adapter"], printed["adapter"]
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert ast.literal_eval(printed["dot_general"]) == (a @ b).tolist()
    assert ast.literal_eval(printed["transpose"]) == b.T.tolist()
    assert ast.literal_eval(printed["to_contiguous"]) == b[1:, ::-1].tolist()
    want = np.einsum("ij,jk,kl->li", a, b, np.ones((4, 5), np.float32))
    assert ast.literal_eval(printed["einsum"]) == want.tolist()
    assert ast.literal_eval(printed["matmul"]) == (a @ b).tolist()
    assert ast.literal_eval(printed["sum"]) == b.sum(axis=0).tolist()
    assert ast.literal_eval(printed["diagonal"]) == [1.0, 2.0, 3.0]
    assert ast.literal_eval(printed["trace"]) == float(np.trace(b @ b.T))
    assert printed["all checks passed"] == \
        "dot_general, transpose, to_contiguous, einsum, matmul, sum, diagonal, trace"
    assert offsite == [], offsite
