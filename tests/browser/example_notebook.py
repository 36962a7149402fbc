"""The JupyterLite site's example notebook, run in Chromium (Playwright) or in Firefox
(Marionette): open it, wait for its Pyodide kernel (a Web Worker), Run All, and collect what it
printed; and what it must print (numpy's numbers). test_jupyterlite.py and test_firefox.py run
it, one browser each."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from firefox import FirefoxDriver  # noqa: E402

from browser_env import OffsiteGuard, chromium, serve_directory  # noqa: E402

LITE = ROOT / "build" / "lite"
NOTEBOOK = "tenferro_web_example.ipynb"
ARTIFACTS = ROOT / "build" / "artifacts"
KERNEL_IDLE = """() => {
  const status = document.querySelector(".jp-Notebook-ExecutionIndicator");
  const kernel = document.querySelector(".jp-KernelName");
  return status && kernel && status.dataset.status === "idle"
      && kernel.textContent.trim() !== "No Kernel";
}"""
# Generous for a cold, busy 2-core machine: the kernel loads Pyodide and the package first.
KERNEL_TIMEOUT_S = 120
CELLS_TIMEOUT_S = 150
DONE = "all checks passed"
# The notebook has finished once its last line is out and the kernel is idle again: the line
# alone is not enough, since the kernel streams a print's pieces as separate messages.
FINISHED = f"""() => {{
  const status = document.querySelector(".jp-Notebook-ExecutionIndicator");
  return status && status.dataset.status === "idle"
      && [...document.querySelectorAll(".jp-OutputArea-output")]
          .some((e) => e.innerText.includes({DONE!r}));
}}"""


def lite_site() -> Path:
    if not (LITE / "static" / "pyodide" / "pyodide-lock.json").exists():
        pytest.fail(f"no JupyterLite site at {LITE}: run `make test`, which builds it")
    return LITE


def check_example_notebook(printed: dict[str, str], offsite: list[str]) -> None:
    """What the notebook printed is numpy's result for every op, and nothing left the machine."""
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
    assert printed[DONE] == \
        "dot_general, transpose, to_contiguous, einsum, matmul, sum, diagonal, trace", printed
    assert offsite == [], offsite


def printed_lines(texts: list[str]) -> dict[str, str]:
    printed = {}
    for text in texts:
        for line in text.splitlines():
            key, _, value = line.partition(":")
            printed[key.strip()] = value.strip()
    return printed


def stuck(browser: str, attempt: int, prompts: list[str], outputs: list[str],
          detail: str) -> bool:
    """After Run All gave no result: fail if a cell started (it did not finish) or this was the
    last attempt; otherwise log the retry and say so. Once in six cold runs of the whole suite
    no cell ever started: Run All had reached a kernel that was still starting."""
    started = any(p not in ("", "[ ]:") for p in prompts)
    if started or attempt == 2:
        pytest.fail(f"the notebook did not finish in {browser} (attempt {attempt + 1}): prompts "
                    f"{prompts}, outputs {outputs}{detail}")
    with (ARTIFACTS / "jupyterlite-retries.log").open("a") as log:
        log.write(f"{browser} attempt {attempt + 1}: no cell started; prompts {prompts}\n")
    return True


def run_in_chromium(site: Path) -> tuple[dict[str, str], list[str]]:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

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
                page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=KERNEL_TIMEOUT_S * 1000)
                # Run All only once the kernel has started and is idle: before that the
                # indicator reads "idle" for "No Kernel", and a Run All then may run nothing.
                for _ in range(2):  # and still idle a second later
                    page.wait_for_function(KERNEL_IDLE, timeout=KERNEL_TIMEOUT_S * 1000)
                    page.wait_for_timeout(1000)
                page.get_by_role("menuitem", name="Run").first.click()
                page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
                try:
                    page.wait_for_function(FINISHED, timeout=CELLS_TIMEOUT_S * 1000)
                    break
                except PlaywrightTimeout:
                    page.screenshot(path=str(ARTIFACTS / "jupyterlite-stuck.png"),
                                    full_page=True)
                    stuck("Chromium", attempt,
                          [p.strip() for p in page.locator(".jp-InputPrompt").all_inner_texts()],
                          page.locator(".jp-OutputArea-output").all_inner_texts(),
                          f", console {console[-20:]}; screenshot "
                          "build/artifacts/jupyterlite-stuck.png")
                    page.close()
            texts = page.locator(".jp-OutputArea-output").all_inner_texts()
            page.screenshot(path=str(ARTIFACTS / "jupyterlite.png"), full_page=True)
    finally:
        guard.stop()
    return printed_lines(texts), guard.offsite_requests()


# Marionette's element clicks refuse JupyterLab's menus (fixed-position nodes it cannot scroll
# into view), so the page is driven by the events Lumino's menus handle.
FIREFOX_WAIT_IDLE = f"""
  const done = arguments[arguments.length - 1];
  const idle = {KERNEL_IDLE};
  const until = Date.now() + {KERNEL_TIMEOUT_S * 1000};
  let since = null;
  const poll = () => {{
    if (idle()) {{
      since = since ?? Date.now();
      if (Date.now() - since >= 1000) return done(true);  // and still idle a second later
    }} else since = null;
    if (Date.now() > until) return done(false);
    setTimeout(poll, 200);
  }};
  poll();
"""
FIREFOX_RUN_ALL = """
  const done = arguments[arguments.length - 1];
  const press = (node, type) => {
    const r = node.getBoundingClientRect();
    node.dispatchEvent(new MouseEvent(type, {bubbles: true, cancelable: true, button: 0,
                                             clientX: r.x + 5, clientY: r.y + 5}));
  };
  const run = [...document.querySelectorAll(".lm-MenuBar-item")]
      .find((e) => e.textContent.trim() === "Run");
  if (!run) return done("no Run menu");
  press(run, "mousedown");
  setTimeout(() => {
    const item = [...document.querySelectorAll('.lm-Menu-item[data-command="runmenu:run-all"]')]
        .find((e) => e.offsetParent !== null);
    if (!item) return done("no Run All Cells item in the open menu");
    press(item, "mousemove");
    press(item, "mouseup");
    done("");
  }, 500);
"""
FIREFOX_OUTPUTS = f"""
  const done = arguments[arguments.length - 1];
  const finished = {FINISHED};
  const until = Date.now() + {CELLS_TIMEOUT_S * 1000};
  const poll = () => {{
    if (finished() || Date.now() > until) {{
      const got = [...document.querySelectorAll(".jp-OutputArea-output")]
          .map((e) => e.innerText);
      return done({{texts: got, prompts: [...document.querySelectorAll(".jp-InputPrompt")]
                                         .map((e) => e.innerText.trim())}});
    }}
    setTimeout(poll, 200);
  }};
  poll();
"""


def run_in_firefox(site: Path) -> tuple[dict[str, str], list[str]]:
    guard = OffsiteGuard()
    guard.start()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        with serve_directory(site) as base:
            driver = FirefoxDriver(guard.port)
            try:
                driver.client.set_window_rect(width=1200, height=1400)
                driver.set_script_timeout(KERNEL_TIMEOUT_S + CELLS_TIMEOUT_S + 30)
                for attempt in range(3):
                    driver.get(f"{base}/notebooks/index.html?path={NOTEBOOK}")
                    if not driver.execute_async_script(FIREFOX_WAIT_IDLE):
                        pytest.fail(f"the notebook's kernel was not idle within "
                                    f"{KERNEL_TIMEOUT_S} s in Firefox")
                    refused = driver.execute_async_script(FIREFOX_RUN_ALL)
                    assert not refused, refused
                    out = driver.execute_async_script(FIREFOX_OUTPUTS)
                    if any(DONE in t for t in out["texts"]):
                        break
                    (ARTIFACTS / "jupyterlite-firefox-stuck.png").write_bytes(
                        driver.client.screenshot(full=True, format="binary"))
                    stuck("Firefox", attempt, out["prompts"], out["texts"],
                          "; screenshot build/artifacts/jupyterlite-firefox-stuck.png")
                (ARTIFACTS / "jupyterlite-firefox.png").write_bytes(
                    driver.client.screenshot(full=True, format="binary"))
            finally:
                driver.quit()
    finally:
        guard.stop()
    return printed_lines(out["texts"]), guard.offsite_requests()
