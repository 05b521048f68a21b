"""The search decision: the model's tool call routes the turn to grounding or conversation."""

import pytest
from qe_support import REFUND_1, VPN, searching
from ragdemo import IntegrityError
from ragdemo.chatstore import RetrievalTrace
from ragdemo.engine import ONE_SEARCH_PER_TURN

from placeborag.query_engine import (
    ScriptedChatModel,
    StubKnowledgeStore,
    search_on_topics,
    tool_call,
)

pytestmark = [pytest.mark.unit, pytest.mark.p1]


@pytest.mark.catches("no_trace")
def test_a_search_call_grounds_the_turn_and_writes_its_trace(make_engine, alice, knowledge):
    engine = make_engine(model=searching("refund policy"))

    result = engine.turn(alice, "can I send it back?")

    assert knowledge.queries == ("refund policy",)
    assert result.grounded and not result.not_found
    assert [f.id for f in result.context] == ["refund#0", "refund#1", "shipping#0"]
    assert result.text.startswith("Returns are accepted within 30 days [1].")
    trace = engine.store.traces[result.message_id]
    assert (trace.query, trace.packed) == ("refund policy", ("refund#0", "refund#1", "shipping#0"))


@pytest.mark.catches("always_retrieve", "always_ground")
def test_an_answer_without_a_tool_call_is_a_conversation(make_engine, alice, knowledge):
    engine = make_engine(model=ScriptedChatModel.answering("Happy to help!"))

    result = engine.turn(alice, "thanks a lot")

    assert (result.text, result.grounded, result.not_found) == ("Happy to help!", False, False)
    assert result.citations == ()
    assert knowledge.calls == ()
    assert engine.store.traces == {}


@pytest.mark.catches("trace_overwrite")
def test_a_message_has_at_most_one_retrieval_trace(make_engine, alice):
    model = searching("refund policy").then_answers("You are welcome.")
    engine = make_engine(model=model)
    grounded = engine.turn(alice, "can I send it back?")
    chat = engine.turn(alice, "thanks", conversation_id=grounded.conversation_id)
    again = RetrievalTrace(grounded.message_id, "refund policy", alice.identity, (), ())

    with pytest.raises(IntegrityError, match="UNIQUE\\(message_id\\)"):
        engine.store.write_trace(again)

    assert list(engine.store.traces) == [grounded.message_id]
    assert chat.message_id not in engine.store.traces
    assert engine.store.traces[grounded.message_id].packed != ()


@pytest.mark.catches("raw_utterance_query")
def test_retrieval_runs_on_the_models_standalone_query(make_engine, alice, knowledge):
    engine = make_engine(model=searching("vpn setup"))

    result = engine.turn(alice, "and how do I set that up?")

    assert knowledge.queries == ("vpn setup",)
    assert result.query == "vpn setup"
    assert [f.id for f in result.context] == ["vpn#0"]


@pytest.mark.catches("search_every_call")
def test_at_most_one_knowledge_search_runs_per_turn(make_engine, alice, knowledge):
    model = ScriptedChatModel.calling(
        tool_call("search_knowledge", query="refund policy"),
        tool_call("search_knowledge", query="shipping time"),
    ).then_answers()
    engine = make_engine(model=model)

    engine.turn(alice, "refunds and shipping?")

    assert knowledge.queries == ("refund policy",)
    results = model.requests[1].tool_results
    assert [r.content == ONE_SEARCH_PER_TURN for r in results] == [False, True]


@pytest.mark.catches("first_tool_only")
def test_knowledge_and_web_calls_of_one_round_both_run_and_the_answer_uses_both(
    make_engine, alice, knowledge, web
):
    model = ScriptedChatModel.calling(
        tool_call("search_knowledge", query="vpn setup"),
        tool_call("web_search", query="vpn client linux"),
    ).then_answers("Use the portal client [1]. It runs on Linux [2].")
    engine = make_engine(model=model)

    result = engine.turn(alice, "vpn on my linux laptop?")

    assert (knowledge.queries, web.queries) == (("vpn setup",), ["vpn client linux"])
    assert {f.kind for f in result.context} == {"knowledge", "web"}
    assert sorted(c.kind for c in result.citations) == ["knowledge", "web"]
    assert result.text == "Use the portal client [1]. It runs on Linux [2]."


@pytest.mark.catches("second_round")
def test_after_one_round_of_tools_the_model_must_answer(make_engine, alice, knowledge):
    model = searching("refund policy")
    engine = make_engine(model=model)

    engine.turn(alice, "can I send it back?")

    assert [r.tools for r in model.requests] == [("search_knowledge", "web_search"), ()]
    assert len(knowledge.calls) == 1


@pytest.mark.catches("offer_disabled_web")
def test_a_disabled_web_search_is_not_offered(make_engine, alice, web):
    model = ScriptedChatModel.following(search_on_topics(["vpn"], query=lambda r: "vpn setup"))
    engine = make_engine(model=model, web_enabled=False)

    result = engine.turn(alice, "vpn on linux?")

    assert result.tools_offered == ("search_knowledge",)
    assert model.requests[0].tools == ("search_knowledge",)
    assert web.queries == []


@pytest.mark.catches("offer_search_when_empty")
def test_an_empty_base_offers_no_knowledge_search(make_engine, alice):
    empty = StubKnowledgeStore(default=[])
    model = ScriptedChatModel.following(search_on_topics(["vpn"], answer="Ask IT for a VPN."))
    engine = make_engine(model=model, knowledge=empty, web=None)

    result = engine.turn(alice, "how do I get a vpn?")

    assert result.tools_offered == ()
    assert (result.text, result.grounded, result.not_found) == ("Ask IT for a VPN.", False, False)
    assert empty.calls == () and engine.store.traces == {}


@pytest.mark.catches("stale_tool_set")
def test_the_first_fragment_brings_the_knowledge_search_back(make_engine, alice):
    base = StubKnowledgeStore(default=[])
    model = ScriptedChatModel.following(search_on_topics(["vpn"], query=lambda r: "vpn setup"))
    engine = make_engine(model=model, knowledge=base, web=None)
    before = engine.turn(alice, "vpn?")

    base.script("vpn setup", [VPN])
    after = engine.turn(alice, "vpn?", conversation_id=before.conversation_id)

    assert (before.tools_offered, after.tools_offered) == ((), ("search_knowledge",))
    assert base.queries == ("vpn setup",)
    assert after.grounded and [f.id for f in after.context] == ["vpn#0"]
    assert REFUND_1.id not in {f.id for f in after.context}
