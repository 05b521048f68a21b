"""Retrieval mutations: the switches ``pytest --placeborag-audit`` throws inside the doubles.

This module owns what the audit changes and what it records; the pytest side (rerunning a
test, the report) is ``placeborag._audit``. The doubles reach it only through a few hook calls,
each marked ``# audit hook``:

* ``FakeVectorStore.__init__`` calls :func:`opened` and ``refresh`` calls :func:`refreshed`
  (the stale-read mutation's snapshots);
* ``FakeVectorStore.query`` and ``query_by_vector`` pass their answer through :func:`answer`;
* ``FakeEmbedder.embed``, ``embed_batch`` and ``embed_array`` ask :func:`shape_only` first;
* a scorer's request (``ScriptedScorer``, ``GeometryScorer``) calls :func:`used`: no mutation
  changes a scorer, but a test that uses one touched placeborag and is reported.

Outside an audited run every hook returns at once. During one, the run is process-wide (a
test's threads and tasks are audited with it) and is either a *baseline* run (nothing changes;
each query's answer under every mutation is computed beside it, so a mutation that changes no
answer of the test is skipped with the reason) or a *mutated* run (one mutation is on and every
query answers as that mutation says). A mutation never touches the user's code: it changes
what a double answers, deterministically, computed on a twin of the store (``with_options``,
``reembedded``), so the store's own query log and failure queue are untouched.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "MUTATIONS",
    "Usage",
    "answer",
    "begin",
    "end",
    "opened",
    "refreshed",
    "shape_only",
    "used",
]

# Every mutation, in the order the audit runs them, with what it does (the report's legend).
MUTATIONS: dict[str, str] = {
    "shape-only": "the embedder answers deterministic unit vectors of the right dimension with "
    "no semantic structure (a hash of the text): the usual mock",
    "reversed": "the store ranks worst first: the k worst matches, worst first",
    "filter-ignored": "the store ignores where= and ids=",
    "filter-after-cut": "the filter runs on the other side of the top-k cut (pre <-> post)",
    "k-ignored": "the store returns every match it ranks, whatever k asked for",
    "ties-flipped": "exactly tied matches come in the other order (insertion <-> reverse; a "
    "store ordering ties by id or by hash gets reverse insertion order)",
    "recall-lost": "the index loses half of the candidates it keeps (recall 1.0 -> 0.5)",
    "stale-reads": "writes stay invisible until refresh(), as under visibility='manual' (only "
    "for stores with visibility='immediate')",
}

_STORE_MUTATIONS = tuple(name for name in MUTATIONS if name != "shape-only")
_FILTERS = ("filter-ignored", "filter-after-cut")
_FLIPPED_TIES = {"insertion": "reverse", "reverse": "insertion", "id": "reverse"}
_SHAPE_SALT = b"placeborag shape-only mutation\x00"

# The stale-read snapshot of a store built during the run: empty, as it was when built.
_EMPTY = "empty"


@dataclass(frozen=True)
class _Call:
    """One query as the caller made it (``k`` already the profile's default when omitted)."""

    text: str | None
    vector: Any
    k: int
    where: Mapping[str, Any] | None
    ids: tuple[str, ...] | None


@dataclass
class _StoreState:
    store: Any
    snapshot: Any  # _EMPTY, or a twin holding what a stale read still sees
    shape_twin: tuple[Any, Any] | None = None  # (records view it was built from, twin)


@dataclass
class Usage:
    """What one run of a test did with the doubles, and which mutations changed an answer."""

    mutation: str | None
    doubles: set[str] = field(default_factory=set)
    queries: int = 0
    embedded: bool = False  # a FakeEmbedder's public embed path answered the test itself
    filtered: bool = False  # some query had where=
    restricted: bool = False  # some query had ids=
    immediate: bool = False  # some queried store has visibility="immediate"
    changed: set[str] = field(default_factory=set)  # mutations that changed some answer
    errors: dict[str, str] = field(default_factory=dict)  # mutations the audit failed to apply
    stores: dict[int, _StoreState] = field(default_factory=dict)

    @property
    def touched(self) -> bool:
        return bool(self.doubles)

    def skip_reason(self, mutation: str) -> str | None:
        """Why ``mutation`` cannot change this test's outcome (None: it can, run it)."""
        if mutation == "shape-only":
            if self.embedded:
                return None
            if not self.queries:
                return "never embedded a text or queried a store"
        elif not self.queries:
            return "never queried a store"
        if mutation == "filter-ignored" and not (self.filtered or self.restricted):
            return "never filtered (no where= or ids=)"
        if mutation == "filter-after-cut" and not self.filtered:
            return "never filtered with where="
        if mutation == "stale-reads" and not self.immediate:
            return "its stores read stale already (visibility='manual')"
        if mutation in self.errors:
            return f"could not be applied to this test's store ({self.errors[mutation]})"
        if mutation in self.changed:
            return None
        if mutation == "ties-flipped":
            return "no tie reached an answer"
        return "no query's answer changes under it"


_lock = threading.RLock()
_run: Usage | None = None
_local = threading.local()  # .inside: this thread is computing a mutated answer


def begin(mutation: str | None) -> None:
    """Start recording a run of a test: the baseline (None) or one with ``mutation`` on."""
    global _run
    if mutation is not None and mutation not in MUTATIONS:
        from placeborag._errors import PlaceboragValueError

        raise PlaceboragValueError(
            f"mutation={mutation!r} must be one of {', '.join(map(repr, MUTATIONS))}"
        )
    with _lock:
        _run = Usage(mutation)


def end() -> Usage:
    """Stop recording; what the run did (the stores it saw are released)."""
    global _run
    with _lock:
        run, _run = _run, None
    if run is None:
        return Usage(None)
    run.stores = {}
    return run


def _active() -> Usage | None:
    run = _run
    if run is None or getattr(_local, "inside", False):
        return None
    return run


class _Inside:
    """Queries made while computing a mutated answer are the audit's own: they pass through."""

    def __enter__(self) -> None:
        self.before = getattr(_local, "inside", False)
        _local.inside = True

    def __exit__(self, *exc: object) -> None:
        _local.inside = self.before


# -- hooks of the store -----------------------------------------------------------------------


def opened(store: Any) -> None:
    """A store was built during the run: a stale read of it sees nothing until refresh()."""
    run = _active()
    if run is None:
        return
    with _lock:
        run.doubles.update(_doubles_of(store))
        run.stores.setdefault(id(store), _StoreState(store, _EMPTY))


def _doubles_of(store: Any) -> tuple[str, ...]:
    """The store and, when it is one of ours (FakeEmbedder, ReplayEmbedder), its embedder."""
    embedder = type(store.embedder)
    if embedder.__module__.startswith("placeborag.") and embedder.__name__[:1] != "_":
        return ("FakeVectorStore", embedder.__name__)
    return ("FakeVectorStore",)


def refreshed(store: Any) -> None:
    """``store.refresh()`` ran: what a stale read sees catches up with the writes."""
    run = _active()
    if run is None or store.visibility != "immediate":
        return
    with _Inside():
        snapshot = store.with_options()
    with _lock:
        state = run.stores.get(id(store))
        if state is None:
            run.stores[id(store)] = _StoreState(store, snapshot)
        else:
            state.snapshot = snapshot


def answer(
    store: Any,
    matches: list[Any],
    text: str | None,
    vector: Any,
    k: int | None,
    where: Mapping[str, Any] | None,
    ids: Iterable[str] | None,
) -> list[Any]:
    """The answer a query gives: ``matches`` itself, except under a mutation."""
    if _run is None:  # no audit running: the usual case, at once
        return matches
    run = _active()
    if run is None:
        return matches
    if ids is not None and not isinstance(ids, (list, tuple)):
        # A one-shot iterable the store has consumed: its log kept the ids (another thread's
        # query could come between; only a generator of ids with threads can meet that).
        ids = store.last_query.ids
    call = _Call(
        text,
        vector,
        store.profile.default_k if k is None else int(k),
        where,
        None if ids is None else tuple(ids),
    )
    with _lock:
        run.doubles.update(_doubles_of(store))
        run.queries += 1
        run.filtered |= where is not None
        run.restricted |= call.ids is not None
        immediate = store.visibility == "immediate"
        run.immediate |= immediate
        state = run.stores.get(id(store))
        if state is None:  # built before the run (a wider fixture): stale from now on
            with _Inside():
                state = run.stores[id(store)] = _StoreState(store, store.with_options())
    if run.mutation is not None:
        if run.mutation == "stale-reads" and not immediate:
            return matches
        return _mutated(run.mutation, state, call)
    for mutation in MUTATIONS:
        if mutation in run.changed or mutation in run.errors:
            continue
        if run.skip_reason(mutation) in _STATIC_REASONS:
            continue
        if mutation == "stale-reads" and not immediate:
            continue
        try:
            changed = _mutated(mutation, state, call) != matches
        except Exception as error:  # never reaches the test: its rerun would only show ours
            with _lock:
                run.errors.setdefault(mutation, f"{type(error).__name__}: {error}")
            continue
        if changed:
            with _lock:
                run.changed.add(mutation)
    return matches


# Reasons decided by what a test did, not by its answers: no answer needs computing for them.
_STATIC_REASONS = frozenset(
    {
        "never embedded a text or queried a store",
        "never queried a store",
        "never filtered (no where= or ids=)",
        "never filtered with where=",
    }
)


def _mutated(mutation: str, state: _StoreState, call: _Call) -> list[Any]:
    """The answer to ``call`` under ``mutation``, computed on a twin of the store."""
    store = state.store
    with _Inside():
        if mutation == "shape-only":
            return _ask(_shape_twin(state), call)
        if mutation == "filter-ignored":
            return _ask(store.with_options(), call, where=None, ids=None)
        if mutation == "filter-after-cut":
            flipped = "post" if store.filter_mode == "pre" else "pre"
            return _ask(store.with_options(filter_mode=flipped), call)
        if mutation == "ties-flipped":
            flipped = _FLIPPED_TIES.get(store.profile.tie_order, "insertion")
            return _ask(store.with_options(tie_order=flipped), call)
        if mutation == "recall-lost":
            return _ask(store.with_options(recall=store.recall / 2), call)
        if mutation == "stale-reads":
            snapshot = state.snapshot
            if snapshot is _EMPTY:
                from placeborag._store import FakeVectorStore

                snapshot = FakeVectorStore(embedder=store.embedder, **store.options)
            return _ask(snapshot, call)
        everything = _real(store, _ask(store.with_options(), call, k=_all(store, call.k)))
        if mutation == "reversed":
            return _padded(store, everything[::-1][: call.k], call.k)
        assert mutation == "k-ignored", mutation
        return _padded(store, everything, call.k)


def _ask(twin: Any, call: _Call, **changes: Any) -> list[Any]:
    k = changes.get("k", call.k)
    where = changes.get("where", call.where)
    ids = changes.get("ids", call.ids)
    if call.vector is not None:
        return list(twin.query_by_vector(call.vector, k, where, text=call.text, ids=ids))
    return list(twin.query(call.text, k, where, ids=ids))


def _all(store: Any, k: int) -> int:
    """A k that takes every record a query could rank (the store caps k at a million)."""
    return min(max(k, len(store.records()) + len(store.orphaned_ids)), 1_000_000)


def _real(store: Any, matches: list[Any]) -> list[Any]:
    """``matches`` without a FAISS-style profile's padding."""
    profile = store.profile
    if not profile.pad_missing:
        return matches
    return [m for m in matches if not (m.id == "-1" and m.text == "" and not m.metadata)]


def _padded(store: Any, matches: list[Any], k: int) -> list[Any]:
    """``matches`` padded to ``k`` as the store's profile pads a short answer."""
    profile = store.profile
    if not profile.pad_missing or len(matches) >= k:
        return matches
    from placeborag._trace import Match

    return matches + [Match("-1", "", {}, profile.pad_score)] * (k - len(matches))


def _shape_twin(state: _StoreState) -> Any:
    """The store re-embedded by the shape-only embedder (rebuilt only when its records
    changed)."""
    store = state.store
    records = store.records()
    if state.shape_twin is not None and state.shape_twin[0] is records:
        return state.shape_twin[1]
    dims = records.dimensions or getattr(store.embedder, "dimensions", None) or 256
    twin = store.reembedded(ShapeOnlyEmbedder(int(dims)))
    state.shape_twin = (records, twin)
    return twin


def used(double: str) -> None:
    """A double no mutation changes (a scorer) answered the test: it touched placeborag."""
    run = _active()
    if run is not None:
        with _lock:
            run.doubles.add(double)


# -- the shape-only embedder --------------------------------------------------------------------


def shape_vectors(texts: Sequence[str], dimensions: int) -> np.ndarray:
    """Unit float64 rows, one per text, from a hash of the text alone: the same text gives the
    same row in every process; two texts share nothing but their length."""
    out = np.empty((len(texts), dimensions), dtype=np.float64)
    for i, text in enumerate(texts):
        digest = hashlib.shake_256(
            _SHAPE_SALT + str(dimensions).encode() + b"\x00" + text.encode("utf-8", "surrogatepass")
        ).digest(2 * dimensions)
        ints = np.frombuffer(digest, dtype="<i2").astype(np.int64)
        norm2 = int(np.dot(ints, ints))  # exact: an integer sum
        if norm2 == 0:
            ints[0], norm2 = 1, 1
        out[i] = ints / math.sqrt(norm2)
    return out


class ShapeOnlyEmbedder:
    """What a store is re-embedded with under the shape-only mutation."""

    model_name = "placeborag-shape-only"

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return shape_vectors(list(texts), self.dimensions)

    def __repr__(self) -> str:
        return f"ShapeOnlyEmbedder(dimensions={self.dimensions})"


def shape_only(embedder: Any, texts: Sequence[str]) -> np.ndarray | None:
    """The FakeEmbedder hook: the shape-only vectors of ``texts`` when that mutation is on,
    else None (embed as usual). Records that the test embedded texts itself."""
    run = _active()
    if run is None:
        return None
    with _lock:
        run.doubles.add("FakeEmbedder")
        run.embedded = True
    if run.mutation != "shape-only":
        return None
    return shape_vectors(list(texts), embedder.dimensions)
