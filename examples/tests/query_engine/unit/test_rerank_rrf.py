"""Fusion of the knowledge store's results: its rank order kept, stable, cut, empty-safe."""

import pytest
from qe_support import SHIPPING, chunk, searching
from ragdemo import reciprocal_rank_fusion

from placeborag.query_engine import StubKnowledgeStore

pytestmark = [pytest.mark.unit, pytest.mark.p1]

# The store ranks the delivery-times chunk first although the other one repeats more words
# of the query: its hybrid order is the one to keep.
FIRST = chunk("eta#0", "eta", "Delivery times", "Parcels usually arrive within a week.")
SECOND = chunk("track#0", "track", "Tracking", "Track shipping time and shipping status online.")


@pytest.mark.catches("rescore")
def test_the_knowledge_stores_rank_order_is_kept(make_engine, alice):
    base = StubKnowledgeStore(results={"shipping time": [FIRST, SECOND]})
    engine = make_engine(model=searching("shipping time"), knowledge=base)

    result = engine.turn(alice, "how long does shipping take?")

    assert [f.id for f in result.context] == ["eta#0", "track#0"]


@pytest.mark.catches("rrf_unstable_ties")
def test_the_same_candidates_give_the_same_order_bit_for_bit():
    knowledge = ["refund#0", "refund#1"]
    web = ["https://a.example"]  # ties with refund#0: both first in their list

    orders = {
        tuple(reciprocal_rank_fusion(lists)) for lists in ([knowledge, web], [web, knowledge])
    }

    assert orders == {("https://a.example", "refund#0", "refund#1")}


@pytest.mark.catches("rrf_no_truncate")
def test_the_fused_list_is_cut_to_the_packing_budget_before_augment(make_engine, alice):
    model = searching("refund policy")
    engine = make_engine(model=model, top_k=2)

    result = engine.turn(alice, "can I send it back?")

    assert [f.id for f in result.context] == ["refund#0", "refund#1"]
    sent = " ".join(m.content for m in model.requests[1].messages)
    assert SHIPPING.text not in sent


@pytest.mark.catches("rrf_empty_raises")
def test_nothing_retrieved_gives_an_empty_ranking_and_the_not_found_branch(make_engine, alice):
    engine = make_engine(model=searching("capital of France", "Paris [1]."))

    result = engine.turn(alice, "what is the capital of France?")

    assert result.context == ()
    assert result.not_found
