"""The explorer's only window into a store's private state, and a fast ``explain()``.

``FakeVectorStore.explain`` ranks every survivor exactly, which costs hundreds of milliseconds
at 2,000 documents; a redraw has 100. :func:`trace_query` asks the store's own ``query`` for
what a view labels (the matches, the top-k cut before a post-filter, the top-k a perfect index
would return) and reads which records the filter and the recall stage let through. Every other
document gets its float32 cosine, as the store screens it. The private attributes read here are
read nowhere else; the tests hold this module to ``explain()`` on every stage it reports.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from placeborag import FakeVectorStore, Match
from placeborag._filters import Columns

__all__ = [
    "STATUSES",
    "QueryTrace",
    "StoreRows",
    "reembedded",
    "store_rows",
    "trace_query",
    "with_options",
]

RETURNED = "returned"
DROPPED = "dropped by post-filter"
LOST = "lost to recall"
FILTERED = "filtered out"
BELOW = "below the cut"
STATUSES = (RETURNED, DROPPED, LOST, FILTERED, BELOW)
_STATUS_NAMES = np.array(STATUSES, dtype=object)


@dataclass(frozen=True)
class StoreRows:
    """The visible records of a store in insertion order, with their float32 vectors."""

    rows: np.ndarray  # the store's row numbers
    ids: list[str]
    texts: list[str]
    metadatas: list[dict[str, Any]]
    vectors: np.ndarray  # (n, d) float32: a copy, or the matrix of a twin made from it

    @cached_property
    def position(self) -> dict[str, int]:
        """id -> index in these rows (built once per snapshot)."""
        return {doc_id: i for i, doc_id in enumerate(self.ids)}


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
    ``cosine[i]`` is float32-screened; ``score[i]`` is the profile's number for it, exactly the
    reported one for every document with a rank.
    """

    text: str
    k: int
    where: dict[str, Any] | None
    filter_mode: str
    recall: float
    higher_is_better: bool
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

    The rankings come from the store's own ``query`` on private twins (see
    :func:`with_options`), so the caller's query log and injected failures are untouched.
    Raises what ``store.query`` raises for a bad ``k`` or a malformed ``where``.
    """
    text, k, predicate = store._check_query(text, k, where)
    if rows is None:
        rows = store_rows(store)
    n = len(rows.ids)
    position = rows.position
    post = predicate is not None and store.filter_mode == "post"
    pre = predicate is not None and not post
    lossy = store.recall < 1.0
    with store._lock:
        alive = rows.rows
        mask = store._filter_mask(predicate) if predicate is not None else None
        passing = alive[mask[alive]] if pre else alive
        survivors = store._recall_survivors(text, passing) if lossy else passing
    twin = with_options(store)
    if post:
        # A post-filter keeps the matches of the unfiltered top-k that pass: one ranking
        # serves both (the tests hold this to explain()).
        cut = tuple(twin.query(text, k))
        matches = tuple(m for m in cut if mask[alive[position[m.id]]])
    else:
        matches = cut = tuple(twin.query(text, k, where))
    if not lossy:
        ideal = matches
    elif post:
        perfect = tuple(with_options(store, recall=1.0).query(text, k))
        ideal = tuple(m for m in perfect if mask[alive[position[m.id]]])
    else:
        ideal = tuple(with_options(store, recall=1.0).query(text, k, where))
    # The store's own query path: a replay embedder keeps queries apart from documents.
    qvector = store._query_vector(text)[0]
    cosine = (rows.vectors @ qvector.astype(np.float32)).astype(np.float64)
    score = profile_scores(store, cosine)
    for m in (*ideal, *cut, *matches):  # reported scores are exact: use them where known
        score[position[m.id]] = m.score

    def ranks(selected: tuple[Match, ...]) -> np.ndarray:
        out = np.zeros(n, dtype=np.int64)
        out[[position[m.id] for m in selected]] = np.arange(1, len(selected) + 1)
        return out

    rank, cut_rank, ideal_rank = ranks(matches), ranks(cut), ranks(ideal)
    index = np.full(store._count, -1, dtype=np.int64)
    index[alive] = np.arange(n)
    code = np.full(n, STATUSES.index(BELOW), dtype=np.intp)  # small codes, named at the end
    if pre:
        code[index[alive[~mask[alive]]]] = STATUSES.index(FILTERED)
    survived = np.zeros(n, dtype=bool)
    survived[index[survivors]] = True
    code[~survived & (code == STATUSES.index(BELOW))] = STATUSES.index(LOST)
    code[(cut_rank > 0) & (rank == 0)] = STATUSES.index(DROPPED)
    code[rank > 0] = STATUSES.index(RETURNED)
    status = _STATUS_NAMES[code]
    counts = {
        "candidates": n,
        "pass filter": int(passing.size) if pre else n,
        "survive recall": int(survivors.size),
        "top-k cut": len(cut),
        "returned": len(matches),
    }
    return QueryTrace(
        text=text,
        k=k,
        where=dict(where) if where is not None else None,
        filter_mode=store.filter_mode,
        recall=store.recall,
        higher_is_better=store.profile.higher_is_better,
        ids=rows.ids,
        status=status,
        rank=rank,
        cut_rank=cut_rank,
        ideal_rank=ideal_rank,
        cosine=cosine,
        score=score,
        matches=matches,
        counts=counts,
        query_vector=qvector,
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
    twin = _twin(store)
    twin._profile = probe._profile
    twin._filter_mode = probe._filter_mode
    twin._recall = probe._recall
    return twin


def _twin(store: FakeVectorStore) -> FakeVectorStore:
    """A shallow copy of ``store`` sharing its records, with its own empty query log, pending
    writes and injected failures."""
    with store._lock:
        if store._columns is None:
            # Build the filter columns once on the source, as its first filtered query
            # would, so that every twin shares them instead of rebuilding them per query.
            store._columns = Columns(store._metas)
        twin = copy.copy(store)
    twin._queries = []
    twin._failures = []
    twin._pending = []
    return twin


def reembedded(
    store: FakeVectorStore,
    rows: StoreRows,
    embedder: Any,
    *,
    unchanged: tuple[StoreRows, np.ndarray] | None = None,
) -> tuple[FakeVectorStore, StoreRows]:
    """A twin of ``store`` whose records (``rows``, from :func:`store_rows`) are embedded by
    ``embedder``, and its rows.

    What a new store built from the same documents would hold, row for row (the records were
    validated when ``store`` was written, so they are not checked again), at the cost of the
    embedding alone. ``unchanged=(other_rows, keep)`` takes the vectors of the rows where
    ``keep`` is True from ``other_rows`` instead of embedding them: for a FakeEmbedder that
    differs only in ``cluster_spread``, every text outside the clusters has the same vector.
    The twin shares the record lists, which queries only read; its query log, pending
    writes and injected failures start empty.
    """
    FakeVectorStore(embedder=embedder)  # the library's own check of the embedder
    twin = _twin(store)
    twin._embedder = embedder
    twin._dimensions = None  # set from the embedder's output, as for a new store
    if unchanged is None:
        vectors = twin._embed_documents(rows.texts)
    else:
        other, keep = unchanged
        vectors = np.array(other.vectors, dtype=np.float32)
        embed = np.flatnonzero(~keep)
        if embed.size:
            vectors[embed] = twin._embed_documents([rows.texts[i] for i in embed])
        else:
            twin._dimensions = vectors.shape[1]
    if np.array_equal(rows.rows, np.arange(twin._count)):
        # Every row is visible (nothing deleted): the rows' vectors are the matrix itself,
        # shared with the twin, which is only ever queried.
        matrix = visible = np.asarray(vectors, dtype=np.float32)
    else:
        matrix = np.zeros((twin._count, vectors.shape[1]), dtype=np.float32)
        matrix[rows.rows] = vectors
        visible = matrix[rows.rows]
    twin._vectors = matrix
    out = StoreRows(
        rows=rows.rows, ids=rows.ids, texts=rows.texts, metadatas=rows.metadatas, vectors=visible
    )
    if "position" in rows.__dict__:  # the same ids: share the index built for them
        out.__dict__["position"] = rows.position
    return twin, out
