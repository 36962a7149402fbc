"""Argument normalisation: numpy integers are integers; floats, bools, None and ragged data get
InvalidArgument naming the op, the argument and the value."""

import numpy as np
import pytest

import tenferro_web as tw
from tenferro_web.arguments import host_array, integer, integers
from tenferro_web.dtypes import DType
from tenferro_web.layout import dense_layout, normalize_axis, validate_view
from tenferro_web.planning.dot_general_plan import DotGeneralConfig, plan_dot_general


def test_numpy_integers_are_integers():
    assert integer("op", "axis", np.int64(3)) == 3 and integer("op", "axis", np.uint8(2)) == 2
    assert integers("op", "axes", np.array([1, 0])) == (1, 0)
    assert integers("op", "axes", (np.int32(1),)) == (1,)
    cfg = DotGeneralConfig.of([np.int64(1)], (np.int32(0),))
    plan = plan_dot_general(DType.F32, dense_layout((2, 3)), DType.F32, dense_layout((3, 4)), cfg)
    assert plan.out_shape == (2, 4)
    assert normalize_axis("transpose", np.int16(-1), 3, "permutation") == 2


@pytest.mark.parametrize("value, words", [
    (1.5, "1.5 is not an integer"), (True, "True is a bool"), (None, "None is not an integer"),
    ("1", "'1' is not an integer"), (np.float32(2), "is not an integer"),
])
def test_what_is_not_an_integer_is_named(value, words):
    with pytest.raises(tw.InvalidArgument, match=words) as info:
        integer("dot_general", "lhs_contracting_dims", value)
    assert info.value.argument == "lhs_contracting_dims"
    assert str(info.value).startswith("dot_general: ")


def test_views_refuse_float_strides_and_missing_offsets():
    with pytest.raises(tw.InvalidArgument, match="'strides': 1.5 is not an integer"):
        validate_view("view", (2, 2), (1.5, 3), 0, 100)
    with pytest.raises(tw.InvalidArgument, match="'offset': None is not an integer"):
        validate_view("view", (2, 2), (1, 2), None, 100)
    with pytest.raises(tw.InvalidArgument, match="'shape': 2.0 is not an integer"):
        validate_view("view", (2.0, 2), (1, 2), 0, 100)
    with pytest.raises(tw.InvalidArgument, match="extent -1 of axis 1 is negative"):
        validate_view("view", (2, -1), (1, 2), 0, 100)
    assert validate_view("view", (np.int64(2),), (np.int64(3),), np.int64(1), 10).strides == (3,)


def test_host_data_numpy_cannot_make_regular_is_refused():
    with pytest.raises(tw.InvalidArgument, match="cannot make a regular array"):
        host_array("upload", [[1.0, 2.0], [3.0]])
    assert host_array("upload", [object()]).dtype == object  # then UnsupportedDType names it
    assert host_array("upload", [[1, 2], [3, 4]]).shape == (2, 2)
    with pytest.raises(tw.InvalidArgument, match="not a sequence of integers"):
        integers("dot_general", "lhs_batch_dims", 3)
