"""Every wrong result the kernels ever gave, as a test of its own (native lane, both families).

- split-K with 16-byte loads (vec4 chunk starts misaligned): the two shapes first reported,
  max abs errors 1538 and 1451 on lavapipe's GPU kernel family.
"""

import numpy as np
import pytest

import tenferro_web as tw


@pytest.mark.parametrize("kernels", ["cpu", "gpu"])
@pytest.mark.parametrize("lhs_shape, rhs_shape, lc, spec", [
    ((9004, 64), (9004, 64), 0, "km,kn->mn"),
    ((64, 8196), (8196, 64), 1, "mk,kn->mn"),
])
def test_split_k_with_aligned_operands(kernels, lhs_shape, rhs_shape, lc, spec):
    rt = tw.WebGpuRuntime.native(kernels=kernels)
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 5, lhs_shape).astype(np.float32)
    b = rng.integers(-4, 5, rhs_shape).astype(np.float32)
    got = tw.dot_general(rt.upload(a), rt.upload(b), [lc], [0]).download_sync()
    np.testing.assert_array_equal(got, np.einsum(spec, a.astype(np.float64), b))
    rt.close()
