"""How tenferro-web starts Chromium, shared by the tests, the demo runner and the benchmarks.

Debian's Chromium with these flags gives a real WebGPU adapter (SwiftShader on a machine without
a GPU) in headless mode, in pages and in workers. The networking flags keep Chromium from
calling home. ``OffsiteGuard`` is a recording proxy that refuses everything: Chromium is started
with it as its proxy, so any request that tries to leave 127.0.0.1 (loopback is never proxied)
lands there, is recorded and gets a 403; callers fail when anything was recorded.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
WEBGPU_FLAGS = [
    "--enable-unsafe-webgpu",
    # Keep Chromium from calling home (each flag removed a kind of request the guard saw).
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--no-pings",
    "--disable-breakpad",
    "--metrics-recording-only",
    "--no-default-browser-check",
    "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,OptimizationHintsFetching,"
    "OptimizationGuideModelDownloading,MediaRouter,Translate,"
    "CertificateTransparencyComponentUpdater,AutofillServerCommunication",
]
# What Chromium 156 still asks for with every flag above (an on-device model manifest check
# at update.googleapis.com, the account list at accounts.google.com): browser services, not
# pages or workers of this project. The guard refuses them like everything else, so nothing
# leaves 127.0.0.1; they are reported apart and do not fail a run. Anything else does.
CHROMIUM_SERVICE_HOSTS = ("update.googleapis.com", "accounts.google.com", "clients2.google.com",
                          "optimizationguide-pa.googleapis.com")


def request_host(line: str) -> str:
    """Host of a recorded request line: ``CONNECT host:443`` or ``GET http://host/path``."""
    target = line.split(" ", 1)[1]
    if "://" in target:
        target = target.split("://", 1)[1]
    return target.split("/", 1)[0].rsplit(":", 1)[0]


def proxy_flag(guard: OffsiteGuard) -> str:
    return f"--proxy-server=http://127.0.0.1:{guard.port}"


class _Refuse(BaseHTTPRequestHandler):
    def _record(self) -> None:
        self.server.recorded.append(f"{self.command} {self.path}")
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_PUT = do_HEAD = do_OPTIONS = do_CONNECT = do_DELETE = _record

    def log_message(self, *args) -> None:  # keep test output clean
        pass


class OffsiteGuard:
    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuse)
        self._server.recorded = []
        self.port = self._server.server_address[1]

    def start(self) -> None:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def requests(self) -> list[str]:
        """Every request Chromium tried to send off loopback (all of them were refused)."""
        return list(self._server.recorded)

    def offsite_requests(self) -> list[str]:
        """Refused requests other than Chromium's own service calls: these fail a run."""
        return [r for r in self.requests() if request_host(r) not in CHROMIUM_SERVICE_HOSTS]

    def service_calls(self) -> list[str]:
        return [r for r in self.requests() if request_host(r) in CHROMIUM_SERVICE_HOSTS]

    def forget(self, predicate) -> None:
        """Drop recorded requests a test made on purpose (the guard's own self-test)."""
        self._server.recorded[:] = [r for r in self._server.recorded if not predicate(r)]

    def stop(self) -> None:
        self._server.shutdown()


class _QuietFiles(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript",
                      ".wasm": "application/wasm", ".whl": "application/zip"}

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def serve_directory(root: Path, port: int = 0) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", port),
                                 functools.partial(_QuietFiles, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


@contextlib.contextmanager
def chromium(guard: OffsiteGuard, webgpu: bool = True):
    """Debian's headless Chromium through Playwright (its own browser downloads are not
    reachable here, and not needed)."""
    from playwright.sync_api import sync_playwright

    flags = [*WEBGPU_FLAGS, proxy_flag(guard)]
    if not webgpu:
        flags.remove("--enable-unsafe-webgpu")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=flags)
        try:
            yield browser
        finally:
            browser.close()
