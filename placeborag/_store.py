"""FakeVectorStore: an in-memory vector store that reproduces the quirks of real backends.

This module is the store's API: arguments are checked here, before anything changes, and the
work is done by three parts, each with one job:

- :class:`~placeborag._storage.Storage` holds the records and applies writes (pending writes,
  ``on_existing_id``, ``orphans``, ``churn``);
- :class:`~placeborag._pipeline.Pipeline` runs a query, planned once, into one finished result
  that ``query``, ``query_by_vector``, ``trace`` and ``explain`` all read;
- the embedding strategy (:mod:`placeborag._embedding`), chosen once from the embedder's
  protocol, never from its class.

Injected failures (:meth:`~FakeVectorStore.fail_next_query`,
:meth:`~FakeVectorStore.fail_next_write`) and the query log live here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from placeborag import _touched  # the failure report's hook
from placeborag._embedding import VectorsOnlyEmbedder, vectors_for
from placeborag._errors import (
    PlaceboragTypeError,
    PlaceboragValueError,
    RetrievalTimeout,
    WriteError,
)
from placeborag._failures import FailureQueue
from placeborag._filters import copy_filter
from placeborag._metadata import check_id, check_metadata, check_records, copy_metadata
from placeborag._options import STORE_OPTIONS, StoreOptions
from placeborag._pipeline import (
    Pipeline,
    QueryPlan,
    QueryResult,
    Settings,
    check_context,
    plan_query,
)
from placeborag._profiles import Profile
from placeborag._querylog import DEFAULT_QUERY_LOG, QueryLog
from placeborag._storage import Storage, Write, as_matrix, check_reuse, unit_rows
from placeborag._trace import (
    Match,
    QueryExplanation,
    QueryRecord,
    QueryTrace,
    StoreRecords,
    TieInfo,
    build_explanation,
    build_trace,
)
from placeborag._validation import check_bool, check_column, check_vector, shown, unknown_id

__all__ = [
    "STORE_OPTIONS",
    "FakeVectorStore",
    "Match",
    "QueryExplanation",
    "QueryRecord",
    "QueryTrace",
    "StoreOptions",
    "StoreRecords",
    "TieInfo",
]


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
        query_log: int | None = DEFAULT_QUERY_LOG,
    ) -> None:
        options = StoreOptions(
            profile=profile,
            filter_mode=filter_mode,
            recall=recall,
            visibility=visibility,
            metric=metric,
            tie_order=tie_order,
            seed=seed,
            on_existing_id=on_existing_id,
            pad_missing=pad_missing,
            filter_semantics=filter_semantics,
            orphans=orphans,
            churn=churn,
            query_log=query_log,
        )
        self._build(options, embedder)

    def _build(self, options: StoreOptions, embedder: Any) -> None:
        settings = Settings.of(options)
        if embedder is None:
            from placeborag._embedder import FakeEmbedder

            embedder = FakeEmbedder()
        vectors = vectors_for(embedder)
        self._embedder = embedder
        self._settings = settings
        self._vectors = vectors
        self._pipeline = Pipeline(settings, vectors)
        self._storage = Storage(settings, vectors)
        self._lock = threading.RLock()
        self._failures = FailureQueue()
        self._write_failures = FailureQueue()
        self._queries = QueryLog(settings.query_log)

    @classmethod
    def _from_options(cls, options: StoreOptions, embedder: Any) -> FakeVectorStore:
        store = cls.__new__(cls)
        store._build(options, embedder)
        return store

    # -- configuration -------------------------------------------------------------------

    @property
    def embedder(self) -> Any:
        return self._embedder

    @property
    def profile(self) -> Profile:
        return self._settings.profile

    @property
    def filter_mode(self) -> str:
        return self._settings.filter_mode

    @property
    def recall(self) -> float:
        return float(self._settings.options.recall)

    @property
    def visibility(self) -> str:
        return self._settings.options.visibility

    @property
    def filter_semantics(self) -> str:
        return self._settings.options.filter_semantics

    @property
    def options(self) -> StoreOptions:
        """The options this store was built with, as given (``None``: the profile's own): a
        read-only mapping (``FakeVectorStore(**store.options)`` builds the same store)."""
        return self._settings.options

    @property
    def orphaned_ids(self) -> tuple[str, ...]:
        """Deleted ids the index still holds (``orphans``), in the order they were deleted."""
        with self._lock:
            return tuple(self._storage.table.orphan_of)

    @property
    def unreachable_ids(self) -> tuple[str, ...]:
        """Live ids that ``churn`` unlinked: :meth:`get` finds them, queries do not."""
        with self._lock:
            table = self._storage.table
            return tuple(sorted(table.unreachable, key=lambda i: table.seq[table.row_of[i]]))

    def __repr__(self) -> str:
        return (
            f"FakeVectorStore(profile={self.profile.name!r}, filter_mode={self.filter_mode!r}, "
            f"recall={self.recall!r}, visibility={self.visibility!r}, records={len(self)})"
        )

    def __getstate__(self) -> dict[str, Any]:
        """Pickling keeps the records, options, log and queued failures (not the lock)."""
        with self._lock:
            self._storage.flush()
            state = dict(self.__dict__)
            storage = Storage.__new__(Storage)
            storage.__dict__.update(
                self._storage.__dict__, view=None, view_table=None, written_shared=False
            )
        state["_storage"] = storage
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    # -- twins -------------------------------------------------------------------------------

    def with_options(self, **options: Any) -> FakeVectorStore:
        """A new store over the same records with some options changed.

        Takes the constructor's options (see :class:`StoreOptions`); the rest are the ones this
        store was built with, so ``with_options(profile="faiss")`` is
        ``FakeVectorStore(profile="faiss", <every other option as given here>)`` holding these
        records. It shares the vectors (a write to either store copies first, so neither sees
        the other's later writes), holds this store's visible and pending state as it is now
        (pending writes stay pending in both), and has its own empty query log and failure
        queues. The embedder is shared; use :meth:`reembedded` for another one.
        """
        twin = self._from_options(self.options.replace(**options), self._embedder)
        with self._lock:
            storage = self._storage
            storage.flush()
            twin._storage.adopt(storage, storage.table.share())
            view = storage.current_view()
            if view is not None:
                # The same rows: the twin starts with this store's records view (immutable),
                # not a rebuild of every record's frozen metadata on its first read.
                twin._storage.view, twin._storage.view_table = view, twin._storage.table
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
        reused = check_reuse(reuse, FakeVectorStore)
        twin = self._from_options(self.options, embedder)
        # The other store's snapshot before this store's lock: holding ours while waiting for
        # theirs deadlocked two stores re-embedded from each other on two threads.
        other = (reused[0].records(), reused[1]) if reused is not None else None
        with self._lock:
            storage = self._storage
            twin._storage.adopt(storage, storage.reembedded_table(twin._storage, other))
            twin._storage.reembed_pending(storage)
        return twin

    # -- reads of the visible state ----------------------------------------------------------

    def __len__(self) -> int:
        return len(self._storage.table.row_of)

    def __contains__(self, id: object) -> bool:
        try:
            return id in self._storage.table.row_of
        except TypeError:  # unhashable: no id can equal it, and Python would raise a bare one
            raise PlaceboragTypeError(
                f"{shown(id)} in store: an id is a str, not {type(id).__name__}"
            ) from None

    @property
    def ids(self) -> list[str]:
        """The visible ids, in insertion order, each once (a new list each time)."""
        with self._lock:
            table = self._storage.table
            return [table.ids[r] for r in table.visible_rows().tolist()]

    def records(self) -> StoreRecords:
        """A read-only view of every stored record, in insertion order.

        Records an id holds more than once (``on_existing_id="duplicate"``) are all here, as
        queries return them, told apart by ``occurrence``. The view is cached until the next
        write lands, so calling it on every redraw costs nothing; its ``vectors`` is a
        read-only float32 array (the store's own rows where no record was deleted, otherwise a
        copy of the stored ones).
        """
        with self._lock:
            return self._storage.records(self.pending_writes)

    def get(self, id: str) -> Match:
        """The visible record with this id (its newest), as a Match whose score is NaN."""
        check_id(id)
        with self._lock:
            table = self._storage.table
            row = table.row_of.get(id)
            if row is None:
                raise unknown_id(id, table.row_of)
            meta = copy_metadata(table.metas[row])
            return Match(id=id, text=table.texts[row], metadata=meta, score=float("nan"))

    @property
    def pending_writes(self) -> int:
        """Writes made under ``visibility="manual"`` that :meth:`refresh` has not applied yet."""
        return sum(len(p.ids) for p in self._storage.pending)

    @property
    def queries(self) -> tuple[QueryRecord, ...]:
        """The queries this store received, oldest first, failed ones included: the most
        recent ``query_log`` of them (1,000 by default; every one with ``query_log=None``)."""
        with self._lock:
            return tuple(self._queries.records)

    @property
    def query_count(self) -> int:
        """How many queries this store received, whether or not :attr:`queries` keeps them."""
        return self._queries.count

    @property
    def last_query(self) -> QueryRecord:
        with self._lock:
            return self._queries.last()

    # -- writes ------------------------------------------------------------------------------

    def upsert(self, id: str, text: str, metadata: Mapping[str, Any] | None = None) -> None:
        """Write one record. Rewriting an id follows ``profile.on_existing_id``.

        The default for ``"chroma"`` and ``"qdrant"`` is ``"replace"``: the new record takes the
        old one's place, insertion position included.
        """
        check_id(id)
        if not isinstance(text, str):
            raise PlaceboragTypeError(
                f"text={shown(text)} must be a str, not {type(text).__name__}"
            )
        self._write([id], [text], [check_metadata(metadata)])

    def upsert_many(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> None:
        """Write many records with one embedding call; all are validated before any is written."""
        self._write(*check_records(ids, texts, metadatas))

    def _write(
        self, ids: list[str], texts: list[str], metadatas: list[dict[str, Any] | None]
    ) -> None:
        """A checked upsert: refused (``on_existing_id="error"``) or failed on purpose before
        anything changes, then embedded (outside the lock, unless lazy) and landed."""
        if not ids:
            return
        storage = self._storage
        with self._lock:
            if storage.refuses_existing:
                storage.refuse_existing(ids)
            if self._write_failures:
                self._take_write_failure()
            if storage.lazy_writes:
                storage.land(Write("upsert", ids, texts, metadatas, None))
                return
        # Embedding runs outside the lock (a model may be slow); the dimension check and the
        # write itself happen under it, so concurrent first writes cannot race.
        vectors = storage.embed(texts)
        with self._lock:
            vectors = storage.check_dimensions(vectors, texts)
            storage.refuse_existing(ids)
            storage.land(Write("upsert", ids, texts, metadatas, vectors))

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
        over an exact embedder (a :class:`FakeEmbedder`) refuses: it ranks near-ties exactly
        from the texts, which would disagree with vectors given here (use :meth:`from_vectors`).
        """
        if self._vectors.exact:
            raise PlaceboragTypeError(
                "upsert_vectors() needs a store whose embedder is not an exact one such as "
                "FakeEmbedder (it ranks near-ties from the texts); use "
                "FakeVectorStore.from_vectors(ids, vectors, ...) instead"
            )
        if texts is None:
            texts = [""] * len(check_column(ids, "ids"))
        id_list, text_list, meta_list = check_records(ids, texts, metadatas)
        array = as_matrix(vectors, len(id_list))
        storage = self._storage
        dims = storage.table.dimensions or self._vectors.dimensions
        if dims is not None and array.shape[1] != dims:
            raise PlaceboragValueError(
                f"vectors has {array.shape[1]} columns; the store holds {dims}-dimensional vectors"
            )
        out = unit_rows(array, id_list)
        if not id_list:
            return
        with self._lock:
            storage.refuse_existing(id_list)
            self._take_write_failure()
            out = storage.check_dimensions(out, text_list)
            storage.land(Write("upsert", id_list, text_list, meta_list, out))

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
        store = cls(embedder=VectorsOnlyEmbedder(width), **options)
        store.upsert_vectors(ids, vectors, texts, metadatas)
        store.refresh()
        return store

    def delete(self, ids: str | Sequence[str], *, missing_ok: bool = False) -> bool | int:
        """Delete records by id (every record of an id stored more than once).

        One id (a str): returns True when a record was removed and False when the id is not
        stored, as 0.4.0 did. A list of ids: an unknown id raises (naming the nearest stored
        ids) unless ``missing_ok=True``; returns how many ids were removed. Nothing is
        deleted when the call raises.
        """
        check_bool(missing_ok, "missing_ok")
        single = isinstance(ids, str)
        id_list: list[Any] = [ids] if single else check_column(ids, "ids")
        for i, value in enumerate(id_list):
            check_id(value, "ids" if single else f"ids[{i}]")
        with self._lock:
            written = self._storage.written
            if not (missing_ok or single):
                for value in id_list:
                    if value not in written:
                        raise unknown_id(value, written)
            present = [value for value in dict.fromkeys(id_list) if value in written]
            if present:
                self._take_write_failure()
                self._storage.land(Write("delete", present))
            return bool(present) if single else len(present)

    def refresh(self) -> None:
        """Make every pending write visible (a no-op under ``visibility="immediate"``)."""
        with self._lock:
            self._storage.refresh()

    # -- injected failures -------------------------------------------------------------------

    def fail_next_query(
        self, error: BaseException | type[BaseException] | None = None, *, times: int = 1
    ) -> None:
        """Make the next ``times`` queries raise ``error`` (default :class:`RetrievalTimeout`).

        Failures queue up: a second call takes effect after the first one's queries are spent.
        Writes are never affected (see :meth:`fail_next_write`). An exception instance is
        raised afresh each time (a copy with an empty traceback), so repeated failures never
        grow one traceback.
        """
        if error is None:
            error = RetrievalTimeout("injected by fail_next_query(): the query timed out")
        failure, count = FailureQueue.checked(error, times)
        with self._lock:
            self._failures.add(failure, count)

    def fail_next_write(
        self, error: BaseException | type[BaseException] | None = None, *, times: int = 1
    ) -> None:
        """Make the next ``times`` writes raise ``error`` (default :class:`WriteError`).

        A write is a call of :meth:`upsert`, :meth:`upsert_many`, :meth:`upsert_vectors` or
        :meth:`delete` that would change the store; a failed one changes nothing (no record,
        no pending write, no quirk), as an engine that refuses a batch. A call that raises on
        its arguments, an empty batch and a delete of ids not stored spend no failure.
        Queries are never affected; failures queue up as :meth:`fail_next_query`'s do.
        """
        if error is None:
            error = WriteError("injected by fail_next_write(): the write was refused")
        failure, count = FailureQueue.checked(error, times)
        with self._lock:
            self._write_failures.add(failure, count)

    def _take_write_failure(self) -> None:
        failure = self._write_failures.take()
        if failure is not None:
            raise failure

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
        matches, ids = self._query(text, None, k, where, ids, context)
        return matches

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
        if vector is None:  # else the plan would embed ``text`` instead: refuse, naming vector
            check_vector(vector, "vector")
        matches, ids = self._query(text, vector, k, where, ids, context)
        return matches

    def embed_query(self, text: str) -> np.ndarray:
        """The unit float64 vector the store ranks ``text`` with (read-only)."""
        if not isinstance(text, str):
            raise PlaceboragTypeError(
                f"text={shown(text)} must be a str, not {type(text).__name__}"
            )
        with self._lock:
            dims = self._storage.table.dimensions
            out: np.ndarray = self._vectors.query(text, dims)[0].copy()
        out.flags.writeable = False
        return out

    def explain(
        self,
        text: str | None = None,
        k: int | None = None,
        where: Mapping[str, Any] | None = None,
        *,
        vector: Sequence[float] | np.ndarray | None = None,
        ids: Iterable[str] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> QueryExplanation:
        """Run a query and return every stage of it, every survivor ranked exactly.

        Takes what :meth:`query` takes, or a ``vector`` (with an optional ``text``) as
        :meth:`query_by_vector` does, and returns the same matches. Not recorded, never an
        injected failure. Its ``trace`` is :meth:`trace` of the same query; :meth:`trace`
        alone is much cheaper (it ranks only what the cut needs).
        """
        with self._lock:
            result = self._run(text, vector, k, where, ids, context, full=True)
            trace = build_trace(result, self.records(), self._storage.pending_ids())
            return build_explanation(result, trace, self.unreachable_ids)

    def trace(
        self,
        text: str | None = None,
        k: int | None = None,
        where: Mapping[str, Any] | None = None,
        *,
        vector: Sequence[float] | np.ndarray | None = None,
        ids: Iterable[str] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> QueryTrace:
        """Where every stored record ended up for one query, and why.

        Takes what :meth:`query` takes, or a ``vector`` (with an optional ``text``) as
        :meth:`query_by_vector` does: its matches are exactly that query's. For each record
        of :meth:`records` (same order): the stage it reached (filtered out, lost to recall,
        unreachable, below the cut, tied at the cut, dropped by the post-filter, returned), its
        score in the profile's convention, its rank; the tie groups the ranking met with the
        rule that ordered them; and :meth:`QueryTrace.why` of any record. Costs about what
        :meth:`query` costs; not recorded, never an injected failure.
        """
        with self._lock:
            result = self._run(text, vector, k, where, ids, context, traced=True)
            return build_trace(result, self.records(), self._storage.pending_ids())

    # -- the query path ------------------------------------------------------------------------

    def _plan(
        self, text: object, vector: object, k: object, where: object, ids: object, context: object
    ) -> QueryPlan:
        if context is not None:
            check_context(context)
        return plan_query(
            self._settings,
            self._vectors,
            self._storage.table.dimensions,
            text=text,
            vector=vector,
            k=k,
            where=where,
            ids=ids,
        )

    def _run(
        self,
        text: object,
        vector: object,
        k: object,
        where: object,
        ids: object,
        context: object,
        *,
        full: bool = False,
        traced: bool = False,
    ) -> QueryResult:
        """Plan and run a query under the lock (the records as they are now)."""
        plan = self._plan(text, vector, k, where, ids, context)
        self._storage.flush()
        return self._pipeline.run(plan, self._storage.table, full=full, traced=traced)

    def _query(
        self,
        text: object,
        vector: object,
        k: object,
        where: object,
        ids: object,
        context: Mapping[str, Any] | None,
    ) -> tuple[list[Match], tuple[str, ...] | None]:
        """The matches and the candidate ids as read (an iterator of ids is read once)."""
        with self._lock:
            # Checked first (nothing is logged for a call that raises on its arguments).
            plan = self._plan(text, vector, k, where, ids, context)
            record = QueryRecord(
                plan.text,
                plan.k,
                plan.where,  # the plan's own copy, made once
                copy_filter(context),
                ids=plan.ids,
                vector=plan.given,
            )
            self._queries.add(record)
            failure = self._failures.take()
            _touched.asked(self, record, self._storage.table.version, failure)  # failure report
            if failure is not None:
                raise failure
            self._storage.flush()
            return list(self._pipeline.run(plan, self._storage.table).matches), plan.ids
