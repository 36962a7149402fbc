"""The transport inside Pyodide: the only Python code that touches JavaScript.

It loads ``js/bridge.mjs`` (shipped in the wheel) as an ES module and forwards compact calls to
it: buffer ids, pipeline ids, and the addresses and lengths of uint32 command streams and numpy
buffers in the wasm heap, which JavaScript reads or fills in place (one copy each way; no proxy
per call).
"""

from __future__ import annotations

import base64
from array import array
from collections.abc import Coroutine
from importlib.resources import files
from typing import Any, cast

import numpy as np

from ..errors import BackendFailure, JSPIUnavailable, NoAdapterError
from .protocol import AdapterDescription, DeviceErrors, T

_bridge_module: Any = None


def in_browser() -> bool:
    try:
        from pyodide.ffi import JsProxy  # noqa: F401

        import js  # noqa: F401
    except ImportError:
        return False
    return True


async def load_bridge() -> Any:
    """Import the bridge once per interpreter, from the wheel's copy, as a ``data:`` URL module:
    a form of ``import()`` that pages, Web Workers and Node.js all support (Node cannot import
    Blob URLs)."""
    global _bridge_module
    if _bridge_module is None:
        import pyodide_js
        from pyodide.code import run_js

        source = (files("tenferro_web") / "js" / "bridge.mjs").read_bytes()
        url = "data:text/javascript;base64," + base64.b64encode(source).decode("ascii")
        bridge = await run_js("(url) => import(url)")(url)
        # The Emscripten module this interpreter runs in: its heap is Python's memory.
        bridge.usePythonMemory(pyodide_js._module)
        _bridge_module = bridge
    return _bridge_module


def address(data: np.ndarray | array[int]) -> int:
    """Where a contiguous numpy array's or an ``array``'s bytes start in Python's memory."""
    if isinstance(data, array):
        return data.buffer_info()[0]
    assert data.flags.c_contiguous
    return int(data.__array_interface__["data"][0])


def _js_error_text(error: Exception) -> str:
    return str(error).strip()


class BrowserTransport:
    """Owns one ``DeviceContext`` of the bridge (one GPUDevice)."""

    name = "browser"
    largest_kept_staging: int | None = None

    def __init__(self, context: Any):
        self._ctx = context

    @classmethod
    async def open(cls, power_preference: str | None, op: str) -> BrowserTransport:
        from pyodide.ffi import JsException

        bridge = await load_bridge()
        if not bridge.hasWebGpu():
            raise NoAdapterError(
                op, "navigator.gpu is missing in this browser context; use a browser with "
                    "WebGPU: Chrome/Edge 113+ (Chromium on Linux: --enable-unsafe-webgpu), "
                    "Firefox 141+ (where it is off: set dom.webgpu.enabled to true in "
                    "about:config), Safari 26+")
        try:
            context = await bridge.openDevice(power_preference)
        except JsException as e:
            raise NoAdapterError(op, f"no WebGPU device: {_js_error_text(e)}") from None
        return cls(context)

    @staticmethod
    async def available() -> bool:
        if not in_browser():
            return False
        import js

        gpu = getattr(getattr(js, "navigator", None), "gpu", None)
        if gpu is None:
            return False
        return (await gpu.requestAdapter()) is not None

    def describe(self) -> AdapterDescription:
        description: AdapterDescription = self._ctx.describe().to_py()
        return description

    def take_errors(self) -> DeviceErrors:
        state = self._ctx.takeErrors().to_py()
        return DeviceErrors(state["lost"], list(state["errors"]),
                            *([(int(i), str(m)) for i, m in state[name]]
                              for name in ("outOfMemory", "rejected", "brokenPipelines")))

    def create_buffer(self, byte_length: int, staging: bool) -> int:
        return int(self._ctx.createBuffer(byte_length, staging))

    def destroy_buffer(self, buffer_id: int) -> None:
        self._ctx.destroyBuffer(buffer_id)

    def write_buffer(self, buffer_id: int, byte_offset: int, data: np.ndarray) -> None:
        self._ctx.writeBuffer(buffer_id, byte_offset, address(data), data.nbytes)

    def create_pipeline(self, code: str, label: str, buffers: tuple[str, ...]) -> int:
        return int(self._ctx.createPipeline(code, label, ",".join(buffers)))

    async def create_pipeline_async(self, code: str, label: str,
                                    buffers: tuple[str, ...]) -> int:
        from pyodide.ffi import JsException

        try:
            return int(await self._ctx.createPipelineAsync(code, label, ",".join(buffers)))
        except JsException as e:
            raise BackendFailure("pipeline", _js_error_text(e)) from None

    def submit(self, commands: array[int], params: array[int], stream: int) -> None:
        self._ctx.submit(address(commands), len(commands), address(params), len(params), stream)

    async def synchronize(self) -> None:
        await self._ctx.synchronize()

    def begin_kernel_timing(self) -> None:
        self._ctx.beginKernelTiming()

    async def end_kernel_timing(self) -> list[int]:
        from pyodide.ffi import JsException

        try:
            durations = await self._ctx.endKernelTiming()
        except JsException as e:
            raise BackendFailure("kernel_timer", _js_error_text(e)) from None
        return [int(d) for d in durations]

    async def map_staging(self, staging_id: int, op: str) -> None:
        from pyodide.ffi import JsException

        try:
            await self._ctx.mapStaging(staging_id)
        except JsException as e:
            raise BackendFailure(op, _js_error_text(e)) from None

    def copy_mapped(self, staging_id: int, dest: np.ndarray, byte_length: int) -> None:
        assert dest.nbytes >= byte_length
        self._ctx.copyMapped(staging_id, address(dest), byte_length)

    def destroy(self) -> None:
        self._ctx.destroy()

    def run_sync(self, coroutine: Coroutine[Any, Any, T], op: str, alternative: str) -> T:
        return run_sync(coroutine, op, alternative)


def run_sync(coroutine: Coroutine[Any, Any, T], op: str, alternative: str) -> T:
    """Block on ``coroutine`` through JSPI, or say exactly why not and what to call instead."""
    try:
        from pyodide.ffi import can_run_sync
        from pyodide.ffi import run_sync as jspi_run_sync
    except ImportError:
        coroutine.close()
        raise JSPIUnavailable(op, f"this Python is not Pyodide; use `{alternative}`") from None
    if not can_run_sync():
        coroutine.close()
        raise JSPIUnavailable(
            op, "synchronous calls need JSPI stack switching, which this entry point cannot do "
                "(Python was not entered through an async call, or the browser lacks JSPI); "
                f"use `{alternative}` instead")
    return cast(T, jspi_run_sync(coroutine))
