"""A model of what each WGSL kernel does, driven only by its launch: the 32-bit parameter words
(decoded as the kernels decode them, ``bitcast<i32>`` included), the kernel key's constants and
the grid. It interprets whole Programs on numpy buffers, so host tests can compare lowering with
numpy without trusting lowering's own helpers. It also reports the element index at which every
16-byte vector load starts, for the alignment invariant.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tenferro_web.lowering.program import BufferCopy, Clear, Launch, Program


def signed(word: int) -> int:
    return word - (1 << 32) if word >= 1 << 31 else word


@dataclass
class Trace:
    """What the interpreted kernels did, beyond their results."""

    vec4_starts: list[tuple[str, int]] = field(default_factory=list)  # (operand, element index)
    gemm_jobs: list[list[tuple[int, int]]] = field(default_factory=list)  # per launch: K ranges
    writes: list[np.ndarray] = field(default_factory=list)  # per copy launch: dst indices
    sum_chunks: list[list[tuple[int, int]]] = field(default_factory=list)  # per sum: K ranges


def gemm_params(words: tuple[int, ...]) -> dict:
    w = words
    return {"m": w[0], "n": w[1], "k": w[2], "batch": w[3], "tiles_m": w[4], "tiles_n": w[5],
            "a_off": signed(w[6]), "a_rs": signed(w[7]), "a_cs": signed(w[8]),
            "a_bs": signed(w[9]), "b_off": signed(w[10]), "b_rs": signed(w[11]),
            "b_cs": signed(w[12]), "b_bs": signed(w[13]),
            "a_sign": np.frombuffer(np.uint32(w[14]).tobytes(), np.float32)[0],
            "b_sign": np.frombuffer(np.uint32(w[15]).tobytes(), np.float32)[0],
            "k_total": w[16], "k_step": w[17]}


def _gemm(launch: Launch, bufs: list[np.ndarray], trace: Trace) -> None:
    p = gemm_params(launch.words)
    const = dict(launch.key.constants)
    a_buf, b_buf, c_buf = (bufs[s] for s in launch.buffers)
    m, n = p["m"], p["n"]
    tiled = launch.key.name == "gemm_tiled"
    block_m = 16 * int(const["TM"]) if tiled else int(const["WX"]) * int(const["TM"])
    block_n = 16 * int(const["TN"]) if tiled else int(const["WY"]) * int(const["TN"])
    assert p["tiles_m"] * block_m >= m and p["tiles_n"] * block_n >= n, "tiles miss the output"
    x, y, _ = launch.grid
    assert x * y >= p["tiles_m"] * p["tiles_n"] * p["batch"], "grid misses workgroups"
    ranges = []
    rows, cols = np.arange(m)[:, None], np.arange(n)[None, :]
    for job in range(p["batch"]):
        k = min(p["k"], p["k_total"] - min(p["k_total"], job * p["k_step"]))
        ranges.append((job * p["k_step"], job * p["k_step"] + k))
        ks = np.arange(k)
        a_idx = p["a_off"] + job * p["a_bs"] + rows * p["a_rs"] + ks[None, :] * p["a_cs"]
        b_idx = p["b_off"] + job * p["b_bs"] + ks[:, None] * p["b_rs"] + cols * p["b_cs"]
        a = a_buf[a_idx] if k else np.zeros((m, 0), a_buf.dtype)
        b = b_buf[b_idx] if k else np.zeros((0, n), b_buf.dtype)
        if np.iscomplexobj(a_buf):
            a = a.real + 1j * a.imag * p["a_sign"]
            b = b.real + 1j * b.imag * p["b_sign"]
        out_idx = job * m * n + cols * m + rows
        c_buf[out_idx] = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64) @ b
        if tiled:
            for name, fast_is_k, vec, idx in (
                    ("a", const["A_K_FAST"] == "true", const["VEC_A"] == "true", a_idx),
                    ("b", const["B_K_FAST"] == "true", const["VEC_B"] == "true", b_idx.T)):
                if not vec:
                    continue
                # idx is [M or N, K]. Groups of 4 start at multiples of 4 along the fast axis
                # (tile origins are multiples of BK, BM and BN); a whole group is one load.
                full = idx[:, 0: (k // 4) * 4: 4] if fast_is_k else \
                    idx[0: (idx.shape[0] // 4) * 4: 4, :]
                trace.vec4_starts.extend((name, int(i)) for i in full.ravel())
    trace.gemm_jobs.append(ranges)


def _gemm_batch_tiled(launch: Launch, bufs: list[np.ndarray], trace: Trace) -> None:
    """c[bi + B*m + B*M*n]: NB batch entries per workgroup over 8*TM x 4*TN output tiles."""
    p = gemm_params(launch.words)
    const = {k: int(v) for k, v in launch.key.constants if k != "SCALAR"}
    a_buf, b_buf, c_buf = (bufs[s] for s in launch.buffers)
    m, n, k, batch = p["m"], p["n"], p["k"], p["batch"]
    nb, bm, bn, bk = const["NB"], 8 * const["TM"], 4 * const["TN"], const["BK"]
    threads = 32 * nb
    assert const["LOADS_A"] * threads == bk * nb * bm, "A's tile loads miss elements"
    assert const["LOADS_B"] * threads == bk * nb * bn, "B's tile loads miss elements"
    assert const["STORES"] * threads == 4 * bm * nb, "the stage's stores miss elements"
    assert p["tiles_m"] * bm >= m and p["tiles_n"] * bn >= n, "tiles miss the output"
    x, y, _ = launch.grid
    assert x * y >= -(-batch // nb) * p["tiles_m"] * p["tiles_n"], "grid misses workgroups"
    assert abs(p["a_bs"]) <= 1 and abs(p["b_bs"]) <= 1, "the batch is not consecutive"
    rows, cols, ks = np.arange(m)[:, None], np.arange(n)[None, :], np.arange(k)
    wide = np.complex128 if np.iscomplexobj(a_buf) else np.float64
    for bi in range(batch):
        a = a_buf[p["a_off"] + bi * p["a_bs"] + rows * p["a_rs"] + ks[None, :] * p["a_cs"]]
        b = b_buf[p["b_off"] + bi * p["b_bs"] + ks[:, None] * p["b_rs"] + cols * p["b_cs"]]
        if np.iscomplexobj(a_buf):
            a = a.real + 1j * a.imag * p["a_sign"]
            b = b.real + 1j * b.imag * p["b_sign"]
        c_buf[bi + batch * (rows + m * cols)] = a.astype(wide) @ b
    trace.gemm_jobs.append([(0, k)] * batch)


def _strided_copy(launch: Launch, bufs: list[np.ndarray], trace: Trace) -> None:
    w = launch.words
    size, rank, offset = w[0], w[1], signed(w[2])
    dims, strides = w[3: 3 + rank], [signed(s) for s in w[3 + rank: 3 + 2 * rank]]
    f = np.arange(size)
    rest, index = f.copy(), np.full(size, offset)
    for d, s in zip(dims, strides):
        index += (rest % d) * s
        rest //= d
    x, y, _ = launch.grid
    per_group = 1024 if launch.key.name == "copy_strided_bytes" else 256
    assert x * y * per_group >= size, "grid misses elements"
    src, dst = (bufs[s] for s in launch.buffers)
    dst[f] = src[index]
    trace.writes.append(f)


def _tiled_transpose(launch: Launch, bufs: list[np.ndarray], trace: Trace) -> None:
    d0, d1, offset, groups_j, tiles_i, batch, i_fast = launch.words
    x, y, _ = launch.grid
    per = int(dict(launch.key.constants)["TILES"])  # consecutive tiles along j per workgroup
    group = np.arange(x * y)[:, None, None]
    # 32 x 32 tiles: invocation (lx, ly) moves rows ly + r * ROWS for every r.
    ly, lx = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
    b = group // (groups_j * tiles_i)
    g = group % (groups_j * tiles_i)
    gj, gi = (g // tiles_i, g % tiles_i) if i_fast else (g % groups_j, g // groups_j)
    i0 = gi * 32
    src, dst = (bufs[s] for s in launch.buffers)
    base = b * d0 * d1
    for t in range(per):
        j0 = (gj * per + t) * 32
        # The read of (i0 + ly, j0 + lx) lands in the tile; the write takes (i0+lx, j0+ly)
        wi, wj = i0 + lx, j0 + ly
        ok = (b < batch) & (wi < d0) & (wj < d1)
        dst_idx = (base + wj * d0 + wi)[ok]
        dst[dst_idx] = src[(offset + base + wi * d1 + wj)[ok]]
        trace.writes.append(dst_idx)


def _grouped_tiles(launch: Launch, bufs: list[np.ndarray], trace: Trace) -> None:
    w = launch.words
    tiles_a, tiles_b, batches, offset = w[0], w[1], w[2], signed(w[3])
    extent_a, extent_b, n_a, n_b, n_rest = w[4:9]
    axes = [(w[9 + 3 * i], signed(w[10 + 3 * i]), w[11 + 3 * i]) for i in range(n_a + n_b + n_rest)]
    assert len(w) == 9 + 3 * (n_a + n_b + n_rest), "params past the axes"
    per = int(dict(launch.key.constants)["BATCHES"])  # consecutive batches per workgroup
    assert 1 <= per <= 32, "the kernel's batch table holds 32"
    assert tiles_a * 32 >= extent_a and tiles_b * 32 >= extent_b, "tiles miss the groups"
    x, y, _ = launch.grid

    def offsets(index: np.ndarray, group: list[tuple[int, int, int]]):
        rest, src_at, dst_at = index.copy(), np.zeros_like(index), np.zeros_like(index)
        for extent, src_stride, dst_stride in group:
            src_at += (rest % extent) * src_stride
            dst_at += (rest % extent) * dst_stride
            rest //= extent
        return src_at, dst_at

    # As the kernel decodes its workgroup: the tile index fastest, then the chunk of batches;
    # workgroups past the last chunk leave. Each moves the 32 x 32 tile at (a0, b0) for the
    # batches first .. first + per - 1 that exist.
    group = np.arange(x * y)
    first = group // (tiles_a * tiles_b) * per
    group, first = group[first < batches], first[first < batches]
    t = group % (tiles_a * tiles_b)
    a0, b0 = (t % tiles_a) * 32, (t // tiles_a) * 32
    k, i, j = np.meshgrid(np.arange(per), np.arange(32), np.arange(32), indexing="ij")
    ga, gb = a0[:, None, None, None] + i, b0[:, None, None, None] + j  # along A, along B
    batch = first[:, None, None, None] + k
    ok = (ga < extent_a) & (gb < extent_b) & (batch < batches)
    ga, gb, batch = ga[ok], gb[ok], batch[ok]
    covered = np.zeros((batches, extent_b, extent_a), bool)
    covered[batch, gb, ga] = True
    assert covered.all(), "grid misses tiles"
    a_src, a_dst = offsets(ga, axes[:n_a])
    b_src, b_dst = offsets(gb, axes[n_a: n_a + n_b])
    r_src, r_dst = offsets(batch, axes[n_a + n_b:])
    src, dst = (bufs[s] for s in launch.buffers)
    dst_idx = a_dst + b_dst + r_dst
    dst[dst_idx] = src[offset + a_src + b_src + r_src]
    trace.writes.append(dst_idx)


def _reduce(launch: Launch, bufs: list[np.ndarray], trace: Trace) -> None:
    size, chunks = launch.words
    partial, out = (bufs[s] for s in launch.buffers)
    out[:size] = partial[: size * chunks].reshape(chunks, size).sum(axis=0)


def _sum(launch: Launch, bufs: list[np.ndarray], trace: Trace) -> None:
    m, k, chunk, chunks = launch.words[:4]
    offset, m_stride, k_stride = (signed(x) for x in launch.words[4:7])
    batch, b_stride = launch.words[7], signed(launch.words[8])
    x, y, _ = launch.grid
    src, out = (bufs[s] for s in launch.buffers)
    const = dict(launch.key.constants)
    # sum_rows with VEC: an invocation per 16 bytes of outputs (4 f32 or 2 c32)
    lanes = 16 // src.itemsize if const.get("VEC") == "true" else 1
    per_group = 1 if launch.key.name == "sum_tree" else 256 * lanes
    outputs = m * batch
    assert x * y * per_group >= outputs * chunks, "grid misses outputs"
    # output o = m + M * b reads from offset + m * m_stride + b * b_stride
    base = offset + (np.arange(outputs) % m) * m_stride + (np.arange(outputs) // m) * b_stride
    if const.get("VEC") == "true" and launch.key.name == "sum_rows":
        assert m_stride == 1 and offset % lanes == 0 and k_stride % lanes == 0 \
            and b_stride % lanes == 0 and m % lanes == 0
        words = src.itemsize // 4  # recorded as the index of the load's first 32-bit word
        trace.vec4_starts.extend(("sum", int(start + kk * k_stride) * words)
                                 for kk in range(k) for start in base[::lanes])
    if const.get("VEC") == "true" and launch.key.name == "sum_tree":
        assert k_stride == 1, "a tree's 16-byte loads run along K"
    ranges = []
    wide = np.complex128 if np.iscomplexobj(src) else np.float64
    for c in range(chunks):
        ks = np.arange(c * chunk, min((c + 1) * chunk, k))
        ranges.append((int(ks[0]), int(ks[-1]) + 1) if ks.size else (0, 0))
        index = base[:, None] + ks[None, :] * k_stride
        out[c * outputs: (c + 1) * outputs] = src[index].astype(wide).sum(axis=1)
    trace.sum_chunks.append(ranges)


KERNELS = {"gemm_tiled": _gemm, "gemm_blocked": _gemm, "gemm_batch_tiled": _gemm_batch_tiled,
           "copy_strided": _strided_copy, "copy_strided_bytes": _strided_copy,
           "transpose_tiled": _tiled_transpose, "permute_tiled": _grouped_tiles,
           "reduce_chunks": _reduce, "sum_rows": _sum, "sum_tree": _sum}


def run_program(program: Program, inputs: list[np.ndarray], out_dtype) -> tuple[np.ndarray,
                                                                                   Trace]:
    """Interpret ``program`` over flat element buffers; returns the output buffer. Byte
    offsets of buffer copies and clears are converted with the element size."""
    dtype = np.dtype(out_dtype)
    itemsize = dtype.itemsize
    # Unwritten elements stand out: NaN, or the most negative integer.
    fill = np.nan if dtype.kind in "fc" else (np.iinfo(dtype).min if dtype.kind == "i" else 0)
    out = np.full(program.output_bytes // itemsize, fill, dtype)
    temps = [np.full(size // itemsize, fill, dtype) for size in program.temps]
    bufs = [*inputs, out, *temps]
    trace = Trace()
    for o in program.ops:
        if isinstance(o, Launch):
            KERNELS[o.key.name](o, bufs, trace)
        elif isinstance(o, BufferCopy):
            assert o.src_offset % itemsize == 0 and o.size % itemsize == 0
            s, d, n = o.src_offset // itemsize, o.dst_offset // itemsize, o.size // itemsize
            bufs[o.dst][d: d + n] = bufs[o.src][s: s + n]
            trace.writes.append(np.arange(d, d + n))
        elif isinstance(o, Clear):
            bufs[o.slot][o.offset // itemsize: (o.offset + o.size) // itemsize] = 0
    return out, trace
