"""The load-bearing contract: answers only from retrieved text, cited per source, for the caller."""

import re

import pytest
from demo_corpus import ACCOUNT, ALICE, BOB, CORPUS, PLANTED, POISONED_ACCOUNT, cited, retrieved
from ragdemo import NOT_FOUND

pytestmark = [pytest.mark.integration, pytest.mark.p0]

NO_ANCHOR = re.compile(r'"[^"]*" \[\d+\]')


@pytest.mark.catches("invent_answer")
@pytest.mark.parametrize(
    ("question", "where"),
    [
        ("what is your refund policy", {"lang": "de"}),  # nothing passes the filter
        ("what is the capital of France", None),  # plenty retrieved, none of it relevant
    ],
)
def test_without_supporting_context_the_answer_is_an_honest_not_found(
    make_pipeline, question, where
):
    answer = make_pipeline().answer(question, identity=ALICE, where=where)

    assert (answer.text, answer.citations, answer.not_found) == (NOT_FOUND, (), True)


@pytest.mark.catches("cite_every_chunk", "cite_candidates")
def test_citations_name_each_packed_source_once_with_its_best_chunk(make_pipeline):
    pipeline = make_pipeline(chunk_words=12)
    question = "refund for opened software"

    answers = [pipeline.answer(question, identity=ALICE, k=k) for k in (1, 3)]

    for answer in answers:
        packed = [chunk.id for chunk in answer.context]
        assert cited(answer) == list(dict.fromkeys(cited(answer)))
        for citation in answer.citations:
            assert citation.chunk_id in packed, f"{citation.chunk_id} was cited but not packed"
            best = next(c for c in answer.context if c.doc_id == citation.doc_id)
            assert (citation.chunk_id, citation.quote) == (best.id, best.text)
        # Every quoted sentence points at a packed source whose document is cited.
        numbers = {int(n) for n in re.findall(r"\[(\d+)\]", answer.text)}
        assert {answer.context[n - 1].doc_id for n in numbers} == set(cited(answer))
    assert cited(answers[0]) == ["refund"]
    assert [c.doc_id for c in answers[1].context].count("refund") == 2


@pytest.mark.catches("tool_identity", "identity_first_query_only")
def test_the_callers_identity_reaches_the_store_on_every_query_whatever_the_tool_says(
    make_pipeline,
):
    pipeline = make_pipeline()
    pipeline.store.fail_next_query()
    tool_args = {"query": "refund policy", "identity": {"user": "admin", "groups": ["root"]}}

    answer = pipeline.answer(
        "and what about in Hungarian?",
        identity=ALICE,
        where={"lang": "hu"},
        k=3,
        tool_args=tool_args,
    )

    queries = pipeline.store.queries
    assert len(queries) >= 3  # the timed-out query, its retry, and a widened one
    assert [q.context for q in queries] == [ALICE] * len(queries)
    assert {q.text for q in queries} == {"refund policy"}
    assert retrieved(answer)[0] == "hu-refund"


@pytest.mark.catches("cache_ignores_identity")
def test_the_candidate_cache_never_serves_one_identitys_entry_to_another(make_pipeline):
    pipeline = make_pipeline()
    store = pipeline.store

    pipeline.answer("what is your refund policy", identity=ALICE)
    pipeline.answer("what is your refund policy", identity=ALICE)
    assert [q.context for q in store.queries] == [ALICE]  # the repeat was a hit

    pipeline.answer("what is your refund policy", identity=BOB)
    pipeline.answer("what is your refund policy?", identity=BOB)

    assert [(q.text, q.context) for q in store.queries] == [
        ("what is your refund policy", ALICE),
        ("what is your refund policy", BOB),
        ("what is your refund policy?", BOB),
    ]


@pytest.mark.catches("inline_context")
def test_an_instruction_inside_a_retrieved_chunk_is_quoted_as_data_and_never_obeyed(
    make_pipeline,
):
    docs = [POISONED_ACCOUNT if doc is ACCOUNT else doc for doc in CORPUS]
    clean = make_pipeline().answer("how do I reset my password", identity=ALICE)

    answer = make_pipeline(docs=docs).answer("how do I reset my password", identity=ALICE)

    assert any(PLANTED in source.text for source in answer.prompt.sources)
    assert PLANTED not in answer.prompt.instructions
    assert answer.prompt.instructions == clean.prompt.instructions
    assert cited(answer) == cited(clean) == ["account"]
    # The planted sentence may be quoted, but the answer carries nothing else.
    assert NO_ANCHOR.sub("", answer.text).strip() == ""
    assert "Understood" not in answer.text
