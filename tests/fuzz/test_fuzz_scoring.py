"""Fuzzing the scoring doubles: scripts, responses and geometry over hostile embedders."""

from __future__ import annotations

import math

from _fuzz import FUZZ, anything, huge_ints, numbers, result_or_error, texts
from hypothesis import given
from hypothesis import strategies as st

from placeborag import (
    GeometryScorer,
    PlaceboragError,
    ScoringResponse,
    ScriptedScorer,
    ScriptExhausted,
)

score_values = st.one_of(numbers, huge_ints, anything)


@FUZZ
@given(score=score_values, documents=st.one_of(st.lists(texts, max_size=4), anything))
def test_a_scripted_score_is_answered_or_refused(score, documents):
    scorer = result_or_error(lambda: ScriptedScorer.scoring(score).then_repeats())
    if isinstance(scorer, PlaceboragError):
        return
    response = result_or_error(lambda: scorer.score("q", documents))
    if not isinstance(response, PlaceboragError):
        assert len(response.scores) == len(documents)
        assert all(math.isfinite(s) for s in response.scores)


@FUZZ
@given(returned=score_values, documents=st.lists(texts, min_size=1, max_size=4))
def test_a_scoring_function_returning_anything_is_answered_or_refused(returned, documents):
    scorer = ScriptedScorer.scoring(lambda text: returned)
    response = result_or_error(lambda: scorer.score("q", documents))
    if not isinstance(response, PlaceboragError):
        assert all(math.isfinite(s) for s in response.scores)


@FUZZ
@given(
    scores=st.one_of(st.lists(score_values, max_size=4), anything),
    token_usage=st.one_of(st.none(), st.integers(-3, 10), anything),
    model_name=st.one_of(st.none(), texts, anything),
    metadata=st.one_of(st.dictionaries(texts, anything, max_size=2), anything),
)
def test_a_scripted_response_is_kept_or_refused(scores, token_usage, model_name, metadata):
    response = result_or_error(
        lambda: ScoringResponse(
            scores=scores, token_usage=token_usage, model_name=model_name, metadata=metadata
        )
    )
    if not isinstance(response, PlaceboragError):
        scorer = ScriptedScorer.responding(response)
        assert scorer.score("q", ["a"]) is response


@FUZZ
@given(steps=st.integers(1, 4), calls=st.integers(0, 6))
def test_a_script_answers_its_steps_then_runs_out(steps, calls):
    scorer = ScriptedScorer.scoring(0.0)
    for i in range(1, steps):
        scorer.then_scores(float(i))
    for call in range(calls):
        outcome = result_or_error(lambda: scorer.score_all("q", ["a"]))
        if call < steps:
            assert outcome == [float(call)]
        else:
            assert isinstance(outcome, ScriptExhausted)


class Rows:
    """An embedder returning whatever the test drew, one row per text when it can."""

    def __init__(self, rows):
        self.rows = rows

    def embed_batch(self, texts_):
        return self.rows


vector_values = st.one_of(
    st.floats(), st.sampled_from([1e200, -1e200, 1e-200, 0.0, 10**400]), anything
)


@FUZZ
@given(
    rows=st.one_of(
        st.lists(st.lists(vector_values, min_size=1, max_size=3), min_size=2, max_size=2),
        st.lists(st.lists(st.floats(), min_size=2, max_size=2), min_size=2, max_size=2),
        anything,
    )
)
def test_geometry_over_any_embedder_output_scores_in_range_or_refuses(rows):
    scorer = GeometryScorer(Rows(rows))
    scores = result_or_error(lambda: scorer.score_all("q", ["d"]))
    if not isinstance(scores, PlaceboragError):
        assert len(scores) == 1 and -1.0 <= scores[0] <= 1.0
