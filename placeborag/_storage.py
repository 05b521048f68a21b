"""What a FakeVectorStore holds, and every write to it: rows, pending writes, the write quirks.

:class:`Storage` owns the :class:`~placeborag._records.RecordTable`, the writes held back under
``visibility="manual"``, the ids written, and the quirks writes set off (``on_existing_id``,
``orphans``, ``churn``); it embeds through the store's embedding strategy and builds the
read-only :class:`~placeborag._trace.StoreRecords` view. Its methods are called with the
store's lock held unless they say otherwise; the store checks arguments first, so nothing
here changes state for a call that raises on its arguments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from placeborag._embedding import ModelVectors
from placeborag._errors import PlaceboragTypeError, PlaceboragValueError
from placeborag._hashing import splitmix64
from placeborag._metadata import check_id
from placeborag._pipeline import Settings
from placeborag._records import RecordTable
from placeborag._threads import BULK_ROWS, bulk, gc_paused
from placeborag._trace import RecordMetadata, StoreRecords, repeated
from placeborag._validation import check_column, shown, unknown_id

__all__ = ["Storage", "Write", "check_reuse", "unit_rows"]

# Salts that keep the hash streams of the quirks independent of each other and of recall.
_ORPHAN_SALT = 0x6F727068616E2121
_CHURN_SALT = 0x636875726E212121
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_BLOCK = 65_536  # rows converted at a time: temporaries stay a few MB at any n


@dataclass
class Write:
    """One write: ``op`` is "upsert" or "delete"; ``vectors`` None means embedded later."""

    op: str
    ids: list[str]
    texts: list[str] = field(default_factory=list)
    metadatas: list[dict[str, Any] | None] = field(default_factory=list)
    vectors: np.ndarray | None = None


def _below_share(key: int, share: Fraction) -> bool:
    """Whether a 64-bit hash falls in the lowest ``share`` of its range (exactly)."""
    return key < math.floor(share * 2**64)


class Storage:
    """The records of one store and every change to them (see the module docstring)."""

    def __init__(self, settings: Settings, vectors: ModelVectors) -> None:
        self.settings = settings
        self.vectors = vectors
        self.table = RecordTable(vectors.dimensions)
        self.pending: list[Write] = []
        self.written: set[str] = set()  # ids present once every pending write lands
        self.written_shared = False  # with a twin (copied before either one changes it)
        self.churn_events = 0
        self.view: StoreRecords | None = None
        self.view_table: RecordTable | None = None  # the table ``view`` was made from
        # Fixed by the options and the embedder's strategy: read on every write. A write may be
        # embedded later, in one batch before the next read, when the embedder is exact (it
        # cannot fail on a checked text, and its batch is the same bits as one by one).
        self.immediate = settings.options.visibility == "immediate"
        self.lazy_writes = vectors.exact and self.immediate
        self.refuses_existing = settings.profile.on_existing_id == "error"

    # -- sharing -------------------------------------------------------------------------------

    def adopt(self, source: Storage, table: RecordTable) -> None:
        """Take ``source``'s records (as ``table``) and write state."""
        if table.dimensions is not None and self.table.dimensions not in (None, table.dimensions):
            raise PlaceboragValueError(
                f"the embedder makes {self.table.dimensions}-dimensional vectors; "
                f"the records hold {table.dimensions}-dimensional ones"
            )
        self.table = table
        # Shared, not copied (a million ids): the first store to change it copies it first.
        self.written = source.written
        self.written_shared = source.written_shared = True
        self.pending = list(source.pending)
        self.churn_events = source.churn_events

    def own_written(self) -> set[str]:
        """The written ids, to change: a set shared with a twin is copied first."""
        if self.written_shared:
            self.written = set(self.written)
            self.written_shared = False
        return self.written

    # -- reads ---------------------------------------------------------------------------------

    def current_view(self) -> StoreRecords | None:
        """The records view made from the table as it is now, if one was made."""
        view, table = self.view, self.table
        if view is not None and self.view_table is table and view.version == table.version:
            return view
        return None

    def records(self, pending: int) -> StoreRecords:
        """The read-only view of every stored record, cached per table version."""
        self.flush()
        table = self.table
        view = self.current_view()
        if view is not None:
            if view.pending != pending:  # a write held back since: the records are the same
                view = self.view = replace(view, pending=pending)
            return view
        rows = table.stored_rows()
        if rows.size == table.count:
            vectors = table.vectors[: table.count].view()
            table.exported = True
        else:
            vectors = table.vectors[rows]
        vectors.flags.writeable = False
        seq = table.seq[rows]
        seq.flags.writeable = False
        if rows.size == len(table.ids):  # every row stored: the columns as they are
            ids, texts, metas = table.whole_columns()
        else:
            picked = rows.tolist()
            ids = tuple(table.ids[r] for r in picked)
            texts = tuple(table.texts[r] for r in picked)
            metas = [table.metas[r] for r in picked]
        unreachable = table.unreachable
        self.view = StoreRecords(
            ids=ids,
            texts=texts,
            metadata=RecordMetadata(metas),
            vectors=vectors,
            sequence=seq,
            reachable=tuple(i not in unreachable for i in ids)
            if unreachable
            else repeated(True, len(ids)),
            pending=pending,
            version=table.version,
            occurrence=_occurrences(ids) if table.shadows else (),
        )
        self.view_table = table
        return self.view

    def pending_ids(self) -> tuple[str, ...]:
        """Ids written (not deleted) by the writes still pending, in order."""
        out: dict[str, None] = {}
        for op in self.pending:
            for value in op.ids:
                if op.op == "upsert":
                    out[value] = None
                else:
                    out.pop(value, None)
        return tuple(out)

    # -- writes --------------------------------------------------------------------------------

    def refuse_existing(self, ids: list[str]) -> None:
        if not self.refuses_existing:
            return
        for value in ids:
            if value in self.written:
                raise PlaceboragValueError(
                    f"id {shown(value)} is already stored and on_existing_id='error' "
                    "forbids writing it again"
                )

    def land(self, op: Write) -> None:
        """A checked write (its vectors embedded and checked, unless lazy): applied, or queued
        under ``visibility="manual"``."""
        written = self.own_written() if self.written_shared else self.written
        if op.op == "upsert":
            written.update(op.ids)
        else:
            written.difference_update(op.ids)
        if self.immediate:
            if len(op.ids) < BULK_ROWS:  # a test's write: no context manager on this path
                self.apply(op)
            else:
                with gc_paused():
                    self.apply(op)
        else:
            self.pending.append(op)  # never lazy: embedded when written, like any engine

    def refresh(self) -> None:
        pending, self.pending = self.pending, []
        for op in pending:
            self.apply(op)

    def embed(self, texts: list[str]) -> np.ndarray:
        """The strategy's vectors of ``texts``, not yet checked against the store (called
        without the lock: a model may be slow)."""
        if len(texts) < BULK_ROWS:
            return self.vectors.documents(texts)
        with gc_paused():
            return self.vectors.documents(texts)

    def check_dimensions(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """Fix the store's dimensions on its first write or check them."""
        table = self.table
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

    def embed_checked(self, texts: list[str]) -> np.ndarray:
        return self.check_dimensions(self.embed(texts), texts)

    def apply(self, op: Write) -> None:
        table = self.table
        table.mutable()
        self.view = self.view_table = None
        if op.op == "delete":
            self._delete(op.ids)
        elif not table.orphan_of and table.row_of.keys().isdisjoint(op.ids):
            table.append(op.ids, op.texts, op.metadatas, op.vectors)
            return
        else:
            self._rewrite(op)
        self._compact_if_needed()

    def _delete(self, ids: list[str]) -> None:
        table = self.table
        for value in ids:
            row = table.row_of.pop(value, None)
            if row is None:
                continue
            table.unreachable.discard(value)
            for shadow in table.shadows.pop(value, ()):
                table.kill(shadow)
            orphaned = self.settings.orphans and _below_share(
                int(splitmix64(table.id_hash[row : row + 1] ^ np.uint64(_ORPHAN_SALT))[0]),
                self.settings.orphans,
            )
            if orphaned:
                table.orphan_of[value] = row  # gone for get(), still in the index
            else:
                table.kill(row)
            self._churn_event(ids)

    def _rewrite(self, op: Write) -> None:
        """An upsert where some ids are stored (or orphaned): ``on_existing_id`` decides."""
        table = self.table
        mode = self.settings.profile.on_existing_id
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

    def _compact_if_needed(self) -> None:
        if self.table.needs_compaction():
            self.flush()
            self.table.compact()

    def flush(self) -> None:
        """Embed, in one batch, every row written since the last read."""
        table = self.table
        if not table.unembedded:
            return
        n = len(table.unembedded)
        with bulk(n):
            if n == table.count:  # every row (a store's first batch): the texts as they are
                rows: Sequence[int] = range(n)
                texts: Sequence[str] = table.texts
            else:
                rows = sorted(table.unembedded)
                texts = [table.texts[r] for r in rows]
            if self.vectors.exact and n >= BULK_ROWS:
                # A large batch is embedded straight into the table's matrix (an exact
                # embedder's dimensions are the table's from the start): no batch of rows
                # beside it, and no copy of one into it (the same bits: each row is computed
                # on its own).
                at = np.arange(n) if isinstance(rows, range) else np.array(rows, dtype=np.intp)
                table.fill_vectors_with(lambda out: self.vectors.fill(texts, out, at))
            else:
                texts = list(texts) if texts is table.texts else texts  # the caller's own
                table.fill_vectors(list(rows), self.embed(texts))  # type: ignore[arg-type]
        table.unembedded.clear()

    def _churn_event(self, batch: list[str]) -> None:
        """A delete or rewrite: with chance ``churn``, unlink a live record outside the batch."""
        churn = self.settings.churn
        if not churn:
            return
        table = self.table
        skip = set(batch)
        self.churn_events += 1
        event = splitmix64(np.array([self.churn_events ^ _CHURN_SALT], dtype=np.uint64))
        if not _below_share(int(event[0]), churn):
            return
        rows = np.array(
            [r for i, r in table.row_of.items() if i not in skip and i not in table.unreachable],
            dtype=np.int64,
        )
        if rows.size:
            victim = rows[np.argmin(splitmix64(table.id_hash[rows] ^ event[0]))]
            table.unreachable.add(table.ids[victim])

    # -- re-embedding ------------------------------------------------------------------------

    def reembedded_table(
        self, twin: Storage, reuse: tuple[StoreRecords, list[str]] | None
    ) -> RecordTable:
        """This table with every vector made by ``twin``'s embedder; the rows of ``reuse``'s
        ids taken from its records instead."""
        table = self.table
        embed_rows = np.flatnonzero(table.alive[: table.count])
        reused_rows = reused_from = np.zeros(0, dtype=np.int64)
        dims = twin.table.dimensions
        if reuse is not None:
            records, ids = reuse
            ours = list(map(table.row_of.get, ids))
            if not table.shadows and records.ids is table.whole_columns()[0]:
                # a twin of this very table, every row a record: the same positions (the
                # usual case, a store re-embedded from its own re-embedding)
                theirs = ours
            else:
                theirs = list(map(records._index.get, ids))
            if None in ours or None in theirs:  # the first unknown id, named
                for doc_id, row in zip(ids, ours):
                    if row is None:
                        raise unknown_id(doc_id, table.row_of)
                    records.position(doc_id)
            reused_rows = np.array(ours, dtype=np.int64)
            reused_from = np.array(theirs, dtype=np.int64)
            keep = np.ones(table.count, dtype=bool)
            keep[reused_rows] = False
            embed_rows = embed_rows[keep[embed_rows]]
            if reused_rows.size:
                dims = records.dimensions
                if twin.vectors.exact and twin.vectors.dimensions != dims:
                    raise PlaceboragValueError(
                        f"the embedder makes {twin.vectors.dimensions}-dimensional vectors; "
                        f"the store of reuse holds {dims}-dimensional ones"
                    )
        vectors = twin._embedded_matrix(table, embed_rows, dims)
        for a in range(0, reused_rows.size, _BLOCK):  # a block at a time: no whole temporary
            assert reuse is not None
            vectors[reused_rows[a : a + _BLOCK]] = reuse[0].vectors[reused_from[a : a + _BLOCK]]
        return table.with_vectors(vectors)

    def _embedded_matrix(
        self, table: RecordTable, embed_rows: np.ndarray, dims: int | None
    ) -> np.ndarray:
        """A matrix of ``table``'s rows with ``embed_rows`` embedded by this storage's
        strategy (the others zero, for the caller to fill)."""
        texts: Sequence[str] = (
            table.whole_columns()[1]  # every row: the table's own tuple (a batch memo key)
            if embed_rows.size == table.count
            else list(map(table.texts.__getitem__, embed_rows.tolist()))
        )
        if self.vectors.exact and embed_rows.size:
            # The embedder writes straight into the new matrix: no batch of rows beside it.
            assert self.vectors.dimensions is not None
            vectors = np.empty((table.count, self.vectors.dimensions), dtype=np.float32)
            self.check_dimensions(vectors[:0], texts)
            if embed_rows.size < table.count:
                vectors[~table.alive[: table.count]] = 0.0  # the rows of deleted records
            self.vectors.fill(texts, vectors, embed_rows)
            return vectors
        embedded = self.embed_checked(list(texts)) if embed_rows.size else None
        if embedded is not None:
            dims = embedded.shape[1]
            if embed_rows.size == table.count and embedded.dtype == np.float32:
                # Every row embedded, in row order: the batch is the matrix (no second copy;
                # the new table is shared, so a later write copies it before changing it).
                return embedded
        vectors = np.zeros((table.count, dims or 0), dtype=np.float32)
        if embedded is not None:
            vectors[embed_rows] = embedded
        return vectors

    def reembed_pending(self, source: Storage) -> None:
        """``source``'s pending writes, re-embedded with this storage's strategy."""
        self.pending = [
            Write(
                op.op,
                op.ids,
                op.texts,
                op.metadatas,
                self.embed_checked(op.texts) if op.op == "upsert" else None,
            )
            for op in source.pending
        ]


def _occurrences(ids: Sequence[str]) -> tuple[int, ...]:
    """For each id, how many earlier entries of ``ids`` hold it (0, 1, 2... per id)."""
    seen: dict[str, int] = {}
    out = []
    for value in ids:
        n = seen.get(value, 0)
        out.append(n)
        seen[value] = n + 1
    return tuple(out)


def as_matrix(vectors: object, rows: int) -> np.ndarray:
    """Given vectors as a float array (float rows are kept as they are: converted block by
    block later, no float64 copy of the whole), one row per id, checked for shape."""
    if isinstance(vectors, (str, bytes)):
        raise PlaceboragTypeError(
            f"vectors={shown(vectors)} must be rows of numbers, not {type(vectors).__name__}"
        )
    try:
        given = np.asarray(vectors)
        array = given if given.dtype in _FLOATS else given.astype(np.float64)
    except (TypeError, ValueError):
        raise PlaceboragTypeError(
            "vectors must be a rectangular array of numbers (one row per id)"
        ) from None
    if array.ndim != 2 or array.shape[0] != rows or not array.shape[1]:
        raise PlaceboragValueError(
            f"vectors has shape {array.shape}; expected ({rows}, dimensions), one row per id"
        )
    return array


def unit_rows(array: np.ndarray, ids: list[str]) -> np.ndarray:
    """The rows of ``array`` as unit float32 vectors, computed in blocks of rows with the same
    float64 operations per row as on the whole array.

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


def check_reuse(reuse: object, store_type: type) -> tuple[Any, list[str]] | None:
    """``reembedded``'s ``reuse``: None or a (store, ids) pair (``store_type``: the store's
    class, which this module does not import)."""
    if reuse is None:
        return None
    if not (isinstance(reuse, (tuple, list)) and len(reuse) == 2):
        raise PlaceboragTypeError(
            f"reuse={shown(reuse)} must be a (FakeVectorStore, ids) pair or None"
        )
    other, ids = reuse
    if not isinstance(other, store_type):
        raise PlaceboragTypeError(
            f"reuse={shown(reuse)} must be a (FakeVectorStore, ids) pair, "
            f"not {type(other).__name__}"
        )
    id_list = check_column(ids, "reuse ids")
    if not (set(map(type, id_list)) <= {str} and "" not in id_list):  # else all are fine
        for i, value in enumerate(id_list):
            check_id(value, f"reuse ids[{i}]")
    return other, id_list
