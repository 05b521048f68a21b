"""Backends that misbehave: stale reads, retrieval timeouts, and rerankers that fail or lie."""

import pytest
from demo_corpus import ALICE, cited, retrieved
from ragdemo import UNAVAILABLE

from placeborag import ScoringResponse, ScriptedScorer

pytestmark = pytest.mark.integration

DAMAGE = "my parcel arrived with water damage, what now"


def prefers_shipping(text: str) -> float:
    return 0.9 if "Parcels" in text else 0.1


@pytest.mark.p1
@pytest.mark.catches("no_refresh")
@pytest.mark.placeborag(visibility="manual")
def test_documents_are_answerable_as_soon_as_ingest_returns(make_pipeline):
    pipeline = make_pipeline()

    answer = pipeline.answer("what is your refund policy", identity=ALICE)

    assert pipeline.store.pending_writes == 0
    assert cited(answer) == ["refund"]


@pytest.mark.p0
@pytest.mark.catches("timeout_crash", "identity_first_query_only")
def test_a_retrieval_timeout_is_retried_with_the_same_identity(make_pipeline):
    pipeline = make_pipeline()
    pipeline.store.fail_next_query()

    answer = pipeline.answer("what is your refund policy", identity=ALICE)

    assert cited(answer) == ["refund"]
    assert [q.context for q in pipeline.store.queries] == [ALICE, ALICE]


@pytest.mark.p0
@pytest.mark.catches("timeout_crash", "timeout_as_empty")
def test_a_store_that_keeps_timing_out_gives_an_honest_degraded_answer(make_pipeline):
    pipeline = make_pipeline()
    pipeline.store.fail_next_query(times=2)

    answer = pipeline.answer("what is your refund policy", identity=ALICE)

    assert (answer.text, answer.citations, answer.not_found, answer.degraded) == (
        UNAVAILABLE,
        (),
        True,
        True,
    )
    assert "timed out" in answer.notes[0]
    # The store recovers, and the failure was not cached as an empty result.
    assert cited(pipeline.answer("what is your refund policy", identity=ALICE)) == ["refund"]


@pytest.mark.p1
@pytest.mark.catches("rerank_crash")
def test_a_reranker_that_times_out_once_is_retried_and_its_order_is_used(make_pipeline):
    baseline = retrieved(make_pipeline().answer(DAMAGE, identity=ALICE, k=3))
    scorer = ScriptedScorer.failing(TimeoutError("read timed out")).then_scores(prefers_shipping)
    scorer.then_repeats()
    pipeline = make_pipeline(reranker=scorer)

    first = pipeline.answer(DAMAGE, identity=ALICE, k=3)
    second = pipeline.answer(DAMAGE, identity=ALICE, k=3)

    assert baseline[0] != "shipping"
    assert retrieved(first)[0] == retrieved(second)[0] == "shipping"
    assert (first.notes, first.degraded) == ((), False)
    assert len(scorer.requests) == 3
    assert scorer.requests[1].documents == scorer.requests[0].documents


@pytest.mark.p1
@pytest.mark.catches("rerank_crash")
def test_a_reranker_that_stays_down_leaves_the_retrieval_order(make_pipeline):
    baseline = make_pipeline().answer(DAMAGE, identity=ALICE, k=3)
    scorer = ScriptedScorer.failing(TimeoutError("read timed out")).then_repeats()

    answer = make_pipeline(reranker=scorer).answer(DAMAGE, identity=ALICE, k=3)

    assert answer.context == baseline.context
    assert answer.degraded
    assert answer.notes == (
        "reranker failed 2 times (TimeoutError: read timed out); kept retrieval order",
    )


@pytest.mark.p1
@pytest.mark.catches("rerank_zip")
def test_a_reranker_returning_too_few_scores_drops_no_candidate(make_pipeline):
    baseline = make_pipeline().answer(DAMAGE, identity=ALICE, k=3)
    scorer = ScriptedScorer.responding(ScoringResponse(scores=(0.9,))).then_repeats()

    answer = make_pipeline(reranker=scorer).answer(DAMAGE, identity=ALICE, k=3)

    sent = len(scorer.request.documents)
    assert sent > 1
    assert answer.context == baseline.context
    assert answer.notes == (
        f"reranker returned 1 scores for {sent} candidates; kept retrieval order",
    )
