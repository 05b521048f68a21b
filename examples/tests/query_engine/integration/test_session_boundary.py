"""The conversation boundary is the conversation id: with it a continuation, without it new."""

import pytest

from placeborag.query_engine import ScriptedChatModel

pytestmark = [pytest.mark.integration, pytest.mark.p1]


def test_with_an_id_a_continuation_without_one_a_new_conversation(make_engine, alice):
    model = ScriptedChatModel.answering("ok").then_repeats()
    engine = make_engine(model=model)

    first = engine.turn(alice, "one")
    same = engine.turn(alice, "two", conversation_id=first.conversation_id)
    other = engine.turn(alice, "three")

    assert same.conversation_id == first.conversation_id != other.conversation_id
    assert [m.content for m in model.requests[1].messages[1:]] == ["one", "ok", "two"]
    assert [m.content for m in model.requests[2].messages[1:]] == ["three"]


def test_a_conversation_is_created_by_its_first_message_and_its_id_returned(make_engine, alice):
    engine = make_engine(model=ScriptedChatModel.answering("ok").then_repeats())
    assert engine.store.conversations == {}  # a "new chat" creates nothing

    result = engine.turn(alice, "hello")

    assert list(engine.store.conversations) == [result.conversation_id]
    assert engine.store.conversations[result.conversation_id].user_id == "alice"
    again = engine.turn(alice, "again", conversation_id=result.conversation_id)
    assert again.conversation_id == result.conversation_id
