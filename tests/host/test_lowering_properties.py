"""Properties of lowering, over random plans and views, for both adapter profiles.

Each Program is interpreted by ``kernel_model`` (which reads only the launches' words, keys and
grids, as the WGSL does) and compared with numpy on small-integer data, exactly. Along the way:
every 16-byte vector load starts aligned, split-K chunks cover K exactly once, grids stay
within the adapter's limits, every parameter fits its word (or LimitExceeded is raised before
anything exists to enqueue), and copies write each element exactly once.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernel_fuzz import dot_general_ref, ints, small_product
from kernel_fuzz import gather as fuzz_gather
from kernel_model import run_program

import tenferro_web as tw
from tenferro_web.dtypes import DType
from tenferro_web.layout import ViewLayout, validate_view
from tenferro_web.lowering.copy import lower_copy
from tenferro_web.lowering.gemm import BatchTiledSpec, GemmSpec, OperandAccess, lower_dot_general
from tenferro_web.lowering.profile import BINDING_ALIGN, AdapterProfile
from tenferro_web.lowering.program import Launch
from tenferro_web.lowering.reduce import lower_sum
from tenferro_web.planning.dot_general_plan import DotGeneralConfig, plan_dot_general
from tenferro_web.runtime.buffers import buffer_capacity

OP = "property"
SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
PROFILES = st.builds(AdapterProfile, cpu=st.booleans(),
                     max_workgroups_per_dimension=st.sampled_from([65535, 65535, 40]),
                     max_storage_binding=st.just(1 << 30), max_buffer=st.just(1 << 30),
                     max_workgroup_bytes=st.sampled_from([16384, 32768, 49152]))


# --- views over padded, partly reversed backings -------------------------------------------


@st.composite
def views(draw, shape):
    """A valid view of ``shape`` inside a larger backing: padded axes, any axis order in
    memory, reversed axes and an offset."""
    rank = len(shape)
    order = draw(st.permutations(range(rank)))
    strides = [0] * rank
    step = draw(st.sampled_from([1, 1, 2]))
    for axis in order:
        strides[axis] = step
        step *= shape[axis] + draw(st.sampled_from([0, 0, 0, 1, 3]))
    lead = draw(st.sampled_from([0, 0, 1, 4, 5]))
    offset = lead
    for axis in range(rank):
        if shape[axis] > 1 and draw(st.integers(0, 4)) == 0:
            offset += (shape[axis] - 1) * strides[axis]
            strides[axis] = -strides[axis]
    backing = lead + step + draw(st.sampled_from([0, 3]))
    return validate_view(OP, shape, strides, offset, backing), backing


def gather(flat: np.ndarray, view: ViewLayout) -> np.ndarray:
    return fuzz_gather(flat, view.shape, view.strides, view.offset)


def small_ints(rng, size, dtype: DType) -> np.ndarray:
    return ints(rng, size, dtype.numpy)


# --- dot_general problems ------------------------------------------------------------------

REGIMES = {
    # (free extents, contracted extents, batch extents): tiny, tile edges, split-K thresholds
    "small": (st.integers(1, 7), st.integers(1, 9), st.integers(1, 3)),
    "tiles": (st.sampled_from([63, 64, 65, 68, 127, 128, 129]), st.integers(1, 20),
              st.just(1)),
    "split": (st.sampled_from([1, 2, 3, 8, 64]), st.sampled_from([8191, 8192, 8196, 9004, 12289]),
              st.just(1)),
    # batches that fill lanes (the batch-first GEMM): whole and partial warps of entries
    "batch": (st.integers(1, 19), st.integers(1, 5), st.sampled_from([8, 31, 32, 33, 70])),
}


@st.composite
def dot_problems(draw):
    regime = draw(st.sampled_from(sorted(REGIMES)))
    free_e, k_e, b_e = REGIMES[regime]
    dtype = draw(st.sampled_from([DType.F32, DType.C32]))
    if regime == "small":
        lf = draw(st.lists(free_e, max_size=2))
        rf = draw(st.lists(free_e, max_size=2))
        ks = draw(st.lists(k_e, max_size=2))
        bs = draw(st.lists(b_e, max_size=1))
    elif regime == "batch":
        lf, rf, ks = [draw(free_e)], draw(st.lists(free_e, max_size=1)), [draw(k_e)]
        bs = [draw(b_e)] + draw(st.lists(st.integers(1, 2), max_size=1))
    elif regime == "tiles":
        lf, rf, ks, bs = [draw(free_e)], [draw(free_e)], [draw(k_e)], []
    else:
        lf, ks, bs = [draw(free_e)], [draw(k_e)], []
        rf = [draw(st.sampled_from([1, 2, 64])) if lf[0] == 64 else draw(free_e)]
        if lf[0] * rf[0] > 4096:
            rf = [1]
    roles = [("f", e) for e in lf] + [("k", i) for i in range(len(ks))] + \
        [("b", i) for i in range(len(bs))]
    lhs_roles = draw(st.permutations(roles))
    rhs_roles = draw(st.permutations([("k", i) for i in range(len(ks))] +
                                     [("b", i) for i in range(len(bs))] + [("f", e) for e in rf]))

    def axes(rs):
        shape = [e if r == "f" else (ks[e] if r == "k" else bs[e]) for r, e in rs]
        kpos = {e: a for a, (r, e) in enumerate(rs) if r == "k"}
        bpos = {e: a for a, (r, e) in enumerate(rs) if r == "b"}
        return tuple(shape), [kpos[i] for i in range(len(ks))], [bpos[i] for i in range(len(bs))]

    lshape, lc, lb = axes(lhs_roles)
    rshape, rc, rb = axes(rhs_roles)
    lview, lback = draw(views(lshape))
    rview, rback = draw(views(rshape))
    conj = (draw(st.booleans()), draw(st.booleans())) if dtype is DType.C32 else (False, False)
    return dtype, (lview, lback), (rview, rback), DotGeneralConfig.of(lc, rc, lb, rb), conj


def reference(lhs, rhs, cfg: DotGeneralConfig, conj) -> np.ndarray:
    return dot_general_ref(lhs, rhs, cfg.lhs_contracting, cfg.rhs_contracting, cfg.lhs_batch,
                           cfg.rhs_batch, *conj)


def lowered(lower, *args):
    """The program, or None where the problem needs more workgroups than the grid allows (the
    small grid limits of some profiles make that common; LimitExceeded is the right answer)."""
    try:
        return lower(*args)
    except tw.LimitExceeded as error:
        assert error.limit == "maxComputeWorkgroupsPerDimension", error
        assert error.requested > error.maximum
        return None


def check_words_and_grids(program, profile: AdapterProfile) -> None:
    for o in program.ops:
        if isinstance(o, Launch):
            assert all(0 <= w < 2**32 for w in o.words), o
            assert all(1 <= g <= profile.max_workgroups_per_dimension for g in o.grid[:2]), o
            if o.key.name == "gemm_tiled":
                # Its workgroup arrays: BUFFERS tiles of BK x 16*TM (A) and BK x 16*TN (B).
                c = {name: int(v) for name, v in o.key.constants if v.isdigit()}
                itemsize = 8 if dict(o.key.constants)["SCALAR"] == "c32" else 4
                size = c["BUFFERS"] * c["BK"] * 16 * (c["TM"] + c["TN"]) * itemsize
                assert size <= profile.max_workgroup_bytes, o
            if o.key.name == "gemm_batch_tiled":
                assert 16 * int(dict(o.key.constants)["SHARED"]) <= profile.max_workgroup_bytes


@SETTINGS
@given(problem=dot_problems(), profile=PROFILES, seed=st.integers(0, 2**16),
       batch_first=st.booleans())
def test_dot_general_programs_compute_numpys_result(problem, profile, seed, batch_first):
    check_dot_general_program(problem, profile, seed, batch_first)


@SETTINGS
@given(problem=dot_problems(), profile=PROFILES, seed=st.integers(0, 2**16),
       small=st.sampled_from([(16, 1), (16, 2), (16, 4), (2, 1)]))
def test_small_products_on_gemm_blocked_compute_numpys_result(problem, profile, seed, small):
    """lowering.gemm.SMALL_PRODUCT's candidates (GPUs' few-workgroup products on gemm_blocked)
    hold every invariant the default does."""
    with small_product(small):
        check_dot_general_program(problem, profile, seed, batch_first=False)


def check_dot_general_program(problem, profile, seed, batch_first):
    """The problem's program computes numpy's result, with aligned vector loads and its GEMM's
    jobs covering the contraction once."""
    dtype, (lview, lback), (rview, rback), cfg, conj = problem
    rng = np.random.default_rng(seed)
    lflat, rflat = small_ints(rng, lback, dtype), small_ints(rng, rback, dtype)
    plan = plan_dot_general(dtype, lview, dtype, rview, cfg, batch_first)
    program = lowered(lower_dot_general, OP, profile, plan, lview, rview, *conj)
    if program is None:
        return
    check_words_and_grids(program, profile)
    out, trace = run_program(program, [lflat, rflat], dtype.numpy)
    want = reference(gather(lflat, lview), gather(rflat, rview), cfg, conj)
    if batch_first:
        nbatch = len(cfg.lhs_batch)
        want = np.moveaxis(want, range(want.ndim - nbatch, want.ndim), range(nbatch))
    assert want.shape == plan.out_shape
    np.testing.assert_array_equal(out[: plan.out_size], want.reshape(-1, order="F"))
    # Every 16-byte load starts at an element index that is a multiple of 4.
    assert all(index % 4 == 0 for _, index in trace.vec4_starts), trace.vec4_starts[:8]
    # Every GEMM's jobs cover its contraction exactly once (split-K: chunks of K in order).
    gemms = [o.spec for o in program.launches if isinstance(o.spec, GemmSpec | BatchTiledSpec)]
    assert len(gemms) == len(trace.gemm_jobs) == 1
    for spec, jobs in zip(gemms, trace.gemm_jobs):
        if isinstance(spec, GemmSpec) and spec.k_step:
            assert jobs[0][0] == 0 and jobs[-1][1] == plan.k
            assert all(a[1] == b[0] and b[1] > b[0] for a, b in zip(jobs, jobs[1:])), jobs
        else:
            assert all(job == (0, plan.k) for job in jobs)


def test_the_two_reported_split_k_shapes_lower_to_aligned_loads():
    """Regression: split-K turned K chunks into batch entries whose step (K per chunk times the
    K stride) was not a multiple of 4, and 16-byte loads read misaligned starts (max error 1538
    and 1451 on lavapipe)."""
    profile = AdapterProfile(cpu=False)
    rng = np.random.default_rng(0)
    for ls, rs, lc, rc in [((9004, 64), (9004, 64), [0], [0]), ((64, 8196), (8196, 64), [1], [0])]:
        lview, rview = ViewLayout(ls, (1, ls[0]), 0), ViewLayout(rs, (1, rs[0]), 0)
        cfg = DotGeneralConfig.of(lc, rc)
        plan = plan_dot_general(DType.F32, lview, DType.F32, rview, cfg)
        program = lower_dot_general(OP, profile, plan, lview, rview)
        a, b = small_ints(rng, np.prod(ls), DType.F32), small_ints(rng, np.prod(rs), DType.F32)
        out, trace = run_program(program, [a, b], np.float32)
        assert trace.vec4_starts and all(i % 4 == 0 for _, i in trace.vec4_starts)
        want = reference(gather(a, lview), gather(b, rview), cfg, (False, False))
        np.testing.assert_array_equal(out, want.reshape(-1, order="F"))


def test_a_misaligned_vector_load_cannot_be_constructed():
    def spec(a_access, vec_a=True):
        return GemmSpec("f32", True, 4, 4, 16, 2, True, True, vec_a, False, False, False, 64, 64,
                        1024, 9, a_access, OperandAccess(0, 1, 64, 1024), False, False, 9000, 1024)

    spec(OperandAccess(0, 9000, 1, 1024))
    for bad in (OperandAccess(2, 9000, 1, 1024), OperandAccess(0, 9002, 1, 1024),
                OperandAccess(0, 9000, 1, 1026), OperandAccess(0, 1, 9000, 1024)):
        with pytest.raises(ValueError, match="unaligned"):
            spec(bad)
        spec(bad, vec_a=False)


def test_vector_stores_of_c_need_whole_vectors_of_rows(monkeypatch):
    from tenferro_web.lowering import gemm

    access = OperandAccess(0, 1, 64, 0)

    def spec(scalar, m, vec_c=True, spread_m=False):
        return GemmSpec(scalar, True, 4, 4, 16, 1, False, False, False, False, vec_c, spread_m,
                        m, 64, 64, 1, access, access, False, False, 64, 0)

    spec("f32", 132)
    spec("f32", 130, vec_c=False, spread_m=True)
    with pytest.raises(ValueError, match="multiple of 4"):
        spec("f32", 130)
    for bad in (("c32", 132), ("c32", 130, False, True), ("f32", 132, True, True)):
        with pytest.raises(ValueError, match="f32 gemm_tiled variant"):
            spec(*bad)
    for big in (True, False):  # a table asking for them gets them where M allows
        monkeypatch.setitem(gemm.GPU_TILES, ("f32", big),
                            (gemm.Tiles(4, 4, 16, 2, vec_c=True, spread_m=True),))
    for m, k, dtype, vec_c, spread_m in ((130, 64, DType.F32, False, True),
                                         (132, 64, DType.F32, True, False),
                                         (130, gemm.SPREAD_MAX_K + 1, DType.F32, False, False),
                                         (130, 64, DType.C32, False, False)):
        plan = plan_dot_general(dtype, ViewLayout((m, k), (1, m), 0), dtype,
                                ViewLayout((k, 64), (1, k), 0), DotGeneralConfig.of([1], [0]))
        launch = gemm.gemm_spec(AdapterProfile(cpu=False), plan)
        assert (launch.vec_c, launch.spread_m) == (vec_c, spread_m)


# --- limits: every parameter fits its word, or LimitExceeded before anything is enqueued ----


@SETTINGS
@given(m=st.integers(1, 2**12), n=st.integers(1, 2**12), k=st.integers(1, 2**40),
       batch=st.integers(1, 2**36), cpu=st.booleans(), dtype=st.sampled_from([DType.F32,
                                                                             DType.C32]))
def test_huge_broadcast_problems_lower_or_raise_limit_exceeded(m, n, k, batch, cpu, dtype):
    # Stride-0 axes make K and the batch as long as wanted over a small allocation.
    lview = ViewLayout((m, k, batch), (1, 0, 0), 0)
    rview = ViewLayout((k, n, batch), (0, 1, 0), 0)
    plan = plan_dot_general(dtype, lview, dtype, rview, DotGeneralConfig.of([1], [0], [2], [2]))
    profile = AdapterProfile(cpu, max_storage_binding=1 << 31, max_buffer=1 << 31)
    try:
        program = lower_dot_general(OP, profile, plan, lview, rview)
    except tw.LimitExceeded as error:
        assert error.requested > error.maximum or error.requested < 0
        return
    check_words_and_grids(program, profile)
    assert program.output_bytes <= profile.max_storage_binding


# --- copies -----------------------------------------------------------------------------


@st.composite
def copy_problems(draw):
    if draw(st.booleans()):
        rank = draw(st.integers(0, 4))
        extents = st.sampled_from([1, 2, 3, 5, 16, 17, 31, 32, 33, 65])  # 32: transpose tiles
    else:  # many short axes: tiles over groups of several axes
        rank = draw(st.integers(5, 9))
        extents = st.sampled_from([1, 2, 3, 4, 5])
    shape = tuple(draw(st.lists(extents, min_size=rank, max_size=rank)))
    if np.prod(shape, dtype=np.int64) > 20_000:
        shape = tuple(min(d, 5) for d in shape)
    view, backing = draw(views(shape))
    perm = draw(st.permutations(range(rank)))
    return view.permuted(OP, perm), backing


@SETTINGS
@given(problem=copy_problems(), profile=PROFILES,
       dtype=st.sampled_from([DType.F32, DType.I32, DType.C32, DType.BOOL]),
       seed=st.integers(0, 2**16))
def test_copy_programs_write_every_element_exactly_once(problem, profile, dtype, seed):
    view, backing = problem
    rng = np.random.default_rng(seed)
    flat = (rng.integers(0, 2, backing) > 0) if dtype is DType.BOOL else \
        rng.integers(-1000, 1000, backing).astype(dtype.numpy)
    program = lowered(lower_copy, OP, profile, view, dtype)
    if program is None:
        return
    check_words_and_grids(program, profile)
    out, trace = run_program(program, [flat], dtype.numpy)
    size = int(np.prod(view.shape, dtype=np.int64))
    written = np.concatenate(trace.writes) if trace.writes else np.array([], int)
    assert np.array_equal(np.sort(written), np.arange(size)), "each element exactly once"
    np.testing.assert_array_equal(out[:size], gather(flat, view).reshape(-1, order="F"))


@st.composite
def sum_problems(draw):
    """A view and the axes summed from it: few or many outputs, short or long sums (chunked
    trees), views with any memory order, reversed axes and stride-0 (broadcast) axes."""
    kept = draw(st.lists(st.sampled_from([1, 2, 3, 7, 64, 65, 300]), max_size=2))
    summed = draw(st.lists(st.sampled_from([1, 2, 5, 33, 256, 1000, 5000]), min_size=1,
                           max_size=2))
    while np.prod(kept + summed, dtype=np.int64) > 60_000:
        extents = kept if kept and max(kept) >= max(summed) else summed
        extents[extents.index(max(extents))] = 5
    roles = draw(st.permutations([("keep", e) for e in kept] + [("sum", e) for e in summed]))
    view, backing = draw(views(tuple(e for _, e in roles)))
    strides = list(view.strides)
    for axis in range(view.rank):
        if draw(st.integers(0, 9)) == 0:
            strides[axis] = 0
    view = ViewLayout(view.shape, tuple(strides), view.offset)
    return view, backing, tuple(a for a, (r, _) in enumerate(roles) if r == "sum")


@SETTINGS
@given(problem=sum_problems(), profile=PROFILES, dtype=st.sampled_from([DType.F32, DType.C32]),
       seed=st.integers(0, 2**16))
def test_sum_programs_compute_numpys_sum(problem, profile, dtype, seed):
    view, backing, axes = problem
    kept = [a for a in range(view.rank) if a not in axes]
    trace = _check_sum(view, backing, axes, kept, (), profile, dtype, seed)
    if trace is None:
        return
    # The sum's chunks of K cover it exactly once, in order (a second pass, over the chunks'
    # partial sums, is one chunk of its own K).
    k = int(np.prod([view.shape[a] for a in axes]))
    for ranges in trace.sum_chunks[:1]:
        assert ranges[0][0] == 0 and ranges[-1][1] == k, ranges
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:])), ranges
    for ranges in trace.sum_chunks[1:]:
        assert len(ranges) == 1 and ranges[0] == (0, len(trace.sum_chunks[0])), ranges


def test_sums_choose_their_kernel_by_the_operand():
    cpu, gpu = AdapterProfile(cpu=True), AdapterProfile(cpu=False)

    def kernels(profile, shape, axes):
        return [o.key.name for o in lower_sum(OP, profile, *_sum_plan(shape, axes)).ops]

    # A full sum spreads over many invocations, then adds up the chunks: without barriers on
    # CPU adapters, as trees in workgroup memory on GPUs (the partial sums too: one tree).
    assert kernels(cpu, (4096, 4096), (0, 1)) == ["sum_rows", "reduce_chunks"]
    assert kernels(gpu, (4096, 4096), (0, 1)) == ["sum_tree", "sum_tree"]
    # Many outputs: the register-blocked GEMM on CPU adapters; on GPUs invocations per output
    # and chunk of K when K is not consecutive or short (then an invocation per output adds
    # the chunks up), a workgroup per output when it is long.
    assert kernels(cpu, (2048, 2048), (1,)) == ["gemm_blocked"]
    assert kernels(gpu, (8192, 512), (1,)) == ["sum_rows", "sum_rows"]
    assert kernels(gpu, (512, 8192), (0,)) == ["sum_rows", "sum_rows"]
    assert kernels(gpu, (8192, 8192), (0,)) == ["sum_tree"]
    assert kernels(gpu, (8192, 32), (1,)) == ["sum_rows"]


def test_gpu_sums_read_16_bytes_at_a_time_where_the_layout_allows():
    """sum_tree along a consecutive K (any offset: its loads straddling the chunk's ends are
    masked); sum_rows across consecutive outputs whose offset, K stride and count are whole
    vectors; the scalar kernels otherwise, and always on CPU adapters."""
    gpu, cpu = AdapterProfile(cpu=False), AdapterProfile(cpu=True)

    def vec(profile, shape, axes, offset=0):
        plan, view, ones = _sum_plan(shape, axes)
        if offset:
            view = ViewLayout(view.shape, view.strides, offset)
            plan = plan_dot_general(DType.F32, view, DType.F32, ones,
                                    DotGeneralConfig.of(axes, range(len(axes)), (), ()))
        return [dict(o.key.constants).get("VEC") for o in lower_sum(OP, profile, plan, view,
                                                                     ones).ops]

    assert vec(gpu, (8192, 8192), (0,)) == ["true"]
    assert vec(gpu, (8192, 8192), (0,), offset=3) == ["true"]
    assert vec(gpu, (8192, 512), (1,)) == ["true", "true"]
    assert vec(gpu, (8190, 512), (1,)) == ["false", "false"]  # 8190 outputs: not whole vectors
    assert vec(gpu, (8192, 512), (1,), offset=1) == ["false", "true"]  # the partials: aligned
    assert vec(cpu, (4096, 4096), (0, 1)) == ["false", None]


def test_tiny_matrices_get_the_strided_gather_not_tiles():
    """A (2, 2, 70000) transpose on the GPU family took 22.7 s on SwiftShader with one 16 x 16
    workgroup per 2 x 2 matrix; the kernel must fit the shape."""
    src = ViewLayout((2, 2, 70_000), (2, 1, 4), 0)
    program = lower_copy(OP, AdapterProfile(cpu=False), src, DType.F32)
    (launch,) = program.ops
    assert launch.key.name == "copy_strided" and launch.spec.groups == -(-280_000 // 256)
    big = lower_copy(OP, AdapterProfile(cpu=False), ViewLayout((64, 64), (64, 1), 0), DType.F32)
    assert big.ops[0].key.name == "transpose_tiled"


@pytest.mark.parametrize("tiling", [(1, 2), (4, 2), (5, 8), (16, 4), (32, 1)])
@pytest.mark.parametrize("dtype", [DType.F32, DType.C32])
def test_grouped_tiles_cover_every_batch_whatever_the_chunk(tiling, dtype):
    """permute_tiled moves one (A, B) tile at BATCHES consecutive batch indices per workgroup:
    the grid shrinks by BATCHES, and the last chunk (batches not a multiple of it) is short."""
    from tenferro_web.lowering import copy

    rng = np.random.default_rng(7)
    spec = copy.Tiling(*tiling)
    for shape, perm in (((40, 3, 35), (2, 1, 0)), ((33, 7, 5, 34), (3, 1, 2, 0)),
                        ((2,) * 12 + (3,), (12, *range(11, -1, -1)))):
        strides = tuple(int(s) for s in np.cumprod((1, *shape[:-1])))
        view = ViewLayout(shape, strides, 0).permuted(OP, perm)
        plan = copy.plan_copy(view, OP)
        launch = copy.copy_ops(OP, AdapterProfile(cpu=False), plan, dtype.itemsize, 0, 1)[0]
        launch = Launch.of(OP, AdapterProfile(cpu=False),
                           copy.GroupedTileSpec(*(getattr(launch.spec, f) for f in
                                                  ("itemsize", "dims", "strides", "offset",
                                                   "a", "b")), spec), (0, 1))
        tiles_a, tiles_b, batches = launch.spec.tiles
        assert launch.spec.groups == tiles_a * tiles_b * -(-batches // spec.tiles)
        flat = rng.integers(-1000, 1000, int(np.prod(shape))).astype(dtype.numpy)
        program = copy.Program(1, flat.nbytes, (), (launch,))
        out, trace = run_program(program, [flat], dtype.numpy)
        assert np.array_equal(np.sort(trace.writes[0]), np.arange(flat.size))
        np.testing.assert_array_equal(out, np.transpose(flat.reshape(shape, order="F"),
                                                        perm).reshape(-1, order="F"))


@pytest.mark.parametrize("tiling", [(1, 2), (2, 8), (3, 1), (4, 2), (8, 8), (32, 4)])
@pytest.mark.parametrize("dtype", [DType.F32, DType.C32])
def test_tiled_transposes_cover_every_tile_whatever_the_tiles_per_workgroup(tiling, dtype):
    """transpose_tiled moves TILES consecutive tiles along j per workgroup: the grid shrinks by
    TILES along j, and a workgroup at the matrix's edge moves fewer (d1 not a multiple)."""
    from tenferro_web.lowering import copy

    rng = np.random.default_rng(8)
    spec = copy.Tiling(*tiling)
    for d0, d1, batch, offset in ((32, 32, 1, 0), (33, 100, 2, 5), (70, 1000, 1, 0),
                                  (100, 64, 3, 1)):
        launch = Launch.of(OP, AdapterProfile(cpu=False),
                           copy.TiledTransposeSpec(dtype.itemsize, d0, d1, batch, offset, spec),
                           (0, 1))
        groups_j, tiles_i = launch.spec.tiles
        assert groups_j == -(-d1 // (32 * spec.tiles)) and tiles_i == -(-d0 // 32)
        flat = rng.integers(-1000, 1000, offset + d0 * d1 * batch).astype(dtype.numpy)
        size = d0 * d1 * batch
        program = copy.Program(1, size * dtype.itemsize, (), (launch,))
        out, trace = run_program(program, [flat], dtype.numpy)
        assert np.array_equal(np.sort(np.concatenate(trace.writes)), np.arange(size))
        want = flat[offset:].reshape(batch, d0, d1).transpose(0, 2, 1).reshape(-1)
        np.testing.assert_array_equal(out[:size], want)


@pytest.mark.parametrize("itemsize, d0, i_fast", [(4, 100, True), (4, 32, False), (4, 96, False),
                                                 (4, 1000, True), (8, 100, True), (8, 64, False)])
def test_tiled_transposes_order_workgroups_along_i_where_destination_rows_share_lines(
        itemsize, d0, i_fast):
    """A destination row of d0 elements that is not a whole number of 128-byte lines has its
    lines written by neighbouring tiles along i: those workgroups go consecutively."""
    from tenferro_web.lowering import copy

    spec = copy.TiledTransposeSpec(itemsize, d0, 4096, 1, 0, copy.TRANSPOSE_TILINGS[itemsize])
    assert spec.i_fast is i_fast
    assert spec.words(OP)[6] == int(i_fast)


@given(byte_len=st.integers(1, 1 << 34), max_binding=st.sampled_from([1 << 27, (1 << 32) - 4]))
def test_pooled_buffers_are_whole_16_byte_units_within_the_binding_limit(byte_len, max_binding):
    if byte_len > max_binding - BINDING_ALIGN:
        return
    capacity = buffer_capacity(byte_len, max_binding)
    assert capacity >= byte_len and capacity % BINDING_ALIGN == 0 and capacity <= max_binding


def test_tiles_that_are_not_whole_vectors_cannot_be_constructed():
    access = OperandAccess(0, 1, 64, 0)

    def spec(scalar, tm, bk, buffers=1):
        return GemmSpec(scalar, True, tm, tm, bk, buffers, False, False, False, False, False,
                        False, 64, 64, 64, 1, access, access, False, False, 64, 0)

    spec("f32", 8, 8)
    spec("c32", 4, 8, 2)
    for bad in (("f32", 6, 8), ("f32", 4, 8), ("c32", 4, 4), ("f32", 8, 6), ("f32", 8, 8, 3)):
        with pytest.raises(ValueError, match="whole vectors"):
            spec(*bad)


def test_sum_trees_use_subgroups_where_the_device_has_them():
    """``subgroups`` in the device's features: sum_tree adds each subgroup's sum with
    subgroupAdd (the WGSL enables the extension first); otherwise the tree, and nothing else
    asks for the feature."""
    from tenferro_web.lowering.kernels import render

    limits = {"maxComputeWorkgroupsPerDimension": 65535, "maxStorageBufferBindingSize": 1 << 30,
              "maxBufferSize": 1 << 30, "maxComputeWorkgroupStorageSize": 32768}
    with_subgroups = AdapterProfile.of(False, limits, "gpu", ("subgroups", "timestamp-query"))
    without = AdapterProfile.of(False, limits, "gpu", ("timestamp-query",))
    assert with_subgroups.subgroups and not without.subgroups
    assert hash(with_subgroups) != hash(without)
    for profile, enabled in ((with_subgroups, True), (without, False)):
        tree = lower_sum(OP, profile, *_sum_plan((64, 65536), (1,))).ops[0]
        assert tree.key.name == "sum_tree", tree.key
        source = render(tree.key)
        code = [line for line in source.splitlines() if line and not line.startswith("//")]
        assert (code[0] == "enable subgroups;") == enabled, code[0]
        assert ("subgroupAdd(" in source) == enabled
    rows = lower_sum(OP, with_subgroups, *_sum_plan((8192, 512), (1,))).ops[0]
    assert rows.key.name == "sum_rows" and "subgroup" not in render(rows.key)


def _sum_plan(shape, axes):
    view = ViewLayout(shape, tuple(int(s) for s in np.cumprod((1, *shape[:-1]))), 0)
    ones = ViewLayout(tuple(shape[a] for a in axes), (0,) * len(axes), 0)
    return (plan_dot_general(DType.F32, view, DType.F32, ones,
                             DotGeneralConfig.of(axes, range(len(axes)), (), ())), view, ones)


@SETTINGS
@given(problem=sum_problems(), profile=PROFILES, dtype=st.sampled_from([DType.F32, DType.C32]),
       seed=st.integers(0, 2**16))
def test_sums_with_a_batch_axis_compute_numpys_sum(problem, profile, dtype, seed):
    """einsum's sums read kept axes that share no stride (x[a, b, c] summed over b) in place,
    with the slowest kept axis as the batch: the same sums, any view."""
    view, backing, axes = problem
    kept = [a for a in range(view.rank) if a not in axes]
    if len(kept) < 2:
        return
    batch = max(kept, key=lambda a: abs(view.strides[a]))
    # the output: the free axes, then the batch
    _check_sum(view, backing, axes, [a for a in kept if a != batch] + [batch], (batch,),
               profile, dtype, seed)


def _check_sum(view, backing, axes, out_axes, batch, profile, dtype, seed):
    """Lower the sum of ``view`` over ``axes`` (``batch``: kept axes read as the batch) and
    compare the kernel model's result, in the order ``out_axes``, with numpy; returns the
    trace, or None where the lowering refused the sum."""
    rng = np.random.default_rng(seed)
    flat = small_ints(rng, backing, dtype)
    ones = ViewLayout(tuple(view.shape[a] for a in (*axes, *batch)),
                      (0,) * (len(axes) + len(batch)), 0)
    cfg = DotGeneralConfig.of(axes, range(len(axes)), batch,
                              range(len(axes), len(axes) + len(batch)))
    plan = plan_dot_general(dtype, view, dtype, ones, cfg)
    program = lowered(lower_sum, OP, profile, plan, view, ones)
    if program is None:
        return None
    check_words_and_grids(program, profile)
    out, trace = run_program(program, [flat, np.ones(1, dtype.numpy)], dtype.numpy)
    wide = np.complex128 if dtype is DType.C32 else np.float64
    want = np.transpose(gather(flat, view).astype(wide).sum(axis=axes, keepdims=True),
                        list(out_axes) + list(axes)).reshape([view.shape[a] for a in out_axes])
    np.testing.assert_array_equal(out[: plan.out_size],
                                  want.reshape(-1, order="F").astype(dtype.numpy))
    assert all(index % 4 == 0 for _, index in trace.vec4_starts), trace.vec4_starts[:8]
    return trace


def test_a_sum_over_a_middle_axis_reads_the_operand_in_place():
    """x[a, b, c] summed over b: c is the batch of a sum kernel, no packing copy."""
    import tenferro_web as tw
    from tenferro_web.lowering.einsum import lower_einsum

    _, plan = tw.einsum_path("abc->ac", np.empty((1024, 1024, 64), np.float32))
    [step] = plan.steps
    assert step.packs == 0 and step.config.lhs_batch == (2,) and step.labels == ("a", "c")
    [program] = lower_einsum(AdapterProfile(cpu=False, max_storage_binding=1 << 31,
                                            max_buffer=1 << 31), plan)
    assert [o.key.name for o in program.ops] == ["sum_rows", "sum_rows"]
