"""Grounding, the load-bearing invariant: a grounding answer comes only from the passed context."""

import pytest
from qe_support import PLANTED, SALARY, searching
from ragdemo import NOT_FOUND
from ragdemo.generator import GROUNDING_RULES, PLATFORM_RULES

from placeborag.query_engine import ScriptedChatModel, StubKnowledgeStore, search_on_topics

pytestmark = [pytest.mark.integration, pytest.mark.p0]

HINT = "Some relevant records in hr-drive are not available to you."


@pytest.mark.catches("keep_uncited")
def test_a_fact_outside_the_passed_context_never_reaches_the_answer(make_engine, alice):
    answer = "Returns are accepted within 30 days [1]. Our CEO is Ada Lovelace."
    engine = make_engine(model=searching("refund policy", answer))

    result = engine.turn(alice, "refund?")

    assert result.text == "Returns are accepted within 30 days [1]."


@pytest.mark.catches("invent_answer")
def test_no_context_gives_an_honest_not_found(make_engine, alice):
    engine = make_engine(model=searching("capital of France", "Probably Paris."))

    result = engine.turn(alice, "capital of France?")

    assert (result.text, result.not_found, result.citations) == (NOT_FOUND, True, ())


@pytest.mark.catches("hidden_as_empty")
def test_empty_and_hidden_are_reported_differently(make_engine, alice, knowledge):
    engine = make_engine(
        model=searching("salary bands", "Band 4 pays 70k [1].")
        .then_calls(("search_knowledge", {"query": "capital of France"}))
        .then_answers("Paris.")
    )

    hidden = engine.turn(alice, "what are the salary bands?")
    empty = engine.turn(alice, "capital of France?", conversation_id=hidden.conversation_id)

    assert (hidden.text, hidden.not_found, hidden.hints) == (HINT, False, ("hr-drive",))
    assert (empty.text, empty.not_found, empty.hints) == (NOT_FOUND, True, ())


@pytest.mark.catches("keep_uncited")
def test_partial_context_is_answered_for_the_covered_part_only(make_engine, alice):
    answer = "Returns are accepted within 30 days [1]. Express delivery is free worldwide."
    engine = make_engine(model=searching("refund policy", answer))

    result = engine.turn(alice, "refund window, and is express delivery free?")

    assert result.text == "Returns are accepted within 30 days [1]."
    assert "Express" not in result.text


@pytest.mark.catches("hidden_as_empty")
def test_a_mixed_outcome_is_one_answer_with_a_synthesis_and_a_hint(make_engine, alice, knowledge):
    engine = make_engine(model=searching("refund policy and salary bands", "30 days [1]."))

    result = engine.turn(alice, "refund window and salary bands?")

    assert result.text == f"30 days [1]. {HINT}"
    assert [c.record_id for c in result.citations] == ["refund"]
    assert len(knowledge.calls) == 1


@pytest.mark.catches("unchecked_anchor")
def test_every_claim_in_the_answer_is_anchored_on_a_packed_source(make_engine, alice):
    answer = "Returns are accepted within 30 days [1]. Salaries are 70k [7]."
    engine = make_engine(model=searching("refund policy", answer))

    result = engine.turn(alice, "refund?")

    assert result.text == "Returns are accepted within 30 days [1]."
    numbers = [int(n) for n in result.text.replace("]", "[").split("[")[1::2]]
    assert all(1 <= n <= len(result.context) for n in numbers)


@pytest.mark.catches("inline_context")
def test_an_instruction_inside_a_retrieved_fragment_stays_data(make_engine, alice):
    model = searching("return policy faq")
    engine = make_engine(model=model)

    result = engine.turn(alice, "are returns free?")

    system = model.requests[1].messages[0]
    assert system.role == "system" and PLANTED not in system.content
    assert any(PLANTED in m.content for m in model.requests[1].tool_results)
    assert SALARY.text not in " ".join(m.content for m in model.requests[1].messages)
    assert [c.record_id for c in result.citations] == ["faq"]


@pytest.mark.catches("grounding_first", "empty_platform_prompt")
@pytest.mark.parametrize("override", [None, ""])
def test_the_platform_prompt_goes_first_and_an_empty_override_means_the_default(
    make_engine, alice, override
):
    model = ScriptedChatModel.answering("Hello!")
    engine = make_engine(model=model, platform_prompt=override)

    engine.turn(alice, "hi")

    system = model.request.messages[0].content
    assert system == f"{PLATFORM_RULES}\n{GROUNDING_RULES}"


def test_a_custom_platform_prompt_replaces_the_default_and_still_goes_first(make_engine, alice):
    model = ScriptedChatModel.answering("Hello!")
    engine = make_engine(model=model, platform_prompt="You are Acme's assistant.")

    engine.turn(alice, "hi")

    assert model.request.messages[0].content == f"You are Acme's assistant.\n{GROUNDING_RULES}"


@pytest.mark.catches("invent_answer")
def test_a_well_known_fact_absent_from_the_base_is_not_found(make_engine, alice):
    rule = search_on_topics(["France"], query=lambda r: "capital of France", answer="Paris.")
    engine = make_engine(model=ScriptedChatModel.following(rule))

    result = engine.turn(alice, "What is the capital of France?")

    assert result.grounded
    assert (result.text, result.not_found) == (NOT_FOUND, True)


@pytest.mark.catches("always_ground")
def test_small_talk_is_answered_freely_without_the_grounding_contract(make_engine, alice):
    engine = make_engine(model=ScriptedChatModel.answering("Doing well, thanks for asking!"))

    result = engine.turn(alice, "how are you?")

    assert (result.text, result.not_found, result.grounded) == (
        "Doing well, thanks for asking!",
        False,
        False,
    )


@pytest.mark.catches("offer_search_when_empty")
def test_an_empty_base_turns_off_grounding_mode(make_engine, alice):
    empty = StubKnowledgeStore(default=[])
    rule = search_on_topics(["refund"], answer="Most shops accept returns for 30 days.")
    engine = make_engine(model=ScriptedChatModel.following(rule), knowledge=empty, web=None)

    result = engine.turn(alice, "what is a typical refund window?")

    assert result.text == "Most shops accept returns for 30 days."
    assert (result.grounded, result.not_found, result.citations) == (False, False, ())
