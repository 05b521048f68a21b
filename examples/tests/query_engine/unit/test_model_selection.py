"""The conversation's model: an intent on the conversation, a fact on each message."""

import pytest
from qe_support import searching
from ragdemo import IntegrityError

from placeborag.query_engine import ScriptedChatModel

pytestmark = [pytest.mark.unit, pytest.mark.p1]


@pytest.fixture
def models():
    return {
        "small": ScriptedChatModel.answering("small says hi").then_repeats(),
        "large": ScriptedChatModel.answering(
            "large says hi", model_name="large-2026-05"
        ).then_repeats(),
    }


@pytest.mark.catches("model_off_list")
def test_a_model_off_the_allow_list_is_refused_and_not_written(make_engine, alice, models):
    engine = make_engine(models=models, default_model="small", allowed_models=["small", "large"])
    thread = engine.turn(alice, "hi")
    before = engine.store.conversations[thread.conversation_id]

    with pytest.raises(IntegrityError, match="'gpt-x' is not on the allow-list"):
        engine.select_model(alice, thread.conversation_id, "gpt-x")

    assert engine.store.conversations[thread.conversation_id] == before


@pytest.mark.catches("null_model_first_allowed")
def test_no_selection_runs_on_the_default_model(make_engine, alice, models):
    engine = make_engine(models=models, default_model="large", allowed_models=["small", "large"])

    result = engine.turn(alice, "hi")

    assert result.text == "large says hi"
    assert engine.store.conversations[result.conversation_id].selected_model is None


@pytest.mark.catches("stamp_intent")
def test_a_message_is_stamped_with_the_model_that_answered_not_the_choice(
    make_engine, alice, models
):
    engine = make_engine(models=models, default_model="small")
    first = engine.turn(alice, "hi")
    engine.select_model(alice, first.conversation_id, "large")

    second = engine.turn(alice, "hi again", conversation_id=first.conversation_id)

    assert engine.store.conversations[first.conversation_id].selected_model == "large"
    assert engine.store.messages[second.message_id].model == "large-2026-05"


@pytest.mark.catches("rewrite_history")
def test_a_new_choice_changes_the_conversation_and_the_next_answers_only(
    make_engine, alice, models
):
    engine = make_engine(models=models, default_model="small")
    first = engine.turn(alice, "hi")
    stamp = engine.store.conversations[first.conversation_id].updated_at

    engine.select_model(alice, first.conversation_id, "large")
    second = engine.turn(alice, "hi again", conversation_id=first.conversation_id)

    assert engine.store.conversations[first.conversation_id].updated_at > stamp
    assert engine.store.messages[first.message_id].model == "scripted-chat"
    assert second.text == "large says hi"


def test_a_grounding_answer_is_stamped_like_a_conversational_one(make_engine, alice):
    engine = make_engine(models={"default": searching("refund policy")})

    result = engine.turn(alice, "refund?")

    assert engine.store.messages[result.message_id].model == "scripted-chat"
