"""Hybrid retrieval: a deterministic keyword scorer, reciprocal rank fusion and a retriever on both.

Everything here is exact. The keyword scorer is BM25 computed in rational arithmetic: the one
transcendental step, the logarithm in the inverse document frequency, comes from
:mod:`decimal`, whose ``ln`` is correctly rounded on every platform, and is then carried as a
:class:`~fractions.Fraction`. Reciprocal rank fusion sums ``weight / (rank_constant + rank)`` as
fractions too, so the fused order does not depend on the order in which the ranked lists are
given, and every reported score is the correctly rounded float of an exact value: the same
candidates in give the same order and the same bits out, on any machine.

Orders, from best to worst:

* keyword search: higher BM25 first, then the order in which the documents were added;
* fusion: higher fused score first, then the better single rank a candidate reached in any list,
  then ascending id (plain ``str`` ordering), so a tie never depends on which list came first.
"""

from __future__ import annotations

import decimal
import math
import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from placeborag._errors import PlaceboragTypeError, PlaceboragValueError
from placeborag._filters import compile_filter, copy_filter, filter_rules
from placeborag._querylog import DEFAULT_QUERY_LOG, QueryLog, check_query_log
from placeborag._results import Match, QueryRecord
from placeborag._threads import FreshLocks
from placeborag._validation import check_k, shown

__all__ = [
    "FusedMatch",
    "HybridExplanation",
    "HybridRetriever",
    "KeywordIndex",
    "keyword_scores",
    "reciprocal_rank_fusion",
    "tokenize",
]

_TOKEN = re.compile(r"\w+")
_LN_DIGITS = 40  # far beyond float64: the rounding to float happens once, at the end


def tokenize(text: str) -> list[str]:
    """The keyword scorer's tokens: runs of word characters, case-folded (any script)."""
    if not isinstance(text, str):
        raise PlaceboragTypeError(f"text={shown(text)} must be a str, not {type(text).__name__}")
    return _TOKEN.findall(text.casefold())


def _check_number(value: object, name: str, *, low: float, strict: bool) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise PlaceboragTypeError(
            f"{name}={shown(value)} must be a number, not {type(value).__name__}"
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise PlaceboragValueError(f"{name}={shown(value)} must be finite")
    exact = Fraction(value)
    if exact < low or (strict and exact == low):
        raise PlaceboragValueError(f"{name}={shown(value)} must be {'>' if strict else '>='} {low}")
    return exact


def _check_count(value: object, name: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PlaceboragTypeError(
            f"{name}={shown(value)} must be an int, not {type(value).__name__}"
        )
    if value < minimum:
        raise PlaceboragValueError(f"{name}={shown(value)} must be >= {minimum}")
    return value


def _ln(x: Fraction) -> Fraction:
    """The natural logarithm of a positive rational, correctly rounded to 40 digits."""
    with decimal.localcontext() as ctx:
        ctx.prec = _LN_DIGITS
        value = (decimal.Decimal(x.numerator) / decimal.Decimal(x.denominator)).ln()
    return Fraction(value)


# -- keyword scoring ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Doc:
    id: str
    text: str
    metadata: dict[str, Any] | None
    counts: dict[str, int]
    length: int


class KeywordIndex(FreshLocks):
    """A BM25 keyword index with exact arithmetic (see the module docstring for the orders).

    ``k1`` (term-frequency saturation, > 0) and ``b`` (length normalisation, 0..1) are the usual
    BM25 knobs. The inverse document frequency is ``ln(1 + (N - n + 0.5) / (n + 0.5))``, which
    stays positive, so any shared token raises a document's score. A query token counts once
    however often the query repeats it.
    """

    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        self._k1 = _check_number(k1, "k1", low=0, strict=True)
        self._b = _check_number(b, "b", low=0, strict=False)
        if self._b > 1:
            raise PlaceboragValueError(f"b={shown(b)} must be between 0 and 1")
        self._docs: dict[str, _Doc] = {}
        self._df: dict[str, int] = {}
        self._total_length = 0
        self._idf: dict[tuple[int, int], Fraction] = {}
        self._prepared: _Prepared | None = None  # made on the first query after a change
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"KeywordIndex(k1={float(self._k1)!r}, b={float(self._b)!r}, documents={len(self)})"

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, id: object) -> bool:
        return id in self._docs

    @property
    def ids(self) -> tuple[str, ...]:
        """The indexed ids, in the order they were first added."""
        return tuple(self._docs)

    def add(self, id: str, text: str, metadata: Mapping[str, Any] | None = None) -> None:
        """Index one document; adding an existing id replaces it and keeps its position."""
        if not isinstance(id, str) or not id:
            raise PlaceboragTypeError(f"id={shown(id)} must be a non-empty str")
        tokens = tokenize(text)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise PlaceboragTypeError(
                f"metadata={shown(metadata)} must be a dict or None, not {type(metadata).__name__}"
            )
        counts = dict(Counter(tokens))  # counted in C, in order of first occurrence
        doc = _Doc(id, text, dict(metadata) if metadata else None, counts, len(tokens))
        with self._lock:
            self._forget(id)
            self._docs[id] = doc
            for token in counts:
                self._df[token] = self._df.get(token, 0) + 1
            self._total_length += doc.length

    def add_many(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> None:
        """Index many documents, in order."""
        ids, texts = list(ids), list(texts)
        metas = [None] * len(ids) if metadatas is None else list(metadatas)
        if not len(ids) == len(texts) == len(metas):
            raise PlaceboragValueError(
                f"ids, texts and metadatas have {len(ids)}, {len(texts)} and {len(metas)} items; "
                "they must have the same length"
            )
        for id, text, meta in zip(ids, texts, metas):
            self.add(id, text, meta)

    def remove(self, id: str) -> None:
        """Remove a document; an unknown id raises."""
        with self._lock:
            if id not in self._docs:
                raise PlaceboragValueError(f"unknown id {shown(id)}")
            self._forget(id)
            del self._docs[id]

    def _forget(self, id: str) -> None:
        """Take a document's tokens out of the statistics."""
        # The slot itself stays in _docs, so a rewritten document keeps its position.
        self._prepared = None
        old = self._docs.get(id)
        if old is None:
            return
        for token in old.counts:
            self._df[token] -= 1
            if not self._df[token]:
                del self._df[token]
        self._total_length -= old.length

    def _prepare(self) -> _Prepared:
        """The per-version scoring state (postings, exact contributions), made once after a
        change and kept until the next (called with the lock held)."""
        if self._prepared is None:
            n = len(self._docs)
            avg = (Fraction(self._total_length, n) if n else Fraction(0)) or Fraction(1)
            self._prepared = _Prepared(list(self._docs.values()), self._k1, self._b, avg)
        return self._prepared

    def _idf_of(self, df: int) -> Fraction:
        n = len(self._docs)
        idf = self._idf.get((n, df))
        if idf is None:
            idf = _ln(1 + Fraction(2 * (n - df) + 1, 2 * df + 1))
            self._idf[(n, df)] = idf
        return idf

    def _terms(self, query: str) -> list[_Term]:
        prepared = self._prepare()
        out = []
        for term in dict.fromkeys(tokenize(query)):
            df = self._df.get(term, 0)
            if df:
                out.append(prepared.term(term, self._idf_of(df)))
        return out

    def _exact_scores(self, query: str) -> dict[str, Fraction]:
        """The exact BM25 score of every document sharing a token with ``query``."""
        terms = self._terms(query)
        if not terms:
            return {}
        prepared = self._prepared
        assert prepared is not None
        positions = _matched(terms, len(prepared.docs)).tolist()
        exact = prepared.exact(terms, positions)
        return {prepared.docs[p].id: exact[p] for p in positions}

    def scores(self, query: str) -> dict[str, float]:
        """The BM25 score of every document sharing a token with ``query``, in index order."""
        with self._lock:
            exact = self._exact_scores(query)
            return {id: float(value) for id, value in exact.items()}

    def search(self, query: str, k: int = 10, where: Mapping[str, Any] | None = None) -> list[Any]:
        """The best ``k`` documents for ``query`` as Match objects (score: BM25, higher is better).

        ``where`` uses the store's filter language and rules (a missing key never matches).
        """
        return self._search(query, check_k(k), compile_filter(where))

    def _search(self, query: str, k: int, predicate: Any) -> list[Any]:
        with self._lock:
            terms = self._terms(query)
            if not terms:
                return []
            prepared = self._prepared
            assert prepared is not None
            candidates = prepared.candidates(terms, k, predicate)
            exact = prepared.exact(terms, candidates)
            ranked = sorted(candidates, key=lambda p: (-exact[p], p))[:k]
            out = []
            for p in ranked:
                doc = prepared.docs[p]
                out.append(Match(doc.id, doc.text, dict(doc.metadata or {}), float(exact[p])))
            return out


# The relative error of a float score: each term's contribution is the correctly rounded float
# of its exact value (error <= 2**-53 of it); adding m positive floats adds at most m * 2**-53 of
# the sum. Twice that bound, so the pruning below never drops a document the exact order keeps.
_ULP = 2.0**-52
_SAFE = float(np.finfo(np.float64).tiny) * 2.0**60  # far above the subnormals


def _matched(terms: list[_Term], n: int) -> np.ndarray:
    """The positions holding any of ``terms``, in index order."""
    mask = np.zeros(n, dtype=bool)
    for term in terms:
        mask[term.positions] = True
    return np.flatnonzero(mask)


def _walk(
    docs: list[_Doc],
    order: list[int],
    values: list[float],
    k: int,
    eps: float,
    predicate: Any,
    exact_only: bool,
) -> tuple[list[int], bool]:
    """The passing positions of ``order`` (best float first) the bound cannot rule out, and
    whether the walk stopped at the bound (so nothing after ``order`` can be kept either)."""
    low = -1.0
    out: list[int] = []
    for p, value in zip(order, values):
        if value * (1 + eps) < low:
            return out, True
        if predicate is not None and not predicate.matches(docs[p].metadata):
            continue
        out.append(p)
        if len(out) == k and not exact_only:
            low = value * (1 - eps)
    return out, False


@dataclass
class _Term:
    """One query term over one index version: the documents holding it (positions in index
    order), its exact contribution per (term frequency, length), and each posting's float."""

    token: str
    idf: Fraction
    positions: np.ndarray
    exact: dict[tuple[int, int], Fraction]
    floats: np.ndarray
    safe: bool  # every float far above the subnormals, so its relative error is bounded


class _Prepared:
    """What exact scoring needs of one index version, made once, per term on first use.

    A query's float scores (numpy, over the postings) bound every document's exact score
    within a proven relative error; only the documents that bound cannot rule out of the top
    ``k`` get an exact (rational) score, memoised per term frequencies and length. Scores and
    order are the exact ones, as a scan of every document in rationals gives.
    """

    def __init__(self, docs: list[_Doc], k1: Fraction, b: Fraction, avg: Fraction) -> None:
        self.docs = docs
        self.k1, self.b, self.avg = k1, b, avg
        self.lengths = np.array([d.length for d in docs], dtype=np.int64)
        self.norms: dict[int, Fraction] = {}
        self.terms: dict[tuple[str, Fraction], _Term] = {}

    def contribution(self, idf: Fraction, tf: int, length: int) -> Fraction:
        norm = self.norms.get(length)
        if norm is None:
            k1, b = self.k1, self.b
            norm = self.norms[length] = k1 * (1 - b + b * Fraction(length) / self.avg)
        return idf * tf * (self.k1 + 1) / (tf + norm)

    def term(self, token: str, idf: Fraction) -> _Term:
        found = self.terms.get((token, idf))
        if found is not None:
            return found
        positions = [p for p, d in enumerate(self.docs) if token in d.counts]
        tfs = [self.docs[p].counts[token] for p in positions]
        where = np.array(positions, dtype=np.int64)
        keys = np.array(tfs, dtype=np.int64) * (int(self.lengths.max()) + 1) + self.lengths[where]
        unique, inverse = np.unique(keys, return_inverse=True)
        exact: dict[tuple[int, int], Fraction] = {}
        floats = np.empty(unique.size, dtype=np.float64)
        for i, p in enumerate(where[np.unique(inverse, return_index=True)[1]].tolist()):
            tf, length = self.docs[p].counts[token], self.docs[p].length
            exact[(tf, length)] = value = self.contribution(idf, tf, length)
            floats[i] = float(value)
        made = self.terms[(token, idf)] = _Term(
            token,
            idf,
            where,
            exact,
            floats[inverse],
            bool(floats.size == 0 or floats.min() >= _SAFE),
        )
        return made

    def candidates(self, terms: list[_Term], k: int, predicate: Any) -> list[int]:
        """Positions that may be among the best ``k`` passing ``predicate``: every passing
        document whose float score, raised by the error bound, reaches the ``k``-th best
        lowered by it (a document below that has ``k`` better ones, exactly)."""
        approx = np.zeros(len(self.docs), dtype=np.float64)
        for term in terms:
            approx[term.positions] += term.floats
        matched = _matched(terms, len(self.docs))
        scores = approx[matched]
        exact_only = not all(t.safe for t in terms)
        eps = (len(terms) + 2) * _ULP
        take = min(scores.size, max(4 * k, 256))
        while True:
            # The best ``take`` floats (all of them at the end), best first, ties in index order.
            if take < scores.size:
                best = np.argpartition(-scores, take - 1)[:take]
                best = best[np.lexsort((best, -scores[best]))]
            else:
                best = np.argsort(-scores, kind="stable")
            out, done = _walk(
                self.docs,
                matched[best].tolist(),
                scores[best].tolist(),
                k,
                eps,
                predicate,
                exact_only,
            )
            if done or take == scores.size:
                return out
            take = min(scores.size, take * 8)

    def exact(self, terms: list[_Term], positions: list[int]) -> dict[int, Fraction]:
        """The exact score of each position (memoised by its term frequencies and length)."""
        memo: dict[tuple[int, ...], Fraction] = {}
        out: dict[int, Fraction] = {}
        for p in positions:
            doc = self.docs[p]
            counts, length = doc.counts, doc.length
            key = (length, *[counts.get(t.token, 0) for t in terms])
            value = memo.get(key)
            if value is None:
                value = Fraction(0)
                for t, tf in zip(terms, key[1:]):
                    if tf:
                        value += t.exact[(tf, length)]
                memo[key] = value
            out[p] = value
        return out


def keyword_scores(
    query: str, documents: Mapping[str, str], *, k1: float = 1.2, b: float = 0.75
) -> dict[str, float]:
    """BM25 scores of ``documents`` (id -> text) for ``query``; ids sharing no token are absent."""
    if not isinstance(documents, Mapping):
        raise PlaceboragTypeError(
            f"documents={shown(documents)} must be a dict of id -> text, not "
            f"{type(documents).__name__}"
        )
    index = KeywordIndex(k1=k1, b=b)
    index.add_many(list(documents), list(documents.values()))
    return index.scores(query)


# -- reciprocal rank fusion -----------------------------------------------------------------------


@dataclass(frozen=True)
class FusedMatch:
    """One fused candidate: its id, fused score (higher is better) and 1-based rank per input list.

    ``ranks`` is keyed like the input: by list name when the rankings were a dict, by list
    position otherwise; a list that did not contain the candidate has no entry.
    """

    id: str
    score: float
    ranks: dict[Any, int] = field(compare=False)


def _item_id(item: object, where: str) -> str:
    value = item if isinstance(item, str) else getattr(item, "id", None)
    if not isinstance(value, str) or not value:
        raise PlaceboragTypeError(
            f"{where}={shown(item)} must be a non-empty str id or an object with a str .id"
        )
    return value


def _named_lists(rankings: object, weights: object) -> list[tuple[Any, list[str], Fraction]]:
    if isinstance(rankings, Mapping):
        keys = list(rankings)
        lists = [rankings[key] for key in keys]
    elif isinstance(rankings, (str, bytes)) or not isinstance(rankings, Iterable):
        raise PlaceboragTypeError(
            f"rankings={shown(rankings)} must be a list of ranked lists or a dict of them, "
            f"not {type(rankings).__name__}"
        )
    else:
        lists = list(rankings)
        keys = list(range(len(lists)))
    if weights is None:
        factors = [Fraction(1)] * len(keys)
    elif isinstance(rankings, Mapping):
        if not isinstance(weights, Mapping) or set(weights) != set(keys):
            raise PlaceboragValueError(
                f"weights={shown(weights)} must be a dict with exactly the keys of rankings "
                f"({', '.join(map(repr, keys))})"
            )
        factors = [
            _check_number(weights[k], f"weights[{shown(k)}]", low=0, strict=False) for k in keys
        ]
    else:
        if isinstance(weights, Mapping) or not isinstance(weights, Sequence):
            raise PlaceboragTypeError(
                f"weights={shown(weights)} must be a list with one number per ranked list"
            )
        if len(weights) != len(keys):
            raise PlaceboragValueError(
                f"weights has {len(weights)} items and rankings has {len(keys)}; "
                "they must have the same length"
            )
        factors = [
            _check_number(w, f"weights[{i}]", low=0, strict=False) for i, w in enumerate(weights)
        ]
    out = []
    for key, ranked, factor in zip(keys, lists, factors):
        if isinstance(ranked, (str, bytes)) or not isinstance(ranked, Iterable):
            raise PlaceboragTypeError(
                f"rankings[{shown(key)}]={shown(ranked)} must be a list of ids or matches, "
                f"not {type(ranked).__name__}"
            )
        ids = [_item_id(item, f"rankings[{shown(key)}][{i}]") for i, item in enumerate(ranked)]
        out.append((key, ids, factor))
    return out


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Any]] | Mapping[Any, Sequence[Any]],
    *,
    rank_constant: int = 60,
    weights: Sequence[float | Fraction] | Mapping[Any, float | Fraction] | None = None,
    limit: int | None = None,
) -> list[FusedMatch]:
    """Fuse ranked lists into one: each list adds ``weight / (rank_constant + rank)`` per candidate.

    ``rankings`` is a list of ranked lists (or a dict name -> list); an item is an id or any
    object with an ``id`` (a :class:`~placeborag.Match`). Ranks start at 1; an id that repeats
    within one list counts at its first (best) position only. The result is cut to ``limit``
    items when given (the packing budget); no input, or only empty lists, gives ``[]``.
    Reordering the input lists (with their weights) never changes the output.
    """
    constant = _check_count(rank_constant, "rank_constant", minimum=0)
    budget = None if limit is None else _check_count(limit, "limit", minimum=0)
    totals: dict[str, Fraction] = {}
    best: dict[str, int] = {}
    ranks: dict[str, dict[Any, int]] = {}
    for key, ids, factor in _named_lists(rankings, weights):
        for rank, id in enumerate(dict.fromkeys(ids), start=1):
            totals[id] = totals.get(id, Fraction(0)) + factor / (constant + rank)
            best[id] = min(best.get(id, rank), rank)
            ranks.setdefault(id, {})[key] = rank
    order = sorted(totals, key=lambda id: (-totals[id], best[id], id))
    if budget is not None:
        order = order[:budget]
    return [FusedMatch(id, float(totals[id]), ranks[id]) for id in order]


# -- hybrid retrieval -----------------------------------------------------------------------------


@dataclass(frozen=True)
class HybridExplanation:
    """Both halves of one hybrid query and their fusion, for assertions and explanations."""

    text: str
    k: int
    where: dict[str, Any] | None
    vector: tuple[Any, ...]
    keyword: tuple[Any, ...]
    fused: tuple[FusedMatch, ...]
    matches: tuple[Any, ...]


class HybridRetriever(FreshLocks):
    """Vector search on a :class:`~placeborag.FakeVectorStore` and BM25 keyword search, fused (RRF).

    Each half returns its best ``candidates`` records (both honour ``where``); the fused list is
    cut to ``k``. The keyword half indexes the store's visible records (``store.records()``, one
    consistent view, so a delete on another thread never leaves it an id it cannot read), and
    keeps that index until the records change (``records().version``, the store's change
    counter, moves): writes, deletes and ``visibility="manual"`` apply to it as they do to
    vector search, and a query with no write since the last builds nothing.
    A returned Match
    carries the fused score (higher is better), whatever the store's profile reports.
    ``weights`` is ``(vector, keyword)``.
    """

    def __init__(
        self,
        store: Any,
        *,
        candidates: int = 50,
        rank_constant: int = 60,
        weights: tuple[float, float] = (1, 1),
        k1: float = 1.2,
        b: float = 0.75,
    ) -> None:
        if not callable(getattr(store, "query", None)) or not callable(
            getattr(store, "records", None)
        ):
            raise PlaceboragTypeError(f"store={shown(store)} must be a FakeVectorStore")
        self._candidates = _check_count(candidates, "candidates", minimum=1)
        self._rank_constant = _check_count(rank_constant, "rank_constant", minimum=0)
        if not isinstance(weights, (tuple, list)) or len(weights) != 2:
            raise PlaceboragTypeError(
                f"weights={shown(weights)} must be a pair (vector weight, keyword weight)"
            )
        self._weights = {
            "vector": _check_number(weights[0], "weights[0]", low=0, strict=False),
            "keyword": _check_number(weights[1], "weights[1]", low=0, strict=False),
        }
        KeywordIndex(k1=k1, b=b)  # validates both before anything is stored
        self._k1, self._b = k1, b
        self._store = store
        # As many recent queries as the store keeps of its own (its query_log option).
        options = getattr(store, "options", None)
        limit = (
            options.get("query_log", DEFAULT_QUERY_LOG) if isinstance(options, Mapping) else None
        )
        self._queries = QueryLog(check_query_log(limit))
        self._lock = threading.RLock()
        # The records version the index was built at (StoreRecords.version, the store's change
        # counter) and the index: rebuilt only when the version changes.
        self._indexed: tuple[int, KeywordIndex] | None = None

    @property
    def store(self) -> Any:
        return self._store

    @property
    def queries(self) -> tuple[Any, ...]:
        """The hybrid queries received, oldest first (the store also records its own half):
        the most recent ``query_log`` of them, as many as the store keeps."""
        with self._lock:
            return tuple(self._queries.records)

    @property
    def query_count(self) -> int:
        """How many hybrid queries this retriever received, kept in :attr:`queries` or not."""
        return self._queries.count

    def __repr__(self) -> str:
        return (
            f"HybridRetriever(store={self._store!r}, candidates={self._candidates}, "
            f"rank_constant={self._rank_constant})"
        )

    def _keyword_index(self) -> KeywordIndex:
        records = self._store.records()
        with self._lock:
            if self._indexed is not None and self._indexed[0] == records.version:
                return self._indexed[1]
        index = KeywordIndex(k1=self._k1, b=self._b)
        index.add_many(records.ids, records.texts, list(records.metadata))
        with self._lock:
            self._indexed = (records.version, index)
        return index

    def _run(
        self,
        text: str,
        k: int | None,
        where: Mapping[str, Any] | None,
        context: Mapping[str, Any] | None = None,
    ) -> HybridExplanation:
        if k is None:
            k = self._store.profile.default_k
        k = check_k(k)
        if context is not None and not isinstance(context, Mapping):
            raise PlaceboragTypeError(
                f"context={shown(context)} must be a dict or None, not {type(context).__name__}"
            )
        where_copy = copy_filter(dict(where)) if where is not None else None
        context_copy = copy_filter(dict(context)) if context is not None else None
        with self._lock:
            self._queries.add(QueryRecord(text, k, where_copy, context_copy))
        # FAISS-style padding ("-1" slots) is not a candidate: a real fusion step drops it.
        # The context goes with the vector half, so the store records (and may read) it.
        vector = [
            m
            for m in self._store.query(text, k=self._candidates, where=where, context=context)
            if m.id != "-1"
        ]
        # The keyword half filters with the store's own rules, engine semantics included.
        predicate = compile_filter(
            where, filter_rules(self._store.profile, self._store.filter_semantics)
        )
        keyword = self._keyword_index()._search(text, self._candidates, predicate)
        fused = reciprocal_rank_fusion(
            {"vector": vector, "keyword": keyword},
            rank_constant=self._rank_constant,
            weights=self._weights,
            limit=k,
        )
        records = {m.id: m for m in (*keyword, *vector)}
        matches = tuple(
            Match(f.id, records[f.id].text, dict(records[f.id].metadata), f.score) for f in fused
        )
        return HybridExplanation(
            text, k, where_copy, tuple(vector), tuple(keyword), tuple(fused), matches
        )

    def query(
        self,
        text: str,
        k: int | None = None,
        where: Mapping[str, Any] | None = None,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> list[Any]:
        """The best ``k`` records by fused rank (``k`` defaults to the store profile's).

        ``context`` (an identity, a tenant) is recorded in :attr:`queries` and passed to the
        store's query, which records it too, as ``FakeVectorStore.query`` does.
        """
        return list(self._run(text, k, where, context).matches)

    def explain(
        self,
        text: str,
        k: int | None = None,
        where: Mapping[str, Any] | None = None,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> HybridExplanation:
        """Run a hybrid query and return both halves, the fusion and the matches."""
        return self._run(text, k, where, context)
