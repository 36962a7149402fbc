"""einsum subscripts against numpy (hypothesis): whatever numpy.einsum accepts is planned (all
of it runs on WebGPU); whatever numpy rejects is rejected with SubscriptError or another
ValidationError, never an untyped exception."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenferro_web as tw

LABELS = "ijkaB"


@st.composite
def calls(draw):
    """Mostly well-formed calls (repeats, one-operand sums, ellipses and broadcasting
    included), with a few corruptions of every kind."""
    sizes = {lab: draw(st.sampled_from([1, 2, 3])) for lab in LABELS}
    terms, shapes = [], []
    for _ in range(draw(st.integers(1, 3))):
        labels = draw(st.lists(st.sampled_from(LABELS), max_size=3))
        shape = [sizes[lab] for lab in labels]
        term = "".join(labels)
        if draw(st.integers(0, 3)) == 0:
            at = draw(st.integers(0, len(labels)))
            extra = draw(st.lists(st.sampled_from([1, 2]), max_size=2))
            term = "".join(labels[:at]) + "..." + "".join(labels[at:])
            shape = shape[:at] + extra + shape[at:]
        if shape and draw(st.integers(0, 9)) == 0:  # corrupt an extent or the rank
            shape[draw(st.integers(0, len(shape) - 1))] = 4
        if draw(st.integers(0, 14)) == 0:
            shape.append(2)
        terms.append(term)
        shapes.append(tuple(shape))
    subscripts = ",".join(terms)
    if draw(st.booleans()):
        used = sorted({lab for t in terms for lab in t if lab in LABELS})
        output = "".join(draw(st.permutations(used))[:draw(st.integers(0, len(used)))])
        if any("..." in t for t in terms) and draw(st.booleans()):
            output = "..." + output
        if draw(st.integers(0, 9)) == 0:  # a label twice, or one no operand has
            output += draw(st.sampled_from(["i", "z"]))
        subscripts += "->" + output
    if draw(st.integers(0, 14)) == 0:  # a stray character
        at = draw(st.integers(0, len(subscripts)))
        subscripts = subscripts[:at] + draw(st.sampled_from(["$", ".", "-", ">", ",", " "])) + \
            subscripts[at:]
    return subscripts, shapes


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(call=calls())
def test_subscripts_are_judged_as_numpy_judges_them(call):
    subscripts, shapes = call
    arrays = [np.ones(s, np.float32) for s in shapes]
    try:
        np.einsum(subscripts, *arrays)
        numpy_accepts = True
    except (ValueError, TypeError, IndexError):
        numpy_accepts = False
    try:
        tw.einsum_path(subscripts, *arrays)
        ours = None
    except tw.ValidationError as error:
        ours = error
    if numpy_accepts:
        assert ours is None, (subscripts, shapes, ours)
    else:
        assert isinstance(ours, tw.ValidationError), (subscripts, shapes, "accepted")
