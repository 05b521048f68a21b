"""Record storage for FakeVectorStore: rows, holes, compaction, and copy-on-write sharing.

A :class:`RecordTable` keeps every record in a row: a float32 vector, an id, a text, metadata,
an insertion sequence number and a 64-bit id hash. Rows are appended; deleting a record clears
its bit in ``alive`` and leaves a hole (its id, text and metadata stay in place, unread) until
:meth:`RecordTable.compact` reclaims the holes. Row order is insertion order, before and after
compaction.

Tables are shared copy-on-write: :meth:`RecordTable.share` gives a second table over the same
arrays and lists (a store made by ``with_options`` holds one), and the first write to either
table copies what it is about to change. Queries only read, so twins never copy.

The quirk state that names rows (older copies of a duplicated id, deleted ids still in the
index, live ids unlinked by churn) lives here too, because compaction must renumber it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from placeborag._filters import Columns

_SCREENS = 4  # query vectors whose screens a table keeps

__all__ = ["RecordTable", "id_hashes", "text_hash"]


def id_hashes(ids: Sequence[str]) -> np.ndarray:
    """64-bit blake2b hashes of ids (uint64), the seed of every per-record hash stream.

    The digests are joined and read as little-endian words at once: :func:`text_hash` of
    each id, without a Python int per id.
    """
    blake2b = hashlib.blake2b
    digests = b"".join(
        [blake2b(i.encode("utf-8", "surrogatepass"), digest_size=8).digest() for i in ids]
    )
    return np.frombuffer(digests, dtype="<u8").astype(np.uint64)


def text_hash(text: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little"
    )


class RecordTable:
    """Rows of records, grown by an eighth at a time; see the module docstring."""

    def __init__(self, dimensions: int | None) -> None:
        self.dimensions = dimensions
        self.vectors = np.zeros((0, dimensions or 0), dtype=np.float32)
        self.count = 0  # rows in use (alive or holes)
        self.alive = np.zeros(0, dtype=bool)
        self.seq = np.zeros(0, dtype=np.int64)
        self.id_hash = np.zeros(0, dtype=np.uint64)
        self.ids: list[str] = []
        self.texts: list[str] = []
        self.metas: list[dict[str, Any] | None] = []
        self.row_of: dict[str, int] = {}  # visible id -> row
        self.next_seq = 0
        self.holes = 0
        self.shadows: dict[str, list[int]] = {}  # older copies of a duplicated id
        self.orphan_of: dict[str, int] = {}  # deleted ids the index still holds
        self.unreachable: set[str] = set()  # live ids churn unlinked from queries
        self.version = 0  # bumped by every change, so views can be cached per version
        # Rows written whose vectors the store embeds later, in one batch, before any read
        # (see FakeVectorStore._flush): one test's hundred single upserts cost one embedding.
        self.unembedded: set[int] = set()
        self._columns: Columns | None = None
        # ids, texts and metadata of every row as a store's records hand them out, made once
        # per version and shared by twins (100,000-long tuples: each copy is also work for
        # the garbage collector while it is young)
        self._whole: tuple[tuple[str, ...], tuple[str, ...], list[Any]] | None = None
        # float32 scores of the last few query vectors against every row (see screen()),
        # one dict shared by twins (the pre- and post-filter stores rank the same rows)
        self._screens: dict[bytes, np.ndarray] = {}
        self._shared = False
        # Set when a read-only view of ``vectors`` was handed out: a rewrite in place then
        # copies the matrix first, so the view never changes under its holder.
        self.exported = False

    # -- sharing -------------------------------------------------------------------------

    def share(self) -> RecordTable:
        """A second table over the same rows; a write to either one copies first."""
        twin = RecordTable.__new__(RecordTable)
        twin.__dict__.update(self.__dict__)
        self.columns()  # built once here, so every twin's filtered query shares it
        twin._columns = self._columns
        self._shared = twin._shared = True
        return twin

    def with_vectors(self, vectors: np.ndarray) -> RecordTable:
        """A shared table whose rows hold ``vectors`` (``count`` rows, holes included)."""
        twin = self.share()
        twin.unembedded = set()  # every row's vector is given
        twin.vectors = vectors
        twin._screens = {}
        twin.dimensions = int(vectors.shape[1]) or None
        twin.exported = False
        return twin

    def mutable(self) -> None:
        """Call before any change: a shared table takes its own copy of everything first."""
        self.version += 1
        self._columns = None
        self._whole = None
        self._screens = {}
        if not self._shared:
            return
        self.vectors = self.vectors.copy()
        self.alive = self.alive.copy()
        self.seq = self.seq.copy()
        self.id_hash = self.id_hash.copy()
        self.ids = list(self.ids)
        self.texts = list(self.texts)
        self.metas = list(self.metas)
        self.row_of = dict(self.row_of)
        self.shadows = {key: list(rows) for key, rows in self.shadows.items()}
        self.orphan_of = dict(self.orphan_of)
        self.unreachable = set(self.unreachable)
        self.unembedded = set(self.unembedded)
        self._shared = False
        self.exported = False

    # -- reads ---------------------------------------------------------------------------

    def screen(self, query: np.ndarray) -> np.ndarray:
        """``vectors[:count] @ query`` in float32 (read only): the first screen of every
        ranking. Kept for the last few query vectors until the rows change, and shared by the
        twins that share the rows, so a trace, its ideal ranking and the other filter mode's
        trace of the same query take one product with the matrix instead of several."""
        q32 = np.ascontiguousarray(query, dtype=np.float32)
        key = q32.tobytes()
        screens = self._screens
        found = screens.get(key)
        if found is None or found.shape[0] != self.count:
            found = self.vectors[: self.count] @ q32
            found.flags.writeable = False
            if len(screens) >= _SCREENS:
                screens.clear()
            screens[key] = found
        return found

    def whole_columns(self) -> tuple[tuple[str, ...], tuple[str, ...], list[Any]]:
        """The ids and texts of every row (holes included) as tuples and their metadata as a
        list: built once after each change, the same objects for every twin. Read only."""
        whole = self._whole
        if whole is None:
            whole = self._whole = (tuple(self.ids), tuple(self.texts), list(self.metas))
        return whole

    def columns(self) -> Columns:
        """The metadata as filter columns, built on first use after each change."""
        if self._columns is None:
            self._columns = Columns(self.metas)
        return self._columns

    def visible_rows(self) -> np.ndarray:
        """The rows of visible records, in insertion order."""
        if self.holes == 0 and len(self.row_of) == self.count:
            return np.arange(self.count)
        rows = np.fromiter(self.row_of.values(), dtype=np.int64, count=len(self.row_of))
        rows.sort()  # row order is insertion order
        return rows

    def stored_rows(self) -> np.ndarray:
        """The rows of every stored record, in insertion order: each visible id's newest and,
        under ``on_existing_id="duplicate"``, its older copies (every row a query can return
        but the orphans of deleted ids)."""
        if not self.shadows:
            return self.visible_rows()
        older = [row for rows in self.shadows.values() for row in rows]
        rows = np.fromiter(
            [*self.row_of.values(), *older], dtype=np.int64, count=len(self.row_of) + len(older)
        )
        rows.sort()
        return rows

    def reachable(self) -> np.ndarray:
        """Rows a query can reach: alive, and not unlinked by churn."""
        mask = self.alive[: self.count]
        if self.unreachable:
            mask = mask.copy()
            mask[[self.row_of[i] for i in self.unreachable]] = False
        return mask

    # -- writes (after mutable()) --------------------------------------------------------

    def set_dimensions(self, dimensions: int) -> None:
        self._screens = {}
        self.dimensions = dimensions
        self.vectors = np.zeros((self.vectors.shape[0], dimensions), dtype=np.float32)

    def grow(self, needed: int) -> None:
        capacity = self.vectors.shape[0]
        if needed <= capacity:
            return
        # Grow by an eighth, not double: the memory target is 1.5x the raw float32 matrix.
        new_capacity = max(needed, capacity + capacity // 8, 64)
        vectors = np.zeros((new_capacity, self.dimensions or 0), dtype=np.float32)
        vectors[: self.count] = self.vectors[: self.count]
        self.vectors = vectors
        self._screens = {}
        self.exported = False
        self.alive = _grown(self.alive, new_capacity, self.count)
        self.seq = _grown(self.seq, new_capacity, self.count)
        self.id_hash = _grown(self.id_hash, new_capacity, self.count)

    def append(
        self,
        ids: list[str],
        texts: list[str],
        metas: list[dict[str, Any] | None],
        vectors: np.ndarray | None,
    ) -> None:
        """New ids only: their records take the next rows, in order, in one pass (``vectors``
        None: embedded later, see :attr:`unembedded`)."""
        n = len(ids)
        start = self.count
        self.grow(start + n)
        stop = start + n
        self.row_of.update(zip(ids, range(start, stop)))
        self.ids.extend(ids)
        self.texts.extend(texts)
        self.metas.extend(metas)
        self.seq[start:stop] = np.arange(self.next_seq, self.next_seq + n)
        self.next_seq += n
        self.alive[start:stop] = True
        if vectors is None:
            self.unembedded.update(range(start, stop))
        else:
            self.vectors[start:stop] = vectors
            self._screens = {}
        self.id_hash[start:stop] = id_hashes(ids)
        self.count = stop

    def new_row(self, id: str, text: str, meta: dict[str, Any] | None) -> int:
        """A new row for one record (``grow`` first); its vector is set by :meth:`set_vectors`."""
        row = self.count
        self.count += 1
        self.row_of[id] = row
        self.ids.append(id)
        self.texts.append(text)
        self.metas.append(meta)
        self.seq[row] = self.next_seq
        self.next_seq += 1
        self.alive[row] = True
        return row

    def rewrite(self, row: int, text: str, meta: dict[str, Any] | None) -> None:
        self.texts[row] = text
        self.metas[row] = meta

    def set_vectors(self, rows: list[int], ids: list[str], vectors: np.ndarray | None) -> None:
        """Write the vectors of ``rows`` (None: embedded later) and their id hashes."""
        self.id_hash[rows] = id_hashes(ids)
        if vectors is None:
            self.unembedded.update(rows)
            if self.exported:  # a view handed out must not change when they are embedded
                self.vectors = self.vectors.copy()
                self.exported = False
            return
        self.unembedded.difference_update(rows)
        self.fill_vectors(rows, vectors)

    def fill_vectors(self, rows: list[int], vectors: np.ndarray) -> None:
        self.fill_vectors_with(lambda out: out.__setitem__(rows, vectors))

    def fill_vectors_with(self, fill: Callable[[np.ndarray], None]) -> None:
        """``fill(matrix)`` writes some rows of the vector matrix in place (a matrix handed
        out as a read-only view is copied first, so the view never changes)."""
        self._screens = {}
        if self.exported:
            self.vectors = self.vectors.copy()
            self.exported = False
        fill(self.vectors)

    def kill(self, row: int) -> None:
        """Turn a row into a hole (compaction reclaims it)."""
        self.alive[row] = False
        self.metas[row] = None  # nothing else reads a hole; let its metadata go
        self.holes += 1

    def needs_compaction(self) -> bool:
        return self.holes > max(1024, self.count // 2)

    def compact(self) -> None:
        """Reclaim the holes (every vector must be embedded: rows are renumbered)."""
        assert not self.unembedded
        keep = np.flatnonzero(self.alive[: self.count])
        self._screens = {}
        self._whole = None
        self.vectors = np.ascontiguousarray(self.vectors[keep])
        self.alive = self.alive[keep]
        self.seq = self.seq[keep]
        self.id_hash = self.id_hash[keep]
        self.ids = [self.ids[r] for r in keep]
        self.texts = [self.texts[r] for r in keep]
        self.metas = [self.metas[r] for r in keep]
        remap = np.full(self.count, -1, dtype=np.int64)
        remap[keep] = np.arange(keep.size)
        self.row_of = {value: int(remap[row]) for value, row in self.row_of.items()}
        self.orphan_of = {value: int(remap[row]) for value, row in self.orphan_of.items()}
        self.shadows = {
            value: [int(remap[row]) for row in rows] for value, rows in self.shadows.items()
        }
        self.count = len(keep)
        self.holes = 0


def _grown(array: np.ndarray, capacity: int, count: int) -> np.ndarray:
    grown = np.zeros(capacity, dtype=array.dtype)
    grown[:count] = array[:count]
    return grown
