"""Scoring-model (reranker) doubles: a scripted scorer and a geometry scorer.

This module owns the request and response records of a scoring call, the listener hooks,
and the two doubles that answer such calls without a network:

* ``ScriptedScorer`` answers one step of a script per request, in arrival order, so a test
  decides what the reranker says (a score, a function of the text, a whole response, or a
  failure) and notices when the code under test calls it more often than scripted.
* ``GeometryScorer`` needs no script: it scores each document by its cosine similarity to
  the query in the ``FakeEmbedder`` space, so a reranking test can assert an order that
  means something.

Both record every request they receive and notify listeners of each call; that machinery
lives once, in ``_RecordingScorer``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import numbers
import threading
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from placeborag._errors import (
    PlaceboragTypeError,
    PlaceboragValueError,
    ScriptError,
    ScriptExhausted,  # noqa: F401 (importable from here, as before 0.5)
)
from placeborag._script import Script, count
from placeborag._threads import FreshLocks
from placeborag._validation import check_real, check_str, shown

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "GeometryScorer",
    "ScoringListener",
    "ScoringRequest",
    "ScoringResponse",
    "ScriptedScorer",
]
# ScriptError and ScriptExhausted live in placeborag._errors; imported above, they can still be
# imported from here, as before 0.5.

_log = logging.getLogger("placeborag.scoring")

_HOOKS = ("on_request", "on_response", "on_error")
_SCORE_ALLOWED = "a finite real number or a function of the document text"


@dataclass(frozen=True)
class ScoringRequest:
    """One call of ``score``, ``score_all`` or ``ascore``, however many documents it scores.

    ``index`` is the arrival order, starting at 0: request ``n`` is answered by step ``n`` of
    a script.
    """

    query: str
    documents: tuple[str, ...]
    model_name: str
    index: int


@dataclass(frozen=True)
class ScoringResponse:
    """The answer to one request: a score per document, in the order of the documents.

    A response built by a test is checked for types only: NaN, infinite scores and a number
    of scores that differs from the number of documents are allowed on purpose, so a script
    can imitate a provider that misbehaves. A score must still be a float: an int beyond
    float range (``10**400``) is refused rather than rounded to infinity. ``scores`` is kept
    as a tuple and ``metadata`` as a read-only copy, so a response scripted to repeat is the
    same for every request, whatever a reader did with an earlier one.
    """

    scores: tuple[float, ...]
    token_usage: int | None = None
    model_name: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Store the scores as a tuple of floats and the metadata as a private copy, so a
        # response scripted to repeat cannot be changed by the code that reads it.
        scores = self.scores
        if isinstance(scores, (str, bytes)) or not isinstance(scores, Iterable):
            raise PlaceboragTypeError(f"scores={shown(scores)} must be a sequence of real numbers")
        floats = tuple(
            check_real(score, f"scores[{position}]", "a real number", finite=False)
            for position, score in enumerate(scores)
        )
        token_usage = self.token_usage
        if token_usage is not None and (
            isinstance(token_usage, bool) or not isinstance(token_usage, int) or token_usage < 0
        ):
            raise PlaceboragTypeError(
                f"token_usage={shown(token_usage)} must be None or an int >= 0"
            )
        if self.model_name is not None and not isinstance(self.model_name, str):
            raise PlaceboragTypeError(f"model_name={shown(self.model_name)} must be None or a str")
        if not isinstance(self.metadata, Mapping):
            raise PlaceboragTypeError(f"metadata={shown(self.metadata)} must be a mapping")
        object.__setattr__(self, "scores", floats)
        # Read-only, like the scores tuple: a response scripted to repeat hands out the same
        # object, so a reader that could change its metadata would change every later repeat.
        object.__setattr__(self, "metadata", types.MappingProxyType(dict(self.metadata)))

    def __reduce__(self) -> tuple[Any, ...]:
        # A mappingproxy cannot be pickled or deep-copied; the response is rebuilt from a dict.
        return (
            type(self),
            (self.scores, self.token_usage, self.model_name, dict(self.metadata)),
        )


class ScoringListener:
    """Hooks notified of each call of a scorer; every hook is optional and does nothing here.

    Subclass it and override the hooks you need, or pass any object that has at least one
    of ``on_request``, ``on_response`` and ``on_error``. An exception raised by a hook is
    logged on the ``placeborag.scoring`` logger and otherwise ignored, as a real model does,
    so a faulty listener cannot change the answer the code under test receives.
    """

    def on_request(self, request: ScoringRequest) -> None:
        """Called once a request has arrived, before it is answered."""

    def on_response(self, request: ScoringRequest, response: ScoringResponse) -> None:
        """Called after a request was answered."""

    def on_error(self, request: ScoringRequest, error: BaseException) -> None:
        """Called when a request fails, just before the error reaches the caller."""


class _Step(Protocol):
    def answer(self, request: ScoringRequest) -> ScoringResponse: ...


@dataclass(frozen=True)
class _ConstantScores:
    score: float

    def answer(self, request: ScoringRequest) -> ScoringResponse:
        return ScoringResponse(
            scores=(self.score,) * len(request.documents), model_name=request.model_name
        )


@dataclass(frozen=True)
class _ComputedScores:
    function: Callable[[str], float]

    def answer(self, request: ScoringRequest) -> ScoringResponse:
        # An exception raised by the function propagates unchanged: it is the request's failure.
        scores = tuple(
            check_real(
                self.function(document), f"scores({shown(document)})", "a finite real number"
            )
            for document in request.documents
        )
        return ScoringResponse(scores=scores, model_name=request.model_name)


@dataclass(frozen=True)
class _WholeResponse:
    response: ScoringResponse

    def answer(self, request: ScoringRequest) -> ScoringResponse:
        return self.response


@dataclass(frozen=True)
class _Failure:
    error: BaseException

    def answer(self, request: ScoringRequest) -> NoReturn:
        # Drop the traceback of an earlier raise: a failing step that repeats would otherwise
        # grow the same exception's traceback with every request.
        raise self.error.with_traceback(None)


@dataclass(frozen=True)
class _Call:
    """One arrived request, the step chosen for it, and the listeners at arrival."""

    request: ScoringRequest
    step: _Step
    listeners: tuple[object, ...]

    def notify(self, hook: str, *args: object) -> None:
        for listener in self.listeners:
            method = getattr(listener, hook, None)
            if method is None:
                continue
            try:
                method(*args)
            except Exception:
                _log.exception(
                    "scoring listener %r raised in %s for request %d; ignored",
                    listener,
                    hook,
                    self.request.index,
                )

    def attempt(self) -> ScoringResponse | _Raised:
        """Answer the request, catching its failure, so it can cross a thread as a value."""
        try:
            return self.step.answer(self.request)
        except BaseException as error:
            return _Raised(error)

    def settle(self, outcome: ScoringResponse | _Raised) -> ScoringResponse:
        """Notify the listeners of the outcome, then return the response or raise the error."""
        if isinstance(outcome, _Raised):
            self.notify("on_error", self.request, outcome.error)
            raise outcome.error
        self.notify("on_response", self.request, outcome)
        return outcome


@dataclass(frozen=True)
class _Raised:
    # A failure carried back from a worker thread as a value: asyncio re-creates a
    # TimeoutError that crosses a concurrent future, and a scripted failure must reach
    # the caller as the very instance the test gave.
    error: BaseException


def _checked_model_name(model_name: object) -> str:
    if not isinstance(model_name, str) or not model_name:
        raise PlaceboragTypeError(f"model_name={shown(model_name)} must be a non-empty str")
    return model_name


def _checked_documents(query: object, documents: object) -> tuple[str, ...]:
    check_str(query, "query")
    if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence):
        raise PlaceboragTypeError(
            f"documents={shown(documents)} must be a sequence of str, such as a list of texts"
        )
    for position, document in enumerate(documents):
        check_str(document, f"documents[{position}]")
    return tuple(documents)


def _queries(requests: Sequence[ScoringRequest]) -> str:
    listed = ", ".join(shown(request.query) for request in requests[:5])
    return listed + (", ..." if len(requests) > 5 else "")


class _RecordingScorer(FreshLocks):
    """The calling convention, the record of requests and the listeners of every scorer.

    A subclass only decides, in ``_next_step``, which step answers an arrived request.
    """

    def __init__(self, *, model_name: str) -> None:
        self._model_name = _checked_model_name(model_name)
        # One lock makes arrival atomic: a request's index, its place in the record and the
        # step that answers it are decided together, so concurrent calls never share a step.
        self._lock = threading.Lock()
        self._requests: list[ScoringRequest] = []
        self._listeners: tuple[object, ...] = ()

    def _next_step(self, request: ScoringRequest) -> _Step:
        """Choose the step for ``request``; called with the lock held, once per request."""
        raise NotImplementedError

    @property
    def model_name(self) -> str:
        """The model name this scorer reports in its requests and computed responses."""
        return self._model_name

    @property
    def listeners(self) -> tuple[object, ...]:
        """The listeners notified of each call, in the order they were added."""
        return self._listeners

    def with_listeners(self, *listeners: object) -> Self:
        """Notify the given listeners (or one list of them) of each later call; returns ``self``.

        Listeners add to those given before. Each must have at least one of ``on_request``,
        ``on_response`` and ``on_error``, like ``ScoringListener``.
        """
        if len(listeners) == 1 and isinstance(listeners[0], (list, tuple)):
            listeners = tuple(listeners[0])
        for position, listener in enumerate(listeners):
            if not any(callable(getattr(listener, hook, None)) for hook in _HOOKS):
                raise PlaceboragTypeError(
                    f"listeners[{position}]={shown(listener)} must have an on_request, on_response"
                    " or on_error method, like ScoringListener"
                )
        with self._lock:
            self._listeners = (*self._listeners, *listeners)
        return self

    @property
    def requests(self) -> tuple[ScoringRequest, ...]:
        """A copy of the requests received so far, in arrival order."""
        with self._lock:
            return tuple(self._requests)

    @property
    def request(self) -> ScoringRequest:
        """The only request received so far; ``ScriptError`` unless there is exactly one."""
        requests = self.requests
        if len(requests) != 1:
            listed = f": {_queries(requests)}" if requests else ""
            raise ScriptError(
                f"expected exactly one request, but the scorer received"
                f" {count(len(requests), 'request')}{listed}; read .requests for all of them"
            )
        return requests[0]

    @property
    def last_request(self) -> ScoringRequest:
        """The most recent request; ``ScriptError`` if none arrived yet."""
        requests = self.requests
        if not requests:
            raise ScriptError("the scorer received no request yet, so it has no last_request")
        return requests[-1]

    def _arrive(self, query: str, documents: Sequence[str]) -> _Call:
        # A malformed call raises before anything is recorded or notified: it never arrived.
        checked = _checked_documents(query, documents)
        with self._lock:
            request = ScoringRequest(
                query=query,
                documents=checked,
                model_name=self._model_name,
                index=len(self._requests),
            )
            step = self._next_step(request)
            self._requests.append(request)
            call = _Call(request, step, self._listeners)
        call.notify("on_request", request)
        return call

    def score(self, query: str, documents: Sequence[str]) -> ScoringResponse:
        """Score ``documents`` against ``query`` as one request."""
        call = self._arrive(query, documents)
        return call.settle(call.attempt())

    def score_all(self, query: str, documents: Sequence[str]) -> list[float]:
        """Like ``score``, returning only the scores, in the order of ``documents``."""
        return list(self.score(query, documents).scores)

    async def ascore(self, query: str, documents: Sequence[str]) -> ScoringResponse:
        """Like ``score``, computing the scores on a worker thread.

        The request arrives, and takes its step, when the coroutine starts running, so
        ``asyncio.gather`` hands out steps in the order of its arguments. Every error,
        including a malformed call and an exhausted script, is raised by the ``await``.
        Listeners are notified on the event-loop thread. A call cancelled while its scores
        are computed keeps the step it took, and its listeners hear of no outcome.
        """
        call = self._arrive(query, documents)
        return call.settle(await asyncio.to_thread(call.attempt))


class ScriptedScorer(_RecordingScorer):
    """A scoring model that answers each request with the next step of a script.

    Start with ``scoring``, ``responding`` or ``failing``; add steps with ``then_scores``,
    ``then_responds`` and ``then_fails``; end with ``then_repeats()`` to answer every further
    request with the last step. Without it, a request after the last step raises
    ``ScriptExhausted``. Create one scorer per test: it remembers the steps taken.

        scorer = ScriptedScorer.failing(TimeoutError("read timed out")).then_scores(
            lambda text: 0.9 if "refund" in text else 0.1
        ).then_repeats()
    """

    _DEFAULT_MODEL_NAME = "scripted-scorer"

    _script: Script[_Step]

    def __init__(self, *args: object, **kwargs: object) -> None:
        # An empty script could only fail; make the first step part of construction instead.
        raise ScriptError(
            "ScriptedScorer() cannot start without a step; start the script with"
            " ScriptedScorer.scoring(...), ScriptedScorer.responding(...) or"
            " ScriptedScorer.failing(...)"
        )

    @classmethod
    def _begin(cls, step: _Step, model_name: str) -> ScriptedScorer:
        scorer = cls.__new__(cls)
        _RecordingScorer.__init__(scorer, model_name=model_name)
        scorer._script = Script([step])
        return scorer

    @classmethod
    def scoring(
        cls, score: float | Callable[[str], float], *, model_name: str = _DEFAULT_MODEL_NAME
    ) -> ScriptedScorer:
        """A script whose first request gets ``score`` for every document.

        ``score`` is a finite number, or a function of the document text computed for each
        document; an exception the function raises is the request's failure, unchanged.
        """
        return cls._begin(_score_step(score), model_name)

    @classmethod
    def responding(
        cls, response: ScoringResponse, *, model_name: str = _DEFAULT_MODEL_NAME
    ) -> ScriptedScorer:
        """A script whose first request is answered with exactly ``response``.

        The response is returned as given, metadata and model name included, also when its
        number of scores differs from the number of documents.
        """
        return cls._begin(_response_step(response), model_name)

    @classmethod
    def failing(
        cls, exception: BaseException, *, model_name: str = _DEFAULT_MODEL_NAME
    ) -> ScriptedScorer:
        """A script whose first request raises exactly ``exception``, even with no documents."""
        return cls._begin(_failure_step(exception), model_name)

    def _add(self, step: _Step, method: str) -> Self:
        with self._lock:
            self._script.add(step, method)
        return self

    def then_scores(self, score: float | Callable[[str], float]) -> Self:
        """Add a step: the next request gets ``score`` (a number or a function of the text)."""
        return self._add(_score_step(score), "then_scores")

    def then_responds(self, response: ScoringResponse) -> Self:
        """Add a step: the next request is answered with exactly ``response``."""
        return self._add(_response_step(response), "then_responds")

    def then_fails(self, exception: BaseException) -> Self:
        """Add a step: the next request raises exactly ``exception``."""
        return self._add(_failure_step(exception), "then_fails")

    def then_repeats(self) -> Self:
        """End the script: every further request is answered by the last step.

        Only the last step repeats, and a last step that computes its scores computes them
        again for each request.
        """
        with self._lock:
            self._script.end()
        return self

    @property
    def repeats(self) -> bool:
        """Whether the script ends with ``then_repeats()``."""
        return self._script.repeats

    def _next_step(self, request: ScoringRequest) -> _Step:
        step = self._script.take()
        if step is not None:
            return step
        # Exhaustion is this request's failure, raised when it is answered, so ascore still
        # raises it from the await and the listeners hear of it through on_error.
        return _Failure(self._script.exhausted(f"the request with query={shown(request.query)}"))

    def __repr__(self) -> str:
        return (
            f"<ScriptedScorer model_name={self._model_name!r} {self._script!r}"
            f" requests={len(self._requests)}>"
        )


def _score_step(score: object) -> _Step:
    if callable(score) and not isinstance(score, numbers.Real):
        return _ComputedScores(score)
    return _ConstantScores(check_real(score, "score", _SCORE_ALLOWED))


def _response_step(response: object) -> _Step:
    if not isinstance(response, ScoringResponse):
        raise PlaceboragTypeError(f"response={shown(response)} must be a ScoringResponse")
    return _WholeResponse(response)


def _failure_step(exception: object) -> _Step:
    if not isinstance(exception, BaseException):
        raise PlaceboragTypeError(
            f"exception={shown(exception)} must be an exception instance,"
            " such as TimeoutError('read timed out')"
        )
    return _Failure(exception)


class _Embedder(Protocol):
    def embed_batch(self, texts: Sequence[str]) -> Any: ...


def _scaled(vector: Sequence[float]) -> list[float]:
    # Divide by the power of two at or above the largest magnitude: exact (only the exponent
    # changes), so the cosine is bit-identical to the unscaled one wherever that one neither
    # overflows nor underflows, and right where it would (1e200 squared is inf, 1e-200 is 0).
    largest = max((abs(x) for x in vector), default=0.0)
    if largest == 0.0:
        return list(vector)
    exponent = math.frexp(largest)[1]
    return [math.ldexp(x, -exponent) for x in vector]


def _cosine(a: Sequence[float], aa: float, b: Sequence[float]) -> float:
    # fsum is correctly rounded, so the score does not depend on BLAS, summation order or
    # thread count. sqrt(aa * bb) rather than sqrt(aa) * sqrt(bb): for a == b the quotient
    # is then exactly 1.0. Both vectors arrive scaled by _scaled.
    bb = math.fsum(x * x for x in b)
    if aa == 0.0 or bb == 0.0:
        return 0.0
    cosine = math.fsum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(aa * bb)
    return max(-1.0, min(1.0, cosine))


def _checked_rows(rows: object, texts: Sequence[str]) -> list[list[float]]:
    """The embedder's answer as lists of finite floats of one length, or an error naming the
    text whose vector is wrong (a NaN row must not score as a perfect match)."""
    source = "embedder.embed_batch"
    try:
        vectors = rows.tolist() if hasattr(rows, "tolist") else [list(row) for row in rows]  # type: ignore[attr-defined]
    except TypeError:
        raise PlaceboragTypeError(
            f"{source} returned {shown(rows)}; it must return one vector per text"
        ) from None
    if not isinstance(vectors, list) or len(vectors) != len(texts):
        count = len(vectors) if isinstance(vectors, list) else shown(vectors)
        raise PlaceboragValueError(
            f"{source} returned {count} vectors for {len(texts)} texts;"
            " it must return one vector per text"
        )
    checked: list[list[float]] = []
    for position, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        what = "the query" if position == 0 else f"documents[{position - 1}]"
        if isinstance(vector, (str, bytes)) or not isinstance(vector, Iterable):
            raise PlaceboragTypeError(
                f"{source} returned {shown(vector)} for {what} {shown(text, 80)};"
                " a vector must be a sequence of numbers"
            )
        values = list(vector)
        if checked and len(values) != len(checked[0]):
            raise PlaceboragValueError(
                f"{source} returned {len(values)} values for {what} {shown(text, 80)} and"
                f" {len(checked[0])} for the query; every vector must have the same length"
            )
        for index, value in enumerate(values):
            number = check_real(
                value, f"{source}(...) for {what} at index {index}", "a real number", finite=False
            )
            if not math.isfinite(number):
                raise PlaceboragValueError(
                    f"{source} returned {shown(number)} at index {index} for {what}"
                    f" {shown(text, 80)}; every value of a vector must be finite"
                )
            values[index] = number
        checked.append(values)
    return checked


@dataclass(frozen=True)
class _GeometryScores:
    embedder: _Embedder

    def answer(self, request: ScoringRequest) -> ScoringResponse:
        texts = [request.query, *request.documents]
        vectors = _checked_rows(self.embedder.embed_batch(texts), texts)
        query, *documents = (_scaled(vector) for vector in vectors)
        qq = math.fsum(x * x for x in query)
        scores = tuple(_cosine(query, qq, document) for document in documents)
        return ScoringResponse(scores=scores, model_name=request.model_name)


class GeometryScorer(_RecordingScorer):
    """A scoring model that needs no script: cosine similarity in an embedding space.

    Each document scores its cosine similarity to the query, in [-1, 1], computed with
    ``math.fsum`` so it is the same on every machine. The default space is a
    ``FakeEmbedder()``; pass another embedder (anything with ``embed_batch(texts)``
    returning one vector per text) to share the space of the store under test. It records
    requests and notifies listeners like ``ScriptedScorer``, and never runs out.
    """

    def __init__(
        self, embedder: _Embedder | None = None, *, model_name: str = "geometry-scorer"
    ) -> None:
        if embedder is None:
            # Imported here so that this module, and placeborag with it, stays light.
            from placeborag._embedder import FakeEmbedder

            embedder = FakeEmbedder()
        elif not callable(getattr(embedder, "embed_batch", None)):
            raise PlaceboragTypeError(
                f"embedder={shown(embedder)} must have an embed_batch(texts) method, like"
                " FakeEmbedder"
            )
        super().__init__(model_name=model_name)
        self._step = _GeometryScores(embedder)

    @property
    def embedder(self) -> _Embedder:
        """The embedder whose space the scores are measured in."""
        return self._step.embedder

    def _next_step(self, request: ScoringRequest) -> _Step:
        return self._step

    def __repr__(self) -> str:
        return (
            f"<GeometryScorer model_name={self._model_name!r} embedder={self.embedder!r}"
            f" requests={len(self._requests)}>"
        )
