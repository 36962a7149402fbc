"""The demo's Python side: runs inside Pyodide in the page (app.mjs calls these)."""

import time

import numpy as np

import tenferro_web as tw

runtime = None


def _error(e: Exception) -> dict:
    return {"error": type(e).__name__, "message": str(e)}


async def start() -> dict:
    """Create the runtime; a missing WebGPU adapter comes back as the package's typed error."""
    global runtime
    try:
        runtime = await tw.WebGpuRuntime.create()
    except tw.TenferroError as e:
        return _error(e)
    a = runtime.adapter
    kind = "CPU emulation (a software adapter)" if a.is_cpu else "GPU"
    # Firefox gives pages none of the adapter's names: say so rather than show blanks.
    withheld = "withheld by this browser"
    return {"kind": kind, "vendor": a.vendor or withheld,
            "architecture": a.architecture or withheld,
            "description": a.description or "-", "fallback adapter": str(a.is_fallback),
            "runs in": a.context, "features": ", ".join(a.features) or "-",
            "max buffer": f"{a.limits['maxBufferSize'] >> 20} MiB",
            "numpy": np.__version__, "tenferro-web": tw.__version__}


def operand_shapes(subscripts: str, size: int, overrides: str) -> tuple[list, dict]:
    """One extent per label: ``size``, or ``label=extent`` from ``overrides``."""
    sizes = {}
    for item in overrides.replace(",", " ").split():
        label, _, value = item.partition("=")
        sizes[label.strip()] = int(value)
    terms = subscripts.split("->")[0].split(",")
    if any("." in t for t in terms):
        raise ValueError("the demo builds its operands from labels; write the ellipsis "
                         "axes as labels here")
    shapes = [tuple(sizes.setdefault(lab, size) for lab in t.strip()) for t in terms]
    return shapes, sizes


def _sample(shape, dtype, seed):
    """Values spread over [-1, 1), the same on every run: a hash of each element's index.
    (numpy.random would do, but its first import costs the page 25-35 ms before its first
    result.)"""
    def spread(salt):
        x = np.sin(np.arange(int(np.prod(shape))) * 12.9898 + 78.233 * salt) * 43758.5453
        return (2.0 * (x - np.floor(x)) - 1.0).reshape(shape)

    data = spread(2 * seed + 1)
    if dtype == "complex64":
        data = data + 1j * spread(2 * seed + 2)
    return data.astype(dtype)


async def run(subscripts: str, size: int, overrides: str, dtype: str) -> dict:
    try:
        shapes, sizes = operand_shapes(subscripts, int(size), overrides)
        arrays = [_sample(s, dtype, seed) for seed, s in enumerate(shapes)]
        path, plan = tw.einsum_path(subscripts, *arrays)

        async def on_gpu():
            start = time.perf_counter()
            tensors = [runtime.upload(a) for a in arrays]
            result = await (await tw.einsum(subscripts, *tensors)).download()
            return result, (time.perf_counter() - start) * 1e3

        first_result, first_ms = await on_gpu()   # includes compiling the pipelines
        got, gpu_ms = await on_gpu()
        start = time.perf_counter()
        want = np.einsum(subscripts, *arrays, optimize=True)
        numpy_ms = (time.perf_counter() - start) * 1e3
    except (tw.TenferroError, ValueError) as e:
        return _error(e)
    scale = float(np.abs(want).max(initial=0)) or 1.0
    error = float(np.abs(got - want).max(initial=0)) / scale
    summed = [n for label, n in plan.labels.sizes.items() if label not in plan.labels.output]
    tolerance = 8 * int(np.prod(summed)) * 2.0**-24  # f32 accumulation over that many terms
    return {
        "expression": subscripts, "shapes": " ".join("x".join(map(str, s)) or "()"
                                                     for s in shapes),
        "dtype": dtype, "gflop": plan.flops / 1e9, "first_ms": first_ms, "gpu_ms": gpu_ms,
        "numpy_ms": numpy_ms, "rel_error": error, "tolerance": tolerance,
        "agree": bool(error <= tolerance and np.array_equal(first_result, got)),
        "path": str(plan),
    }
