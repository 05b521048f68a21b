"""The explorer's only window into a store's private state, and a fast ``explain()``.

``FakeVectorStore.explain`` ranks every survivor exactly, which costs about a second at 2,000
documents; a redraw has 100 ms. :func:`trace_query` takes the same path through the store
(filter, recall, top-k cut, post-filter) but ranks exactly only what a view labels: the top-k
and the top-k a perfect index would return. Every other document gets its float32 cosine, as
the store screens it. The tests hold this module to ``explain()`` on every stage it reports.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from placeborag import FakeVectorStore, Match

__all__ = ["STATUSES", "QueryTrace", "StoreRows", "store_rows", "trace_query", "with_options"]

RETURNED = "returned"
DROPPED = "dropped by post-filter"
LOST = "lost to recall"
FILTERED = "filtered out"
BELOW = "below the cut"
STATUSES = (RETURNED, DROPPED, LOST, FILTERED, BELOW)


@dataclass(frozen=True)
class StoreRows:
    """The visible records of a store in insertion order, with their float32 vectors."""

    rows: np.ndarray  # the store's row numbers
    ids: list[str]
    texts: list[str]
    metadatas: list[dict[str, Any]]
    vectors: np.ndarray  # (n, d) float32, a copy


def store_rows(store: FakeVectorStore) -> StoreRows:
    with store._lock:
        # Rows are appended and compaction keeps their order, so row order is insertion order.
        rows = np.flatnonzero(store._alive[: store._count])
        return StoreRows(
            rows=rows,
            ids=[store._ids[r] for r in rows],
            texts=[store._texts[r] for r in rows],
            metadatas=[dict(store._metas[r] or {}) for r in rows],
            vectors=np.array(store._vectors[rows], dtype=np.float32),
        )


@dataclass(frozen=True)
class QueryTrace:
    """One query's path through a store, aligned with :func:`store_rows` (index ``i``).

    ``status[i]`` is one of :data:`STATUSES`; ``rank[i]`` is the 1-based rank among the returned
    matches (0 otherwise); ``cut_rank[i]`` the rank at the top-k cut (before a post-filter);
    ``ideal_rank[i]`` the rank a perfect index (``recall=1``) would give it in the top-k.
    ``cosine[i]`` is exact for every document with a rank, float32-screened otherwise.
    """

    text: str
    k: int
    where: dict[str, Any] | None
    filter_mode: str
    recall: float
    ids: list[str]
    status: np.ndarray
    rank: np.ndarray
    cut_rank: np.ndarray
    ideal_rank: np.ndarray
    cosine: np.ndarray
    score: np.ndarray
    matches: tuple[Match, ...]
    counts: dict[str, int]
    query_vector: np.ndarray

    @property
    def top_k(self) -> list[str]:
        return _ids_by(self.cut_rank, self.ids)

    @property
    def ideal_top_k(self) -> list[str]:
        return _ids_by(self.ideal_rank, self.ids)


def _ids_by(rank: np.ndarray, ids: list[str]) -> list[str]:
    idx = np.flatnonzero(rank)
    return [ids[i] for i in idx[np.argsort(rank[idx])]]


def profile_scores(store: FakeVectorStore, cosines: np.ndarray) -> np.ndarray:
    """The profile's reported number for each cosine."""
    score = store.profile.score
    try:
        out = np.asarray(score(cosines), dtype=np.float64)
        if out.shape == cosines.shape:
            return out
    except TypeError:
        pass
    return np.array([score(float(c)) for c in cosines], dtype=np.float64)


def trace_query(
    store: FakeVectorStore,
    text: str,
    k: int,
    where: Mapping[str, Any] | None = None,
    *,
    rows: StoreRows | None = None,
) -> QueryTrace:
    """Run ``text`` through ``store`` like ``explain()`` does, without recording the query.

    Raises what ``store.query`` raises for a bad ``k`` or a malformed ``where``.
    """
    text, k, predicate = store._check_query(text, k, where)
    if rows is None:
        rows = store_rows(store)
    n = len(rows.ids)
    with store._lock:
        alive = rows.rows
        position = np.full(store._count, -1, dtype=np.int64)
        position[alive] = np.arange(n)
        mask = store._filter_mask(predicate) if predicate is not None else None
        pre = mask is not None and store.filter_mode == "pre"
        post = mask is not None and store.filter_mode == "post"
        passing = alive[mask[alive]] if pre else alive
        lossy = store.recall < 1.0
        survivors = store._recall_survivors(text, passing) if lossy else passing
        qfloat, qexact = store._query_vector(text)
        order, exact = store._rank(survivors, qfloat, qexact, k) if n else ([], {})
        final = [r for r in order if mask[r]] if post else order
        if lossy and survivors.size < passing.size and n:
            ideal, more = store._rank(passing, qfloat, qexact, k)
            exact = {**more, **exact}
        else:
            ideal = order
        if post:
            ideal = [r for r in ideal if mask[r]]
        matches = tuple(store._match(r, store.profile.score(exact[r])) for r in final)

    cosine = (rows.vectors @ qfloat.astype(np.float32)).astype(np.float64)
    exact_rows = np.fromiter(exact, dtype=np.int64, count=len(exact))
    cosine[position[exact_rows]] = np.fromiter(exact.values(), dtype=np.float64, count=len(exact))

    def ranks(selected: list[int]) -> np.ndarray:
        out = np.zeros(n, dtype=np.int64)
        out[position[np.asarray(selected, dtype=np.int64)]] = np.arange(1, len(selected) + 1)
        return out

    rank, cut_rank, ideal_rank = ranks(final), ranks(order), ranks(ideal)
    status = np.full(n, BELOW, dtype=object)
    if pre:
        status[position[alive[~mask[alive]]]] = FILTERED
    survived = np.zeros(n, dtype=bool)
    survived[position[survivors]] = True
    status[~survived & (status == BELOW)] = LOST
    status[(cut_rank > 0) & (rank == 0)] = DROPPED
    status[rank > 0] = RETURNED
    counts = {
        "candidates": n,
        "pass filter": int(passing.size) if pre else n,
        "survive recall": int(survivors.size),
        "top-k cut": len(order),
        "returned": len(final),
    }
    return QueryTrace(
        text=text,
        k=k,
        where=dict(where) if where is not None else None,
        filter_mode=store.filter_mode,
        recall=store.recall,
        ids=rows.ids,
        status=status,
        rank=rank,
        cut_rank=cut_rank,
        ideal_rank=ideal_rank,
        cosine=cosine,
        score=profile_scores(store, cosine),
        matches=matches,
        counts=counts,
        query_vector=np.asarray(qfloat, dtype=np.float64),
    )


def with_options(store: FakeVectorStore, **options: Any) -> FakeVectorStore:
    """A view of ``store`` with other ``profile``/``filter_mode``/``recall``, sharing its rows.

    The options are validated by the library (a throwaway store is built with them); the
    copy shares the record arrays, which queries only read, so no document is re-embedded.
    """
    allowed = {"profile", "filter_mode", "recall"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise TypeError(f"unknown store option(s) {unknown}; expected some of {sorted(allowed)}")
    current = {
        "profile": store.profile,
        "filter_mode": store.filter_mode,
        "recall": store.recall,
    }
    probe = FakeVectorStore(embedder=store.embedder, **{**current, **options})
    twin = copy.copy(store)
    twin._profile = probe._profile
    twin._filter_mode = probe._filter_mode
    twin._recall = probe._recall
    twin._queries = []
    twin._failures = []
    twin._pending = []
    return twin
