"""Headless Firefox on its WebGPU adapter, driven through Marionette (Mozilla's own remote
protocol; the PyPI package ``marionette-driver``), so no geckodriver is needed: Debian does not
package it and npm's downloads a binary at install.

``firefox_profile`` writes a profile whose user.js turns WebGPU on (Mesa's lavapipe passes the
blocklist only when told to), turns off Firefox's own network calls, and sends whatever is still
attempted through the offsite guard's proxy. ``FirefoxDriver`` offers the part of a selenium
WebDriver that pytest-pyodide's runners and the demo runner use.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FIREFOX = "firefox-esr"

# Prefs that stop Firefox's own traffic: telemetry, updates, safe browsing, captive-portal and
# connectivity checks, remote settings, studies, add-on and search updates, prefetching.
QUIET_PREFS: dict[str, Any] = {
    "app.normandy.enabled": False,
    "app.normandy.api_url": "",
    "app.shield.optoutstudies.enabled": False,
    "app.update.auto": False,
    "app.update.enabled": False,
    "app.update.staging.enabled": False,
    "browser.aboutHomeSnippets.updateUrl": "",
    "browser.discovery.enabled": False,
    "browser.newtabpage.activity-stream.feeds.section.topstories": False,
    "browser.newtabpage.activity-stream.feeds.telemetry": False,
    "browser.newtabpage.enabled": False,
    "browser.ping-centre.telemetry": False,
    "browser.safebrowsing.blockedURIs.enabled": False,
    "browser.safebrowsing.downloads.enabled": False,
    "browser.safebrowsing.downloads.remote.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.safebrowsing.provider.google.updateURL": "",
    "browser.safebrowsing.provider.google4.updateURL": "",
    "browser.safebrowsing.provider.mozilla.updateURL": "",
    "browser.search.geoip.url": "",
    "browser.search.update": False,
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage": "about:blank",
    "browser.startup.page": 0,
    "browser.tabs.remote.autostart": True,
    "captivedetect.canonicalURL": "",
    "datareporting.healthreport.uploadEnabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "extensions.blocklist.enabled": False,
    "extensions.getAddons.cache.enabled": False,
    "extensions.update.enabled": False,
    "extensions.systemAddon.update.enabled": False,
    "geo.provider.network.url": "",
    "media.eme.enabled": False,
    "media.gmp-gmpopenh264.enabled": False,
    "media.gmp-manager.url": "",
    "media.gmp-manager.updateEnabled": False,
    "media.gmp-widevinecdm.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "network.dns.disablePrefetch": True,
    "network.prefetch-next": False,
    "network.predictor.enabled": False,
    "network.trr.mode": 5,
    "services.settings.server": "data:,#remote-settings-dummy/v1",
    "toolkit.telemetry.enabled": False,
    "toolkit.telemetry.server": "",
    "toolkit.telemetry.unified": False,
    "toolkit.telemetry.archive.enabled": False,
    "datareporting.usage.uploadEnabled": False,
}
WEBGPU_PREFS: dict[str, Any] = {
    "dom.webgpu.enabled": True,
    "gfx.webgpu.ignore-blocklist": True,
}


def firefox_missing() -> str | None:
    """Why Firefox cannot run here, or None."""
    if shutil.which(FIREFOX) is None:
        return f"{FIREFOX} is not installed (run `make test`, which installs it)"
    try:
        import marionette_driver  # noqa: F401
    except ImportError:
        return "the Python package marionette-driver is missing (run `make test`)"
    return None


def firefox_profile(directory: Path, proxy_port: int | None, webgpu: bool = True,
                    marionette_port: int = 2828) -> Path:
    """A fresh profile in ``directory``: WebGPU on (or off, for the NoAdapterError test), quiet,
    every request that leaves 127.0.0.1 sent to the proxy on ``proxy_port``."""
    directory.mkdir(parents=True, exist_ok=True)
    prefs: dict[str, Any] = {**QUIET_PREFS, "marionette.port": marionette_port,
                             "dom.webgpu.enabled": False}
    if webgpu:
        prefs.update(WEBGPU_PREFS)
    if proxy_port is not None:
        prefs.update({
            "network.proxy.type": 1,
            "network.proxy.http": "127.0.0.1",
            "network.proxy.http_port": proxy_port,
            "network.proxy.ssl": "127.0.0.1",
            "network.proxy.ssl_port": proxy_port,
            "network.proxy.share_proxy_settings": True,
            # 127.0.0.1 itself goes direct: the test server is local.
            "network.proxy.no_proxies_on": "127.0.0.1,localhost",
            "network.proxy.allow_hijacking_localhost": False,
        })

    def js(value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'

    (directory / "user.js").write_text(
        "".join(f'user_pref("{name}", {js(value)});\n' for name, value in prefs.items()))
    return directory


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class FirefoxDriver:
    """Headless Firefox with a fresh profile, and the selenium WebDriver methods pytest-pyodide's
    runners call (get, refresh, execute_async_script, set_script_timeout, quit)."""

    def __init__(self, proxy_port: int | None, webgpu: bool = True, start_timeout: float = 120):
        from marionette_driver.marionette import Marionette

        self.profile = Path(tempfile.mkdtemp(prefix="tenferro-firefox-"))
        port = _free_port()
        firefox_profile(self.profile, proxy_port, webgpu, port)
        # Release builds honour services.settings.server only with this set.
        env = {**os.environ, "MOZ_HEADLESS": "1", "MOZ_CRASHREPORTER_DISABLE": "1",
               "MOZ_REMOTE_SETTINGS_DEVTOOLS": "1"}
        self.process = subprocess.Popen(
            [FIREFOX, "--headless", "--marionette", "--no-remote", "--profile",
             str(self.profile), "about:blank"], env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        self.client = Marionette(host="127.0.0.1", port=port, startup_timeout=int(start_timeout))
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                self.client.start_session()
                break
            except Exception:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.quit()
                    raise
                time.sleep(0.5)
        self.script_timeout = 30.0

    def get(self, url: str) -> None:
        self.client.navigate(url)

    def refresh(self) -> None:
        self.client.refresh()

    def set_script_timeout(self, seconds: float) -> None:
        self.script_timeout = seconds
        self.client.timeout.script = seconds

    def execute_async_script(self, script: str, *args: Any) -> Any:
        # No sandbox: the script runs in the page's own global, as WebDriver's does.
        return self.client.execute_async_script(script, script_args=args, sandbox=None,
                                                new_sandbox=False)

    def quit(self) -> None:
        try:
            self.client.delete_session()
        except Exception:
            pass
        finally:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.process.kill()
            shutil.rmtree(self.profile, ignore_errors=True)
