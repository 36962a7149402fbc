"""A seeded fuzz of the real kernels against numpy, exact on small-integer data.

Case ``i`` of seed ``s`` is generated from ``numpy.random.default_rng([s, i])`` alone, so any
case is reproduced by its (seed, index) pair on any lane. A case is a dot_general (ranks 1-4,
batch axes anywhere, views with offsets, padding and negative strides, conj, F32 and C32, K
around the split-K threshold and not a multiple of 4, M and N around every tile edge), a
transpose (ranks 1-10, extents around the tiles' 32, or two axes that fill tiles over odd batch
counts), a compaction of a view, a sum over axes of a view (lengths around the reduction
kernels' edges), or an einsum (all of numpy's: diagonals, sums, broadcasting, ellipses,
zero-size labels). Each case runs on every runtime given (one per
kernel family) and must equal numpy bit for bit: operands are integers in [-4, 4], so every
partial sum is an exact integer in f32 whatever the summation order.

The same module runs in CPython (native lane) and inside Pyodide (Chromium, Node + Dawn), so
it only awaits ``download()`` and never blocks.
"""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass, field

import numpy as np

import tenferro_web as tw
from tenferro_web.lowering import gemm

# Where kernel selection changes: split-K (lowering/gemm.py) and the output tile edges of both
# kernel families (tiled 64 and 128, blocked 8*TM and 8*TN).
# K at split-K's threshold (8192) and past it; multiples of 4 whose chunks are not (9004 in 8
# chunks of 1125.5) and lengths that are not multiples of 4 at all.
SPLIT_K = (8192, 8196, 9004, 8200, 12_292, 16_388, 8191, 8193, 12_289, 16_387)
TILE_EDGES = (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 66, 127, 128, 129, 130)
KINDS = ("dot",) * 12 + ("transpose",) * 4 + ("compact",) * 2 + ("einsum",) * 3 + ("sum",) * 2 \
    + ("product",) * 2
# Sum lengths around the reduction kernels' edges: sum_rows' short sums (32), a tree's chunk
# (4096) and the 16-byte loads' lanes (odd lengths and offsets leave partial vectors).
SUM_EXTENTS = (1, 3, 4, 7, 31, 32, 33, 64, 255, 1000, 4095, 4096, 4097, 9001, 70_001)
# Batches around the batch-first GEMM's edges: below its minimum (8), partial and whole warps,
# and multiples of 4 that are not of 8 (a workgroup's last 8 entries half empty).
BATCH_EXTENTS = (1, 2, 3, 5, 8, 9, 12, 31, 32, 33, 36, 64, 70)
# lowering.gemm.SMALL_PRODUCT's candidates: every tiled output of the tile-edge cases (at most
# 130 x 130, 9 workgroups) on gemm_blocked, one to four rows and columns per invocation.
SMALL_PRODUCTS = ((16, 1), (16, 2), (16, 4))
TILED_EDGES = tuple(e for e in TILE_EDGES if e >= 63)
LETTERS = "abcdefghij"
# The lane a reproducer names: Pyodide runs the browser transport (Chromium, or Node + Dawn).
LANE = "dawn" if sys.platform == "emscripten" else "native"


@dataclass
class Case:
    seed: int
    index: int
    kind: str
    description: str
    run: object = field(repr=False)  # async (runtime) -> (got, want)

    @property
    def reproducer(self) -> str:
        return (f"make fuzz SEED={self.seed} CASE={self.index} LANE={LANE}  # {self.kind}: "
                f"{self.description}")


def ints(rng: np.random.Generator, size: int, dtype: np.dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size) > 0
    data = rng.integers(-4, 5, size).astype(np.float64)
    if dtype.kind == "c":
        data = data + 1j * rng.integers(-4, 5, size)
    return data.astype(dtype)


def strided_view(rng: np.random.Generator, shape: tuple[int, ...]):
    """(strides, offset, backing length) of a view of ``shape``: axes laid out in a random
    order with padding, some reversed, at an offset."""
    strides = [0] * len(shape)
    step = int(rng.choice([1, 1, 1, 2]))
    for axis in rng.permutation(len(shape)):
        strides[axis] = step
        step *= shape[axis] + int(rng.choice([0, 0, 0, 1, 3]))
    lead = int(rng.choice([0, 0, 1, 4, 7]))
    offset = lead
    empty = 0 in shape  # an empty view's offset must stay within its (empty) backing
    for axis, d in enumerate(shape):
        if d > 1 and not empty and rng.random() < 0.2:
            offset += (d - 1) * strides[axis]
            strides[axis] = -strides[axis]
    return tuple(strides), offset, lead + step + int(rng.choice([0, 5]))


def gather(flat: np.ndarray, shape, strides, offset) -> np.ndarray:
    index = np.full(shape, offset, np.int64)
    for axis, (d, s) in enumerate(zip(shape, strides)):
        along = [1] * len(shape)
        along[axis] = d
        index = index + np.arange(d).reshape(along) * s
    return flat[index]


class Operand:
    """A host backing array and a view of it; ``device`` puts the same view on a runtime."""

    def __init__(self, rng, shape, dtype, as_view: bool):
        self.shape = tuple(int(d) for d in shape)
        if as_view:
            self.strides, self.offset, backing = strided_view(rng, self.shape)
        else:
            self.strides = tuple(int(s) for s in np.cumprod((1, *self.shape[:-1]))) \
                if self.shape else ()
            self.offset, backing = 0, int(np.prod(self.shape, dtype=np.int64))
        self.flat = ints(rng, backing, dtype)
        self.as_view = as_view

    @property
    def host(self) -> np.ndarray:
        return gather(self.flat, self.shape, self.strides, self.offset)

    def device(self, rt):
        if not self.as_view:
            return rt.upload(self.host)
        return rt.upload(self.flat).view(self.shape, self.strides, self.offset)

    def __repr__(self) -> str:
        if not self.as_view:
            return f"{self.shape}"
        return f"{self.shape}@strides{self.strides}+{self.offset}"


def einsum_ref(spec: str, *arrays) -> np.ndarray:
    wide = [a.astype(np.complex128 if np.iscomplexobj(a) else np.float64) for a in arrays]
    return np.einsum(spec, *wide)


def dot_case(rng: np.random.Generator):
    regime = rng.choice(["small", "tiles", "split", "batched"], p=[0.35, 0.3, 0.2, 0.15])
    small = None  # lowering.gemm.SMALL_PRODUCT for this case (None: the default)
    # 16-byte loads are an f32 variant: most split-K cases are f32 and compact.
    dtype = np.dtype(rng.choice(["float32", "complex64"], p=[0.75, 0.25] if regime == "split"
                                else [0.5, 0.5]))
    views = 0.25 if regime == "split" else 0.4
    if regime == "split":
        k_ext = [int(rng.choice(SPLIT_K)) + int(rng.choice([0, 0, 0, 0, -1, 1, -4, 4]))]
        # Outputs around split-K's size limit (4096 elements); 64 x 64 is the one output that
        # is both split and tiled on GPUs.
        m, n = [(64, 64), (64, 65), (65, 63), (63, 65), (1, 1), (3, 2), (1, 64), (17, 5)][
            int(rng.choice(8, p=[0.35, 0.1, 0.1, 0.05, 0.1, 0.1, 0.1, 0.1]))]
        if rng.random() < 0.3:  # a tiled output of few workgroups: split on GPUs to fill them
            m, n = int(rng.integers(64, 200)), int(rng.integers(64, 200))
            k_ext = [int(rng.integers(512, 2100))]
        free_l, free_r, batch = [m], [n], []
    elif regime == "tiles":
        free_l, free_r = [int(rng.choice(TILE_EDGES))], [int(rng.choice(TILE_EDGES))]
        k_ext, batch = [int(rng.integers(1, 40))], []
        if rng.random() < 0.3:
            # GPUs' small products on gemm_blocked (a sweep's candidate until a GPU chooses;
            # off by default): tiled outputs, each block it can take
            small = SMALL_PRODUCTS[int(rng.integers(len(SMALL_PRODUCTS)))]
            free_l, free_r = [int(rng.choice(TILED_EDGES))], [int(rng.choice(TILED_EDGES))]
        if rng.random() < 0.3:  # split a free group over two axes
            free_l = [free_l[0], int(rng.integers(1, 4))]
    elif regime == "batched":
        free_l, free_r = [int(rng.choice(TILE_EDGES[:12]))], [int(rng.choice(TILE_EDGES[:12]))]
        k_ext, batch = [int(rng.integers(1, 12))], [int(rng.integers(2, 40))]
        if rng.random() < 0.3:  # many small products at once: 128x128 tiles on GPUs
            free_l, free_r, batch = [129], [129], [64]
    else:
        free_l = [int(rng.integers(1, 7)) for _ in range(rng.integers(0, 3))]
        free_r = [int(rng.integers(1, 7)) for _ in range(rng.integers(0, 3))]
        k_ext = [int(rng.integers(1, 9)) for _ in range(rng.integers(0, 3))]
        batch = [int(rng.integers(1, 4)) for _ in range(rng.integers(0, 2))]
    # Ranks 1-4 (rank 0 happens when every group is empty; dot_general needs rank >= 0 anyway).
    roles_l = [("f", d) for d in free_l] + [("k", i) for i in range(len(k_ext))] + \
        [("b", i) for i in range(len(batch))]
    roles_r = [("k", i) for i in range(len(k_ext))] + [("b", i) for i in range(len(batch))] + \
        [("f", d) for d in free_r]
    roles_l = [roles_l[i] for i in rng.permutation(len(roles_l))]
    roles_r = [roles_r[i] for i in rng.permutation(len(roles_r))]

    def layout(roles):
        shape = [d if r == "f" else (k_ext[d] if r == "k" else batch[d]) for r, d in roles]
        kpos = {d: a for a, (r, d) in enumerate(roles) if r == "k"}
        bpos = {d: a for a, (r, d) in enumerate(roles) if r == "b"}
        return shape, [kpos[i] for i in range(len(k_ext))], [bpos[i] for i in range(len(batch))]

    lshape, lc, lb = layout(roles_l)
    rshape, rc, rb = layout(roles_r)
    lhs = Operand(rng, lshape, dtype, as_view=rng.random() < views)
    rhs = Operand(rng, rshape, dtype, as_view=rng.random() < views)
    lconj, rconj = (bool(rng.random() < 0.5), bool(rng.random() < 0.5)) if dtype.kind == "c" \
        else (False, False)

    async def run(rt):
        with small_product(small):
            got = await tw.dot_general_with_conj(lhs.device(rt), rhs.device(rt), lc, rc, lb, rb,
                                                 lconj, rconj).download()
        want = dot_general_ref(lhs.host, rhs.host, lc, rc, lb, rb, lconj, rconj)
        return got, want.astype(dtype)

    conj = f", conj=({lconj}, {rconj})" if dtype.kind == "c" else ""
    setting = f" with SMALL_PRODUCT={small}" if small else ""
    text = (f"{dtype.name} dot_general({lhs!r}, {rhs!r}, lc={lc}, rc={rc}, lb={lb}, rb={rb}"
            f"{conj}){setting}")
    return text, run


@contextlib.contextmanager
def small_product(setting: tuple[int, int] | None):
    """lowering.gemm.SMALL_PRODUCT set to ``setting`` (None: left as it is) for the calls
    inside, the kept programs dropped on the way in and out."""
    if setting is None:
        yield
        return
    kept = gemm.SMALL_PRODUCT
    gemm.SMALL_PRODUCT = setting
    tw.api.forget_programs()
    try:
        yield
    finally:
        gemm.SMALL_PRODUCT = kept
        tw.api.forget_programs()


def dot_general_ref(lhs, rhs, lc, rc, lb=(), rb=(), lconj=False, rconj=False) -> np.ndarray:
    """numpy.einsum in float64/complex128 with dot_general's output order
    ``[lhs free, rhs free, batch]``: the reference every lane compares with."""
    ls, rs = [None] * lhs.ndim, [None] * rhs.ndim
    symbols = iter("abcdefghijklmnop")
    for a, b in [*zip(lc, rc), *zip(lb, rb)]:
        ls[a] = rs[b] = next(symbols)
    lf = [a for a in range(lhs.ndim) if ls[a] is None]
    rf = [b for b in range(rhs.ndim) if rs[b] is None]
    for a in lf:
        ls[a] = next(symbols)
    for b in rf:
        rs[b] = next(symbols)
    out = "".join([ls[a] for a in lf] + [rs[b] for b in rf] + [ls[a] for a in lb])
    lhs = np.conj(lhs) if lconj else lhs
    rhs = np.conj(rhs) if rconj else rhs
    return einsum_ref(f"{''.join(ls)},{''.join(rs)}->{out}", lhs, rhs)


def copy_case(rng: np.random.Generator, transpose: bool):
    dtype = np.dtype(rng.choice(["float32", "int32", "complex64", "bool"]))
    roll = rng.random()
    if roll < 0.3:  # many short axes: the tiles' groups of several axes
        shape = [int(rng.choice((1, 2, 3, 4, 5, 8))) for _ in range(int(rng.integers(5, 11)))]
    elif roll < 0.45:  # two axes that fill tiles, batched over the others (grouped tiles move
        # several consecutive batches per workgroup: counts that are not a multiple of it)
        shape = [int(rng.choice((32, 33, 40, 48))) for _ in range(2)] + \
            [int(rng.choice((1, 2, 3, 5, 7, 9, 17, 33, 37))) for _ in range(rng.integers(1, 3))]
        shape = [shape[i] for i in rng.permutation(len(shape))]
    else:
        rank = int(rng.integers(1, 6))
        extents = (1, 2, 3, 5, 15, 16, 17, 31, 32, 33, 64, 70)  # around the tiles' 32
        shape = [int(rng.choice(extents)) for _ in range(rank)]
    while np.prod(shape, dtype=np.int64) > 60_000:
        shape[int(np.argmax(shape))] = 3
    src = Operand(rng, shape, dtype, as_view=not transpose or rng.random() < 0.5)
    perm = [int(p) for p in rng.permutation(len(shape))]

    async def run(rt):
        x = src.device(rt)
        if transpose:
            return await tw.transpose(x, perm).download(), np.transpose(src.host, perm)
        return await tw.to_contiguous(x).download(), src.host

    what = f"transpose({src!r}, {perm})" if transpose else f"to_contiguous({src!r})"
    return f"{dtype.name} {what}", run


def einsum_case(rng: np.random.Generator):
    """Any subscripts numpy.einsum accepts: 1-4 operands of rank 0-3 plus ellipsis axes
    anywhere, labels repeated within an operand (diagonals), summed from one operand
    (reductions), extent-1 axes against wider ones (broadcasting, named and ellipsis), zero-size
    labels, implicit and explicit outputs."""
    dtype = np.dtype(rng.choice(["float32", "complex64"]))
    labels = LETTERS[:int(rng.integers(1, 7))]
    sizes = {lab: int(rng.choice([0, 1, 2, 3, 4, 5, 7, 9, 16, 17, 33],
                                 p=[.03, .1, .12, .12, .12, .1, .1, .1, .08, .08, .05]))
             for lab in labels}
    ellipsis = [int(rng.choice([1, 2, 3, 5])) for _ in range(int(rng.choice([0, 0, 1, 2])))]
    while np.prod(list(sizes.values()) + ellipsis) > 20_000:
        biggest = max(sizes, key=sizes.__getitem__)
        sizes[biggest] = 3
    terms, shapes = [], []
    for _ in range(int(rng.integers(1, 5))):
        term = [str(x) for x in rng.choice(list(labels), size=int(rng.integers(0, 4)))]
        extent = {lab: 1 if rng.random() < 0.15 else sizes[lab] for lab in term}  # broadcast
        shape = [extent[lab] for lab in term]
        text = "".join(term)
        if ellipsis and rng.random() < 0.7:
            at = int(rng.integers(0, len(term) + 1))
            mine = [1 if rng.random() < 0.25 else d
                    for d in ellipsis[len(ellipsis) - int(rng.integers(0, len(ellipsis) + 1)):]]
            text = text[:at] + "..." + text[at:]
            shape = shape[:at] + mine + shape[at:]
        terms.append(text)
        shapes.append(shape)
    spec = ",".join(terms)
    if rng.random() < 0.7:  # explicit output: any subset of the labels, in any order
        used = sorted({ch for t in terms for ch in t if ch in labels})
        out = [used[i] for i in rng.permutation(len(used))][:int(rng.integers(0, len(used) + 1))]
        if any("..." in t for t in terms):
            out.insert(int(rng.integers(0, len(out) + 1)), "...")
        spec += "->" + "".join(out)
    operands = [Operand(rng, shape, dtype, as_view=rng.random() < 0.3) for shape in shapes]

    async def run(rt):
        got = await tw.einsum(spec, *(o.device(rt) for o in operands))
        return await got.download(), \
            einsum_ref(spec, *(o.host for o in operands)).astype(dtype)

    return f"{dtype.name} einsum({spec!r}, {', '.join(map(repr, operands))})", run


def sum_case(rng: np.random.Generator):
    """``tw.sum`` over some axes of a view (any memory order, offsets, reversed axes) of up to
    ~200k elements: long sums split into chunks and added up by a second pass."""
    dtype = np.dtype(rng.choice(["float32", "complex64"]))
    shape = [int(rng.choice(SUM_EXTENTS)) for _ in range(int(rng.integers(1, 4)))]
    while np.prod(shape, dtype=np.int64) > 200_000:  # int64: numpy on wasm32 wraps at 2^31
        shape[int(np.argmax(shape))] = int(rng.choice((3, 7, 33)))
    src = Operand(rng, shape, dtype, as_view=rng.random() < 0.6)
    axes = tuple(int(a) for a in np.flatnonzero(rng.random(len(shape)) < 0.6)) or (0,)
    wide = np.complex128 if dtype.kind == "c" else np.float64

    async def run(rt):
        got = await tw.sum(src.device(rt), axis=axes).download()
        return got, src.host.astype(wide).sum(axis=axes).astype(dtype)

    return f"{dtype.name} sum({src!r}, axis={axes})", run


def product_case(rng: np.random.Generator):
    """One batched product written numpy's way, its output labels in any order (batch-first
    too: the batch-first GEMM, or the product's result permuted after the GEMM). Rows, columns
    and contractions around the tiles' edges; free and batch groups of one or two labels, the
    first batch label around the batch-first GEMM's edges; half the terms put the batch first,
    as numpy's style does."""
    dtype = np.dtype(rng.choice(["float32", "complex64"]))
    groups = {"m": "ab"[:int(rng.integers(1, 3))], "n": "cd"[:int(rng.integers(1, 3))],
              "k": "e", "b": "fg"[:int(rng.integers(1, 3))]}
    sizes = {lab: int(rng.choice(TILE_EDGES)) for lab in "".join(groups.values())}
    for lab in (*groups["m"][1:], *groups["n"][1:], *groups["b"][1:]):
        sizes[lab] = int(rng.choice([1, 2, 3, 5]))
    sizes[groups["b"][0]] = int(rng.choice(BATCH_EXTENTS))
    while np.prod(list(sizes.values()), dtype=np.int64) > 2_000_000:  # small on SwiftShader
        biggest = max(sizes, key=sizes.__getitem__)
        sizes[biggest] = int(rng.choice([3, 7, 33]))
    lhs, rhs = [*groups["m"], "e"], ["e", *groups["n"]]
    out = [*groups["m"], *groups["n"]]
    for term in (lhs, rhs, out):
        rng.shuffle(term)
        # numpy's batch-first style half the time, else the batch labels anywhere
        term[:0] = groups["b"]
        if rng.random() < 0.5:
            rng.shuffle(term)
    spec = f"{''.join(lhs)},{''.join(rhs)}->{''.join(out)}"
    operands = [Operand(rng, [sizes[lab] for lab in term], dtype, as_view=rng.random() < 0.3)
                for term in (lhs, rhs)]

    async def run(rt):
        got = await tw.einsum(spec, *(o.device(rt) for o in operands))
        return await got.download(), \
            einsum_ref(spec, *(o.host for o in operands)).astype(dtype)

    return f"{dtype.name} einsum({spec!r}, {', '.join(map(repr, operands))})", run


def make_case(seed: int, index: int) -> Case:
    rng = np.random.default_rng([seed, index])
    kind = str(rng.choice(KINDS))
    if kind == "dot":
        text, run = dot_case(rng)
    elif kind in ("transpose", "compact"):
        text, run = copy_case(rng, kind == "transpose")
    elif kind == "sum":
        text, run = sum_case(rng)
    elif kind == "product":
        text, run = product_case(rng)
    else:
        text, run = einsum_case(rng)
    return Case(seed, index, kind, text, run)


def mismatch(got: np.ndarray, want: np.ndarray) -> str | None:
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"got {got.dtype}{got.shape}, want {want.dtype}{want.shape}"
    if np.array_equal(got, want):
        return None
    wrong = np.flatnonzero((got != want).reshape(-1))
    diff = np.abs(got.astype(np.complex128) - want.astype(np.complex128)).max()
    return f"{wrong.size} of {got.size} elements differ (max abs error {diff:g})"


async def run_fuzz(runtimes: dict, seed: int, count: int, start: int = 0,
                   log=print) -> list[str]:
    """Run cases ``start .. start+count-1`` on every runtime; returns one reproducer line per
    failure (and logs it at once)."""
    failures: list[str] = []
    began = time.perf_counter()
    for index in range(start, start + count):
        case = make_case(seed, index)
        for family, rt in runtimes.items():
            try:
                got, want = await case.run(rt)
                problem = mismatch(got, want)
            except Exception as error:  # a typed error here is a failure too: report it
                problem = f"raised {type(error).__name__}: {error}"
            if problem:
                line = f"FAIL [{family}] {problem}: {case.reproducer}"
                failures.append(line)
                log(line)
    log(f"fuzz: {count} cases x {len(runtimes)} kernel families, seed {seed}: "
        f"{len(failures)} failures in {time.perf_counter() - began:.1f} s")
    return failures
