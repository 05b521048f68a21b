"""FakeVectorStore: an in-memory vector store that reproduces the quirks of real backends.

This module owns the store's API: its options and their validation, writes and the quirks they
can set off (rewrites, orphans, churn, late visibility), injected failures, the query log, and
the inspection API (:meth:`FakeVectorStore.records`, :meth:`~FakeVectorStore.trace`,
:meth:`~FakeVectorStore.with_options`, :meth:`~FakeVectorStore.reembedded`). Rows live in a
:class:`~placeborag._records.RecordTable`; exact ranking and tie rules are
:mod:`placeborag._ranking`'s; traces are built in :mod:`placeborag._trace`.

The query path, in the order a real index takes it::

    candidates -> (pre: filter) -> recall survivors -> top-k cut -> (post: filter) -> matches
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from placeborag import _mutations  # audit hook
from placeborag._embedder import FakeEmbedder
from placeborag._errors import (
    PlaceboragTypeError,
    PlaceboragValueError,
    RetrievalTimeout,
)
from placeborag._failures import FailureQueue
from placeborag._filters import compile_filter, copy_filter
from placeborag._hashing import splitmix64
from placeborag._metadata import check_id as _check_id
from placeborag._metadata import check_metadata as _check_metadata
from placeborag._metadata import check_metadatas as _check_metadatas
from placeborag._metadata import copy_metadata
from placeborag._options import STORE_OPTIONS
from placeborag._profiles import Profile, get_profile
from placeborag._ranking import ExactScores, TieRule, float_to_exact, rank
from placeborag._records import RecordTable, text_hash
from placeborag._trace import (
    Match,
    QueryExplanation,
    QueryPass,
    QueryRecord,
    QueryTrace,
    RecordMetadata,
    StoreRecords,
    TieInfo,
    build_explanation,
    build_trace,
)
from placeborag._validation import check_bool, check_vector, shown

__all__ = [
    "STORE_OPTIONS",
    "FakeVectorStore",
    "Match",
    "QueryExplanation",
    "QueryRecord",
    "QueryTrace",
    "StoreRecords",
    "TieInfo",
]

_VISIBILITY = ("immediate", "manual")
_FILTER_SEMANTICS = ("strict", "engine")
# Salts that keep the hash streams of the quirks independent of each other and of recall.
_ORPHAN_SALT = 0x6F727068616E2121
_CHURN_SALT = 0x636875726E212121
_SHUFFLE_SALT = 0x73687566666C6521
# The largest k a query takes: what Qdrant and Chroma accept in practice is far below it, and
# padding profiles allocate one match per slot.
_MAX_K = 1_000_000


@dataclass
class _Pending:
    op: str  # "upsert" or "delete"
    ids: list[str]
    texts: list[str] = field(default_factory=list)
    metadatas: list[dict[str, Any] | None] = field(default_factory=list)
    vectors: np.ndarray | None = None


def _check_share(value: object, name: str) -> Fraction:
    """A share between 0 and 1, as the user wrote it (0.7 is 7/10, 1/3 is 1/3: see
    :func:`_as_written`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise PlaceboragTypeError(
            f"{name}={shown(value)} must be a number, not {type(value).__name__}"
        )
    # Compared as given (an int of any size, never converted to a float first).
    if isinstance(value, (int, np.integer)):
        if not 0 <= int(value) <= 1:
            raise PlaceboragValueError(f"{name}={shown(value)} must be between 0.0 and 1.0")
    elif not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise PlaceboragValueError(f"{name}={shown(value)} must be between 0.0 and 1.0")
    return _as_written(float(value))


def _simplest_between(lo: Fraction, hi: Fraction) -> Fraction:
    """The fraction with the smallest denominator in ``[lo, hi]`` (``0 <= lo <= hi``): the
    continued-fraction walk down the Stern-Brocot tree (a loop: a subnormal float's walk is
    about a thousand steps long)."""
    terms: list[int] = []
    while True:
        whole = math.floor(lo)
        if whole == lo or whole + 1 <= hi:
            terms.append(whole if whole == lo else whole + 1)
            break
        terms.append(whole)
        lo, hi = 1 / (hi - whole), 1 / (lo - whole)
    value = Fraction(terms[-1])
    for term in reversed(terms[:-1]):
        value = term + 1 / value
    return value


def _as_written(number: float) -> Fraction:
    """The share a user meant by ``number``: the simplest fraction that rounds to the same float.

    ``0.7`` is 7/10 and ``1/3`` is 1/3, where the float's exact binary value (0.6999... and
    0.3333...) would keep one document too few of 10 and of 3. A decimal of up to 7 places is
    always read exactly as typed: no simpler fraction lies within half a float step of it.
    """
    if number in (0.0, 1.0):
        return Fraction(number)
    exact = Fraction(number)
    lo = (Fraction(math.nextafter(number, -math.inf)) + exact) / 2
    hi = (exact + Fraction(math.nextafter(number, math.inf))) / 2
    simplest = _simplest_between(lo, hi)
    # On the very boundary the float may round the other way (half to even): keep the decimal.
    return simplest if float(simplest) == number else Fraction(repr(number))


def _below_share(key: int, share: Fraction) -> bool:
    """Whether a 64-bit hash falls in the lowest ``share`` of its range (exactly)."""
    return key < math.floor(share * 2**64)


class FakeVectorStore:
    """A deterministic in-memory vector store with the quirks of real ones, on request.

    ``profile`` decides the score convention and tie order (``"chroma"``: distance ``1 - cos``,
    lower is better, ties by insertion order; ``"qdrant"``: cosine similarity, higher is better,
    ties by id). ``filter_mode="post"`` applies ``where`` after the top-k cut, as an approximate
    index does; ``recall`` below 1.0 loses a deterministic share of the candidates before the
    cut (``floor(recall * n)`` of ``n`` are kept, counted in decimals: 0.7 of 10 keeps 7);
    ``visibility="manual"`` keeps writes invisible until :meth:`refresh`.

    The other profiles (``"faiss"``, ``"lancedb"``, ``"pgvector"``, ``"langchain"``,
    ``"weaviate"``) and every option that overrides one behaviour of a profile (``metric``,
    ``tie_order`` and ``seed``, ``on_existing_id``, ``pad_missing``, ``filter_mode``) are
    described in ``docs/profiles.md``. ``filter_semantics="engine"`` lets ``$ne``/``$nin`` match
    a record without the key where the profile's engine does. ``orphans`` keeps that share of
    deleted ids searchable; ``churn`` is the chance that a delete or rewrite unlinks another
    live record from queries. Both are chosen by hashing, so every run repeats exactly.

    A store may be shared between threads and asyncio tasks: every write and query holds the
    store's lock while it changes or reads the records (see ``docs/guarantees.md``).
    """

    def __init__(
        self,
        *,
        embedder: Any = None,
        profile: str | Profile = "chroma",
        filter_mode: Literal["pre", "post"] | None = None,
        recall: float = 1.0,
        visibility: Literal["immediate", "manual"] = "immediate",
        metric: str | None = None,
        tie_order: str | None = None,
        seed: int | None = None,
        on_existing_id: str | None = None,
        pad_missing: bool | None = None,
        filter_semantics: Literal["strict", "engine"] = "strict",
        orphans: float = 0.0,
        churn: float = 0.0,
    ) -> None:
        self._options: dict[str, Any] = {
            "profile": profile,
            "filter_mode": filter_mode,
            "recall": recall,
            "visibility": visibility,
            "metric": metric,
            "tie_order": tie_order,
            "seed": seed,
            "on_existing_id": on_existing_id,
            "pad_missing": pad_missing,
            "filter_semantics": filter_semantics,
            "orphans": orphans,
            "churn": churn,
        }
        overrides = {
            "metric": metric,
            "tie_order": tie_order,
            "seed": seed,
            "on_existing_id": on_existing_id,
            "pad_missing": pad_missing,
            "filter_mode": filter_mode,
        }
        prof = get_profile(profile).with_options(
            **{key: value for key, value in overrides.items() if value is not None}
        )
        recall_share = _check_share(recall, "recall")
        if filter_semantics not in _FILTER_SEMANTICS:
            raise PlaceboragValueError(
                f"filter_semantics={shown(filter_semantics)} must be one of 'strict', 'engine'"
            )
        self._orphans = _check_share(orphans, "orphans")
        self._churn = _check_share(churn, "churn")
        if visibility not in _VISIBILITY:
            raise PlaceboragValueError(
                f"visibility={shown(visibility)} must be one of 'immediate', 'manual'"
            )
        if embedder is None:
            embedder = FakeEmbedder()
        elif not callable(getattr(embedder, "embed_batch", None)):
            raise PlaceboragTypeError(
                f"embedder={shown(embedder)} must have an embed_batch(texts) method "
                "(a FakeEmbedder, a ReplayEmbedder or a compatible object)"
            )
        self._embedder = embedder
        self._fake = type(embedder) is FakeEmbedder
        self._profile = prof
        self._filter_mode = prof.filter_mode
        self._filter_semantics = filter_semantics
        self._negations_match_missing = (
            filter_semantics == "engine" and prof.negation_matches_missing
        )
        self._recall_share = recall_share
        self._recall = float(recall)
        self._visibility = visibility
        self._lock = threading.RLock()
        dims = getattr(embedder, "dimensions", None)
        self._table = RecordTable(dims if isinstance(dims, int) and dims > 0 else None)
        self._pending: list[_Pending] = []
        self._written: set[str] = set()  # ids present once every pending write lands
        self._written_shared = False  # with a twin (copied before either one changes it)
        self._failures = FailureQueue()
        self._queries: list[QueryRecord] = []
        self._churn_events = 0
        self._records_view: StoreRecords | None = None
        _mutations.opened(self)  # audit hook

    # -- configuration -------------------------------------------------------------------

    @property
    def embedder(self) -> Any:
        return self._embedder

    @property
    def profile(self) -> Profile:
        return self._profile

    @property
    def filter_mode(self) -> str:
        return self._filter_mode

    @property
    def recall(self) -> float:
        return self._recall

    @property
    def visibility(self) -> str:
        return self._visibility

    @property
    def filter_semantics(self) -> str:
        return self._filter_semantics

    @property
    def options(self) -> dict[str, Any]:
        """The options this store was built with (``None``: the profile's own), a copy."""
        return dict(self._options)

    @property
    def orphaned_ids(self) -> tuple[str, ...]:
        """Deleted ids the index still holds (``orphans``), in the order they were deleted."""
        with self._lock:
            return tuple(self._table.orphan_of)

    @property
    def unreachable_ids(self) -> tuple[str, ...]:
        """Live ids that ``churn`` unlinked: :meth:`get` finds them, queries do not."""
        with self._lock:
            table = self._table
            return tuple(sorted(table.unreachable, key=lambda i: table.seq[table.row_of[i]]))

    def __repr__(self) -> str:
        return (
            f"FakeVectorStore(profile={self._profile.name!r}, filter_mode={self._filter_mode!r}, "
            f"recall={self._recall!r}, visibility={self._visibility!r}, records={len(self)})"
        )

    def __getstate__(self) -> dict[str, Any]:
        """Pickling keeps the records, options, log and queued failures (not the lock)."""
        with self._lock:
            self._flush()
            state = dict(self.__dict__)
        del state["_lock"]
        state["_records_view"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update({"_written_shared": False, **state})
        self._lock = threading.RLock()

    # -- twins -------------------------------------------------------------------------------

    def with_options(self, **options: Any) -> FakeVectorStore:
        """A new store over the same records with some options changed.

        Takes the constructor's options (``profile``, ``metric``, ``filter_mode``, ``recall``,
        ``filter_semantics``, ``tie_order``, ``seed``, ...; see :data:`STORE_OPTIONS`); the
        rest are the ones this store was built with, so ``with_options(profile="faiss")`` is
        ``FakeVectorStore(profile="faiss", <every other option as given here>)`` holding these
        records. It shares the vectors (a write to either store copies first, so neither sees
        the other's later writes), holds this store's visible and pending state as it is now
        (pending writes stay pending in both), and has its own empty query log and failure
        queue. The embedder is shared; use :meth:`reembedded` for another one.
        """
        unknown = sorted(set(options) - set(STORE_OPTIONS))
        if unknown:
            raise PlaceboragTypeError(
                f"unknown store option(s) {', '.join(map(repr, unknown))}; "
                f"expected some of {', '.join(STORE_OPTIONS)}"
            )
        twin = FakeVectorStore(embedder=self._embedder, **{**self._options, **options})
        with self._lock:
            self._flush()
            twin._adopt(self, self._table.share())
            view = self._records_view
            if view is not None and view.version == (id(self._table), self._table.version):
                # The same rows: the twin starts with this store's records view (immutable),
                # not a rebuild of every record's frozen metadata on its first read.
                twin._records_view = replace(view, version=(id(twin._table), twin._table.version))
        return twin

    def reembedded(
        self,
        embedder: Any,
        *,
        reuse: tuple[FakeVectorStore, Sequence[str]] | None = None,
    ) -> FakeVectorStore:
        """A new store with the same options and records, every vector made by ``embedder``.

        What a new store built with ``embedder`` from the same writes would hold, row for row,
        at the cost of one embedding call for the texts (pending writes are re-embedded too).
        ``reuse=(other, ids)`` takes the vectors of ``ids`` from ``other`` (a store over the
        same records under an embedder that gives those texts the same vectors: a FakeEmbedder
        differing only in ``cluster_spread`` gives every text outside its clusters the same
        vector) instead of embedding them.
        """
        if embedder is None:  # the constructor's default: here it would be a silent no-op
            raise PlaceboragTypeError(
                "embedder=None must be an embedder with an embed_batch(texts) method (a "
                "FakeEmbedder, a ReplayEmbedder or a compatible object)"
            )
        if reuse is not None:
            if not (isinstance(reuse, (tuple, list)) and len(reuse) == 2):
                raise PlaceboragTypeError(
                    f"reuse={shown(reuse)} must be a (FakeVectorStore, ids) pair or None"
                )
            other, ids = reuse
            if not isinstance(other, FakeVectorStore):
                raise PlaceboragTypeError(
                    f"reuse={shown(reuse)} must be a (FakeVectorStore, ids) pair, "
                    f"not {type(other).__name__}"
                )
            id_list = self._check_column(ids, "reuse ids")
            for i, value in enumerate(id_list):
                _check_id(value, f"reuse ids[{i}]")
            reuse = (other, id_list)
        twin = FakeVectorStore(embedder=embedder, **self._options)
        # The other store's snapshot before this store's lock: holding ours while waiting for
        # theirs deadlocked two stores re-embedded from each other on two threads.
        other_records = reuse[0].records() if reuse is not None else None
        with self._lock:
            table = self._table
            embed_rows = np.flatnonzero(table.alive[: table.count])
            reused_rows = np.zeros(0, dtype=np.int64)  # rows of ours taken from ``other``
            reused_from = reused_rows  # ... and their positions in other.records()
            if reuse is not None and other_records is not None:
                ids = list(reuse[1])
                ours = list(map(table.row_of.get, ids))
                theirs = list(map(other_records._index.get, ids))
                if None in ours or None in theirs:  # the first unknown id, named
                    for doc_id, row in zip(ids, ours):
                        if row is None:
                            raise PlaceboragValueError(
                                self._unknown_id_message(doc_id, table.row_of)
                            )
                        other_records.position(doc_id)
                reused_rows = np.array(ours, dtype=np.int64)
                reused_from = np.array(theirs, dtype=np.int64)
                keep = np.ones(table.count, dtype=bool)
                keep[reused_rows] = False
                embed_rows = embed_rows[keep[embed_rows]]
            dims = twin._table.dimensions
            if reused_rows.size and other_records is not None:
                dims = other_records.dimensions
                if twin._fake and embedder.dimensions != dims:
                    raise PlaceboragValueError(
                        f"the embedder makes {embedder.dimensions}-dimensional vectors; the "
                        f"store of reuse holds {dims}-dimensional ones"
                    )
            texts: Sequence[str] = (
                table.whole_columns()[1]  # every row: the table's own tuple (a batch memo key)
                if embed_rows.size == table.count
                else [table.texts[r] for r in embed_rows.tolist()]
            )
            if twin._fake and embed_rows.size:
                # The embedder writes straight into the new matrix: no batch of rows beside it.
                vectors = np.empty((table.count, embedder.dimensions), dtype=np.float32)
                twin._check_dimensions(vectors[:0], texts)
                if embed_rows.size < table.count:
                    vectors[~table.alive[: table.count]] = 0.0  # the rows of deleted records
                embedder._embed_into(texts, vectors, embed_rows)
            else:
                embedded = twin._embed_documents(list(texts)) if embed_rows.size else None
                if embedded is not None:
                    dims = embedded.shape[1]
                if (
                    embedded is not None
                    and embed_rows.size == table.count
                    and embedded.dtype == np.float32
                ):
                    # Every row embedded, in row order: the batch is the matrix (no second
                    # copy; the new table is shared, so a later write copies it before
                    # changing it).
                    vectors = embedded
                else:
                    vectors = np.zeros((table.count, dims or 0), dtype=np.float32)
                    if embedded is not None:
                        vectors[embed_rows] = embedded
            # Reused rows are copied a block at a time (no temporary of the whole matrix).
            if reused_rows.size:
                assert other_records is not None  # reused rows come from the store of reuse
                for a in range(0, reused_rows.size, _BLOCK):
                    vectors[reused_rows[a : a + _BLOCK]] = other_records.vectors[
                        reused_from[a : a + _BLOCK]
                    ]
            twin._adopt(self, table.with_vectors(vectors))
            twin._pending = []
            for op in self._pending:
                vecs = twin._embed_documents(op.texts) if op.op == "upsert" else None
                twin._pending.append(_Pending(op.op, op.ids, op.texts, op.metadatas, vecs))
        return twin

    def _adopt(self, source: FakeVectorStore, table: RecordTable) -> None:
        """Take ``source``'s records (as ``table``) and write state; the query log stays empty."""
        if table.dimensions is not None and self._table.dimensions not in (
            None,
            table.dimensions,
        ):
            raise PlaceboragValueError(
                f"the embedder makes {self._table.dimensions}-dimensional vectors; "
                f"the records hold {table.dimensions}-dimensional ones"
            )
        self._table = table
        # Shared, not copied (a million ids): the first store to change it copies it first.
        self._written = source._written
        self._written_shared = source._written_shared = True
        self._pending = list(source._pending)
        self._churn_events = source._churn_events

    # -- reads of the visible state ----------------------------------------------------------

    def __len__(self) -> int:
        return len(self._table.row_of)

    def __contains__(self, id: object) -> bool:
        try:
            return id in self._table.row_of
        except TypeError:  # unhashable: no id can equal it, and Python would raise a bare one
            raise PlaceboragTypeError(
                f"{shown(id)} in store: an id is a str, not {type(id).__name__}"
            ) from None

    @property
    def ids(self) -> list[str]:
        """The visible ids, in insertion order (a new list each time)."""
        return list(self.records().ids)

    def records(self) -> StoreRecords:
        """A read-only view of the visible records, in insertion order.

        The view is cached until the next write lands, so calling it on every redraw costs
        nothing; its ``vectors`` is a read-only float32 array (the store's own rows where no
        record was deleted, otherwise a copy of the visible ones).
        """
        with self._lock:
            self._flush()
            table = self._table
            view = self._records_view
            if view is not None and view.version == (id(table), table.version):
                return view
            rows = table.visible_rows()
            if rows.size == table.count:
                vectors = table.vectors[: table.count].view()
                table.exported = True
            else:
                vectors = table.vectors[rows]
            vectors.flags.writeable = False
            seq = table.seq[rows]
            seq.flags.writeable = False
            if rows.size == len(table.ids):  # every row visible: the columns as they are
                ids, texts, metas = table.whole_columns()
            else:
                picked = rows.tolist()
                ids = tuple(table.ids[r] for r in picked)
                texts = tuple(table.texts[r] for r in picked)
                metas = [table.metas[r] for r in picked]
            unreachable = table.unreachable
            view = StoreRecords(
                ids=ids,
                texts=texts,
                metadata=RecordMetadata(metas),
                vectors=vectors,
                sequence=seq,
                reachable=tuple(i not in unreachable for i in ids)
                if unreachable
                else _all_reachable(len(ids)),
                pending=self.pending_writes,
                version=(id(table), table.version),
            )
            self._records_view = view
            return view

    def get(self, id: str) -> Match:
        """The visible record with this id, as a Match whose score is NaN."""
        _check_id(id)
        with self._lock:
            row = self._table.row_of.get(id)
            if row is None:
                raise PlaceboragValueError(self._unknown_id_message(id, self._table.row_of))
            return self._match(row, math.nan)

    @property
    def pending_writes(self) -> int:
        """Writes made under ``visibility="manual"`` that :meth:`refresh` has not applied yet."""
        return sum(len(p.ids) for p in self._pending)

    @property
    def queries(self) -> tuple[QueryRecord, ...]:
        """Every query this store received, in order, including ones that failed."""
        with self._lock:
            return tuple(self._queries)

    @property
    def last_query(self) -> QueryRecord:
        with self._lock:
            if not self._queries:
                raise PlaceboragValueError("the store has received no query yet")
            return self._queries[-1]

    # -- writes ------------------------------------------------------------------------------

    def upsert(self, id: str, text: str, metadata: Mapping[str, Any] | None = None) -> None:
        """Write one record. Rewriting an id follows ``profile.on_existing_id``.

        The default for ``"chroma"`` and ``"qdrant"`` is ``"replace"``: the new record takes the
        old one's place, insertion position included.
        """
        _check_id(id)
        if not isinstance(text, str):
            raise PlaceboragTypeError(
                f"text={shown(text)} must be a str, not {type(text).__name__}"
            )
        self._write([id], [text], [_check_metadata(metadata)])

    def upsert_many(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> None:
        """Write many records with one embedding call; all are validated before any is written."""
        id_list, text_list, meta_list = self._check_records(ids, texts, metadatas)
        self._write(id_list, text_list, meta_list)

    def _check_records(
        self,
        ids: object,
        texts: object,
        metadatas: object,
    ) -> tuple[list[str], list[str], list[dict[str, Any] | None]]:
        """Columns of records, every one checked (before anything is written)."""
        id_list = self._check_column(ids, "ids")
        text_list = self._check_column(texts, "texts")
        if len(text_list) != len(id_list):
            raise PlaceboragValueError(
                f"texts has {len(text_list)} items and ids has {len(id_list)}; "
                "they must have the same length"
            )
        # Whole columns first (C loops); a column that fails is walked again, one value at a
        # time, for the message naming the first bad one.
        distinct = set(id_list) if set(map(type, id_list)) <= {str} else None
        if distinct is None or "" in distinct:
            for i, value in enumerate(id_list):
                _check_id(value, f"ids[{i}]")
        if not set(map(type, text_list)) <= {str}:
            for i, value in enumerate(text_list):
                if not isinstance(value, str):
                    raise PlaceboragTypeError(
                        f"texts[{i}]={shown(value)} must be a str, not {type(value).__name__}"
                    )
        if metadatas is None:
            meta_list: list[dict[str, Any] | None] = [None] * len(id_list)
        else:
            raw = self._check_column(metadatas, "metadatas")
            if len(raw) != len(id_list):
                raise PlaceboragValueError(
                    f"metadatas has {len(raw)} items and ids has {len(id_list)}; "
                    "they must have the same length"
                )
            meta_list = _check_metadatas(raw, "metadatas")
        if distinct is None or len(distinct) != len(id_list):
            seen: dict[str, int] = {}
            for i, value in enumerate(id_list):
                if value in seen:
                    raise PlaceboragValueError(
                        f"ids[{i}]={shown(value)} repeats ids[{seen[value]}]; "
                        "an id may appear once per call"
                    )
                seen[value] = i
        return id_list, text_list, meta_list

    def _write(
        self, ids: list[str], texts: list[str], metadatas: list[dict[str, Any] | None]
    ) -> None:
        if not ids:
            return
        if self._profile.on_existing_id == "error":
            with self._lock:
                self._refuse_existing(ids)
        if self._fake and self._visibility == "immediate":
            # A FakeEmbedder cannot fail on a checked text: its vectors are embedded in one
            # batch before the next read (_flush), the same bits as one by one.
            with self._lock:
                if self._profile.on_existing_id == "error":
                    self._refuse_existing(ids)
                self._own_written().update(ids)
                self._apply(_Pending("upsert", ids, texts, metadatas, None))
            return
        # Embedding runs outside the lock (a model may be slow); the dimension check and the
        # write itself happen under it, so concurrent first writes cannot race.
        vectors = self._embed_vectors(texts)
        with self._lock:
            vectors = self._check_dimensions(vectors, texts)
            if self._profile.on_existing_id == "error":
                self._refuse_existing(ids)
            op = _Pending("upsert", ids, texts, metadatas, vectors)
            self._own_written().update(ids)
            if self._visibility == "manual":
                self._pending.append(op)
            else:
                self._apply(op)

    def _own_written(self) -> set[str]:
        """The written ids, to change: a set shared with a twin is copied first."""
        if self._written_shared:
            self._written = set(self._written)
            self._written_shared = False
        return self._written

    def _refuse_existing(self, ids: list[str]) -> None:
        for value in ids:
            if value in self._written:
                raise PlaceboragValueError(
                    f"id {shown(value)} is already stored and on_existing_id='error' "
                    "forbids writing it again"
                )

    def upsert_vectors(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]] | np.ndarray,
        texts: Sequence[str] | None = None,
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> None:
        """Write records whose vectors you already have (the embedder is not called).

        Checked as :meth:`upsert_many` checks (all before any is written), and ``vectors`` must
        be one finite, nonzero row per id with the store's dimensions. A float32 row already of
        unit length (within float32 rounding) is stored bit for bit, so the vectors of
        :meth:`records` written here rank exactly as they did there; any other row is
        normalised in float64, then stored as float32. ``texts`` default to ``""``. A store
        over a :class:`FakeEmbedder` refuses: it ranks near-ties exactly from the texts, which
        would disagree with vectors given here (use :meth:`from_vectors`).
        """
        if self._fake:
            raise PlaceboragTypeError(
                "upsert_vectors() needs a store whose embedder is not a FakeEmbedder (a "
                "FakeEmbedder store ranks near-ties from the texts); use "
                "FakeVectorStore.from_vectors(ids, vectors, ...) instead"
            )
        if texts is None:
            texts = [""] * len(self._check_column(ids, "ids"))
        id_list, text_list, meta_list = self._check_records(ids, texts, metadatas)
        if isinstance(vectors, (str, bytes)):
            raise PlaceboragTypeError(
                f"vectors={shown(vectors)} must be rows of numbers, not {type(vectors).__name__}"
            )
        try:
            given = np.asarray(vectors)
            # float rows are converted block by block below (no float64 copy of the whole)
            array = given if given.dtype in _FLOATS else given.astype(np.float64)
        except (TypeError, ValueError):
            raise PlaceboragTypeError(
                "vectors must be a rectangular array of numbers (one row per id)"
            ) from None
        if array.ndim != 2 or array.shape[0] != len(id_list) or not array.shape[1]:
            raise PlaceboragValueError(
                f"vectors has shape {array.shape}; expected ({len(id_list)}, dimensions), "
                "one row per id"
            )
        dims = self._table.dimensions
        if dims is None:
            own = getattr(self._embedder, "dimensions", None)
            dims = own if isinstance(own, int) and own > 0 else None
        if dims is not None and array.shape[1] != dims:
            raise PlaceboragValueError(
                f"vectors has {array.shape[1]} columns; the store holds {dims}-dimensional vectors"
            )
        out = _unit_rows(array, id_list)
        if not id_list:
            return
        if self._profile.on_existing_id == "error":
            with self._lock:
                self._refuse_existing(id_list)
        with self._lock:
            out = self._check_dimensions(out, text_list)
            if self._profile.on_existing_id == "error":
                self._refuse_existing(id_list)
            op = _Pending("upsert", id_list, text_list, meta_list, out)
            self._own_written().update(id_list)
            if self._visibility == "manual":
                self._pending.append(op)
            else:
                self._apply(op)

    @classmethod
    def from_vectors(
        cls,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]] | np.ndarray,
        texts: Sequence[str] | None = None,
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
        **options: Any,
    ) -> FakeVectorStore:
        """A store holding records with the vectors given (every option as the constructor's).

        Its embedder only knows the dimensions: query it with :meth:`query_by_vector` (a
        text query raises), or build a store with your own embedder and
        :meth:`upsert_vectors`. The records are visible at once, even under
        ``visibility="manual"`` (which then holds back only later writes).
        """
        if "embedder" in options:
            raise PlaceboragTypeError(
                "from_vectors() makes its own vectors-only embedder; to keep yours, use "
                "FakeVectorStore(embedder=...) and upsert_vectors()"
            )
        try:
            width = np.shape(vectors)[1] if len(np.shape(vectors)) == 2 else None
        except (TypeError, ValueError):
            width = None
        store = cls(embedder=_VectorsOnlyEmbedder(width), **options)
        store.upsert_vectors(ids, vectors, texts, metadatas)
        store.refresh()
        return store

    def delete(self, ids: str | Sequence[str], *, missing_ok: bool = False) -> bool | int:
        """Delete records by id.

        One id (a str): returns True when a record was removed and False when the id is not
        stored, as 0.4.0 did. A list of ids: an unknown id raises (naming the nearest stored
        ids) unless ``missing_ok=True``; returns how many records were removed. Nothing is
        deleted when the call raises.
        """
        check_bool(missing_ok, "missing_ok")
        single = isinstance(ids, str)
        id_list: list[Any] = [ids] if single else self._check_column(ids, "ids")
        for i, value in enumerate(id_list):
            _check_id(value, "ids" if single else f"ids[{i}]")
        with self._lock:
            if not (missing_ok or single):
                for value in id_list:
                    if value not in self._written:
                        raise PlaceboragValueError(self._unknown_id_message(value, self._written))
            present = [value for value in dict.fromkeys(id_list) if value in self._written]
            if present:
                self._own_written().difference_update(present)
                op = _Pending("delete", present)
                if self._visibility == "manual":
                    self._pending.append(op)
                else:
                    self._apply(op)
            return bool(present) if single else len(present)

    def refresh(self) -> None:
        """Make every pending write visible (a no-op under ``visibility="immediate"``)."""
        with self._lock:
            pending, self._pending = self._pending, []
            for op in pending:
                self._apply(op)
        _mutations.refreshed(self)  # audit hook

    def fail_next_query(
        self, error: BaseException | type[BaseException] | None = None, *, times: int = 1
    ) -> None:
        """Make the next ``times`` queries raise ``error`` (default :class:`RetrievalTimeout`).

        Failures queue up: a second call takes effect after the first one's queries are spent.
        Writes are never affected. An exception instance is raised afresh each time (a copy
        with an empty traceback), so repeated failures never grow one traceback.
        """
        if error is None:
            error = RetrievalTimeout("injected by fail_next_query(): the query timed out")
        failure, count = FailureQueue.checked(error, times)
        with self._lock:
            self._failures.add(failure, count)

    # -- queries -----------------------------------------------------------------------------

    def query(
        self,
        text: str,
        k: int | None = None,
        where: Mapping[str, Any] | None = None,
        *,
        ids: Iterable[str] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> list[Match]:
        """The top ``k`` visible records for ``text`` (``k`` defaults to the profile's).

        ``ids`` restricts the candidates to those ids (unknown ones are skipped, as an
        engine's id filter does). ``context`` is anything the caller wants recorded with the
        query (an identity, a tenant): the store does not read it, but :attr:`queries` keeps
        it for assertions.
        """
        matches = self._query(text, None, k, where, ids, context)
        return _mutations.answer(self, matches, text, None, k, where, ids)  # audit hook

    def query_by_vector(
        self,
        vector: Sequence[float] | np.ndarray,
        k: int | None = None,
        where: Mapping[str, Any] | None = None,
        *,
        text: str | None = None,
        ids: Iterable[str] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> list[Match]:
        """Like :meth:`query`, ranking a query vector given by the caller (no embedding).

        The vector needs the store's dimensions, finite entries and a nonzero norm; its
        direction is what counts. ``text`` names the query: it is logged, and wherever the
        store hashes a query (which records survive ``recall`` below 1, the ``shuffle`` tie
        order) it is used, so ``query_by_vector(store.embed_query(t), text=t)`` returns exactly
        ``query(t)``. Without it the log records ``text=""`` and the vector's bytes are hashed.
        """
        if vector is None:  # else _query would embed ``text`` instead: refuse, naming vector
            check_vector(vector, "vector")
        if text is not None and not isinstance(text, str):
            raise PlaceboragTypeError(
                f"text={shown(text)} must be a str or None, not {type(text).__name__}"
            )
        matches = self._query(text, vector, k, where, ids, context)
        return _mutations.answer(self, matches, text, vector, k, where, ids)  # audit hook

    def embed_query(self, text: str) -> np.ndarray:
        """The unit float64 vector the store ranks ``text`` with (read-only)."""
        if not isinstance(text, str):
            raise PlaceboragTypeError(
                f"text={shown(text)} must be a str, not {type(text).__name__}"
            )
        with self._lock:
            out: np.ndarray = self._query_vector(text)[0].copy()
        out.flags.writeable = False
        return out

    def explain(
        self, text: str, k: int | None = None, where: Mapping[str, Any] | None = None
    ) -> QueryExplanation:
        """Run a query and return every stage of it, every survivor ranked exactly.

        Not recorded, never an injected failure. Its ``trace`` is :meth:`trace` of the same
        query; :meth:`trace` alone is much cheaper (it ranks only what the cut needs).
        """
        with self._lock:
            qpass = self._pass(text, None, k, where, None, full=True)
            return build_explanation(qpass, build_trace(qpass, self.records()))

    def trace(
        self, text: str, k: int | None = None, where: Mapping[str, Any] | None = None
    ) -> QueryTrace:
        """Where every visible record ended up for one query, and why.

        For each record of :meth:`records` (same order): the stage it reached (filtered out,
        lost to recall, unreachable, below the cut, tied at the cut, dropped by the post-filter,
        returned), its score in the profile's convention, its rank; plus the tie groups the
        ranking met with the rule that ordered them. Costs about what :meth:`query` costs; not
        recorded, never an injected failure.
        """
        with self._lock:
            return build_trace(self._pass(text, None, k, where, None, full=False), self.records())

    # -- internals ---------------------------------------------------------------------------

    def _query(
        self,
        text: str | None,
        vector: object,
        k: object,
        where: Mapping[str, Any] | None,
        ids: Iterable[str] | None,
        context: Mapping[str, Any] | None,
    ) -> list[Match]:
        if context is not None and not isinstance(context, Mapping):
            raise PlaceboragTypeError(
                f"context={shown(context)} must be a dict or None, not {type(context).__name__}"
            )
        id_tuple = self._check_ids_arg(ids)
        with self._lock:
            # Validate first (nothing is logged for a call that raises on its arguments).
            qpass = self._prepare(text, vector, k, where, id_tuple)
            self._queries.append(
                QueryRecord(
                    qpass.text,
                    qpass.k,
                    qpass.where,  # the pass's own copy, made once
                    copy_filter(context),
                    ids=id_tuple,
                    vector=qpass.vector_given,
                )
            )
            failure = self._failures.take()
            if failure is not None:
                raise failure
            return list(self._run(qpass, full=False).matches)

    @staticmethod
    def _check_ids_arg(ids: Iterable[str] | None) -> tuple[str, ...] | None:
        if ids is None:
            return None
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
            raise PlaceboragTypeError(
                f"ids={shown(ids)} must be a list of ids, not {type(ids).__name__}"
            )
        out = tuple(ids)
        for i, value in enumerate(out):
            _check_id(value, f"ids[{i}]")
        return out

    def _pass(
        self,
        text: str | None,
        vector: object,
        k: object,
        where: Mapping[str, Any] | None,
        ids: tuple[str, ...] | None,
        *,
        full: bool,
    ) -> QueryPass:
        return self._run(self._prepare(text, vector, k, where, ids), full=full)

    def _prepare(
        self,
        text: str | None,
        vector: object,
        k: object,
        where: object,
        ids: tuple[str, ...] | None,
    ) -> QueryPass:
        """Check a query's arguments and embed it: a pass ready to run."""
        if vector is None and not isinstance(text, str):
            raise PlaceboragTypeError(
                f"text={shown(text)} must be a str, not {type(text).__name__}"
            )
        if k is None:
            k = self._profile.default_k
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise PlaceboragTypeError(f"k={shown(k)} must be an int, not {type(k).__name__}")
        if k < 1:
            raise PlaceboragValueError(f"k={shown(k)} must be >= 1")
        if k > _MAX_K:
            raise PlaceboragValueError(
                f"k={shown(k)} must be <= {_MAX_K:,} (engines cap the results of one query; "
                "a FAISS-style profile would build that many padding matches)"
            )
        predicate = compile_filter(
            where,  # type: ignore[arg-type]
            negations_match_missing=self._negations_match_missing,
            semantics=self._filter_semantics,
        )
        vector_given: tuple[float, ...] | None = None
        qfloat: np.ndarray | None
        qexact: np.ndarray | None
        if vector is not None:
            qfloat, qexact, salt_text = self._given_vector(vector)
            vector_given = tuple(qfloat.tolist())
            query_text = ""
            if text is not None:  # the query's own text decides what is hashed
                salt_text = query_text = text
                if self._fake and self._is_own_query_vector(vector, text):
                    # The text's own vector (embed_query(text)): ranked as query(text), with
                    # the embedder's exact integer form, not the float's.
                    qfloat = qexact = None
        else:
            assert isinstance(text, str)
            qfloat = qexact = None  # embedded lazily: an empty store never embeds
            salt_text = query_text = text
        return QueryPass(
            store=self,
            text=query_text,
            k=int(k),
            where=copy_filter(where),
            predicate=predicate,
            ids=ids,
            qfloat=qfloat,
            qexact=qexact,
            salt=text_hash(salt_text),
            vector_given=vector_given,
        )

    def _is_own_query_vector(self, vector: object, text: str) -> bool:
        """Whether ``vector`` (already checked) is exactly the store's vector for ``text``."""
        given = np.asarray(vector, dtype=np.float64)
        own = self._query_vector(text)[0]
        return bool(given.shape == own.shape and np.array_equal(given, own))

    def _given_vector(self, vector: object) -> tuple[np.ndarray, np.ndarray, str]:
        array: np.ndarray = check_vector(vector, "vector")
        dims = self._table.dimensions
        if dims is not None and array.shape[0] != dims:
            raise PlaceboragValueError(
                f"vector of shape {array.shape} must be one-dimensional with "
                f"{dims if dims is not None else 'the store'}'s dimensions"
            )
        with np.errstate(over="ignore", under="ignore"):  # an overflow is rescaled below
            norm = float(np.sqrt(np.dot(array, array)))  # check_vector: every entry finite
        if not math.isfinite(norm) or norm == 0.0:
            scaled = float(np.abs(array).max())
            if scaled > 0:  # over/underflow of the norm: rescale
                array = array / scaled
                norm = float(np.sqrt(np.dot(array, array)))
            else:
                raise PlaceboragValueError("vector must have a nonzero norm; it is all zeros")
        return array / norm, float_to_exact(array[None, :])[0], array.tobytes().hex()

    def _run(
        self, qpass: QueryPass, *, full: bool, recall_share: Fraction | None = None
    ) -> QueryPass:
        """Take ``qpass`` through every stage (ranking all survivors when ``full``)."""
        self._flush()
        if recall_share is None:
            recall_share = self._recall_share
        table = self._table
        count = table.count
        profile = self._profile
        reachable = table.reachable()
        if qpass.ids is not None:
            restricted = np.zeros(count, dtype=bool)
            rows = [table.row_of[i] for i in qpass.ids if i in table.row_of]
            restricted[rows] = True
            reachable = reachable & restricted
        post = qpass.predicate is not None and self._filter_mode == "post"
        # A post-filtering index filters a window of candidates (ef_search), not just the top k.
        cut = max(qpass.k, profile.post_filter_candidates) if post else qpass.k
        filter_mask = None
        eligible: np.ndarray | None = reachable
        if qpass.predicate is not None and count:
            filter_mask = qpass.predicate.mask(table.columns()) & reachable
            if not post:
                eligible = filter_mask
        passing = eligible
        if recall_share.numerator < recall_share.denominator and count:
            candidates = np.flatnonzero(reachable if eligible is None else eligible)
            eligible = np.zeros(count, dtype=bool)
            eligible[self._recall_survivors(qpass.salt, candidates, recall_share)] = True
        ranking = None
        final: list[int] = []
        window: list[int] = []
        if count and eligible is not None and eligible.any():
            if qpass.qfloat is None or qpass.qexact is None:
                qpass.qfloat, qpass.qexact, qpass.qnorm = self._query_vector(qpass.text)
            exact = ExactScores(table, qpass.qexact, self._exact_by_text(), qpass.qnorm)
            salt = 0
            if profile.tie_order == "shuffle":
                salt = int(
                    splitmix64(
                        np.array([qpass.salt ^ profile.seed ^ _SHUFFLE_SALT], dtype=np.uint64)
                    )[0]
                )
            ties = TieRule(table, profile.tie_order, salt)
            mask = None if (eligible.all() and not table.holes) else eligible
            ranking = rank(table, mask, qpass.qfloat, exact, count if full else cut, ties)
            window = ranking.order[:cut]
            final = window
            if post:
                assert filter_mask is not None
                final = [r for r in window if filter_mask[r]][: qpass.k]
            qpass.exact = exact
        cosines = ranking.cosines if ranking is not None else {}
        ids, texts, metas, score = table.ids, table.texts, table.metas, profile.score
        matches = tuple(
            Match(ids[r], texts[r], copy_metadata(metas[r]), score(cosines[r])) for r in final
        )
        if profile.pad_missing and len(matches) < qpass.k:  # FAISS fills every slot it cannot
            matches += (Match("-1", "", {}, profile.pad_score),) * (qpass.k - len(matches))
        qpass.table = table
        qpass.profile = profile
        qpass.filter_mode = self._filter_mode
        qpass.recall = self._recall
        qpass.post = post
        qpass.reachable = reachable
        qpass.filter_mask = filter_mask
        qpass.passing = passing
        qpass.survivors = eligible
        qpass.ranking = ranking
        qpass.window = window
        qpass.final = final
        qpass.matches = matches
        return qpass

    def _exact_by_text(self) -> Any:
        if self._fake:
            return self._embedder._embed_ints
        return None  # the stored float32 rows are exact: never call the user's model again

    def _ideal(self, qpass: QueryPass) -> list[int]:
        """The rows a perfect index (recall 1.0) would return for ``qpass``."""
        return self._run(qpass.rerun(), full=False, recall_share=Fraction(1)).final

    @staticmethod
    def _check_column(values: object, name: str) -> list[Any]:
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise PlaceboragTypeError(
                f"{name}={shown(values)} must be a list, not {type(values).__name__}"
            )
        return list(values)

    @staticmethod
    def _unknown_id_message(value: str, known: Iterable[str]) -> str:
        import difflib

        close = difflib.get_close_matches(value, list(known), n=3)
        hint = f"; did you mean {', '.join(map(shown, close))}?" if close else ""
        return f"unknown id {shown(value)}{hint}"

    def _embed_vectors(self, texts: list[str]) -> np.ndarray:
        """The embedder's vectors of ``texts``, not yet checked against the store."""
        if self._fake:
            floats: np.ndarray = self._embedder._embed_floats(texts, dtype=np.float32, keep=True)
            return floats
        returned = self._embedder.embed_batch(texts)
        try:
            vectors = np.array(returned, dtype=np.float64)
        except (TypeError, ValueError):
            raise PlaceboragValueError(
                f"the embedder returned {type(returned).__name__} that is not a rectangular "
                f"array of numbers for {len(texts)} texts"
            ) from None
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise PlaceboragValueError(
                f"the embedder returned an array of shape {vectors.shape} for {len(texts)} texts"
            )
        norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
        bad = np.flatnonzero(~np.isfinite(norms) | (norms == 0))
        if bad.size:
            raise PlaceboragValueError(
                f"the embedder returned a zero or non-finite vector for {shown(texts[bad[0]])}"
            )
        unit: np.ndarray = np.divide(vectors, norms[:, None], out=vectors)
        return unit

    def _check_dimensions(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """Fix the store's dimensions on its first write (under the lock) or check them."""
        table = self._table
        if table.dimensions is None:
            if vectors.shape[1] == 0:
                raise PlaceboragValueError(
                    f"the embedder returned 0-dimensional vectors for {len(texts)} texts"
                )
            table.mutable()
            table.set_dimensions(vectors.shape[1])
        if vectors.shape[1] != table.dimensions:
            raise PlaceboragValueError(
                f"the embedder returned {vectors.shape[1]}-dimensional vectors; "
                f"the store holds {table.dimensions}-dimensional ones"
            )
        return vectors

    def _embed_documents(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of ``texts``, checked against the store's dimensions (under the lock)."""
        with self._lock:
            return self._check_dimensions(self._embed_vectors(texts), texts)

    def _apply(self, op: _Pending) -> None:
        table = self._table
        table.mutable()
        self._records_view = None
        if op.op == "delete":
            for value in op.ids:
                row = table.row_of.pop(value, None)
                if row is None:
                    continue
                table.unreachable.discard(value)
                for shadow in table.shadows.pop(value, ()):
                    table.kill(shadow)
                if self._orphans and _below_share(
                    int(splitmix64(table.id_hash[row : row + 1] ^ np.uint64(_ORPHAN_SALT))[0]),
                    self._orphans,
                ):
                    table.orphan_of[value] = row  # gone for get(), still in the index
                else:
                    table.kill(row)
                self._churn_event(op.ids)
            self._compact_if_needed()
            return
        if not table.orphan_of and table.row_of.keys().isdisjoint(op.ids):
            table.append(op.ids, op.texts, op.metadatas, op.vectors)
            return
        mode = self._profile.on_existing_id
        fresh = mode in ("duplicate", "move_to_end")  # a rewrite takes a new row
        new = [i for i, value in enumerate(op.ids) if fresh or value not in table.row_of]
        table.grow(table.count + len(new))
        rows: list[int] = []
        written: list[int] = []
        for i, value in enumerate(op.ids):
            row = table.row_of.get(value)
            if row is None and value in table.orphan_of:  # writing it again reuses the slot
                row = table.row_of[value] = table.orphan_of.pop(value)
            if row is not None:
                if mode == "ignore":
                    continue
                table.unreachable.discard(value)
                if mode == "duplicate":
                    table.shadows.setdefault(value, []).append(row)
                    row = None
                elif mode == "move_to_end":
                    table.kill(row)
                    row = None
                self._churn_event(op.ids)
            if row is None:
                row = table.new_row(value, op.texts[i], op.metadatas[i])
            else:
                table.rewrite(row, op.texts[i], op.metadatas[i])
            rows.append(row)
            written.append(i)
        vectors = None if op.vectors is None else op.vectors[written]
        table.set_vectors(rows, [op.ids[i] for i in written], vectors)
        self._compact_if_needed()

    def _compact_if_needed(self) -> None:
        if self._table.needs_compaction():
            self._flush()
            self._table.compact()

    def _flush(self) -> None:
        """Embed, in one batch, every row written since the last read (under the lock)."""
        table = self._table
        if not table.unembedded:
            return
        rows = sorted(table.unembedded)
        vectors = self._embed_vectors([table.texts[r] for r in rows])
        table.fill_vectors(rows, vectors)
        table.unembedded.clear()

    def _churn_event(self, batch: list[str]) -> None:
        """A delete or rewrite: with chance ``churn``, unlink a live record outside the batch."""
        if not self._churn:
            return
        table = self._table
        skip = set(batch)
        self._churn_events += 1
        event = splitmix64(np.array([self._churn_events ^ _CHURN_SALT], dtype=np.uint64))
        if not _below_share(int(event[0]), self._churn):
            return
        rows = np.array(
            [r for i, r in table.row_of.items() if i not in skip and i not in table.unreachable],
            dtype=np.int64,
        )
        if rows.size:
            victim = rows[np.argmin(splitmix64(table.id_hash[rows] ^ event[0]))]
            table.unreachable.add(table.ids[victim])

    def _match(self, row: int, score: float) -> Match:
        table = self._table
        meta = table.metas[row]
        return Match(
            id=table.ids[row], text=table.texts[row], metadata=copy_metadata(meta), score=score
        )

    def _recall_survivors(self, salt: int, rows: np.ndarray, share: Fraction) -> np.ndarray:
        """Exactly floor(recall * n) of the n candidate rows, chosen by hashing (query, id)."""
        keep = math.floor(share * rows.size)
        if keep >= rows.size:
            return rows
        if keep == 0:
            return rows[:0]
        table = self._table
        keys = splitmix64(table.id_hash[rows] ^ np.uint64(salt))
        # Order by (hash, insertion sequence): the sequence only matters on a 64-bit collision.
        order = np.lexsort((table.seq[rows], keys))
        return np.sort(rows[order[:keep]])

    def _query_vector(self, text: str) -> tuple[np.ndarray, np.ndarray, int | None]:
        """A query's float vector, its exact integer form, and that form's squared norm when
        the embedder knows it (else None)."""
        if self._fake:
            return self._embedder._embed_query(text)  # type: ignore[no-any-return]
        embed_query = getattr(self._embedder, "embed_queries", None)
        floats = np.asarray((embed_query or self._embedder.embed_batch)([text]), dtype=np.float64)
        if floats.shape != (1, self._table.dimensions):
            raise PlaceboragValueError(
                f"the embedder returned an array of shape {floats.shape} for the query "
                f"{shown(text)}"
            )
        if not np.all(np.isfinite(floats)) or not np.any(floats):
            raise PlaceboragValueError(
                f"the embedder returned a zero or non-finite vector for the query {shown(text)}"
            )
        return floats[0], float_to_exact(floats)[0], None


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_BLOCK = 65_536  # rows converted at a time: temporaries stay a few MB at any n


def _unit_rows(array: np.ndarray, ids: list[str]) -> np.ndarray:
    """The rows of ``array`` as unit float32 vectors (see :meth:`FakeVectorStore.upsert_vectors`),
    computed in blocks of rows with the same float64 operations per row as on the whole array.

    A row with a non-finite entry or a zero norm raises, naming the first such row. A float32
    row already of unit length keeps its bits (so does a float64 input whose every entry is a
    float32 value): a normalised row's squared norm is within a few float32 roundings of 1.
    """
    n = array.shape[0]
    blocks = [(a, min(a + _BLOCK, n)) for a in range(0, n, _BLOCK)]
    keep_bits = array.dtype == np.float32 or all(
        np.array_equal(array[a:b].astype(np.float32).astype(np.float64), array[a:b])
        for a, b in blocks
    )
    out = np.empty(array.shape, dtype=np.float32)
    for a, b in blocks:
        block = array[a:b].astype(np.float64)
        finite = np.all(np.isfinite(block), axis=1)
        safe = np.where(finite[:, None], block, 0.0)
        norms = np.sqrt(np.einsum("ij,ij->i", safe, safe))
        bad = np.flatnonzero(~finite | ~np.isfinite(norms) | (norms == 0))
        if bad.size:
            i = a + int(bad[0])
            raise PlaceboragValueError(
                f"vectors[{i}] (id {shown(ids[i])}) must have finite entries and a nonzero norm"
            )
        out[a:b] = block / norms[:, None]
        if keep_bits:
            as32 = block.astype(np.float32)
            unit = np.abs(np.einsum("ij,ij->i", as32.astype(np.float64), as32) - 1.0) <= 2.0**-20
            out[a:b][unit] = as32[unit]
    return out


class _VectorsOnlyEmbedder:
    """The embedder of :meth:`FakeVectorStore.from_vectors`: dimensions, and no texts."""

    model_name = "vectors-only"

    def __init__(self, dimensions: int | None) -> None:
        self.dimensions = dimensions

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        first = f" {shown(texts[0])}" if len(texts) else ""
        raise PlaceboragValueError(
            f"this store was built from vectors and cannot embed the text{first}; "
            "use query_by_vector(vector), or build the store with an embedder "
            "(FakeVectorStore(embedder=...) and upsert_vectors())"
        )

    def embed(self, text: str) -> list[float]:
        row: list[float] = self.embed_batch([text])[0].tolist()
        return row

    def __repr__(self) -> str:
        return f"<vectors-only embedder, dimensions={self.dimensions}>"


_ALL_TRUE: list[tuple[bool, ...]] = [()]


def _all_reachable(n: int) -> tuple[bool, ...]:
    """``(True,) * n``: the longest one made so far is kept (sliced for shorter ones), up to
    2**21 entries (16 MB of pointers); a longer one is made each time."""
    longest = _ALL_TRUE[0]
    if len(longest) < n:
        if n > 1 << 21:
            return (True,) * n
        longest = _ALL_TRUE[0] = (True,) * n
    return longest if len(longest) == n else longest[:n]
