"""einsum parsing, path choice and lowering (pure; the path is compared with numpy's)."""

import numpy as np
import opt_einsum
import pytest

import tenferro_web as tw
from tenferro_web.dtypes import DType
from tenferro_web.layout import ViewLayout, dense_layout
from tenferro_web.planning.dot_general_plan import DotGeneralConfig
from tenferro_web.planning.einsum import (
    CopyStep,
    DotStep,
    TransposeStep,
    ViewStep,
    parse_subscripts,
    plan_einsum,
)


def plan(subscripts, *shapes, dtype=DType.F32, optimize="auto"):
    return plan_einsum(subscripts, [dense_layout(s) for s in shapes], [dtype] * len(shapes),
                       optimize)


def kinds(p):
    return [type(s).__name__ for s in p.steps]


# --- parsing ---------------------------------------------------------------------------------

def test_implicit_output_is_sorted_once_seen_labels_uppercase_first():
    s = parse_subscripts("ba,Ac", [(2, 3), (3, 4)])
    assert s.output == ("A", "a", "b", "c")
    assert parse_subscripts("ba,aC", [(2, 3), (3, 4)]).output == ("C", "b")


def test_ellipsis_aligns_right_and_leads_the_implicit_output():
    s = parse_subscripts("...ij,...jk", [(5, 2, 3), (7, 5, 3, 4)])
    assert s.inputs[0] == ("…1", "i", "j") and s.inputs[1] == ("…0", "…1", "j", "k")
    assert s.output == ("…0", "…1", "i", "k")


def test_explicit_output_and_spaces():
    s = parse_subscripts(" ij , jk -> ki ", [(2, 3), (3, 4)])
    assert s.output == ("k", "i")


@pytest.mark.parametrize("subscripts,shapes,position,text", [
    ("ij,j1->i", [(2, 3), (3, 3)], 4, "invalid subscript character '1'"),
    ("ij.,jk", [(2, 3), (3, 4)], 2, "'.' must be part of an ellipsis"),
    ("ij->i->j", [(2, 3)], 5, "more than one '->'"),
    ("ij,jk", [(2, 3)], 5, "2 operand subscript(s) for 1 operand(s)"),
    ("ijk,jk", [(2, 3), (3, 4)], 0, "3 label(s) for an operand of rank 2"),
    ("ij,jk->iz", [(2, 3), (3, 4)], 8, "output label 'z' is not in any operand"),
    ("ij,jk->ii", [(2, 3), (3, 4)], 8, "output label 'i' appears more than once"),
    ("ij,jk->ikk", [(2, 3), (3, 4)], 9, "output label 'k' appears more than once"),
    ("ij>k", [(2, 3)], 2, "stray '>'"),
    ("...i...,i", [(2, 3), (3,)], 4, "more than one ellipsis"),
    ("...ij,jk->ik", [(5, 2, 3), (3, 4)], 12, "the output needs '...'"),
])
def test_malformed_subscripts_name_the_position(subscripts, shapes, position, text):
    with pytest.raises(tw.SubscriptError) as info:
        parse_subscripts(subscripts, shapes)
    assert info.value.position == position, str(info.value)
    assert text in str(info.value)
    assert str(info.value).startswith("einsum: ")


def test_extent_mismatch_and_broadcasting():
    with pytest.raises(tw.ShapeMismatch, match="label 'j' has extents 3 and 4"):
        parse_subscripts("ij,jk", [(2, 3), (4, 5)])
    assert parse_subscripts("ij,jk", [(2, 1), (4, 5)]).sizes == {"i": 2, "j": 4, "k": 5}
    assert parse_subscripts("...i,...i", [(1, 3), (6, 3)]).sizes == {"…0": 6, "i": 3}
    with pytest.raises(tw.ShapeMismatch, match="'...' axis 0 has extents 5 and 6"):
        parse_subscripts("...i,...i", [(5, 3), (6, 3)])


# --- what lowers to what ---------------------------------------------------------------------

def test_matmul_is_one_dot_general_without_copies():
    p = plan("ij,jk->ik", (2, 3), (3, 4))
    assert kinds(p) == ["DotStep"] and p.steps[0].packs == 0


def test_requested_transposed_output_is_folded_by_swapping_operands():
    p = plan("ij,jk->ki", (2, 3), (3, 4))
    assert kinds(p) == ["DotStep"]
    assert p.steps[0].lhs == 1 and p.steps[0].labels == ("k", "i")


def test_transposed_inputs_fold_into_dimension_numbers():
    p = plan("ji,kj->ik", (3, 2), (4, 3))
    assert kinds(p) == ["DotStep"] and p.steps[0].packs == 0


def test_a_small_batch_first_output_needs_one_transpose():
    p = plan("bij,bjk->bik", (5, 2, 3), (5, 3, 4))
    assert kinds(p) == ["DotStep", "TransposeStep"]
    assert p.steps[1].perm == (2, 0, 1) and not p.steps[0].batch_first


@pytest.mark.parametrize("subscripts, shapes", [
    ("bij,bjk->bik", ((8, 2, 3), (8, 3, 4))),
    ("bhqd,bhkd->bhqk", ((2, 4, 5, 3), (2, 4, 6, 3))),
    ("bhqk,bhkd->bhqd", ((2, 4, 5, 6), (2, 4, 6, 3))),
])
def test_a_batch_of_eight_or_more_comes_first_without_copies(subscripts, shapes):
    p = plan(subscripts, *shapes)
    assert kinds(p) == ["DotStep"]
    step = p.steps[0]
    assert step.batch_first and step.packs == 0
    assert step.labels == tuple(subscripts.split("->")[1])


def test_batch_first_only_where_it_saves_copies():
    # batch last in memory and in the output: the tiled GEMM's layout, nothing to save
    assert not plan("ijb,jkb->ikb", (2, 3, 8), (3, 4, 8)).steps[0].batch_first
    # batch last in the operands, first in the output: one copy either way; ties keep the batch
    # last
    p = plan("ijb,jkb->bik", (2, 3, 8), (3, 4, 8))
    assert not p.steps[0].batch_first and kinds(p) == ["DotStep", "TransposeStep"]


@pytest.mark.parametrize("subscripts, shapes, batch_first", [
    # a large output: packing, the tiled GEMM and one transpose beat the batch-first GEMM
    ("bhqd,bhkd->bhqk", ((8, 8, 1024, 64), (8, 8, 1024, 64)), False),
    # packing a 256 MiB operand would cost more than the batch-first GEMM's slower multiply-adds
    ("bhqk,bhkd->bhqd", ((8, 8, 1024, 1024), (8, 8, 1024, 64)), True),
    ("bij,bjk->bik", ((100, 1023, 67), (100, 67, 1021)), False),
    # a long product: the tiled GEMM's faster multiply-adds pay for every copy
    ("bij,bjk->bik", ((32, 1021, 1023), (32, 1023, 1019)), False),
])
def test_the_workload_suites_batched_products_take_the_measured_faster_path(
        subscripts, shapes, batch_first):
    """The planner's charges for a batch-first product route bench/workloads.py's f32 batched
    cases the way the H100 sweep measured faster (docs/performance.md)."""
    assert plan(subscripts, *shapes).steps[0].batch_first is batch_first


def test_batch_last_output_needs_none():
    p = plan("ijb,jkb->ikb", (2, 3, 5), (3, 4, 5))
    assert kinds(p) == ["DotStep"]


def test_outer_hadamard_and_scalar_products_are_dot_generals():
    assert kinds(plan("ij,kl->ijkl", (2, 3), (4, 5))) == ["DotStep"]
    assert plan("ij,kl->ijkl", (2, 3), (4, 5)).steps[0].config.lhs_contracting == ()
    assert kinds(plan("ij,ij->ij", (2, 3), (2, 3))) == ["DotStep"]
    assert kinds(plan("i,i->", (7,), (7,))) == ["DotStep"]


def test_single_operand_expressions():
    assert kinds(plan("ij->ji", (2, 3))) == ["TransposeStep"]
    assert kinds(plan("ij->ij", (2, 3))) == ["CopyStep"]
    assert kinds(plan("ijk->kij", (2, 1, 3))) == ["TransposeStep"]


def test_size_one_labels_summed_from_one_operand_become_views():
    p = plan("ixj,jk->ik", (2, 1, 3), (3, 4))
    assert isinstance(p.steps[0], ViewStep) and p.steps[0].labels == ("i", "j")
    assert p.layouts[2] == ViewLayout((2, 3), (1, 2), 0)  # the view without the x axis
    assert isinstance(p.steps[1], DotStep)
    p = plan("ij->i", (4, 1))
    assert [type(s) for s in p.steps] == [ViewStep, CopyStep]


def test_diagonals_are_views_whose_strides_add_up():
    p = plan_einsum("iji->j", [ViewLayout((3, 4, 3), (1, 3, 12), 5)], [DType.F32])
    assert kinds(p) == ["ViewStep", "SumStep"]
    assert p.layouts[1] == ViewLayout((3, 4), (13, 3), 5)  # i: 1 + 12, in place
    assert kinds(plan("ii->i", (3, 3))) == ["ViewStep", "CopyStep"]


def test_broadcast_axes_are_stride_zero_views():
    p = plan("bij,bjk->bik", (1, 2, 3), (6, 3, 4))
    assert kinds(p) == ["ViewStep", "DotStep", "TransposeStep"]
    assert p.layouts[2] == ViewLayout((6, 2, 3), (0, 1, 2), 0)
    p = plan("...ij,...jk->...ik", (2, 1, 3, 4), (1, 5, 4, 2))
    assert p.labels.sizes["…0"] == 2 and p.labels.sizes["…1"] == 5
    assert p.layouts[2].strides[:2] == (1, 0) and p.layouts[3].strides[:2] == (0, 1)


def test_labels_of_one_operand_are_summed_first_in_one_step():
    p = plan("ijx,jk->ik", (2, 3, 4), (3, 5))
    assert kinds(p) == ["SumStep", "DotStep"]
    total = p.steps[0]
    assert total.labels == ("i", "j") and total.ones == ViewLayout((4,), (0,), 0)
    p = plan("ijk->", (2, 3, 4))
    assert kinds(p) == ["SumStep"] and p.steps[0].ones.shape == (2, 3, 4)
    assert p.steps[0].config.lhs_contracting == (0, 1, 2)  # every axis in one pass
    assert "sum" in str(p) and "view" in str(plan("ii", (3, 3)))
    # After the sums, every label left is shared: the pairwise steps never sum one-sided.
    p = plan("ij,jk,kl->", (2, 3), (3, 4), (4, 5))
    assert kinds(p) == ["SumStep", "SumStep", "DotStep", "DotStep"]


def test_sums_need_a_gemm_dtype():
    with pytest.raises(tw.UnsupportedDType, match="summing label\\(s\\) 'j' runs F32 and C32"):
        plan("ij->i", (2, 3), dtype=DType.I32)


def test_dtypes():
    assert plan("ij,jk", (2, 3), (3, 4), dtype=DType.C32).flops == 8 * 2 * 3 * 4
    with pytest.raises(tw.UnsupportedDType, match="einsum: does not support dtype F64"):
        plan("ij,jk", (2, 3), (3, 4), dtype=DType.F64)
    with pytest.raises(tw.UnsupportedDType, match="I32"):
        plan("ij,jk", (2, 3), (3, 4), dtype=DType.I32)
    assert kinds(plan("ij->ji", (2, 3), dtype=DType.I32)) == ["TransposeStep"]
    with pytest.raises(tw.DTypeMismatch, match="einsum: dtype mismatch: expected F32, got C32"):
        plan_einsum("ij,jk", [dense_layout((2, 3)), dense_layout((3, 4))],
                    [DType.F32, DType.C32])


def test_views_that_bind_in_place_are_not_packed():
    view = ViewLayout((3, 2), (-2, 1), 4)     # rows reversed, columns contiguous
    p = plan_einsum("ij,jk->ik", [view, dense_layout((2, 5))], [DType.F32] * 2)
    assert p.steps[0].packs == 0


# --- paths -----------------------------------------------------------------------------------

EXPRESSIONS = [
    ("ij,jk,kl,lm->im", [(10, 40), (40, 3), (3, 50), (50, 7)]),
    ("ab,bc,cd,de,ef->af", [(2, 30), (30, 3), (3, 40), (40, 5), (5, 6)]),
    ("abc,cde,efa->bdf", [(4, 5, 6), (6, 7, 8), (8, 9, 4)]),
    ("ia,ib,ic,id,abcd->i", [(10, 3), (10, 4), (10, 5), (10, 6), (3, 4, 5, 6)]),
    ("ab,bc,cd,da,ae,ef->f", [(4, 5), (5, 6), (6, 7), (7, 4), (4, 8), (8, 3)]),
    ("ijk,jl,km,ln,mo,no->i", [(3, 4, 5), (4, 6), (5, 7), (6, 8), (7, 9), (8, 9)]),
    ("ab,bc,cd,de,ef,fg,gh->ah", [(3, 4), (4, 5), (5, 6), (6, 7), (7, 8), (8, 9), (9, 2)]),
    ("ab,bc,cd,de,ef,fg,gh,ha->", [(2, 9), (9, 3), (3, 8), (8, 2), (2, 7), (7, 4), (4, 6),
                                   (6, 2)]),
    ("abcd,aefg,bhij,ckl,dm->efghijklm",
     [(2, 2, 2, 2), (2, 3, 3, 3), (2, 3, 3, 3), (2, 3, 3), (2, 3)]),
]


def cost(subscripts, shapes, path) -> int:
    """opt_einsum's FLOP count of a path (numpy's format, the leading word dropped)."""
    steps = [tuple(x) for x in path if x != "einsum_path"]
    return opt_einsum.contract_path(subscripts, *shapes, shapes=True, optimize=steps)[1].opt_cost


@pytest.mark.parametrize("subscripts,shapes", EXPRESSIONS)
def test_path_is_never_worse_than_numpys_greedy(subscripts, shapes):
    p = plan(subscripts, *shapes)
    arrays = [np.empty(s, np.float32) for s in shapes]
    numpy_greedy, _ = np.einsum_path(subscripts, *arrays, optimize="greedy")
    assert cost(subscripts, shapes, p.path) <= cost(subscripts, shapes, numpy_greedy)
    numpy_optimal, _ = np.einsum_path(subscripts, *arrays, optimize="optimal")
    best = plan(subscripts, *shapes, optimize="optimal")
    assert cost(subscripts, shapes, best.path) <= cost(subscripts, shapes, numpy_optimal)


def test_greedy_on_a_long_chain_still_beats_numpy():
    subscripts = ",".join(f"{a}{b}" for a, b in zip("abcdefghijkl", "bcdefghijklm")) + "->am"
    shapes = [(3 + i % 4, 3 + (i + 1) % 4) for i in range(12)]
    arrays = [np.empty(s, np.float32) for s in shapes]
    numpy_path, _ = np.einsum_path(subscripts, *arrays, optimize="greedy")
    for optimize in ("auto", "greedy", True, "optimal"):
        p = plan(subscripts, *shapes, optimize=optimize)
        assert cost(subscripts, shapes, p.path) <= cost(subscripts, shapes, numpy_path)
    # 'optimal' stays bounded: past 8 operands it hands over to opt_einsum's auto-hq.
    assert plan(subscripts, *shapes, optimize="optimal").strategy == "auto-hq"


def test_numpys_optimize_values_are_accepted():
    shapes = [(2, 3), (3, 4), (4, 5)]
    assert plan("ij,jk,kl->il", *shapes, optimize=True).strategy == "greedy"
    left = plan("ij,jk,kl->il", *shapes, optimize=False)
    assert left.path == ((0, 1), (0, 1)) and left.strategy == "left-to-right"
    limited = plan("ij,jk,kl->il", *shapes, optimize=("greedy", 10**6))
    assert limited.strategy == "greedy"
    for name in ("dp", "branch-2", "auto-hq", "optimal"):
        assert plan("ij,jk,kl->il", *shapes, optimize=name).strategy == name
    with pytest.raises(tw.InvalidArgument, match="memory limit"):
        plan("ij,jk,kl->il", *shapes, optimize=("greedy", -1))


def test_planning_a_thousand_operands_that_share_a_label_ends():
    """opt_einsum's greedy search plans this in milliseconds (bench/planning.py times it)."""
    p = plan(",".join(["i"] * 1000) + "->i", *[(5,)] * 1000)
    assert len(p.path) == 999 and sum(isinstance(s, DotStep) for s in p.steps) == 999


def test_explicit_paths_and_their_validation():
    p = plan("ij,jk,kl->il", (2, 3), (3, 4), (4, 5), optimize=["einsum_path", (1, 2), (0, 1)])
    assert p.path == ((1, 2), (0, 1)) and p.strategy == "explicit"
    with pytest.raises(tw.InvalidArgument, match="leaves 2 operands"):
        plan("ij,jk,kl->il", (2, 3), (3, 4), (4, 5), optimize=[(0, 1)])
    with pytest.raises(tw.InvalidArgument, match="positions below 2"):
        plan("ij,jk,kl->il", (2, 3), (3, 4), (4, 5), optimize=[(0, 1), (0, 2)])
    with pytest.raises(tw.InvalidArgument, match="'fastest'"):
        plan("ij,jk", (2, 3), (3, 4), optimize="fastest")


def test_optimal_path_picks_the_cheap_end_of_a_chain():
    p = plan("ij,jk,kl->il", (100, 100), (100, 2), (2, 100), optimize="optimal")
    assert p.path == ((0, 1), (0, 1))  # (ij,jk) first: 100*100*2, then 100*2*100


def test_report_reads_like_numpys():
    arrays = [np.empty(s, np.float32) for s in [(2, 3), (3, 4), (4, 5)]]
    _, p = tw.einsum_path("ij,jk,kl->il", *arrays)
    text = str(p)
    assert "Complete contraction:  ij,jk,kl->il" in text and "dot_general" in text
    assert p.numpy_path[0] == "einsum_path"
    assert isinstance(tw.einsum_path("ij->ji", np.empty((2, 3), np.float32))[1].steps[0],
                      TransposeStep)


def test_plans_are_made_once_per_call_signature_and_never_conflated():
    a = np.ones((2, 3), np.float32)
    _, first = tw.einsum_path("ij,jk", a, a.T, optimize=True)
    _, again = tw.einsum_path("ij,jk", a, a.T, optimize=True)
    assert again is first  # cached: parsing and the path search run once
    # 1 == True and hashes alike, but only True is one of numpy's optimize values.
    with pytest.raises(tw.InvalidArgument, match="'optimize': 1 is not True"):
        tw.einsum_path("ij,jk", a, a.T, optimize=1)
    # Axes 1.0 == 1, but are not integers.
    assert DotGeneralConfig.of([1], [0]).lhs_contracting == (1,)
    with pytest.raises(tw.InvalidArgument, match="1.0 is not an integer"):
        DotGeneralConfig.of([1.0], [0])
