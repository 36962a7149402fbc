"""Browser lane: the package's tests run inside Pyodide in headless Debian Chromium on its
WebGPU adapter (SwiftShader on a machine without a GPU), through pytest-pyodide.

This file makes the lane honest:
  * it fails the session (never skips) when Chromium, chromedriver, the Pyodide dist or a WebGPU
    adapter is missing, and reports the adapter it ran on;
  * every request that tries to leave 127.0.0.1 goes to a recording proxy, and the session
    fails if anything was recorded;
  * it installs the shared Pyodide-side helpers (``tw_testing``) into each page or worker.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from pytest_pyodide.config import get_global_config

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1] / "tools"))
from browser_env import WEBGPU_FLAGS, OffsiteGuard, proxy_flag, request_host  # noqa: E402

GUARD = OffsiteGuard()
GUARD.start()
os.environ.setdefault("SE_OFFLINE", "true")  # selenium must not look for drivers online

# The selenium runner adds --headless --no-sandbox itself.
CHROME_FLAGS = [*WEBGPU_FLAGS, "--js-flags=--expose-gc", proxy_flag(GUARD)]
get_global_config().set_flags("chrome", CHROME_FLAGS)


ADAPTER_KEY = pytest.StashKey[dict]()


def _fail(message: str) -> None:
    pytest.exit(f"browser lane cannot run: {message}", returncode=1)


def pytest_sessionstart(session):
    """Preflight, part 1: the browser and the dist exist, or the whole session fails."""
    for tool in ("chromium", "chromedriver"):
        if shutil.which(tool) is None:
            _fail(f"{tool} is not installed (run `make test`, which installs it)")
    dist = Path(session.config.option.dist_dir)
    if not (dist / "pyodide.asm.wasm").exists() or not (dist / "pyodide-lock.json").exists():
        _fail(f"no Pyodide dist at {dist} (run `make dist`)")
    lock = json.loads((dist / "pyodide-lock.json").read_text())
    if "tenferro-web" not in lock["packages"]:
        _fail(f"{dist}/pyodide-lock.json does not list tenferro-web (run `make dist`)")


@pytest.fixture(scope="session", autouse=True)
def webgpu_adapter(request, web_server_main):
    """Preflight, part 2: headless Chromium offers a real WebGPU adapter, or the session fails."""
    from selenium.webdriver import Chrome
    from selenium.webdriver.chrome.options import Options

    options = Options()
    for flag in ["--headless", "--no-sandbox", *CHROME_FLAGS]:
        options.add_argument(flag)
    host, port, _ = web_server_main
    driver = Chrome(options=options)
    try:
        driver.get(f"http://{host}:{port}/test.html")
        info = driver.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            (async () => {
              if (!navigator.gpu) return done({error: "navigator.gpu is missing"});
              const adapter = await navigator.gpu.requestAdapter();
              if (!adapter) return done({error: "requestAdapter() returned null"});
              const i = adapter.info;
              done({vendor: i.vendor, architecture: i.architecture, device: i.device,
                    description: i.description, fallback: i.isFallbackAdapter,
                    browser: navigator.userAgent});
            })().catch((e) => done({error: String(e)}));
            """
        )
    finally:
        driver.quit()
    if "error" in info:
        _fail(f"no WebGPU adapter in headless Chromium: {info['error']}")
    request.config.stash[ADAPTER_KEY] = info
    return info


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    info = config.stash.get(ADAPTER_KEY, None)
    if info:
        terminalreporter.write_sep("-", "WebGPU adapter of the browser lane")
        terminalreporter.write_line(
            f"{info['vendor']} / {info['architecture']} (fallback={info['fallback']}) in "
            f"{info['browser']}")
    calls = GUARD.service_calls()
    if calls:
        terminalreporter.write_line(
            f"offsite guard: refused {len(calls)} Chromium service call(s) to "
            f"{sorted({request_host(c) for c in calls})}; nothing left 127.0.0.1")
    offsite = GUARD.offsite_requests()
    if offsite:
        terminalreporter.write_sep("!", "requests from the tests that tried to leave 127.0.0.1")
        for line in offsite:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session, exitstatus):
    if GUARD.offsite_requests():
        session.exitstatus = 1


@pytest.fixture(autouse=True)
def _helpers_in_pyodide(request):
    """Install ``tw_testing`` (shared reference code) once into each page or worker."""
    for fixture, runner_fixture in (("selenium", "selenium_module_scope"),
                                    ("selenium_worker", "selenium_worker_module_scope")):
        if fixture in request.fixturenames:
            runner = request.getfixturevalue(runner_fixture)
            if not getattr(runner, "tw_helpers_installed", False):
                source = (HERE / "pyodide_helpers.py").read_text()
                runner.run("import site, pathlib; pathlib.Path(site.getsitepackages()[0], "
                           f"'tw_testing.py').write_text({source!r})")
                runner.tw_helpers_installed = True


@pytest.fixture(scope="session")
def offsite_guard():
    return GUARD
