"""Tests for the scripted scoring model and the geometry scorer, sync and async."""

from __future__ import annotations

import asyncio
import copy
import logging
import math
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from placeborag import (
    FakeEmbedder,
    GeometryScorer,
    PlaceboragError,
    PlaceboragTypeError,
    PlaceboragValueError,
    ScoringListener,
    ScoringRequest,
    ScoringResponse,
    ScriptedScorer,
    ScriptError,
    ScriptExhausted,
    _scoring,
)

finite_scores = st.floats(allow_nan=False, allow_infinity=False)
texts = st.lists(st.text(max_size=20), max_size=5)


class Recorder(ScoringListener):
    """A listener that writes down every notification it receives."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def on_request(self, request: ScoringRequest) -> None:
        self.events.append(("request", request.index))

    def on_response(self, request: ScoringRequest, response: ScoringResponse) -> None:
        self.events.append(("response", request.index, response.scores))

    def on_error(self, request: ScoringRequest, error: BaseException) -> None:
        self.events.append(("error", request.index, error))


class GridEmbedder:
    """An embedder with hand-picked vectors, so cosines can be written down exactly."""

    vectors: ClassVar[dict[str, list[float]]] = {
        "x": [1.0, 0.0],
        "y": [0.0, 1.0],
        "diagonal": [1.0, 1.0],
        "minus x": [-2.0, 0.0],
        "zero": [0.0, 0.0],
    }

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors[text] for text in texts]


# -- the public surface ------------------------------------------------------------------


def test_module_all_lists_every_public_name_the_module_defines_and_nothing_else() -> None:
    defined = {
        name
        for name, value in vars(_scoring).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == _scoring.__name__
    }

    assert sorted(_scoring.__all__) == sorted(defined)


def test_the_package_exports_the_scoring_doubles_under_the_same_names() -> None:
    import placeborag

    assert {name: getattr(placeborag, name) for name in _scoring.__all__} == {
        name: getattr(_scoring, name) for name in _scoring.__all__
    }


@pytest.mark.parametrize("error", [ScriptError, ScriptExhausted])
def test_script_errors_are_placeborag_errors_a_caller_can_catch_as_runtime_errors(
    error: type[Exception],
) -> None:
    assert issubclass(error, PlaceboragError)
    assert issubclass(error, RuntimeError)


def test_the_plain_constructor_refuses_a_script_without_steps() -> None:
    with pytest.raises(ScriptError) as excinfo:
        ScriptedScorer()
    assert excinfo.value.args == (
        "ScriptedScorer() cannot start without a step; start the script with"
        " ScriptedScorer.scoring(...), ScriptedScorer.responding(...) or"
        " ScriptedScorer.failing(...)",
    )


# -- the steps ---------------------------------------------------------------------------


def test_scoring_a_number_gives_every_document_that_score() -> None:
    scorer = ScriptedScorer.scoring(0.8)

    response = scorer.score("refund policy", ["a", "b", "c"])

    assert response == ScoringResponse(scores=(0.8, 0.8, 0.8), model_name="scripted-scorer")


def test_scoring_a_function_computes_each_score_from_the_document_text() -> None:
    scorer = ScriptedScorer.scoring(lambda text: 0.9 if "refund" in text else 0.1)

    scores = scorer.score_all("money back?", ["refund within 30 days", "shipping times"])

    assert scores == [0.9, 0.1]


def test_responding_returns_exactly_the_given_response_even_with_too_few_scores() -> None:
    response = ScoringResponse(
        scores=[0.9], token_usage=30, model_name="provider-rerank-2", metadata={"id": "r-1"}
    )
    scorer = ScriptedScorer.responding(response)

    answer = scorer.score("q", ["first", "second", "third"])

    assert answer is response
    assert answer.token_usage == 30
    assert answer.model_name == "provider-rerank-2"
    assert answer.metadata == {"id": "r-1"}


@pytest.mark.parametrize("documents", [["a", "b"], []])
def test_failing_raises_exactly_the_given_exception_even_without_documents(
    documents: list[str],
) -> None:
    timeout = TimeoutError("read timed out")
    scorer = ScriptedScorer.failing(timeout)

    with pytest.raises(TimeoutError) as excinfo:
        scorer.score("q", documents)

    assert excinfo.value is timeout


def test_a_function_step_that_raises_fails_the_request_with_that_exception_unchanged() -> None:
    broken = KeyError("no score for this text")

    def scores(text: str) -> float:
        raise broken

    scorer = ScriptedScorer.scoring(scores)

    with pytest.raises(KeyError) as excinfo:
        scorer.score("q", ["a"])
    assert excinfo.value is broken


@pytest.mark.parametrize(
    ("returned", "error", "shown"),
    [
        ("high", PlaceboragTypeError, "'high'"),
        (None, PlaceboragTypeError, "None"),
        (True, PlaceboragTypeError, "True"),
        (math.nan, PlaceboragValueError, "nan"),
    ],
)
def test_a_function_step_that_returns_no_finite_number_fails_the_request(
    returned: object, error: type[Exception], shown: str
) -> None:
    scorer = ScriptedScorer.scoring(lambda text: returned)

    with pytest.raises(error) as excinfo:
        scorer.score("q", ["refund"])
    assert excinfo.value.args == (f"scores('refund')={shown} must be a finite real number",)


def test_a_scoring_step_given_a_numpy_number_scores_with_its_float_value() -> None:
    numpy = pytest.importorskip("numpy")

    assert ScriptedScorer.scoring(numpy.float32(0.5)).score_all("q", ["a"]) == [0.5]


# -- the script --------------------------------------------------------------------------


def test_every_then_method_returns_the_scorer_itself_for_chaining() -> None:
    scorer = ScriptedScorer.scoring(0.1)

    assert scorer.then_scores(0.2) is scorer
    assert scorer.then_responds(ScoringResponse(scores=[0.3])) is scorer
    assert scorer.then_fails(TimeoutError()) is scorer
    assert scorer.then_repeats() is scorer
    assert scorer.with_listeners(Recorder()) is scorer


@given(scores=st.lists(finite_scores, min_size=1, max_size=20), documents=texts)
def test_step_n_answers_request_n(scores: list[float], documents: list[str]) -> None:
    scorer = ScriptedScorer.scoring(scores[0])
    for score in scores[1:]:
        scorer.then_scores(score)

    answers = [scorer.score(f"q{n}", documents).scores for n in range(len(scores))]

    assert answers == [(score,) * len(documents) for score in scores]
    assert [request.index for request in scorer.requests] == list(range(len(scores)))


def test_a_script_can_fail_once_and_then_recover() -> None:
    scorer = (
        ScriptedScorer.failing(TimeoutError("read timed out"))
        .then_scores(lambda text: 0.9 if "refund" in text else 0.1)
        .then_repeats()
    )

    with pytest.raises(TimeoutError):
        scorer.score("q", ["refund"])
    assert scorer.score_all("q", ["refund", "other"]) == [0.9, 0.1]
    assert scorer.score_all("q", ["other"]) == [0.1]


@given(
    first=finite_scores,
    last=finite_scores,
    extra=st.integers(min_value=1, max_value=30),
)
def test_then_repeats_answers_every_further_request_with_the_last_step_only(
    first: float, last: float, extra: int
) -> None:
    scorer = ScriptedScorer.scoring(first).then_scores(last).then_repeats()

    answers = [scorer.score_all("q", ["d"]) for _ in range(2 + extra)]

    assert answers == [[first]] + [[last]] * (1 + extra)


def test_a_repeated_computing_step_computes_again_for_each_request() -> None:
    calls: list[str] = []

    def scores(text: str) -> float:
        calls.append(text)
        return float(len(calls))

    scorer = ScriptedScorer.scoring(scores).then_repeats()

    assert [scorer.score_all("q", ["a"]) for _ in range(3)] == [[1.0], [2.0], [3.0]]
    assert calls == ["a", "a", "a"]


def test_a_repeated_failing_step_raises_the_same_exception_for_every_request() -> None:
    refused = ConnectionError("refused")
    scorer = ScriptedScorer.failing(refused).then_repeats()

    for _ in range(3):
        with pytest.raises(ConnectionError) as excinfo:
            scorer.score("q", [])
        assert excinfo.value is refused


@pytest.mark.parametrize(
    ("method", "argument"),
    [
        ("then_scores", 0.5),
        ("then_responds", ScoringResponse(scores=[])),
        ("then_fails", TimeoutError()),
    ],
)
def test_a_step_added_after_then_repeats_is_refused_at_once(method: str, argument: object) -> None:
    scorer = ScriptedScorer.scoring(0.1).then_repeats()

    with pytest.raises(ScriptError) as excinfo:
        getattr(scorer, method)(argument)

    assert excinfo.value.args == (
        f"{method}() cannot add a step after then_repeats(); then_repeats() must be the last"
        " call of the script",
    )
    assert [scorer.score_all("q", ["d"]) for _ in range(2)] == [[0.1], [0.1]]


def test_calling_then_repeats_twice_is_refused() -> None:
    scorer = ScriptedScorer.scoring(0.1).then_repeats()

    with pytest.raises(ScriptError) as excinfo:
        scorer.then_repeats()

    assert excinfo.value.args == (
        "then_repeats() was already called; it ends the script and may be called once",
    )


def test_a_request_after_the_last_step_raises_script_exhausted_showing_the_query() -> None:
    scorer = ScriptedScorer.scoring(0.1).then_scores(0.2)
    scorer.score("first", ["d"])
    scorer.score("second", ["d"])

    with pytest.raises(ScriptExhausted) as excinfo:
        scorer.score("refund policy", ["d"])

    assert excinfo.value.args == (
        "no step left for the request with query='refund policy': the script has 2 steps and"
        " answered 2 requests; end it with then_repeats() to answer every further request with"
        " its last step",
    )
    assert scorer.last_request.query == "refund policy"


def test_the_exhaustion_message_counts_one_step_in_the_singular() -> None:
    scorer = ScriptedScorer.failing(TimeoutError())
    with pytest.raises(TimeoutError):
        scorer.score("first", [])

    with pytest.raises(ScriptExhausted, match=r"the script has 1 step and answered 1 request;"):
        scorer.score("second", [])


def test_a_step_added_after_exhaustion_answers_the_next_request() -> None:
    scorer = ScriptedScorer.scoring(0.1)
    scorer.score("q", ["d"])
    with pytest.raises(ScriptExhausted):
        scorer.score("q", ["d"])

    scorer.then_scores(0.7)

    assert scorer.score_all("q", ["d"]) == [0.7]


# -- argument checks ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "error", "shown"),
    [
        (True, PlaceboragTypeError, "True"),
        ("high", PlaceboragTypeError, "'high'"),
        (None, PlaceboragTypeError, "None"),
        (math.nan, PlaceboragValueError, "nan"),
        (math.inf, PlaceboragValueError, "inf"),
    ],
)
@pytest.mark.parametrize(
    "add_step",
    [ScriptedScorer.scoring, lambda score: ScriptedScorer.scoring(0.1).then_scores(score)],
)
def test_a_score_that_is_no_finite_number_or_function_is_refused_naming_it(
    add_step: Any, score: object, error: type[Exception], shown: str
) -> None:
    with pytest.raises(error) as excinfo:
        add_step(score)

    assert excinfo.value.args == (
        f"score={shown} must be a finite real number or a function of the document text",
    )


@pytest.mark.parametrize(
    "add_step", [ScriptedScorer.failing, ScriptedScorer.scoring(0.1).then_fails]
)
@pytest.mark.parametrize("exception", [TimeoutError, "boom"])
def test_a_failure_that_is_not_an_exception_instance_is_refused(
    add_step: Any, exception: object
) -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        add_step(exception)

    assert excinfo.value.args == (
        f"exception={exception!r} must be an exception instance,"
        " such as TimeoutError('read timed out')",
    )


def test_a_response_step_that_is_not_a_scoring_response_is_refused() -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        ScriptedScorer.responding([0.9])  # type: ignore[arg-type]

    assert excinfo.value.args == ("response=[0.9] must be a ScoringResponse",)


@pytest.mark.parametrize(("model_name", "shown"), [("", "''"), (None, "None"), (3, "3")])
def test_a_model_name_that_is_no_text_is_refused(model_name: object, shown: str) -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        ScriptedScorer.scoring(0.5, model_name=model_name)  # type: ignore[arg-type]

    assert excinfo.value.args == (f"model_name={shown} must be a non-empty str",)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scores": 0.9}, "scores=0.9 must be a sequence of real numbers"),
        ({"scores": "0.9"}, "scores='0.9' must be a sequence of real numbers"),
        ({"scores": [0.1, True]}, "scores[1]=True must be a real number"),
        ({"scores": [0.1, "x"]}, "scores[1]='x' must be a real number"),
        ({"scores": [], "token_usage": -1}, "token_usage=-1 must be None or an int >= 0"),
        ({"scores": [], "token_usage": 1.5}, "token_usage=1.5 must be None or an int >= 0"),
        ({"scores": [], "model_name": 7}, "model_name=7 must be None or a str"),
        ({"scores": [], "metadata": [1]}, "metadata=[1] must be a mapping"),
    ],
)
def test_a_malformed_scoring_response_is_refused_naming_the_value(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        ScoringResponse(**kwargs)

    assert excinfo.value.args == (message,)


def test_a_scoring_response_may_carry_the_odd_scores_of_a_misbehaving_provider() -> None:
    response = ScoringResponse(scores=[math.inf, -1e300, 2])

    assert response.scores[:2] == (math.inf, -1e300)
    assert response.scores[2] == 2.0
    assert math.isnan(ScoringResponse(scores=[math.nan]).scores[0])


def test_a_scoring_response_keeps_its_own_copy_of_scores_and_metadata() -> None:
    scores = [0.1, 0.2]
    metadata = {"id": "r-1"}
    response = ScoringResponse(scores=scores, metadata=metadata)

    scores.append(0.3)
    metadata["id"] = "changed"

    assert response.scores == (0.1, 0.2)
    assert response.metadata == {"id": "r-1"}


# -- the calls ---------------------------------------------------------------------------


def test_one_call_is_one_request_however_many_documents_it_scores() -> None:
    scorer = ScriptedScorer.scoring(0.5).then_repeats()

    scorer.score("q", ["a", "b", "c", "d"])

    assert scorer.requests == (
        ScoringRequest(
            query="q", documents=("a", "b", "c", "d"), model_name="scripted-scorer", index=0
        ),
    )


def test_a_response_reports_the_scorer_model_name_unless_the_step_gives_the_whole_response() -> (
    None
):
    scorer = (
        ScriptedScorer.scoring(0.5, model_name="rerank-lite")
        .then_scores(len)
        .then_responds(ScoringResponse(scores=[1.0], model_name="provider-model"))
        .then_responds(ScoringResponse(scores=[1.0]))
    )

    names = [scorer.score("q", ["d"]).model_name for _ in range(4)]

    assert names == ["rerank-lite", "rerank-lite", "provider-model", None]
    assert scorer.model_name == "rerank-lite"
    assert scorer.last_request.model_name == "rerank-lite"


def test_score_all_returns_the_scores_as_a_list_of_floats() -> None:
    scorer = ScriptedScorer.responding(ScoringResponse(scores=(1, 0.5)))

    scores = scorer.score_all("q", ["a", "b"])

    assert scores == [1.0, 0.5]
    assert all(type(score) is float for score in scores)


@pytest.mark.parametrize(
    ("query", "documents", "message"),
    [
        (None, ["a"], "query=None must be a str"),
        ("q", "abc", "documents='abc' must be a sequence of str, such as a list of texts"),
        ("q", None, "documents=None must be a sequence of str, such as a list of texts"),
        ("q", ["a", 3], "documents[1]=3 must be a str"),
    ],
)
def test_a_malformed_call_is_refused_before_anything_is_recorded_or_notified(
    query: Any, documents: Any, message: str
) -> None:
    recorder = Recorder()
    scorer = ScriptedScorer.scoring(0.5).with_listeners(recorder)

    with pytest.raises(PlaceboragTypeError) as excinfo:
        scorer.score(query, documents)

    assert excinfo.value.args == (message,)
    assert scorer.requests == ()
    assert recorder.events == []
    assert scorer.score_all("q", ["a"]) == [0.5]


# -- the record --------------------------------------------------------------------------


def test_requests_is_a_copy_of_every_request_in_arrival_order() -> None:
    scorer = ScriptedScorer.scoring(0.5).then_repeats()
    scorer.score("first", ("a",))
    scorer.score("second", [])

    requests = scorer.requests
    scorer.score("third", ["b"])

    assert [(request.query, request.documents) for request in requests] == [
        ("first", ("a",)),
        ("second", ()),
    ]
    assert [request.query for request in scorer.requests] == ["first", "second", "third"]


def test_request_is_the_only_request_received() -> None:
    scorer = ScriptedScorer.scoring(0.5)
    scorer.score("refund policy", ["a"])

    assert scorer.request == ScoringRequest(
        query="refund policy", documents=("a",), model_name="scripted-scorer", index=0
    )


def test_request_before_any_request_arrived_says_so() -> None:
    with pytest.raises(ScriptError) as excinfo:
        _ = ScriptedScorer.scoring(0.5).request

    assert excinfo.value.args == (
        "expected exactly one request, but the scorer received 0 requests;"
        " read .requests for all of them",
    )


def test_request_after_several_requests_lists_their_queries() -> None:
    scorer = ScriptedScorer.scoring(0.5).then_repeats()
    for n in range(7):
        scorer.score(f"q{n}", [])

    with pytest.raises(ScriptError) as excinfo:
        _ = scorer.request

    assert excinfo.value.args == (
        "expected exactly one request, but the scorer received 7 requests:"
        " 'q0', 'q1', 'q2', 'q3', 'q4', ...; read .requests for all of them",
    )


def test_last_request_is_the_most_recent_request() -> None:
    scorer = ScriptedScorer.scoring(0.5).then_repeats()
    scorer.score("first", [])
    scorer.score("second", [])

    assert scorer.last_request.query == "second"
    assert scorer.last_request.index == 1


def test_last_request_before_any_request_arrived_says_so() -> None:
    with pytest.raises(ScriptError) as excinfo:
        _ = ScriptedScorer.scoring(0.5).last_request

    assert excinfo.value.args == ("the scorer received no request yet, so it has no last_request",)


def test_the_repr_shows_the_state_of_the_script() -> None:
    scorer = ScriptedScorer.scoring(0.5).then_scores(0.6).then_repeats()
    scorer.score("q", [])

    assert repr(scorer) == (
        "<ScriptedScorer model_name='scripted-scorer' steps=2 taken=1 repeats=True requests=1>"
    )


def test_concurrent_calls_from_threads_each_take_exactly_one_step() -> None:
    count = 2000
    scorer = ScriptedScorer.scoring(0.0)
    for n in range(1, count):
        scorer.then_scores(float(n))

    with ThreadPoolExecutor(max_workers=16) as pool:
        responses = list(pool.map(lambda n: scorer.score(f"q{n}", ["d"]), range(count)))

    assert sorted(response.scores[0] for response in responses) == [float(n) for n in range(count)]
    assert [request.index for request in scorer.requests] == list(range(count))
    with pytest.raises(ScriptExhausted):
        scorer.score("one too many", [])


# -- listeners ---------------------------------------------------------------------------


def test_listeners_hear_of_each_request_and_its_response_in_order() -> None:
    first, second = Recorder(), Recorder()
    scorer = ScriptedScorer.scoring(0.5).then_scores(0.6).with_listeners(first, second)

    scorer.score("q", ["a"])
    scorer.score_all("q", ["a", "b"])

    expected = [
        ("request", 0),
        ("response", 0, (0.5,)),
        ("request", 1),
        ("response", 1, (0.6, 0.6)),
    ]
    assert first.events == expected
    assert second.events == expected


def test_listeners_hear_of_a_failure_with_the_exception_raised() -> None:
    refused = ConnectionError("refused")
    recorder = Recorder()
    scorer = ScriptedScorer.failing(refused).with_listeners(recorder)

    with pytest.raises(ConnectionError):
        scorer.score("q", [])
    with pytest.raises(ScriptExhausted) as excinfo:
        scorer.score("q", [])

    assert recorder.events == [
        ("request", 0),
        ("error", 0, refused),
        ("request", 1),
        ("error", 1, excinfo.value),
    ]


def test_with_listeners_accepts_one_list_and_adds_to_the_listeners_given_before() -> None:
    first, second, third = Recorder(), Recorder(), Recorder()
    scorer = ScriptedScorer.scoring(0.5).with_listeners([first, second]).with_listeners(third)

    scorer.score("q", [])

    assert scorer.listeners == (first, second, third)
    assert first.events == second.events == third.events == [("request", 0), ("response", 0, ())]


def test_a_listener_may_implement_only_the_hooks_it_needs() -> None:
    class OnlyErrors:
        def __init__(self) -> None:
            self.errors: list[BaseException] = []

        def on_error(self, request: ScoringRequest, error: BaseException) -> None:
            self.errors.append(error)

    listener = OnlyErrors()
    scorer = ScriptedScorer.scoring(0.5).with_listeners(listener)

    scorer.score("q", ["a"])
    with pytest.raises(ScriptExhausted) as excinfo:
        scorer.score("q", ["a"])

    assert listener.errors == [excinfo.value]


def test_the_base_listener_does_nothing() -> None:
    scorer = ScriptedScorer.scoring(0.5).with_listeners(ScoringListener())

    assert scorer.score_all("q", ["a"]) == [0.5]


@pytest.mark.parametrize("listener", [42, object()])
def test_a_listener_without_any_hook_is_refused(listener: object) -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        ScriptedScorer.scoring(0.5).with_listeners(Recorder(), listener)

    assert excinfo.value.args == (
        f"listeners[1]={listener!r} must have an on_request, on_response or on_error method,"
        " like ScoringListener",
    )


def test_a_listener_that_raises_is_logged_and_cannot_change_the_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken(ScoringListener):
        def on_request(self, request: ScoringRequest) -> None:
            raise RuntimeError("listener bug")

        def on_response(self, request: ScoringRequest, response: ScoringResponse) -> None:
            raise RuntimeError("listener bug")

    broken, recorder = Broken(), Recorder()
    scorer = ScriptedScorer.scoring(0.5).with_listeners(broken, recorder)

    with caplog.at_level(logging.ERROR, logger="placeborag.scoring"):
        scores = scorer.score_all("q", ["a"])

    assert scores == [0.5]
    assert recorder.events == [("request", 0), ("response", 0, (0.5,))]
    assert [record.getMessage() for record in caplog.records] == [
        f"scoring listener {broken!r} raised in on_request for request 0; ignored",
        f"scoring listener {broken!r} raised in on_response for request 0; ignored",
    ]
    assert all(record.exc_info is not None for record in caplog.records)


def test_a_listener_that_raises_on_error_leaves_the_original_failure_in_place() -> None:
    class Broken(ScoringListener):
        def on_error(self, request: ScoringRequest, error: BaseException) -> None:
            raise ValueError("listener bug")

    refused = ConnectionError("refused")
    scorer = ScriptedScorer.failing(refused).with_listeners(Broken())

    with pytest.raises(ConnectionError) as excinfo:
        scorer.score("q", [])
    assert excinfo.value is refused


# -- the geometry scorer -----------------------------------------------------------------


def test_geometry_scores_are_exact_cosines_in_the_embedder_space() -> None:
    scorer = GeometryScorer(GridEmbedder())

    scores = scorer.score_all("x", ["x", "y", "diagonal", "minus x", "zero"])

    assert scores == [1.0, 0.0, 1 / math.sqrt(2), -1.0, 0.0]


def test_geometry_scorer_defaults_to_a_fake_embedder_space() -> None:
    scorer = GeometryScorer()
    documents = ["shipping takes five days", "refunds within 30 days", "refund policy"]

    response = scorer.score("refund policy", documents)

    embedder = FakeEmbedder()
    vectors = embedder.embed_batch(["refund policy", *documents])
    expected = [
        math.fsum(q * d for q, d in zip(vectors[0], row, strict=True)) for row in vectors[1:]
    ]
    assert isinstance(scorer.embedder, FakeEmbedder)
    assert response.model_name == "geometry-scorer"
    assert response.scores[2] == 1.0
    assert response.scores == pytest.approx(expected, abs=1e-15)


def test_geometry_scorer_ranks_a_cluster_mate_above_a_stranger() -> None:
    embedder = FakeEmbedder(
        clusters={
            "refunds": ["refund policy", "money back guarantee"],
            "shipping": ["delivery times", "tracking a parcel"],
        }
    )
    scorer = GeometryScorer(embedder, model_name="rerank-geo")

    scores = scorer.score_all("refund policy", ["delivery times", "money back guarantee"])

    assert scores[1] > scores[0]
    assert scorer.model_name == "rerank-geo"


@given(documents=st.lists(st.text(max_size=30), max_size=6), data=st.data())
def test_geometry_scores_follow_their_documents_when_the_documents_are_reordered(
    documents: list[str], data: st.DataObject
) -> None:
    scorer = GeometryScorer(FakeEmbedder(dimensions=32))
    order = data.draw(st.permutations(range(len(documents))))

    scores = scorer.score_all("refund policy", documents)
    reordered = scorer.score_all("refund policy", [documents[i] for i in order])

    assert reordered == [scores[i] for i in order]
    assert all(-1.0 <= score <= 1.0 for score in scores)


def test_two_geometry_scorers_over_equal_embedders_agree_exactly() -> None:
    documents = ["alpha", "beta gamma", "refund policy for damaged goods"]

    first = GeometryScorer(FakeEmbedder()).score_all("refund", documents)
    second = GeometryScorer(FakeEmbedder()).score_all("refund", documents)

    assert first == second


def test_geometry_scorer_records_requests_and_notifies_listeners_like_a_script() -> None:
    recorder = Recorder()
    scorer = GeometryScorer(GridEmbedder()).with_listeners(recorder)

    scorer.score("x", ["y"])
    scorer.score("y", [])

    assert [(request.query, request.documents) for request in scorer.requests] == [
        ("x", ("y",)),
        ("y", ()),
    ]
    assert scorer.last_request.model_name == "geometry-scorer"
    assert recorder.events == [
        ("request", 0),
        ("response", 0, (0.0,)),
        ("request", 1),
        ("response", 1, ()),
    ]


def test_geometry_scorer_fails_the_request_when_the_embedder_miscounts() -> None:
    class Short:
        def embed_batch(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0]]

    recorder = Recorder()
    scorer = GeometryScorer(Short()).with_listeners(recorder)

    with pytest.raises(PlaceboragValueError) as excinfo:
        scorer.score("x", ["y", "z"])

    assert excinfo.value.args == (
        "embedder.embed_batch returned 1 vectors for 3 texts; it must return one vector per text",
    )
    assert recorder.events == [("request", 0), ("error", 0, excinfo.value)]


def test_geometry_scorer_refuses_an_embedder_without_embed_batch() -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        GeometryScorer("not an embedder")  # type: ignore[arg-type]

    assert excinfo.value.args == (
        "embedder='not an embedder' must have an embed_batch(texts) method, like FakeEmbedder",
    )


def test_geometry_scorer_repr_names_its_space() -> None:
    scorer = GeometryScorer(FakeEmbedder(dimensions=8))

    assert repr(scorer) == (
        "<GeometryScorer model_name='geometry-scorer'"
        " embedder=FakeEmbedder(model_name='placebo-embed-v1', dimensions=8) requests=0>"
    )


# -- the async path: steps taken at arrival, computed on a worker thread, errors awaited --


@pytest.mark.asyncio
async def test_ascore_answers_with_the_next_step_like_score() -> None:
    scorer = ScriptedScorer.scoring(0.8).then_responds(ScoringResponse(scores=[0.1], token_usage=3))

    first = await scorer.ascore("q", ["a", "b"])
    second = await scorer.ascore("q", ["a", "b"])

    assert first == ScoringResponse(scores=(0.8, 0.8), model_name="scripted-scorer")
    assert second.token_usage == 3
    assert [request.index for request in scorer.requests] == [0, 1]


@pytest.mark.asyncio
async def test_ascore_computes_a_step_on_another_thread() -> None:
    threads: list[threading.Thread] = []

    def scores(text: str) -> float:
        threads.append(threading.current_thread())
        return 0.5

    scorer = ScriptedScorer.scoring(scores)

    assert await scorer.ascore("q", ["a"]) == ScoringResponse(
        scores=(0.5,), model_name="scripted-scorer"
    )
    assert threads and threads[0] is not threading.current_thread()


@pytest.mark.asyncio
async def test_ascore_raises_exactly_the_scripted_exception_when_awaited() -> None:
    timeout = TimeoutError("read timed out")
    scorer = ScriptedScorer.failing(timeout).then_scores(0.9)

    with pytest.raises(TimeoutError) as excinfo:
        await scorer.ascore("q", [])

    assert excinfo.value is timeout
    assert (await scorer.ascore("q", ["a"])).scores == (0.9,)


@pytest.mark.asyncio
async def test_ascore_raises_nothing_until_awaited_even_for_a_malformed_call() -> None:
    scorer = ScriptedScorer.scoring(0.5)

    pending = scorer.ascore(None, ["a"])  # type: ignore[arg-type]

    with pytest.raises(PlaceboragTypeError) as excinfo:
        await pending
    assert excinfo.value.args == ("query=None must be a str",)
    assert scorer.requests == ()


@pytest.mark.asyncio
async def test_ascore_after_the_last_step_raises_script_exhausted_when_awaited() -> None:
    scorer = ScriptedScorer.scoring(0.5)
    await scorer.ascore("first", [])

    pending = scorer.ascore("refund policy", [])

    with pytest.raises(ScriptExhausted, match=r"query='refund policy'"):
        await pending


@pytest.mark.asyncio
async def test_listeners_hear_of_async_calls_and_their_failures() -> None:
    refused = ConnectionError("refused")
    recorder = Recorder()
    scorer = ScriptedScorer.scoring(0.5).then_fails(refused).with_listeners(recorder)

    await scorer.ascore("q", ["a"])
    with pytest.raises(ConnectionError):
        await scorer.ascore("q", ["a"])

    assert recorder.events == [
        ("request", 0),
        ("response", 0, (0.5,)),
        ("request", 1),
        ("error", 1, refused),
    ]


@pytest.mark.asyncio
async def test_ten_thousand_concurrent_requests_each_take_the_step_of_their_arrival() -> None:
    count = 10_000
    recorder = Recorder()
    scorer = ScriptedScorer.scoring(0.0).with_listeners(recorder)
    for n in range(1, count):
        scorer.then_scores(float(n))

    responses = await asyncio.gather(*(scorer.ascore(f"q{n}", ["d"]) for n in range(count)))

    assert [response.scores for response in responses] == [(float(n),) for n in range(count)]
    requests = scorer.requests
    assert [request.index for request in requests] == list(range(count))
    assert [request.query for request in requests] == [f"q{n}" for n in range(count)]
    assert sorted(event[1] for event in recorder.events if event[0] == "response") == list(
        range(count)
    )
    assert len(recorder.events) == 2 * count
    with pytest.raises(ScriptExhausted, match=r"the script has 10000 steps and answered 10000"):
        await scorer.ascore("one too many", [])


@pytest.mark.asyncio
async def test_geometry_ascore_agrees_with_score() -> None:
    scorer = GeometryScorer(FakeEmbedder())
    documents = ["refund policy", "delivery times", "money back"]

    awaited = await scorer.ascore("refund policy", documents)

    assert awaited == scorer.score("refund policy", documents)
    assert [request.index for request in scorer.requests] == [0, 1]


# -- issue 13: hostile numbers and vectors ---------------------------------------------------


def test_an_int_beyond_float_range_is_refused_as_a_score_not_an_overflow():
    # issue 13 item 2: float(10**400) raised OverflowError.
    with pytest.raises(PlaceboragValueError) as excinfo:
        ScriptedScorer.scoring(10**400)
    assert excinfo.value.args == (
        "score=<an int of about 401 digits> must be a finite real number or a function of the"
        " document text; it is beyond the range of a float",
    )
    with pytest.raises(PlaceboragValueError, match=r"^scores\[1\]=<an int of about 401 digits>"):
        ScoringResponse(scores=[0.5, 10**400])
    scorer = ScriptedScorer.scoring(lambda text: -(10**400))
    with pytest.raises(PlaceboragValueError, match="beyond the range of a float"):
        scorer.score("q", ["a"])


class _Rows:
    def __init__(self, *rows):
        self.rows = rows

    def embed_batch(self, texts):
        return [list(row) for row in self.rows[: len(texts)]]


def test_a_nan_vector_is_an_error_naming_the_document_not_a_perfect_score():
    # issue 13 item 4: a NaN row scored 1.0, the best score there is.
    scorer = GeometryScorer(_Rows([1.0, 0.0], [0.0, 1.0], [math.nan, 1.0]))
    with pytest.raises(PlaceboragValueError) as excinfo:
        scorer.score("q", ["fine", "broken"])
    assert excinfo.value.args == (
        "embedder.embed_batch returned nan at index 0 for documents[1] 'broken'; every value"
        " of a vector must be finite",
    )


def test_ragged_vectors_are_an_error_naming_the_document():
    # issue 13 item 4: zip(strict=True) raised a bare ValueError.
    scorer = GeometryScorer(_Rows([1.0, 0.0], [1.0]))
    with pytest.raises(PlaceboragValueError) as excinfo:
        scorer.score("q", ["short"])
    assert excinfo.value.args == (
        "embedder.embed_batch returned 1 values for documents[0] 'short' and 2 for the query;"
        " every vector must have the same length",
    )


@pytest.mark.parametrize(
    ("query", "document", "expected"),
    [([1e200], [-1e200], -1.0), ([1e-200], [1e-200], 1.0), ([1e200, 0.0], [0.0, 1e-200], 0.0)],
)
def test_geometry_scores_survive_overflow_and_underflow(query, document, expected):
    assert GeometryScorer(_Rows(query, document)).score_all("q", ["d"]) == [expected]


def test_the_script_errors_live_in_the_errors_module_and_are_still_importable_from_here():
    # issue 13 item 12: exceptions were defined in three modules.
    from placeborag import _errors, _scoring

    assert ScriptError is _errors.ScriptError is _scoring.ScriptError
    assert ScriptExhausted is _errors.ScriptExhausted is _scoring.ScriptExhausted
    assert ScriptError.__module__ == "placeborag._errors"


def test_a_repeated_response_keeps_its_metadata_whatever_a_reader_tries():
    scorer = ScriptedScorer.responding(
        ScoringResponse(scores=[0.5], metadata={"a": 1})
    ).then_repeats()

    first = scorer.score("q", ["d"])
    with pytest.raises(TypeError):
        first.metadata["a"] = 2  # type: ignore[index]
    second = scorer.score("q", ["d"])

    assert second.metadata == {"a": 1}
    assert pickle.loads(pickle.dumps(second)) == second
    assert copy.deepcopy(second).metadata == {"a": 1}
