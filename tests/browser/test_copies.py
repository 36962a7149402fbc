"""transpose and compaction (to_contiguous) against numpy on the same data, bit for bit."""

import pytest
from pytest_pyodide import run_in_pyodide


@run_in_pyodide(packages=["tenferro-web"])
async def test_upstream_transpose_vector(selenium):
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    t = rt.upload(np.array([1, 2, 3, 4], np.float32).reshape((2, 2), order="F"))
    once = tw.transpose(t, [1, 0])
    np.testing.assert_array_equal((await once.download()).reshape(-1, order="F"), [1, 3, 2, 4])
    twice = await tw.transpose(once, [1, 0]).download()
    np.testing.assert_array_equal(twice.reshape(-1, order="F"), [1, 2, 3, 4])


@pytest.mark.parametrize("kernels", ["cpu", "gpu"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "complex64", "bool"])
@run_in_pyodide(packages=["tenferro-web"])
async def test_transpose_matches_numpy(selenium, dtype, kernels):
    import itertools

    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime(kernels)
    rng = np.random.default_rng(2)
    shapes = [(), (5,), (1, 1), (3, 7), (16, 16), (33, 17), (2, 3, 4), (4, 1, 5), (40, 3, 17),
              (2, 3, 1, 4, 2), (0, 3), (3, 0, 2)]
    for shape in shapes:
        host = tw_testing.sample(rng, shape, dtype)
        t = rt.upload(host)
        perms = list(itertools.permutations(range(len(shape))))
        for perm in perms if len(perms) <= 24 else perms[::7]:
            out = tw.transpose(t, perm)
            assert out.shape == tuple(shape[p] for p in perm)
            tw_testing.assert_same(await out.download(), np.transpose(host, perm))
        tw_testing.assert_same(await tw.transpose(t).download(), np.transpose(host))
        # numpy's negative axes
        if len(shape) >= 2:
            perm = (-1,) + tuple(range(len(shape) - 1))
            tw_testing.assert_same(await tw.transpose(t, perm).download(),
                                   np.transpose(host, perm))


@pytest.mark.parametrize("dtype", ["float32", "int32", "complex64", "bool"])
@run_in_pyodide(packages=["tenferro-web"])
async def test_to_contiguous_of_strided_views(selenium, dtype):
    import numpy as np

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    rng = np.random.default_rng(4)
    base_np = tw_testing.sample(rng, (6, 5, 4), dtype)
    base = rt.upload(base_np)
    flat = base_np.reshape(-1, order="F")
    item = flat.itemsize

    def view_np(shape, strides, offset):
        if 0 in shape:
            return np.empty(shape, flat.dtype)
        return np.lib.stride_tricks.as_strided(flat[offset:], shape,
                                               [item * s for s in strides]).copy()

    views = [
        ((6, 5, 4), (1, 6, 30), 0),          # the whole tensor: a linear copy
        ((30,), (1,), 30),                   # one batch, flattened, offset
        ((6, 5), (1, 6), 90),                # the last slice
        ((6,), (-1,), 5),                    # reversed: upstream's [3],[-1],2 pattern
        ((3, 5, 2), (2, 6, 60), 1),          # odd rows, every other batch
        ((5, 6), (6, 1), 0),                 # transposed matrix (tiled kernel off CPUs)
        ((4, 5, 6), (30, 6, 1), 0),          # fully reversed axes order
        ((6, 4), (-1, -30), 119),            # negative strides on both axes
        ((2, 2, 2, 2), (1, 12, 6, 60), 3),   # rank 4, mixed
        ((1,), (0,), 7),                     # one element
        ((3, 4), (0, 1), 2),                 # stride 0: broadcast view
        ((), (), 17),                        # rank 0
        ((0, 5), (1, 6), 120),               # empty view at the end of the allocation
    ]
    for shape, strides, offset in views:
        v = base.view(shape, strides, offset)
        out = tw.to_contiguous(v)
        assert out.allocation_domain == base.allocation_domain
        assert out.allocation_id != base.allocation_id
        tw_testing.assert_same(await out.download(), view_np(shape, strides, offset))
    # transposing a view composes the two permutations
    v = base.view((6, 5), (1, 6), 30).transpose_view([1, 0])
    tw_testing.assert_same(await tw.transpose(v, [1, 0]).download(), base_np[:, :, 1])
    # compaction of an owned tensor duplicates it with a new identity
    dup = tw.to_contiguous(base)
    assert dup.allocation_id != base.allocation_id
    tw_testing.assert_same(await dup.download(), base_np)
    tw_testing.assert_same(await base.download(), base_np)


@run_in_pyodide(packages=["tenferro-web"])
async def test_copies_refuse_bad_input_with_typed_errors(selenium):
    import numpy as np
    import pytest

    import tenferro_web as tw
    import tw_testing

    rt = await tw_testing.runtime()
    t = rt.upload(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    with pytest.raises(tw.RankMismatch, match="transpose: "):
        tw.transpose(t, [0, 1])
    with pytest.raises(tw.AxisOutOfBounds, match="permutation axis 3"):
        tw.transpose(t, [0, 1, 3])
    with pytest.raises(tw.DuplicateAxis, match="permutation"):
        tw.transpose(t, [0, 1, 1])
    with pytest.raises(tw.DuplicateAxis):
        tw.transpose(t, [0, 1, -2])
    for dtype in (np.float64, np.int64, np.complex128):
        with pytest.raises(tw.UnsupportedDType, match="^transpose: does not support"):
            tw.transpose(rt.upload(np.zeros((2, 2), dtype)))
        with pytest.raises(tw.UnsupportedDType, match="^to_contiguous: "):
            tw.to_contiguous(rt.upload(np.zeros((2, 2), dtype)))
    with pytest.raises(tw.RuntimeStateError, match="upload it first"):
        tw.transpose(np.zeros((2, 2), np.float32))
    with pytest.raises(tw.RankMismatch):
        t.view((2, 3), (1,))
    with pytest.raises(tw.ViewOutOfBounds):
        t.view((2, 3, 4), (1, 2, 6), 1)
    with pytest.raises(tw.ViewOutOfBounds):
        t.view((3,), (-1,), 1)
    with pytest.raises(tw.ViewOutOfBounds, match="empty view offset 25"):
        t.view((0,), (1,), 25)
    with pytest.raises(tw.IntegerOverflow):
        t.view((2, 2), (2**62, 2**62))
    with pytest.raises(tw.UnsupportedError, match="to_contiguous"):
        await t.view((3,), (1,)).download()
    np.testing.assert_array_equal(await t.download(), np.arange(24).reshape(2, 3, 4))
