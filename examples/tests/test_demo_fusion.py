"""Reciprocal rank fusion as the pipeline implements it: deterministic, budgeted, total."""

import itertools

import pytest
from ragdemo import reciprocal_rank_fusion

pytestmark = [pytest.mark.unit, pytest.mark.p1]

DENSE = ["refund#0", "warranty#0", "shipping#0", "account#0"]
KEYWORD = ["warranty#0", "refund#0", "gift-cards#0"]


@pytest.mark.catches("rrf_unstable_ties")
def test_fusion_gives_the_same_order_whatever_order_the_lists_come_in(bugs):
    orders = {
        tuple(reciprocal_rank_fusion(lists, bugs=bugs))
        for lists in itertools.permutations([DENSE, KEYWORD, ["shipping#0"]])
    }

    assert orders == {("refund#0", "warranty#0", "shipping#0", "gift-cards#0", "account#0")}


@pytest.mark.catches("rrf_unstable_ties")
def test_fusion_agrees_with_placeborags_reference_fusion(bugs):
    fusion = pytest.importorskip("placeborag._fusion")
    lists = [KEYWORD, DENSE]

    reference = [m.id for m in fusion.reciprocal_rank_fusion(lists, rank_constant=60)]

    assert reciprocal_rank_fusion(lists, bugs=bugs) == reference


@pytest.mark.catches("rrf_no_truncate")
def test_fusion_is_cut_to_the_packing_budget(bugs):
    fused = reciprocal_rank_fusion([DENSE, KEYWORD], limit=2, bugs=bugs)

    assert fused == ["refund#0", "warranty#0"]


@pytest.mark.catches("rrf_empty_raises")
@pytest.mark.parametrize("lists", [[], [[], []]])
def test_fusing_nothing_gives_an_empty_list(bugs, lists):
    assert reciprocal_rank_fusion(lists, limit=3, bugs=bugs) == []
