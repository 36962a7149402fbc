"""encode.mjs in headless Chromium (SwiftShader here): the JavaScript cost of encoding one
dispatch through Chromium's WebGPU binding, to set beside Dawn's Node binding (the Dawn lane of
bench/h200.py): ``.venv/bin/python bench/ceiling/encode_page.py``. Prints ``RESULT {json}``."""

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from browser_env import OffsiteGuard, chromium, serve_directory  # noqa: E402

TIMEOUT_MS = 300_000  # generous: SwiftShader on a busy 2-core machine


def main() -> int:
    with tempfile.TemporaryDirectory() as site:
        (Path(site) / "encode.mjs").write_bytes((Path(__file__).parent / "encode.mjs").read_bytes())
        (Path(site) / "index.html").write_text('<script type="module" src="encode.mjs"></script>')
        guard = OffsiteGuard()
        guard.start()
        try:
            with serve_directory(Path(site)) as base, chromium(guard) as browser:
                page = browser.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("console", lambda m: print(m.text, flush=True))
                page.goto(f"{base}/index.html")
                page.wait_for_function("globalThis.encodeResult || false", timeout=TIMEOUT_MS)
                if errors:
                    raise SystemExit(f"encode.mjs failed in Chromium: {errors}")
                result = page.evaluate("globalThis.encodeResult")
        finally:
            guard.stop()
    print("RESULT " + json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
