"""einsum values against numpy.einsum (hypothesis), on the native lane with both kernel
families: random subscripts with labels repeated within an operand, labels summed from one
operand, extent-1 axes broadcast against wider ones, ellipses in any position, zero-size labels
and rank-0 operands, F32 and C32, exact on small-integer data. (The kernel fuzz runs the same
kinds of einsum in Chromium and in Node + Dawn.)"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenferro_web as tw

LABELS = "ijkab"


@st.composite
def einsum_calls(draw):
    sizes = {lab: draw(st.sampled_from([0, 1, 2, 3, 5])) for lab in LABELS}
    ellipsis = draw(st.lists(st.sampled_from([1, 2, 3]), max_size=2))
    terms, shapes = [], []
    for _ in range(draw(st.integers(1, 3))):
        labels = draw(st.lists(st.sampled_from(LABELS), max_size=3))  # repeats allowed
        broadcast = {lab: draw(st.booleans()) and draw(st.booleans()) for lab in labels}
        shape = [1 if broadcast[lab] else sizes[lab] for lab in labels]
        term = "".join(labels)
        if ellipsis and draw(st.booleans()):
            at = draw(st.integers(0, len(labels)))
            width = draw(st.integers(0, len(ellipsis)))
            mine = [draw(st.sampled_from([1, d])) for d in ellipsis[len(ellipsis) - width:]]
            term = term[:at] + "..." + term[at:]
            shape = shape[:at] + mine + shape[at:]
        terms.append(term)
        shapes.append(tuple(shape))
    subscripts = ",".join(terms)
    if draw(st.booleans()):
        used = sorted({ch for t in terms for ch in t if ch in LABELS})
        out = list(draw(st.permutations(used)))[:draw(st.integers(0, len(used)))]
        if any("..." in t for t in terms):
            out.insert(draw(st.integers(0, len(out))), "...")
        subscripts += "->" + "".join(out)
    dtype = draw(st.sampled_from([np.float32, np.complex64]))
    seed = draw(st.integers(0, 2**32 - 1))
    return subscripts, shapes, dtype, seed


@pytest.fixture(scope="module", params=["cpu", "gpu"])
def rt(request):
    runtime = tw.WebGpuRuntime.native(kernels=request.param)
    yield runtime
    runtime.close()


def data(rng, shape, dtype):
    values = rng.integers(-3, 4, shape).astype(dtype)
    if dtype == np.complex64:
        values = values + 1j * rng.integers(-3, 4, shape)
    return values.astype(dtype)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(call=einsum_calls())
def test_einsum_equals_numpy(rt, call):
    subscripts, shapes, dtype, seed = call
    rng = np.random.default_rng(seed)
    arrays = [data(rng, s, dtype) for s in shapes]
    try:
        wide = np.complex128 if dtype == np.complex64 else np.float64
        want = np.einsum(subscripts, *[a.astype(wide) for a in arrays])
    except ValueError:
        with pytest.raises(tw.ValidationError):
            tw.einsum_sync(subscripts, *[rt.upload(a) for a in arrays])
        return
    got = tw.einsum_sync(subscripts, *[rt.upload(a) for a in arrays]).download_sync()
    np.testing.assert_array_equal(got, want.astype(dtype), err_msg=f"{subscripts} {shapes}")
