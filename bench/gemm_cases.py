"""The GEMM cases every lane of the benchmark runs, and their operands (no GPU code here: the
H200 run's host process uses it for torch alike)."""

from __future__ import annotations

import zlib

import numpy as np

# (name, m, n, k, batch, dtype, r): square f32, C32, and 64 batched 512^3 products.
CASES = (
    ("f32 1024", 1024, 1024, 1024, 1, "float32", 20),
    ("f32 2048", 2048, 2048, 2048, 1, "float32", 20),
    ("f32 4096", 4096, 4096, 4096, 1, "float32", 10),
    ("f32 8192", 8192, 8192, 8192, 1, "float32", 4),
    ("c32 4096", 4096, 4096, 4096, 1, "complex64", 4),
    ("f32 batch 64x512", 512, 512, 512, 64, "float32", 10),
    # an attention score product: a short K and a 256 MiB output
    ("f32 batch 64x1024 K64", 1024, 1024, 64, 64, "float32", 10),
    # numpy's bij,bjk->bik with sizes that are not powers of two: M not a multiple of 4; 4 of
    # its 418 MB outputs per trial fit gemm_lane's pool (10 were allocated afresh every trial)
    ("f32 batch 100x1023 K67", 1023, 1021, 67, 100, "float32", 4),
)
QUICK = (("f32 256", 256, 256, 256, 1, "float32", 5),
         ("c32 128", 128, 128, 128, 1, "complex64", 5),
         ("f32 batch 8x64", 64, 64, 64, 8, "float32", 5))
TRIALS = 5
# Each library first runs its products for this long (GPU clocks fall to idle between cases and
# take a while to come back: on the H200 the SM clock moves between 345 and 1980 MHz).
WARMUP_SECONDS = 0.3
# The cases bench/gemm_sweep.py times with each tile candidate (one per kind of tile choice).
SWEPT = ("f32 1024", "f32 4096", "c32 4096", "f32 batch 64x512", "f32 batch 64x1024 K64",
         "f32 batch 100x1023 K67")


def operands(name: str, m: int, n: int, k: int, batch: int, dtype: str):
    """Column-major [m, k, batch] and [k, n, batch] values (batch axes last, every matrix
    compact), the layout this package prefers; torch gets the same values as [batch, m, k]."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    shapes = ((m, k, batch), (k, n, batch)) if batch > 1 else ((m, k), (k, n))
    out = []
    for shape in shapes:
        x = rng.standard_normal(shape, np.float32)
        if dtype == "complex64":
            x = (x + 1j * rng.standard_normal(shape, np.float32)).astype(np.complex64)
        out.append(np.asfortranarray(x))
    return out
