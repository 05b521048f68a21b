"""The candidate cache at the entrance: exact standalone query plus identity."""

import pytest
from qe_support import searching

from placeborag.query_engine import ScriptedChatModel, tool_call

pytestmark = pytest.mark.unit


def asks(*queries):
    """A model that searches each query in turn, answering from the results after each."""
    model = ScriptedChatModel.calling(tool_call("search_knowledge", query=queries[0]))
    model.then_answers()
    for query in queries[1:]:
        model.then_calls(tool_call("search_knowledge", query=query)).then_answers()
    return model


@pytest.mark.p1
@pytest.mark.catches("no_cache_read")
def test_an_exact_repeat_by_the_same_identity_skips_the_knowledge_store(
    make_engine, alice, knowledge, cache
):
    engine = make_engine(model=asks("refund policy", "refund policy"))

    first = engine.turn(alice, "refund?")
    second = engine.turn(alice, "refund?", conversation_id=first.conversation_id)

    assert knowledge.queries == ("refund policy",)
    assert (cache.hits, cache.misses) == (1, 1)
    assert second.context == first.context


@pytest.mark.p1
@pytest.mark.catches("cache_raw_utterance")
def test_a_miss_goes_on_to_retrieval_and_stores_the_result_under_its_key(
    make_engine, alice, knowledge, cache
):
    engine = make_engine(model=searching("refund policy"))

    engine.turn(alice, "can I return this?")

    assert knowledge.queries == ("refund policy",)
    assert [e.kind for e in cache.events] == ["miss", "put"]
    assert ("refund policy", alice.identity) in cache


@pytest.mark.p0
@pytest.mark.catches("cache_ignores_identity")
def test_another_identity_never_reuses_an_entry(make_engine, alice, bob, knowledge):
    engine = make_engine(model=asks("salary bands", "salary bands"))

    engine.turn(bob, "salary bands?")
    for_alice = engine.turn(alice, "salary bands?")

    assert knowledge.identities == (bob.identity, alice.identity)
    assert for_alice.context == ()
    assert for_alice.hints == ("hr-drive",)


@pytest.mark.p1
@pytest.mark.catches("cache_raw_utterance")
def test_the_key_is_the_exact_standalone_query_not_the_utterance(make_engine, alice, knowledge):
    engine = make_engine(model=asks("refund policy", "refund policy", "Refund policy"))

    first = engine.turn(alice, "can I return this?")
    engine.turn(alice, "so, returns?", conversation_id=first.conversation_id)
    with pytest.raises(Exception, match="Refund policy"):
        engine.turn(alice, "returns??", conversation_id=first.conversation_id)

    # Same standalone phrasing: a hit. A different text, however close: a miss, so a search.
    assert knowledge.queries == ("refund policy", "Refund policy")
