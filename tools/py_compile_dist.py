"""Ship bytecode instead of source in a Pyodide dist: every ``.py`` file of the named wheels and
of the standard library zip becomes a ``.pyc`` in the same place, so the page's imports load
code instead of compiling it (what ``pyodide py-compile`` does; see docs/performance.md).

Runs inside Pyodide itself (tools/py_compile_dist.mjs, Node.js), because the bytecode must be
that of Pyodide's CPython 3.12; this machine's Python is 3.11. The dist folder is mounted at
``/dist``. Wheels get a new RECORD and pyodide-lock.json their new sha256. Files that do not
compile (test data written to fail) stay source. Bytecode is hash-based and unchecked: there is
no source next to it to check against.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import zipfile
from pathlib import Path

DIST = Path("/dist")
SITE_PACKAGES = "/lib/python3.12/site-packages"
STDLIB = "/lib/python3.12"


def bytecode(source: bytes, runtime_path: str) -> bytes | None:
    try:
        code = compile(source, runtime_path, "exec", dont_inherit=True)
    except SyntaxError:
        return None
    return bytes(importlib._bootstrap_external._code_to_hash_pyc(  # type: ignore[attr-defined]
        code, importlib.util.source_hash(source), False))


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def compile_archive(path: Path, runtime_root: str) -> tuple[int, int]:
    """Rewrite the zip at ``path`` with bytecode in place of its modules; (compiled, kept)."""
    compiled = kept = 0
    entries: list[tuple[zipfile.ZipInfo, bytes]] = []
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            data = archive.read(info)
            if info.filename.endswith(".py"):
                pyc = bytecode(data, f"{runtime_root}/{info.filename}")
                if pyc is None:
                    kept += 1
                else:
                    compiled += 1
                    info = zipfile.ZipInfo(info.filename + "c", info.date_time)
                    data = pyc
            entries.append((info, data))
    record = next((i.filename for i, _ in entries if i.filename.endswith(".dist-info/RECORD")),
                  None)
    if record is not None:
        lines = [record_line(i.filename, d) for i, d in entries if i.filename != record]
        body = ("\n".join([*lines, f"{record},,"]) + "\n").encode()
        entries = [(i, body if i.filename == record else d) for i, d in entries]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, data in entries:
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    path.write_bytes(out.getvalue())
    return compiled, kept


def main(packages: list[str]) -> None:
    lock_path = DIST / "pyodide-lock.json"
    lock = json.loads(lock_path.read_text())
    for name in packages:
        entry = lock["packages"][name]
        wheel = DIST / entry["file_name"]
        compiled, kept = compile_archive(wheel, SITE_PACKAGES)
        entry["sha256"] = hashlib.sha256(wheel.read_bytes()).hexdigest()
        print(f"{entry['file_name']}: {compiled} modules compiled, {kept} kept as source")
    compiled, kept = compile_archive(DIST / "python_stdlib.zip", STDLIB)
    print(f"python_stdlib.zip: {compiled} modules compiled, {kept} kept as source")
    lock_path.write_text(json.dumps(lock, separators=(",", ":")))
