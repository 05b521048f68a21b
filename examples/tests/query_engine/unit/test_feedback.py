"""Rating an answer: -1 or 1 (or none), in place, on assistant messages only."""

import pytest
from ragdemo import IntegrityError

from placeborag.query_engine import ScriptedChatModel

pytestmark = [pytest.mark.unit, pytest.mark.p1]


@pytest.fixture
def answered(make_engine, alice):
    engine = make_engine(model=ScriptedChatModel.answering("Hello!"))
    result = engine.turn(alice, "hi")
    return engine, result


@pytest.mark.catches("feedback_any_value")
@pytest.mark.parametrize("value", [0, 2, -5])
def test_a_rating_other_than_minus_one_or_one_is_refused(answered, alice, value):
    engine, result = answered

    with pytest.raises(IntegrityError, match="CHECK"):
        engine.store.rate(result.message_id, alice.owner, value)

    assert engine.store.messages[result.message_id].feedback is None
    engine.store.rate(result.message_id, alice.owner, None)  # no rating is allowed


@pytest.mark.catches("feedback_new_row")
def test_a_re_rating_edits_the_same_row(answered, alice):
    engine, result = answered
    engine.store.rate(result.message_id, alice.owner, 1)
    stamp = engine.store.messages[result.message_id].updated_at
    count = len(engine.store.messages)

    engine.store.rate(result.message_id, alice.owner, -1)

    row = engine.store.messages[result.message_id]
    assert (row.feedback, len(engine.store.messages)) == (-1, count)
    assert row.updated_at > stamp


@pytest.mark.catches("feedback_on_user")
def test_only_an_assistant_message_can_be_rated(answered, alice):
    engine, _result = answered
    user_message = next(m for m in engine.store.messages.values() if m.role == "user")

    with pytest.raises(IntegrityError, match="assistant messages only"):
        engine.store.rate(user_message.id, alice.owner, 1)


@pytest.mark.catches("feedback_touches_body")
def test_a_rating_leaves_the_body_and_the_role_alone(answered, alice):
    engine, result = answered
    before = engine.store.messages[result.message_id]

    engine.store.rate(result.message_id, alice.owner, 1)

    after = engine.store.messages[result.message_id]
    assert (after.content, after.role) == (before.content, before.role) == ("Hello!", "assistant")
