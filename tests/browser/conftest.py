"""Browser lane: the package's tests run inside Pyodide on a real WebGPU adapter, through
pytest-pyodide, in one of three hosts of the same browser transport:
  * ``--rt chrome``: headless Debian Chromium (SwiftShader on a machine without a GPU);
  * ``--rt firefox``: headless Firefox ESR on its own WebGPU (wgpu; Mesa's lavapipe here),
    driven through Marionette (tools/firefox.py) in place of geckodriver;
  * ``--rt node``: Node.js with Chrome's WebGPU implementation (Dawn, the npm package
    ``webgpu``) installed as ``navigator.gpu`` by tools/dawn_host.mjs.

This file makes the lane honest:
  * it fails the session (never skips) when the browser or Node's Dawn, the Pyodide dist or a
    WebGPU adapter is missing, and reports the adapter it ran on;
  * every request that tries to leave 127.0.0.1 goes to a recording proxy, and the session
    fails if anything was recorded;
  * it installs the shared Pyodide-side helpers (``tw_testing``, ``kernel_fuzz``) into each
    page, worker or Node process;
  * every test gets a script timeout with margin for a cold, busy machine, and a test that
    fails (a timeout included) leaves a fresh page for the next one, never a half-run script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pytest_pyodide.config import get_global_config

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from firefox import FirefoxDriver, firefox_missing  # noqa: E402
from pytest_pyodide.runner import SeleniumFirefoxRunner  # noqa: E402

from browser_env import WEBGPU_FLAGS, OffsiteGuard, proxy_flag, request_host  # noqa: E402

GUARD = OffsiteGuard()
GUARD.start()
os.environ.setdefault("SE_OFFLINE", "true")  # selenium must not look for drivers online

# The selenium runner adds --headless --no-sandbox itself.
CHROME_FLAGS = [*WEBGPU_FLAGS, "--js-flags=--expose-gc", proxy_flag(GUARD)]
get_global_config().set_flags("chrome", CHROME_FLAGS)
DAWN_HOST = ROOT / "tools" / "dawn_host.mjs"
get_global_config().set_flags("node", [f"--import={DAWN_HOST}"])
# pytest-pyodide's Firefox runners (page and worker) on Marionette instead of geckodriver, with
# a profile that has WebGPU on and sends everything off loopback to the guard.
SeleniumFirefoxRunner.get_driver = lambda self, jspi=False: FirefoxDriver(GUARD.port)
# Seconds a test's script may run: several times what the slowest test takes on this 2-core
# machine, for a cold, busy one (the per-test marker driver_timeout overrides it).
SCRIPT_TIMEOUT = 180
# Helper modules installed into every Pyodide: reference code, never the code under test.
HELPERS = {"tw_testing": HERE / "pyodide_helpers.py",
           "kernel_fuzz": ROOT / "tests" / "fuzz" / "kernel_fuzz.py"}


ADAPTER_KEY = pytest.StashKey[dict]()


def _fail(message: str) -> None:
    pytest.exit(f"browser lane cannot run: {message}", returncode=1)


def runtimes(config) -> set[str]:
    return {rt.strip() for rt in config.option.runtime.split(",")}


def pytest_sessionstart(session):
    """Preflight, part 1: the browser (or Node's Dawn) and the dist exist, or the session
    fails."""
    if "chrome" in runtimes(session.config):
        for tool in ("chromium", "chromedriver"):
            if shutil.which(tool) is None:
                _fail(f"{tool} is not installed (run `make test`, which installs it)")
    if "firefox" in runtimes(session.config):
        missing = firefox_missing()
        if missing:
            _fail(missing)
    if "node" in runtimes(session.config):
        if shutil.which("node") is None:
            _fail("node is not installed (run `make test`, which installs it)")
        if not (ROOT / "node_modules" / "webgpu" / "package.json").exists():
            _fail("the npm package webgpu (Dawn for Node) is missing (run `make test-dawn`)")
    dist = Path(session.config.option.dist_dir)
    if not (dist / "pyodide.asm.wasm").exists() or not (dist / "pyodide-lock.json").exists():
        _fail(f"no Pyodide dist at {dist} (run `make dist`)")
    lock = json.loads((dist / "pyodide-lock.json").read_text())
    if "tenferro-web" not in lock["packages"]:
        _fail(f"{dist}/pyodide-lock.json does not list tenferro-web (run `make dist`)")


@pytest.fixture(scope="session", autouse=True)
def webgpu_adapter(request, web_server_main):
    """Preflight, part 2: the host offers a real WebGPU adapter, or the session fails."""
    info = {}
    if "chrome" in runtimes(request.config):
        info = chrome_adapter(web_server_main)
    if "firefox" in runtimes(request.config):
        info = firefox_adapter(web_server_main)
    if "node" in runtimes(request.config):
        info = dawn_adapter()
    if "error" in info:
        _fail(f"no WebGPU adapter: {info['error']}")
    request.config.stash[ADAPTER_KEY] = info
    return info


ADAPTER_INFO_JS = """
  if (!navigator.gpu) return {error: "navigator.gpu is missing"};
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) return {error: "requestAdapter() returned null"};
  const i = adapter.info;
  return {vendor: i.vendor, architecture: i.architecture, device: i.device,
          description: i.description, fallback: i.isFallbackAdapter,
          browser: navigator.userAgent};
"""


def chrome_adapter(web_server_main) -> dict:
    from selenium.webdriver import Chrome
    from selenium.webdriver.chrome.options import Options

    options = Options()
    for flag in ["--headless", "--no-sandbox", *CHROME_FLAGS]:
        options.add_argument(flag)
    return page_adapter(Chrome(options=options), web_server_main)


def firefox_adapter(web_server_main) -> dict:
    return page_adapter(FirefoxDriver(GUARD.port), web_server_main)


def page_adapter(driver, web_server_main) -> dict:
    """ADAPTER_INFO_JS in a page of the test server, then the browser closed."""
    host, port, _ = web_server_main
    try:
        driver.get(f"http://{host}:{port}/test.html")
        return driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            f"(async () => {{ {ADAPTER_INFO_JS} }})()"
            ".then(done, (e) => done({error: String(e)}));")
    finally:
        driver.quit()


def dawn_adapter() -> dict:
    script = (f"(async () => {{ {ADAPTER_INFO_JS} }})()"
              ".then((r) => console.log(JSON.stringify(r)), "
              "(e) => console.log(JSON.stringify({error: String(e)})))")
    done = subprocess.run(["node", f"--import={DAWN_HOST}", "-e", script], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        return {"error": f"node exited {done.returncode}: {done.stderr.strip()[-500:]}"}
    return json.loads(lines[-1])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    info = config.stash.get(ADAPTER_KEY, None)
    if info:
        terminalreporter.write_sep("-", "WebGPU adapter of the browser lane")
        names = f"{info['vendor']} / {info['architecture']}" if info["vendor"] or \
            info["architecture"] else "names withheld by the browser"
        terminalreporter.write_line(f"{names} (fallback={info['fallback']}) in {info['browser']}")
    calls = GUARD.service_calls()
    if calls:
        terminalreporter.write_line(
            f"offsite guard: refused {len(calls)} browser service call(s) to "
            f"{sorted({request_host(c) for c in calls})}; nothing left 127.0.0.1")
    offsite = GUARD.offsite_requests()
    if offsite:
        terminalreporter.write_sep("!", "requests from the tests that tried to leave 127.0.0.1")
        for line in offsite:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session, exitstatus):
    if GUARD.offsite_requests():
        session.exitstatus = 1


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("driver_timeout") is None:
            item.add_marker(pytest.mark.driver_timeout(SCRIPT_TIMEOUT))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed:
        item.stash[FAILED_KEY] = True
    return report


FAILED_KEY = pytest.StashKey[bool]()
RUNNERS = (("selenium", "selenium_module_scope"),
           ("selenium_worker", "selenium_worker_module_scope"))


@pytest.fixture(autouse=True)
def _helpers_in_pyodide(request):
    """Install the helper modules once into each page, worker or Node process; after a failed
    test, start that page again so that nothing it left running reaches the next test."""
    used = [request.getfixturevalue(runner) for fixture, runner in RUNNERS
            if fixture in request.fixturenames]
    for runner in used:
        if not getattr(runner, "tw_helpers_installed", False):
            if hasattr(runner, "p"):  # Node: pexpect waits for a script's end this long
                runner.p.timeout = SCRIPT_TIMEOUT
            for name, path in HELPERS.items():
                runner.run("import site, pathlib; pathlib.Path(site.getsitepackages()[0], "
                           f"'{name}.py').write_text({path.read_text()!r})")
            runner.tw_helpers_installed = True
    yield
    if request.node.stash.get(FAILED_KEY, False):
        for runner in used:
            restart(runner)


def restart(runner) -> None:
    """A fresh page (or Node process) with Pyodide loaded, as pytest-pyodide builds one."""
    runner.refresh()
    runner.load_pyodide()
    runner.initialize_pyodide()
    runner.save_state()
    runner.restore_state()
    runner.tw_helpers_installed = False


@pytest.fixture(scope="session")
def offsite_guard():
    return GUARD


@pytest.fixture(scope="session")
def site() -> Path:
    """The built demo site (test_demo.py in Chromium, test_firefox.py in Firefox)."""
    demo = ROOT / "build" / "site"
    if not (demo / "index.html").exists() or not (demo / "pyodide" / "pyodide.mjs").exists():
        pytest.fail(f"no demo site at {demo}: run `make test`, which builds it")
    return demo
