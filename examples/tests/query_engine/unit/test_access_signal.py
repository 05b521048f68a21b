"""An access is counted when a record is cited in an answer or its citation is opened."""

import pytest
from qe_support import searching
from ragdemo import NotFound
from ragdemo.chatstore import AccessSignal

pytestmark = [pytest.mark.unit, pytest.mark.p1]


@pytest.mark.catches("signal_per_chunk")
def test_a_cited_record_counts_one_access_per_answer(make_engine, alice):
    engine = make_engine(model=searching("refund policy", "30 days [1]. Not opened [2]."))

    result = engine.turn(alice, "refund?")

    assert engine.store.signals == [AccessSignal("refund", "alice", "cited", result.message_id)]


@pytest.mark.catches("click_uncounted")
def test_opening_a_citation_counts_a_separate_access(make_engine, alice, bob):
    engine = make_engine(model=searching("refund policy", "30 days [1]."))
    result = engine.turn(alice, "refund?")

    engine.click(alice, result.message_id, "refund")

    assert [s.kind for s in engine.store.signals] == ["cited", "click"]
    with pytest.raises(NotFound):
        engine.click(alice, result.message_id, "shipping")  # not cited in that answer
    with pytest.raises(NotFound):
        engine.click(bob, result.message_id, "refund")  # not bob's answer


@pytest.mark.catches("signal_on_retrieve")
def test_a_retrieved_candidate_that_was_not_cited_counts_nothing(make_engine, alice):
    engine = make_engine(model=searching("refund policy", "Five days [3]."))

    engine.turn(alice, "shipping?")

    assert [s.record_id for s in engine.store.signals] == ["shipping"]


@pytest.mark.catches("signal_on_retrieve", "click_uncounted")
def test_signals_are_only_registered_for_the_knowledge_store_to_read(make_engine, alice, knowledge):
    engine = make_engine(model=searching("refund policy", "30 days [1]."))
    result = engine.turn(alice, "refund?")
    calls = knowledge.calls

    engine.click(alice, result.message_id, "refund")

    assert knowledge.calls == calls  # registering an access asks the knowledge store nothing
    assert [(s.record_id, s.kind) for s in engine.store.signals] == [
        ("refund", "cited"),
        ("refund", "click"),
    ]
