"""Citations name the source record once, with its best packed chunk, in relevance order."""

import pytest
from qe_support import REFUND_1, searching
from ragdemo import RecordCitation

pytestmark = [pytest.mark.unit, pytest.mark.p1]


@pytest.mark.catches("cite_every_chunk")
def test_a_citation_links_the_record_with_its_best_chunk_as_anchor(make_engine, alice):
    engine = make_engine(model=searching("refund policy", "Within 30 days [1]. Not opened [2]."))

    result = engine.turn(alice, "refund?")

    assert result.citations == (
        RecordCitation("refund", "Refund policy", "wiki", "knowledge", "refund#0", REFUND_1.text),
    )


@pytest.mark.catches("cite_every_chunk")
def test_chunks_of_one_record_collapse_into_one_citation(make_engine, alice):
    answer = "Within 30 days [1]. Not opened [2]. Five days [3]."
    engine = make_engine(model=searching("refund policy", answer))

    result = engine.turn(alice, "refund and shipping?")

    assert [c.record_id for c in result.citations] == ["refund", "shipping"]


@pytest.mark.catches("cite_candidates")
def test_only_what_was_packed_can_be_cited(make_engine, alice):
    engine = make_engine(model=searching("refund policy", "Within 30 days [1]."), top_k=2)

    result = engine.turn(alice, "refund?")

    packed = {f.record_id for f in result.context}
    assert {c.record_id for c in result.citations} <= packed
    assert "shipping" not in {c.record_id for c in result.citations}


@pytest.mark.catches("cite_in_answer_order")
def test_sources_follow_the_relevance_of_their_packed_chunks(make_engine, alice):
    engine = make_engine(model=searching("refund policy", "Five days [3]. Within 30 days [1]."))

    result = engine.turn(alice, "shipping and refund?")

    assert [c.record_id for c in result.citations] == ["refund", "shipping"]
