"""Context carried between the messages of one conversation, and only of that one."""

import pytest
from qe_support import searching
from ragdemo import QueryEngine

from placeborag.query_engine import ScriptedChatModel, tool_call

pytestmark = [pytest.mark.integration, pytest.mark.p1]


def follow_up_rule(request):
    """Search on a topic, phrasing a follow-up as a standalone query from the history."""
    said = " ".join(m.content for m in request.messages if m.role == "user").casefold()
    if request.tool_rounds or not request.offers("search_knowledge"):
        return "\n".join(m.content for m in request.tool_results) or "Sure."
    if "refund" in said:
        return [tool_call("search_knowledge", query="refund policy")]
    return "Could you tell me more?"


@pytest.mark.catches("raw_utterance_query")
def test_the_history_shapes_the_standalone_query_of_a_follow_up(make_engine, alice, knowledge):
    model = ScriptedChatModel.following(follow_up_rule)
    engine = make_engine(model=model)
    first = engine.turn(alice, "hi, I bought a refund-eligible kettle")

    second = engine.turn(alice, "and opened software?", conversation_id=first.conversation_id)

    follow_up = model.requests[-2]  # the decision of the second turn
    assert [m.content for m in follow_up.messages if m.role == "user"] == [
        "hi, I bought a refund-eligible kettle",
        "and opened software?",
    ]
    assert knowledge.queries[-1] == "refund policy"
    assert second.query == "refund policy"


@pytest.mark.catches("history_by_user")
def test_another_conversation_of_the_same_user_does_not_leak_in(make_engine, alice):
    model = ScriptedChatModel.answering("noted").then_repeats()
    engine = make_engine(model=model)
    engine.turn(alice, "my order number is 4411")

    engine.turn(alice, "what was my order number?")  # a new conversation

    contents = [m.content for m in model.last_request.messages]
    assert "my order number is 4411" not in contents
    assert contents[-1] == "what was my order number?"


@pytest.mark.catches("always_retrieve")
def test_each_grounding_turn_retrieves_afresh_and_small_talk_never_does(
    make_engine, alice, knowledge
):
    model = (
        searching("refund policy")
        .then_answers("You're welcome!")
        .then_calls(tool_call("search_knowledge", query="shipping time"))
        .then_answers()
    )
    engine = make_engine(model=model)

    first = engine.turn(alice, "refund?")
    chat = engine.turn(alice, "thanks!", conversation_id=first.conversation_id)
    third = engine.turn(alice, "and shipping?", conversation_id=first.conversation_id)

    assert knowledge.queries == ("refund policy", "shipping time")
    assert (chat.grounded, chat.citations) == (False, ())
    assert [c.record_id for c in third.citations] == ["shipping"]


@pytest.mark.catches("history_in_engine")
def test_the_conversation_survives_a_restart_of_the_engine(make_engine, alice, knowledge, bugs):
    before = make_engine(model=ScriptedChatModel.answering("Noted: kettle."))
    first = before.turn(alice, "I bought a kettle")
    model = ScriptedChatModel.answering("You bought a kettle.")
    after = QueryEngine(
        models={"default": model}, knowledge=knowledge, store=before.store, bugs=bugs
    )

    after.turn(alice, "what did I buy?", conversation_id=first.conversation_id)

    assert [m.content for m in model.request.messages[1:]] == [
        "I bought a kettle",
        "Noted: kettle.",
        "what did I buy?",
    ]
