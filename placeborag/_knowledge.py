"""A stub knowledge store and a candidate cache: the retrieval seams of a query engine.

``StubKnowledgeStore`` stands where a query engine calls its knowledge service. It returns
scripted hybrid results per query, or computes them from a ``FakeVectorStore`` or a
``HybridRetriever``; it records the identity and context of every call; an access rule splits
what is relevant into what the caller may read and what is withheld, so a result tells
"nothing relevant" (empty) from "relevant but withheld" (hidden), and a withheld record
shows only the coordinates a hint may show: that it exists and its source system. Failures
and timeouts are injected like ``FakeVectorStore.fail_next_query``.

``CandidateCache`` is the cache gate's double: keyed on the exact (standalone query,
identity) pair, never shared across identities, never semantic, every hit, miss and put
recorded.
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from placeborag._errors import (
    PlaceboragError,
    PlaceboragTypeError,
    PlaceboragValueError,
    RetrievalTimeout,
)
from placeborag._failures import FailureQueue
from placeborag._filters import compile_filter
from placeborag._metadata import check_metadata
from placeborag._results import Match
from placeborag._threads import FreshLocks
from placeborag._validation import check_k, check_real, nearest, shown

__all__ = [
    "CacheEvent",
    "CandidateCache",
    "KnowledgeCall",
    "KnowledgeResult",
    "StubKnowledgeStore",
    "UnscriptedQuery",
    "WithheldRecord",
]

OUTCOMES = ("found", "mixed", "hidden", "empty")


class UnscriptedQuery(PlaceboragError, LookupError):
    """A scripted knowledge store was asked a query it has no result for, and has no default."""


def _checked_mapping(value: object, name: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise PlaceboragTypeError(
            f"{name}={shown(value)} must be a dict or None, not {type(value).__name__}"
        )
    return copy.deepcopy(dict(value))


def identity_key(identity: object) -> str:
    """The canonical text of an identity: equal identities give equal keys, and only they.

    JSON with sorted keys; equal numbers give equal text (``1`` and ``1.0``, but not ``True``,
    which JSON tells from a number). A value JSON cannot hold, or a dict key that is not a str
    (JSON would turn ``1`` into ``"1"``), is refused rather than stringified, since two
    different identities must never share a key.
    """
    if identity is not None and not isinstance(identity, (Mapping, str)):
        raise PlaceboragTypeError(f"identity={shown(identity)} must be a dict, a str or None")
    try:
        canonical = _canonical(identity, identity)
    except RecursionError:
        raise PlaceboragValueError(
            f"identity={shown(identity)} is nested too deeply to be a key"
        ) from None
    return json.dumps(canonical, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _not_json(identity: object, part: object, why: str) -> PlaceboragTypeError:
    return PlaceboragTypeError(
        f"identity={shown(identity)} must hold only JSON values (str, int, finite float, bool,"
        f" None, lists and dicts of them with str keys): {shown(part)} {why}"
    )


def _canonical(value: object, identity: object) -> object:
    """``value`` with every number that equals an int written as that int."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _not_json(identity, value, "is not a finite number")
        return int(value) if value.is_integer() else float(value)
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _not_json(identity, key, "is a key that is not a str")
            out[key] = _canonical(item, identity)
        return out
    if isinstance(value, (list, tuple)):
        return [_canonical(item, identity) for item in value]
    raise _not_json(identity, value, f"is a {type(value).__name__}")


@dataclass(frozen=True)
class KnowledgeCall:
    """One search the store received: what was asked, for whom, with what context."""

    query: str
    identity: Mapping[str, Any] | str | None
    k: int
    where: dict[str, Any] | None
    context: dict[str, Any] | None
    index: int


@dataclass(frozen=True)
class WithheldRecord:
    """A relevant record the caller may not read: only its existence and source system."""

    source: str | None


@dataclass(frozen=True)
class KnowledgeResult:
    """The answer to one search: the readable matches, best first, and what was withheld.

    ``outcome`` is ``"found"`` (matches, nothing withheld), ``"mixed"`` (matches, and some
    relevant records withheld), ``"hidden"`` (no readable match, but relevant records were
    withheld) or ``"empty"`` (nothing relevant at all).
    """

    query: str
    matches: tuple[Any, ...]
    withheld: tuple[WithheldRecord, ...] = ()

    @property
    def outcome(self) -> str:
        if self.matches:
            return "mixed" if self.withheld else "found"
        return "hidden" if self.withheld else "empty"

    @property
    def is_empty(self) -> bool:
        """Nothing relevant exists: no match and nothing withheld."""
        return not self.matches and not self.withheld

    @property
    def hidden_sources(self) -> tuple[str, ...]:
        """The source systems of the withheld records, each once, in first-seen order."""
        return tuple(dict.fromkeys(w.source for w in self.withheld if w.source is not None))


def _as_match(item: object, position: int, query: str) -> Any:
    where = f"results[{shown(query)}][{position}]"
    if isinstance(item, Match):
        # A Match made by hand has not been through a store's checks: the filter will read it.
        check_metadata(item.metadata, f"{where}.metadata")
        return item
    if isinstance(item, str):
        # Scripted results as bare texts: ids and fused scores follow the given order.
        return Match(f"{query}#{position}", item, {}, 1.0 / (position + 1))
    if isinstance(item, Mapping) and "id" in item:
        fields = (
            item["id"],
            item.get("text", ""),
            item.get("metadata", {}),
            item.get("score", 1.0 / (position + 1)),
        )
        return _checked_match(fields, where, "[{!r}]")
    if all(hasattr(item, name) for name in ("id", "text", "metadata", "score")):
        fields = (item.id, item.text, item.metadata, item.score)  # type: ignore[attr-defined]
        return _checked_match(fields, where, ".{}")
    raise PlaceboragTypeError(
        f"{where}={shown(item)} must be a Match, a dict with 'id' (and 'text', 'metadata',"
        " 'score') or a str"
    )


def _checked_match(fields: tuple[object, object, object, object], where: str, part: str) -> Any:
    id, text, metadata, score = fields
    if not isinstance(id, str):
        raise PlaceboragTypeError(f"{where}{part.format('id')}={shown(id)} must be a str")
    if not isinstance(text, str):
        raise PlaceboragTypeError(f"{where}{part.format('text')}={shown(text)} must be a str")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, Mapping):
        raise PlaceboragTypeError(
            f"{where}{part.format('metadata')}={shown(metadata)} must be a dict or None"
        )
    # What a store would hold, checked as a store checks it: a search's where reads it with
    # the store's filter language, which knows no set (a $in over one raised a bare TypeError).
    checked = check_metadata(metadata, f"{where}{part.format('metadata')}") or {}
    number = check_real(score, f"{where}{part.format('score')}", "a finite real number")
    return Match(id, text, checked, number)


class StubKnowledgeStore(FreshLocks):
    """A knowledge-store client for tests: scripted or computed hybrid results, all recorded.

    Scripted: ``StubKnowledgeStore(results={"refund policy": [match, ...]})`` and
    ``script(query, matches)``; a query without a script raises ``UnscriptedQuery`` listing
    the scripted ones, unless ``default`` (a list of matches, ``[]`` for "nothing") is given.
    A search's ``where`` filters the scripted matches by their metadata, in the filter
    language of ``FakeVectorStore``.
    Computed: ``StubKnowledgeStore(backend=store_or_hybrid_retriever)``; each search runs
    ``backend.query(query, k, where, context=identity)`` (a str identity as
    ``{"identity": identity}``, since a store's context is a mapping), so the backend records
    the identity too; when the access rule withholds some of the top ``k``, the backend is
    asked again for more, so both forms return the best ``k`` readable matches.
    ``access(identity, match) -> bool`` decides what the caller may read (everything when
    ``None``); a match it refuses becomes a ``WithheldRecord`` carrying only
    ``match.metadata[source_key]``. Matches given as dicts are checked when scripted: ``id``
    and ``text`` a str, ``metadata`` a dict (or None), ``score`` a finite real number.
    """

    def __init__(
        self,
        *,
        results: Mapping[str, Sequence[Any]] | None = None,
        backend: Any = None,
        default: Sequence[Any] | None = None,
        access: Callable[[Any, Any], bool] | None = None,
        source_key: str = "source",
        k: int = 10,
    ) -> None:
        if results is not None and backend is not None:
            raise PlaceboragValueError(
                "results= and backend= were both given; a store is scripted or computed, not both"
            )
        if backend is not None and not callable(getattr(backend, "query", None)):
            raise PlaceboragTypeError(
                f"backend={shown(backend)} must have a query(text, k, where, context=) method, like"
                " FakeVectorStore or HybridRetriever"
            )
        if results is not None and not isinstance(results, Mapping):
            raise PlaceboragTypeError(
                f"results={shown(results)} must be a dict of query -> matches"
            )
        if access is not None and not callable(access):
            raise PlaceboragTypeError(
                f"access={shown(access)} must be a function (identity, match)"
            )
        if not isinstance(source_key, str) or not source_key:
            raise PlaceboragTypeError(f"source_key={shown(source_key)} must be a non-empty str")
        self._k = _checked_k(k)
        self._lock = threading.RLock()
        self._scripted: dict[str, tuple[Any, ...]] = {}
        for query, matches in (results or {}).items():
            self._scripted[_checked_query(query)] = _checked_matches(query, matches)
        self._default = None if default is None else _checked_matches("<default>", default)
        self._backend = backend
        self._access = access
        self._source_key = source_key
        self._calls: list[KnowledgeCall] = []
        self._failures = FailureQueue()

    # -- scripting ----------------------------------------------------------------------------

    def script(self, query: str, matches: Sequence[Any]) -> StubKnowledgeStore:
        """Answer ``query`` (exactly this text) with ``matches``, best first; returns ``self``."""
        if self._backend is not None:
            raise PlaceboragValueError(
                "script() scripts a result, but this store computes its results from a backend"
            )
        checked = _checked_matches(query, matches)
        with self._lock:
            self._scripted[_checked_query(query)] = checked
        return self

    def fail_next_search(
        self, error: BaseException | type[BaseException] | None = None, *, times: int = 1
    ) -> None:
        """Make the next ``times`` searches raise ``error`` (default ``RetrievalTimeout``).

        A failed search is still recorded, with its identity. Failures queue up.
        """
        if error is None:
            error = RetrievalTimeout("injected by fail_next_search(): the search timed out")
        failure, count = FailureQueue.checked(error, times)
        with self._lock:
            self._failures.add(failure, count)

    # -- state --------------------------------------------------------------------------------

    @property
    def is_empty(self) -> bool:
        """Whether the base holds nothing at all (not "nothing relevant to one query").

        Scripted: no scripted result (nor the default) holds a match. Computed: the backend's
        store holds no record.
        """
        if self._backend is not None:
            store = getattr(self._backend, "store", self._backend)
            return len(store) == 0
        with self._lock:
            return not any(self._scripted.values()) and not self._default

    @property
    def calls(self) -> tuple[KnowledgeCall, ...]:
        """Every search received, failed ones included, in order."""
        with self._lock:
            return tuple(self._calls)

    @property
    def identities(self) -> tuple[Any, ...]:
        """The identity of every search, in order."""
        return tuple(c.identity for c in self.calls)

    @property
    def queries(self) -> tuple[str, ...]:
        """The query text of every search, in order."""
        return tuple(c.query for c in self.calls)

    @property
    def backend(self) -> Any:
        return self._backend

    # -- searching ----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        identity: Mapping[str, Any] | str | None,
        k: int | None = None,
        where: Mapping[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> KnowledgeResult:
        """The best ``k`` readable matches for ``query`` and what the access rule withheld.

        ``identity`` is required (``None`` says "anonymous" explicitly); ``context`` is
        anything else to record with the call (a session id, a trace id).
        """
        call = self._arrive(query, identity, k, where, context)
        return self._answer(call)

    async def asearch(
        self,
        query: str,
        *,
        identity: Mapping[str, Any] | str | None,
        k: int | None = None,
        where: Mapping[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> KnowledgeResult:
        """Like ``search``; the call is recorded when the coroutine starts running."""
        call = self._arrive(query, identity, k, where, context)
        await asyncio.sleep(0)
        return self._answer(call)

    def _answer(self, call: KnowledgeCall) -> KnowledgeResult:
        if self._backend is not None:
            return self._computed(call)
        return self._split(call, self._matches(call))

    def _computed(self, call: KnowledgeCall) -> KnowledgeResult:
        """The best ``k`` readable matches from the backend, asking it for more if need be.

        The backend is asked for ``k``; when the access rule withholds some of them and the
        backend had more to give, it is asked once more for every record of its store (or,
        when it cannot say how many it holds, for twice as many, until it runs out), so the
        backend and the scripted path return the same best ``k`` readable matches.
        """
        context = _backend_context(call.identity)
        asked = call.k
        while True:
            found = self._backend.query(call.query, asked, call.where, context=context)
            # FAISS-style padding ("-1" slots) is not a record.
            matches = [m for m in found if m.id != "-1"]
            result = self._ranked_split(call, matches)
            if len(result.matches) >= call.k or len(matches) < asked or asked >= _MAX_ASKED:
                return result
            store = getattr(self._backend, "store", self._backend)
            try:
                size = len(store)
            except TypeError:
                size = asked * 2
            if size <= asked:
                return result
            asked = min(size, _MAX_ASKED)

    def _arrive(
        self,
        query: object,
        identity: Mapping[str, Any] | str | None,
        k: object,
        where: Mapping[str, Any] | None,
        context: object,
    ) -> KnowledgeCall:
        text = _checked_query(query)
        identity_key(identity)  # validates
        size = self._k if k is None else _checked_k(k)
        compile_filter(where)  # a malformed filter raises before the call is recorded
        where_copy = _checked_mapping(where, "where")
        context_copy = _checked_mapping(context, "context")
        with self._lock:
            call = KnowledgeCall(
                text, copy.deepcopy(identity), size, where_copy, context_copy, len(self._calls)
            )
            self._calls.append(call)
            failure = self._failures.take()
            if failure is not None:
                raise failure
        return call

    def _matches(self, call: KnowledgeCall) -> tuple[Any, ...]:
        with self._lock:
            scripted = self._scripted.get(call.query)
            if scripted is None:
                if self._default is None:
                    raise UnscriptedQuery(self._unscripted_message(call.query, call.index))
                scripted = self._default
        # A scripted result goes through the store's filter language like a real result would.
        predicate = compile_filter(call.where)
        if predicate is None:
            return scripted
        return tuple(m for m in scripted if predicate.matches(m.metadata))

    def _unscripted_message(self, query: str, index: int) -> str:
        known = list(self._scripted)
        close = nearest(query, known, cutoff=0.4)
        listed = ", ".join(map(repr, close or known[:5])) or "none"
        label = "nearest scripted queries" if close else "scripted queries"
        return (
            f"no result scripted for query={shown(query)} (search {index}); {label}:"
            f" {listed}. The key is the exact query text; script it with script(query, matches)"
            " or give default=[] to answer unscripted queries with nothing"
        )

    def _split(self, call: KnowledgeCall, matches: Iterable[Any]) -> KnowledgeResult:
        readable, withheld = [], []
        for match in matches:
            if self._access is None or self._access(call.identity, match):
                readable.append(match)
            else:
                withheld.append(self._withheld(match))
        return KnowledgeResult(call.query, tuple(readable[: call.k]), tuple(withheld))

    def _ranked_split(self, call: KnowledgeCall, matches: Sequence[Any]) -> KnowledgeResult:
        """Like ``_split`` over a ranked list: what is withheld among the backend's top ``k``
        and, past them, up to the ``k``-th readable match (what a larger k reached for)."""
        readable: list[Any] = []
        withheld: list[WithheldRecord] = []
        for position, match in enumerate(matches):
            if len(readable) >= call.k and position >= call.k:
                break
            if self._access is None or self._access(call.identity, match):
                readable.append(match)
            else:
                withheld.append(self._withheld(match))
        return KnowledgeResult(call.query, tuple(readable), tuple(withheld))

    def _withheld(self, match: Any) -> WithheldRecord:
        source = match.metadata.get(self._source_key)
        return WithheldRecord(None if source is None else str(source))

    def __repr__(self) -> str:
        how = (
            f"backend={self._backend!r}"
            if self._backend is not None
            else (f"scripted={len(self._scripted)}")
        )
        return f"<StubKnowledgeStore {how} calls={len(self._calls)}>"


# The most records one query may ask a FakeVectorStore for.
_MAX_ASKED = 1_000_000


def _backend_context(identity: Mapping[str, Any] | str | None) -> dict[str, Any] | None:
    """The ``context=`` a backend query gets: the identity, a str one as ``{"identity": ...}``
    (a store's context is a mapping)."""
    if identity is None:
        return None
    if isinstance(identity, str):
        return {"identity": identity}
    return copy.deepcopy(dict(identity))


def _checked_query(query: object) -> str:
    if not isinstance(query, str):
        raise PlaceboragTypeError(f"query={shown(query)} must be a str")
    return query


def _checked_k(k: object) -> int:
    return check_k(k)


def _checked_matches(query: str, matches: object) -> tuple[Any, ...]:
    if isinstance(matches, (str, bytes)) or not isinstance(matches, Iterable):
        raise PlaceboragTypeError(
            f"results[{shown(query)}]={shown(matches)} must be a list of matches"
        )
    return tuple(_as_match(item, position, query) for position, item in enumerate(matches))


# -- the candidate cache ------------------------------------------------------------------------


@dataclass(frozen=True)
class CacheEvent:
    """One use of the cache: ``kind`` is ``"hit"``, ``"miss"`` or ``"put"``."""

    kind: str
    query: str
    identity: Any


class CandidateCache(FreshLocks):
    """A candidate cache keyed on the exact (standalone query, identity) pair.

    Two queries share an entry only when their texts are equal character for character and
    their identities are equal as JSON values: no normalising, no similarity, and no entry
    ever reaches another identity. Every ``get`` (a hit or a miss) and ``put`` is recorded in
    ``events``. Values are stored and returned as given.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], Any] = {}
        self._events: list[CacheEvent] = []
        self._lock = threading.Lock()

    def get(self, query: str, identity: Mapping[str, Any] | str | None) -> Any:
        """The value stored under (query, identity), or ``None`` (recorded as a miss)."""
        key = (_checked_query(query), identity_key(identity))
        with self._lock:
            found = key in self._entries
            self._events.append(
                CacheEvent("hit" if found else "miss", query, copy.deepcopy(identity))
            )
            return self._entries.get(key)

    def put(self, query: str, identity: Mapping[str, Any] | str | None, value: Any) -> None:
        """Store ``value`` under (query, identity), replacing an earlier one."""
        key = (_checked_query(query), identity_key(identity))
        if value is None:
            raise PlaceboragValueError("value=None cannot be cached: get() returns None for a miss")
        with self._lock:
            self._entries[key] = value
            self._events.append(CacheEvent("put", query, copy.deepcopy(identity)))

    def clear(self) -> None:
        """Drop every entry (the record of events stays)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        if not (isinstance(key, tuple) and len(key) == 2):
            return False
        return (key[0], identity_key(key[1])) in self._entries

    @property
    def events(self) -> tuple[CacheEvent, ...]:
        with self._lock:
            return tuple(self._events)

    def _count(self, kind: str) -> int:
        return sum(1 for event in self.events if event.kind == kind)

    @property
    def hits(self) -> int:
        return self._count("hit")

    @property
    def misses(self) -> int:
        return self._count("miss")

    @property
    def puts(self) -> int:
        return self._count("put")

    def __repr__(self) -> str:
        return (
            f"<CandidateCache entries={len(self)} hits={self.hits} misses={self.misses}"
            f" puts={self.puts}>"
        )
