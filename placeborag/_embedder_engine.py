"""The engine behind :class:`~placeborag.FakeEmbedder`: hashing, member placement, memos.

:class:`EmbedderEngine` turns a checked declaration (model name, dimensions, clusters, spread,
match rule) into vectors, by the fast paths a store and the explorer take: one text, a small
batch whose rows are kept, a large batch in blocks (on two threads where the parts are large),
rows written in place into a store's matrix, and each vector's exact integer form. It keeps the
per-embedder caches (hashed rows, member vectors) and the process-wide memos of large batches
(membership, member draws, encodings, the texts matched so far), all bounded in bytes.

``FakeEmbedder`` is the public surface and the cluster declarations over it: it checks its
arguments, chooses the anchors (:meth:`EmbedderEngine.place`) and checks the geometry, and asks
the engine for every vector. Every path gives the same bits for a text as every other.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from operator import itemgetter
from typing import Any, cast

import numpy as np

from placeborag._hashing import BatchMemo, hashed_counts_norm, hashed_counts_norms, model_seeds
from placeborag._threads import beside, each

__all__ = ["CACHED_BATCH", "ROW_BLOCK", "EmbedderEngine"]

_SCALE_BITS = 52
_CACHED_BATCH = 64
# A kept text: its unit row (None until asked for: a kept batch derives it on demand, with the
# same bits), its counts and their squared norm.
_Row = tuple[np.ndarray | None, np.ndarray, int]
_ROW_BLOCK = 8192  # a large batch is spread into rows this many at a time
# Member rows are spread from their four values this many at a time: a block's arrays (2 MB
# of uint32 at 256 dimensions) stay in the cache between the passes over them.
_MEMBER_BLOCK = 2048
_KEPT_BATCH = 1024  # a batch up to this size keeps its rows (a unit test's store)
_CACHED_TEXT = 1024  # longer texts are not kept (the key would cost more than the row)
_TEXT_CACHE_BYTES = 8 << 20  # hashed rows kept per embedder (16 bytes per dimension each)
_TEXT_CACHE_LOCK = threading.Lock()
_MEMBER_CACHE_BYTES = 32 << 20  # member vectors kept per embedder (float64 and int64 rows)
_GIL_SLICE = 512  # digests between two offers of the GIL (about a millisecond of them)
#: The batch sizes the double's geometry check works in (a block of members; a declaration
#: small enough to keep its members' vectors for the queries that follow).
ROW_BLOCK = _ROW_BLOCK
CACHED_BATCH = _CACHED_BATCH

# Per-member draws of large batches (sign rows per model, dimension and geometry attempt;
# jitter draws per model), which a new spread reuses.
# Their weights count the texts their keys hold (a 100,000-text corpus: about 8 MB of them).
_MEMBER_DRAWS = BatchMemo(48 << 20, min_batch=100)
# Substring membership of large batches (a corpus re-embedded under another model, dimension
# or spread keeps its clusters): looked up by the declaration and the texts themselves.
_MEMBERSHIP = BatchMemo(48 << 20, min_batch=1024)
# The members' ``cluster NUL text`` bytes of a large batch: a new model or dimension draws
# from them again (73,000 members of ~60 characters: ~7 MB).
_ENCODED = BatchMemo(48 << 20, min_batch=1024)
# The cluster of each text of the large batches matched so far, per declaration (the two most
# recent declarations), for texts of up to _SEEN_TEXT_CHARS characters, at most _SEEN_TEXTS
# texts and _SEEN_CHARS characters each: the texts are references (a store holds them too),
# and past a bound the entries of that declaration are let go of.
_SEEN: dict[tuple[tuple[str, str], ...], tuple[dict[str, str | None], list[int]]] = {}
_SEEN_LOCK = threading.Lock()
_SEEN_DECLARATIONS = 2
_SEEN_TEXTS = 1 << 18
_SEEN_CHARS = 16 << 20
_SEEN_TEXT_CHARS = 1024


class _Keys(tuple):  # type: ignore[type-arg]
    """The (cluster, text) keys of a large batch's members (a membership's, read only): a
    tuple that hashes its 73,000 pairs once, not at every batch-memo lookup, and knows
    whether its pairs are distinct. Equal to, and hashing as, the plain tuple of its pairs."""

    def __hash__(self) -> int:
        found: int | None = self.__dict__.get("hash")
        if found is None:
            found = self.__dict__["hash"] = tuple.__hash__(self)
        return found

    @property
    def distinct(self) -> bool:
        found: bool | None = self.__dict__.get("distinct")
        if found is None:
            found = self.__dict__["distinct"] = len(set(self)) == len(self)
        return found


def _distinct(keys: Sequence[tuple[str, str]]) -> bool:
    """Whether no (cluster, text) pair comes twice (known once for a membership's keys)."""
    return keys.distinct if isinstance(keys, _Keys) else len(set(keys)) == len(keys)


def _as_key(keys: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """``keys`` as a batch-memo key: itself when it is a tuple (a membership's :class:`_Keys`
    keeps its hash), else a tuple of it."""
    return keys if isinstance(keys, tuple) else tuple(keys)


class _Membership:
    """Each text's cluster (None outside them) and the batch split as ``_split`` gives it:
    member positions, their (cluster, text) keys and the other positions. Read only."""

    __slots__ = ("member_texts", "names", "nbytes", "split")

    def __init__(self, names: list[str | None], texts: Sequence[str]) -> None:
        self.names = np.array(names + [None], dtype=object)[:-1]
        is_member = np.array([name is not None for name in names], dtype=bool)
        at = np.flatnonzero(is_member).tolist()
        self.member_texts = [texts[i] for i in at]
        # the batch memos' keys are then this very object (_as_key), hashed once
        keys = _Keys(zip(self.names[is_member].tolist(), self.member_texts))
        self.split = (at, keys, np.flatnonzero(~is_member).tolist())
        # the arrays and lists of pointers, the keys' tuples and the ints past the small ones
        # (the texts are counted by the memo: its key holds them)
        self.nbytes = 8 * self.names.size + 24 * len(texts) + 64 * len(keys)

    def of_members(self) -> _Membership:
        """The same for the batch of this batch's members alone (what a new spread embeds),
        sharing the keys."""
        part = _Membership.__new__(_Membership)
        part.names = self.names[np.not_equal(self.names, None)]  # type: ignore[call-overload]
        part.member_texts = self.member_texts
        part.split = (list(range(len(part.names))), self.split[1], [])
        part.nbytes = 16 * part.names.size
        return part


_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _shake_signs(seed: bytes, n: int) -> np.ndarray:
    """n deterministic ±1 integers from SHAKE-256 of the seed."""
    bits = np.unpackbits(np.frombuffer(hashlib.shake_256(seed).digest((n + 7) // 8), np.uint8))
    return 1 - 2 * bits[:n].astype(np.int64)


class EmbedderEngine:
    """Vectors for one checked declaration, by the fastest path that gives the same bits.

    ``clusters`` maps each cluster name to its member texts (checked by the double: non-empty,
    each text in one cluster). The anchors are drawn by :meth:`place`, which the double calls
    for each geometry attempt it tries; until then no member can be embedded.
    """

    __slots__ = (
        "_anchors",
        "_attempt",
        "_cluster_of_declared",
        "_cluster_spread",
        "_clusters",
        "_dimensions",
        "_match",
        "_member_cache",
        "_model_name",
        "_seeds",
        "_substring_order",
        "_text_cache",
    )

    def __init__(
        self,
        model_name: str,
        dimensions: int,
        clusters: dict[str, tuple[str, ...]],
        cluster_spread: float,
        cluster_match: str,
    ) -> None:
        self._model_name = model_name
        self._dimensions = dimensions
        self._cluster_spread = cluster_spread
        self._match = cluster_match
        self._seeds = model_seeds(model_name, dimensions)
        self._clusters = clusters
        self._cluster_of_declared = {
            text: name for name, members in clusters.items() for text in members
        }
        # Substring mode: longest declaration first, then declaration order, so the longest
        # declared member contained in a text decides its cluster.
        # (sorted is stable: among texts of one length, declaration order stays)
        self._substring_order = sorted(self._cluster_of_declared, key=lambda t: -len(t))
        # Member vectors cost a SHAKE digest and big-integer arithmetic: keep them per text.
        self._member_cache: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        # Hashed texts (unit float64 row, integer counts as int64, their exact squared norm),
        # least recently used out first: a store re-ranks the texts it was given, a test
        # queries the same text.
        self._text_cache: dict[str, _Row] = {}
        self._anchors: dict[str, np.ndarray] = {}
        self._attempt = 0

    @property
    def declared(self) -> dict[str, str]:
        """Each declared member text's cluster, in declaration order (read only)."""
        return self._cluster_of_declared

    @property
    def anchors(self) -> dict[str, np.ndarray]:
        """Each cluster's ±1 anchor (int64, not normalised) for the current attempt (read only)."""
        return self._anchors

    def place(self, attempt: int) -> None:
        """Draw the anchors of geometry attempt ``attempt`` (a pure function of the declaration
        and the attempt), forgetting the member vectors of any earlier attempt."""
        self._attempt = attempt
        self._member_cache.clear()
        self._anchors = {
            name: _shake_signs(self._seed("a", name), self._dimensions) for name in self._clusters
        }

    def embed_text(self, text: str) -> list[float]:
        """The unit vector of one text as a list of floats (``embed``'s own path)."""
        if self._clusters and self.clusters_of([text])[0] is not None:
            return cast("list[float]", self.embed_floats([text])[0].tolist())
        kept = self._text_cache.get(text)  # a text a store of this embedder was given
        if kept is not None:
            return cast("list[float]", _unit(kept).tolist())
        counts, norm2 = hashed_counts_norm(text, self._dimensions, self._seeds)
        counts /= math.sqrt(norm2)  # as in _hash_one: the same bits
        return cast("list[float]", counts.tolist())

    def clusters_of(self, texts: Sequence[str]) -> list[str | None]:
        """Each text's cluster under the match rule (None for a text outside the clusters)."""
        if not self._clusters:
            return [None] * len(texts)
        if self._match == "exact":
            return [self._cluster_of_declared.get(t) for t in texts]
        if len(texts) < _MEMBERSHIP.min_batch:
            return self._substring_clusters(texts)
        return self._membership(texts).names.tolist()  # type: ignore[no-any-return]

    def _membership(self, texts: Sequence[str]) -> _Membership:
        """The clusters of a large batch and its split into members and other texts, kept per
        declaration and texts (a corpus embedded again under another model, dimension or
        spread: its members' keys are not built again)."""
        if self._match == "exact":
            get = self._cluster_of_declared.get
            return _Membership([get(t) for t in texts], texts)
        declared = self._cluster_of_declared
        declaration = tuple((m, declared[m]) for m in self._substring_order)
        found: _Membership | None = _MEMBERSHIP.get((declaration, tuple(texts)))
        if found is None:
            found = _Membership(self._substring_clusters(texts), texts)
            _MEMBERSHIP.put((declaration, tuple(texts)), len(texts), found)
            if found.split[2] and len(found.member_texts) >= _MEMBERSHIP.min_batch:
                # a corpus's members alone: the batch a new spread re-embeds
                members = found.of_members()
                _MEMBERSHIP.put(
                    (declaration, tuple(found.member_texts)), len(members.names), members
                )
        return found

    def _substring_clusters(self, texts: Sequence[str]) -> list[str | None]:
        """Per text, the cluster of the first declaration (longest first) it contains.

        A large batch looks each text up first among the texts already matched under the same
        declaration (any model, dimension or spread): a corpus re-embedded in parts, as a new
        spread re-embeds only its members, scans each text once.
        """
        declared = self._cluster_of_declared
        order = self._substring_order
        seen: dict[str, str | None] = {}
        chars = [0]  # characters of the texts in ``seen``
        large = len(texts) >= _MEMBERSHIP.min_batch
        if large:
            key = tuple((m, declared[m]) for m in order)
            with _SEEN_LOCK:
                entry = _SEEN.get(key) or ({}, [0])
                _SEEN.pop(key, entry)
                _SEEN[key] = entry  # the most recent declaration last
                seen, chars = entry
                while len(_SEEN) > _SEEN_DECLARATIONS:
                    del _SEEN[next(iter(_SEEN))]
        # Each text looked up first (a large batch), then the others scanned; the scanned
        # texts are remembered in one update (no per-text bookkeeping in the scan).
        unseen: Any = object()
        todo: Sequence[int]
        if seen:
            get = seen.get
            out: list[Any] = [get(t, unseen) for t in texts]
            todo = [i for i, found in enumerate(out) if found is unseen]
        else:
            out, todo = [None] * len(texts), range(len(texts))
        for i in todo:
            text, found = texts[i], None
            for member in order:
                if member in text:
                    found = declared[member]
                    break
            out[i] = found
        if large and todo:
            if isinstance(todo, range) and max(map(len, texts)) <= _SEEN_TEXT_CHARS:
                new = dict(zip(texts, out))
            else:
                new = {texts[i]: out[i] for i in todo if len(texts[i]) <= _SEEN_TEXT_CHARS}
            size = sum(map(len, new))
            with _SEEN_LOCK:
                if len(seen) + len(new) > _SEEN_TEXTS or chars[0] + size > _SEEN_CHARS:
                    seen.clear()
                    chars[0] = 0
                if len(new) <= _SEEN_TEXTS and size <= _SEEN_CHARS:
                    # (a text another thread remembered meanwhile is counted twice: the
                    # bound errs on the safe side)
                    seen.update(new)
                    chars[0] += size
        return out

    def _hash_one(self, text: str) -> _Row:
        """(unit float64 row, integer counts as int64, their squared norm) of one text not in
        a cluster, kept."""
        counts, norm2 = hashed_counts_norm(text, self._dimensions, self._seeds)
        # The same float operations as the batch path (an exact integer sum of squares, one
        # square root, one division per coordinate), so the same bits.
        row = (counts / math.sqrt(norm2), counts.astype(np.int64), int(norm2))
        if len(text) <= _CACHED_TEXT:
            self._keep({text: row})
        return row

    def _kept_row(self, text: str) -> _Row | None:
        """A kept row, made the most recently used: the texts a store ranks again and again
        stay while one-off queries pass through."""
        cache = self._text_cache
        row = cache.get(text)
        if row is not None:
            with _TEXT_CACHE_LOCK:
                cache.pop(text, None)
                cache[text] = row
        return row

    def _kept_rows(self, texts: list[str]) -> list[_Row | None]:
        """:meth:`_kept_row` of each of ``texts`` (None where not kept), under one lock."""
        cache = self._text_cache
        pop = cache.pop
        rows: list[_Row | None] = []
        with _TEXT_CACHE_LOCK:
            for text in texts:
                row = pop(text, None)
                if row is not None:
                    cache[text] = row  # the most recently used last
                rows.append(row)
        return rows

    def _keep(self, rows: dict[str, _Row]) -> None:
        """Keep hashed rows of short texts, the least recently used dropped past the byte
        budget."""
        cache = self._text_cache
        room = max(_TEXT_CACHE_BYTES // (16 * self._dimensions), 1)
        with _TEXT_CACHE_LOCK:
            for text, row in rows.items():
                if len(text) <= _CACHED_TEXT:
                    cache[text] = row
            while len(cache) > room:
                del cache[next(iter(cache))]

    def _hashed_rows(
        self, texts: list[str], exact: bool, keep: bool = False, dtype: Any = np.float64
    ) -> tuple[np.ndarray, Any]:
        """Unit float64 rows of texts outside the clusters, and their integer forms (int64) if
        ``exact``: kept texts from the cache, a few others one by one, a batch in one pass
        (whose rows are kept too when it is small: a test's store, flushed at its first read)."""
        if len(texts) == 1:  # one upsert or one query
            row = self._kept_row(texts[0]) or self._hash_one(texts[0])
            floats = _unit(row)[None, :].copy()  # a copy: the kept row must not change
            return floats, row[1][None, :].copy() if exact else None
        if 0 < len(texts) <= _CACHED_BATCH:
            kept = self._kept_rows(texts)
            missing = list(dict.fromkeys(t for t, r in zip(texts, kept) if r is None))
            made: dict[str, _Row] = {}
            if len(missing) > 4:  # more than a few: one pass for them all
                made = self._keep_batch(missing, *self._counts(missing))[2]
            # Up to four missing: hashed one by one (a repeat finds the row the first one kept).
            get = self._text_cache.get
            rows = [
                r if r is not None else made.get(t) or get(t) or self._hash_one(t)
                for t, r in zip(texts, kept)
            ]
            floats = _rows([_unit(r) for r in rows])
            return floats, _rows([r[1] for r in rows]) if exact else None
        # Blocks of rows past two of them: bounded transients (one pass below that, where the
        # normalised counts are the result itself and blocks would only add a copy).
        if not exact and len(texts) > 2 * _ROW_BLOCK:
            out = np.empty((len(texts), self._dimensions), dtype=dtype)
            for a in range(0, len(texts), _ROW_BLOCK):
                out[a : a + _ROW_BLOCK] = _normalise_counts(
                    *self._counts(texts[a : a + _ROW_BLOCK])
                )
            return out, None
        counts, norms = self._counts(texts)
        if keep and len(texts) <= _KEPT_BATCH:
            kept_unit, kept_ints, _ = self._keep_batch(texts, counts, norms)
            return kept_unit, kept_ints if exact else None
        ints = counts.astype(np.int64) if exact else None
        return _normalise_counts(counts, norms), ints

    def _counts(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        return hashed_counts_norms(texts, self._dimensions, self._seeds)

    def _keep_batch(
        self, texts: list[str], counts: np.ndarray, norms: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, dict[str, _Row]]:
        """Keep the rows of a hashed batch: its unit rows (``counts`` normalised in place),
        its integer rows, and the kept copies by text."""
        ints = counts.astype(np.int64)
        squares = norms.tolist()  # exact: sums of small integers
        unit = _normalise_counts(counts, norms)
        made: dict[str, _Row] = {
            t: (None, ints[j].copy(), int(squares[j])) for j, t in enumerate(texts)
        }
        self._keep(made)
        return unit, ints, made

    def embed_exact(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Float vectors and their exact integer forms (int64, same shape)."""
        if not self._clusters:
            return self._hashed_rows(texts, exact=True)
        members, keys, others = self._split(texts)
        floats = np.empty((len(texts), self._dimensions))
        exact = np.empty((len(texts), self._dimensions), dtype=np.int64)
        if others:
            floats[others], exact[others] = self._hashed_rows(
                [texts[i] for i in others], exact=True
            )
        if members:
            exact[members], floats[members] = self._member_rows(keys)
        return floats, exact

    def embed_query(self, text: str) -> tuple[np.ndarray, np.ndarray, int | None]:
        """A query's float vector, its exact integer form and, when known (a hashed text),
        the exact squared norm of that form."""
        if self._clusters and self.clusters_of([text])[0] is not None:
            floats, ints = self.embed_exact([text])
            return floats[0], ints[0], None
        row = self._kept_row(text) or self._hash_one(text)
        return _unit(row).copy(), row[1].copy(), row[2]

    def embed_ints(self, texts: list[str]) -> tuple[np.ndarray, list[int] | None]:
        """The exact integer forms (int64) of :meth:`embed_exact` without the floats (a store
        re-ranking its best rows needs none), and their exact squared norms when they are
        known (kept texts: a lookup each), else None."""
        if not self._clusters and len(texts) <= _CACHED_BATCH:
            rows = self._kept_rows(texts)
            if None not in rows:
                return _rows([r[1] for r in rows]), [r[2] for r in rows]  # type: ignore[index]
        return self.embed_exact(texts)[1], None

    def embed_floats(
        self, texts: list[str], dtype: Any = np.float64, keep: bool = False
    ) -> np.ndarray:
        """The unit vectors of ``texts`` as float64, or rounded once more to ``dtype``
        (float32 for a store's matrix: the same bits as casting the float64 rows). ``keep``:
        a store's batch, whose rows a small store will rank again (kept if it is small)."""
        members, keys, others = self._split(texts)
        if not members:
            floats = self._hashed_rows(texts, exact=False, keep=keep, dtype=dtype)[0]
            return floats if floats.dtype == dtype else floats.astype(dtype)
        if not others:  # members only (a new spread re-embeds just them): already in order
            member_rows: np.ndarray = self._member_rows(keys, exact=False, dtype=dtype)[1]
            return member_rows if member_rows.dtype == dtype else member_rows.astype(dtype)
        floats = np.empty((len(texts), self._dimensions), dtype=dtype)
        self._fill(texts, floats, np.arange(len(texts)), keep, (members, keys, others))
        return floats

    def embed_into(self, texts: Sequence[str], out: np.ndarray, at: np.ndarray) -> None:
        """Write the unit vector of ``texts[i]`` (rounded to ``out.dtype``) into ``out[at[i]]``:
        a store's matrix filled in place, without a batch of rows beside it."""
        self._fill(texts, out, np.asarray(at, dtype=np.intp), False, self._split(texts))

    def _fill(
        self,
        texts: Sequence[str],
        out: np.ndarray,
        at: np.ndarray,
        keep: bool,
        split: tuple[list[int], Sequence[tuple[str, str]], list[int]],
    ) -> None:
        members, keys, others = split
        dtype = out.dtype

        def hashed() -> None:
            if not others:
                return
            rows, where = [texts[i] for i in others], at[others]
            if len(rows) <= 2 * _ROW_BLOCK:
                out[where] = self._hashed_rows(rows, exact=False, keep=keep, dtype=dtype)[0]
                return
            for a in range(0, len(rows), _ROW_BLOCK):  # bounded transients at any size
                out[where[a : a + _ROW_BLOCK]] = _normalise_counts(
                    *self._counts(rows[a : a + _ROW_BLOCK])
                )

        def member_rows() -> None:
            if not members:
                return
            where = at[members]
            fresh = (
                len(keys) > _CACHED_BATCH
                and _distinct(keys)
                and (not self._member_cache or self._member_cache.keys().isdisjoint(keys))
            )
            if fresh:
                # new, distinct members: written in place, a block at a time
                self.compute_members(keys, exact=False, dtype=dtype, into=(out, where))
                return
            out[where] = self._member_rows(keys, exact=False, dtype=dtype)[1]

        if len(others) >= _ROW_BLOCK and len(members) >= _ROW_BLOCK:
            # Two large parts: the hashing (numpy, most of it without the GIL) runs beside the
            # member draws (one hashlib call each). They write disjoint rows of ``out``, so
            # the result is the same bits as one after the other.
            beside(hashed, member_rows)
        else:
            hashed()
            member_rows()

    def _split(
        self, texts: Sequence[str]
    ) -> tuple[list[int], Sequence[tuple[str, str]], list[int]]:
        """Positions and (cluster, text) keys of the declared members, and the other positions.

        A text's hashed row does not depend on the other texts of the batch, so members are
        never hashed: their vectors come from their cluster alone.
        """
        if not self._clusters:
            return [], [], list(range(len(texts)))
        if len(texts) < _MEMBERSHIP.min_batch:
            names = self.clusters_of(texts)
            members = [i for i, name in enumerate(names) if name is not None]
            others = [i for i, name in enumerate(names) if name is None]
            return members, [(names[i], texts[i]) for i in members], others  # type: ignore[misc]
        return self._membership(texts).split  # kept with the membership: read only

    def _member_rows(
        self, keys: Sequence[tuple[str, str]], *, exact: bool = True, dtype: Any = np.float64
    ) -> tuple[Any, np.ndarray]:
        """Exact and float vectors of the members ``keys``: cached ones, the rest in one batch.

        ``exact=False`` may return None for the exact forms (a large batch skips them).
        The floats are float64, or those rounded to ``dtype``.
        """
        cache = self._member_cache
        missing = list(dict.fromkeys(k for k in keys if k not in cache))
        if len(missing) == len(keys):  # a batch of new, distinct members: no restacking
            return self.compute_members(
                missing, exact=exact or len(keys) <= _CACHED_BATCH, dtype=dtype
            )
        if missing:
            fresh_exact, fresh_floats = self.compute_members(missing, exact=exact, dtype=dtype)
        index = {key: i for i, key in enumerate(missing)}
        fresh = [row for row, key in enumerate(keys) if key in index]
        cached = [row for row, key in enumerate(keys) if key not in index]
        floats = np.empty((len(keys), self._dimensions), dtype=dtype)
        ints = np.empty((len(keys), self._dimensions), dtype=np.int64) if exact else None
        if fresh:  # the rows of the missing members, computed above
            take = [index[keys[row]] for row in fresh]
            floats[fresh] = fresh_floats[take]
            if ints is not None:
                ints[fresh] = fresh_exact[take]
        if cached:
            pairs = [cache[keys[row]] for row in cached]
            floats[cached] = _rows([p[1] for p in pairs])
            if ints is not None:
                ints[cached] = _rows([p[0] for p in pairs])
        return ints, floats

    def _seed(self, *parts: str) -> bytes:
        body = "\x00".join(
            ("placeborag/cluster/v1", self._model_name, str(self._dimensions), str(self._attempt))
            + parts
        )
        return body.encode("utf-8", "surrogatepass")

    def jitter_magnitudes(
        self, keys: Sequence[tuple[str, str]], encoded: Callable[[], list[bytes]] | None = None
    ) -> np.ndarray:
        """Jitter magnitudes ``m`` of (cluster, text) members.

        Independent of the dimension and of the geometry attempt: that is what keeps the
        member-to-anchor order the same at every dimension. ``m = spread * (0.5 + u)`` with
        ``u`` 53 bits of BLAKE2b over 2**53, exact in float64. ``encoded``: the members'
        ``cluster NUL text`` in UTF-8 (:func:`_encoded_members`), when the caller has them.
        """
        prefix = f"placeborag/jitter/v1\x00{self._model_name}\x00"

        def draw() -> np.ndarray:
            bodies = encoded() if encoded is not None else _encoded_members(keys)
            # One hash of the common head, copied per member: the same digest as hashing
            # ``head + body`` afresh, for a quarter fewer instructions.
            start = hashlib.blake2b(prefix.encode("utf-8", "surrogatepass"), digest_size=8)
            digests: list[bytes] = []
            for part in _offering_the_gil(bodies):
                for body in part:
                    h = start.copy()
                    h.update(body)
                    digests.append(h.digest())
            blob = b"".join(digests)
            top_bits = np.frombuffer(blob, dtype="<u8") >> np.uint64(11)
            u: np.ndarray = top_bits.astype(np.float64) / 2.0**53
            return u

        # The same draws at every spread and dimension: a large batch keeps them.
        u = _MEMBER_DRAWS.get_or((prefix, _as_key(keys)), len(keys), draw)
        return self._cluster_spread * (0.5 + u)

    def compute_members(
        self,
        keys: Sequence[tuple[str, str]],
        *,
        exact: bool = True,
        dtype: Any = np.float64,
        into: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> tuple[Any, np.ndarray]:
        """Exact (int64) and unit float vectors of (cluster, text) pairs, in one numpy pass.

        Member ``i`` is ``A * 2**K + J * t`` with ``J = d R - (R.A) A``, which is exactly
        orthogonal to ``A`` (``J.A = d (R.A) - (R.A) d``), ``R`` a row of SHAKE signs and ``t``
        the integer giving ``|J| t / |A| 2**K = m``. With ``S = R * A`` (so ``R = A * S``) each
        entry is ``A * (2**K + t (d S - R.A))``: a row takes only four values, ``±c+`` and
        ``±c-``, picked by the sign bits of ``A`` and ``S``. Every step is exact integer
        arithmetic or one correctly rounded float operation, so a batch gives the same bits
        as one member at a time. The rare ``R = ±A`` (no jitter direction) draws again.
        With ``exact=False`` the integer vectors are not built (None is returned for them);
        ``into=(out, at)`` then writes row ``i`` into ``out[at[i]]`` and returns ``out``.
        With ``dtype=np.float32`` the four float64 values of a row are rounded to float32
        before they are spread over it: the same bits as rounding the float64 row.
        """
        d = self._dimensions
        n = len(keys)
        cluster_names = list(self._clusters)
        position = {c: i for i, c in enumerate(cluster_names)}
        which = np.fromiter(map(position.__getitem__, map(itemgetter(0), keys)), np.intp, n)
        a_bits = (np.stack([self._anchors[c] for c in cluster_names]) < 0).astype(np.uint8)
        a_packed = np.packbits(a_bits, axis=1)
        # The sign rows do not depend on the spread: a large batch keeps them (read only).
        bodies: list[list[bytes]] = []  # made once, for both draws, if either is needed

        def encoded() -> list[bytes]:
            if not bodies:
                # The same for every model, dimension and spread: a large batch keeps them.
                bodies.append(
                    _ENCODED.get_or(
                        _as_key(keys), n, lambda: _EncodedMembers(_encoded_members(keys))
                    )
                )
            return bodies[0]

        r_packed, negative = _MEMBER_DRAWS.get_or(
            (self._seed("j"), _as_key(keys)),
            n,
            lambda: self._sign_rows(keys, which, a_packed, encoded),
        )
        ra = d - 2 * negative  # R.A = sum(S)
        norm_j2 = d * (d * d - ra * ra)  # |J|**2, derived by hand to stay exact
        m = self.jitter_magnitudes(keys, encoded)
        t = np.rint(m * np.sqrt(d / norm_j2) * 2.0**_SCALE_BITS).astype(np.int64)
        c_plus = (1 << _SCALE_BITS) + t * (d - ra)
        c_minus = (1 << _SCALE_BITS) - t * (d + ra)
        # |M|**2 = |A|**2 4**K + t**2 |J|**2, as A.J = 0: the float of that exact integer.
        norms = np.sqrt(_rounded_norms2(d, t, norm_j2))
        values = np.stack([c_plus, c_minus, -c_plus, -c_minus], axis=1)  # (n, 4) int64
        # The float of ±c / norm is ±(float(c) / norm): IEEE rounding is symmetric in sign.
        float_values = values.astype(np.float64) / norms[:, None]
        if dtype != np.float64:
            float_values = float_values.astype(dtype)
        if not exact:  # in blocks of rows: the transient arrays stay small at any n
            return None, self._member_floats(float_values, (r_packed, which, a_bits), into)
        code = self._codes(r_packed, which, a_bits)
        floats = np.take_along_axis(float_values, code, axis=1)
        members = np.take_along_axis(values, code, axis=1)
        if n <= _CACHED_BATCH and floats.dtype == np.float64:  # queries, mostly
            self._cache_members(keys, members, floats)
        return members, floats

    def _member_floats(
        self,
        float_values: np.ndarray,
        draws: tuple[np.ndarray, np.ndarray, np.ndarray],
        into: tuple[np.ndarray, np.ndarray] | None,
    ) -> np.ndarray:
        """The float rows of :meth:`compute_members` spread from each row's four values
        (``draws``: the packed sign rows, the cluster of each member, the anchors' sign bits),
        a block of rows at a time, into a new array or ``into=(out, at)``."""
        r_packed, which, a_bits = draws
        n = len(which)
        floats = np.empty((n, self._dimensions), float_values.dtype) if into is None else into[0]
        spread = self._spread_bits(float_values, a_bits)

        def fill(a: int) -> None:
            rows = slice(a, a + _MEMBER_BLOCK)
            if spread is not None:
                block = spread(r_packed[rows], which[rows], float_values[rows])
            else:
                block = np.take_along_axis(
                    float_values[rows], self._codes(r_packed[rows], which[rows], a_bits), axis=1
                )
            if into is None:
                floats[rows] = block
            else:
                floats[into[1][rows]] = block

        # two blocks at a time (numpy's copies and gathers run without the GIL); each block
        # writes its own rows, so the bits are those of one block after another
        each(fill, range(0, n, _MEMBER_BLOCK))
        return floats

    def _spread_bits(
        self, float_values: np.ndarray, a_bits: np.ndarray
    ) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None:
        """What :meth:`_codes` and a gather give, computed on the values' bit patterns:
        ``c+ XOR S * (c+ XOR c-)`` picks ``c+`` or ``c-`` by the sign bit of ``S`` (exact
        integer arithmetic), and the sign bit of ``A`` is then flipped in, as ``-c`` is ``c``
        with its sign bit flipped. That holds for every value but a zero (``-0`` is the
        integer 0, whose float is ``+0.0``): a batch holding one, or a dtype without a
        matching native unsigned integer, takes the gather instead (None)."""
        kind = float_values.dtype
        unsigned = {2: np.uint16, 4: np.uint32, 8: np.uint64}.get(kind.itemsize)
        if unsigned is None or kind.kind != "f" or not kind.isnative or not float_values.all():
            return None  # (a byte-swapped dtype would put the sign bit elsewhere)
        d = self._dimensions
        top = np.array(8 * float_values.dtype.itemsize - 1, dtype=unsigned)
        sign = a_bits.astype(unsigned) << top  # per cluster: the sign bit where A = -1
        a_packed = np.packbits(a_bits, axis=1)

        def spread(r_packed: np.ndarray, which: np.ndarray, values: np.ndarray) -> np.ndarray:
            s_bits = np.unpackbits(r_packed ^ a_packed[which], axis=1, count=d)
            v = values.view(unsigned)
            plus = v[:, 0:1]
            out: np.ndarray = np.multiply(s_bits, plus ^ v[:, 1:2], dtype=unsigned)
            out ^= plus
            out ^= sign[which]
            return out.view(values.dtype)

        return spread

    def _cache_members(
        self, keys: Sequence[tuple[str, str]], members: np.ndarray, floats: np.ndarray
    ) -> None:
        """Keep the vectors of a small batch of members, bounded in bytes (a row costs 16
        bytes per dimension, int64 and float64)."""
        room = max(_MEMBER_CACHE_BYTES // (16 * self._dimensions) - len(self._member_cache), 0)
        # Copies, read-only: the arrays computed here go back to the caller, whose edits must
        # not reach the vectors this embedder gives later.
        kept_ints, kept_floats = members[:room].copy(), floats[:room].copy()
        kept_ints.flags.writeable = kept_floats.flags.writeable = False
        self._member_cache.update(zip(keys[:room], zip(kept_ints, kept_floats)))

    def _codes(self, r_packed: np.ndarray, which: np.ndarray, a_bits: np.ndarray) -> np.ndarray:
        """Per entry of each member, which of its row's four values it takes: 0 for A=+1 S=+1,
        1 for A=+1 S=-1, 2 and 3 for A=-1."""
        a_packed = np.packbits(a_bits, axis=1)
        s_bits = np.unpackbits(r_packed ^ a_packed[which], axis=1)[:, : self._dimensions]
        code: np.ndarray = (a_bits[which] << 1) | s_bits
        return code

    def _sign_rows(
        self,
        keys: Sequence[tuple[str, str]],
        which: np.ndarray,
        a_packed: np.ndarray,
        encoded: Callable[[], list[bytes]],
    ) -> tuple[np.ndarray, np.ndarray]:
        """Packed SHAKE sign rows ``R`` of the members and, per member, the number of
        entries where ``R`` and its anchor differ (never 0 nor d: such a row is drawn again)."""
        d = self._dimensions
        n = len(keys)
        nbytes = (d + 7) // 8
        head = self._seed("j") + b"\x00"
        shake, tail = hashlib.shake_256, b"\x000"
        blob = b"".join(
            [
                b"".join([shake(head + body + tail).digest(nbytes) for body in part])
                for part in _offering_the_gil(encoded())
            ]
        )
        r_packed = np.frombuffer(blob, np.uint8).reshape(n, nbytes).copy()
        valid = np.packbits(np.ones(d, dtype=np.uint8))  # masks the padding bits past d
        negative = _POPCOUNT[(r_packed ^ a_packed[which]) & valid].sum(axis=1, dtype=np.int64)
        for i in np.flatnonzero((negative == 0) | (negative == d)).tolist():
            counter = 0
            while negative[i] in (0, d):  # S constant: R = ±A leaves no jitter direction
                counter += 1
                digest = hashlib.shake_256(self._seed("j", *keys[i], str(counter))).digest(nbytes)
                r_packed[i] = np.frombuffer(digest, np.uint8)
                negative[i] = _POPCOUNT[(r_packed[i] ^ a_packed[which[i]]) & valid].sum()
        return r_packed, negative


def _unit(row: _Row) -> np.ndarray:
    """A kept row's unit vector: the counts over the square root of their squared norm, the
    very operations (so the very bits) of :func:`_normalise_counts`."""
    unit = row[0]
    if unit is None:
        unit = row[1] / math.sqrt(row[2])
    return unit


def _rows(rows: list[np.ndarray]) -> np.ndarray:
    """Equal-length 1-D rows as one 2-D array (``np.stack`` without its per-call checks,
    which cost more than a few rows do)."""
    return np.concatenate(rows).reshape(len(rows), -1)


class _EncodedMembers(list):  # type: ignore[type-arg]
    """:func:`_encoded_members` of a batch as kept by :data:`_ENCODED` (read only by its
    users), weighed by its bytes."""

    @property
    def nbytes(self) -> int:
        return sum(map(len, self)) + 40 * len(self)


def _offering_the_gil(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    """``items`` in slices of :data:`_GIL_SLICE`, the GIL offered to other threads between
    them (``time.sleep(0)``). hashlib holds the GIL over a short message, so a loop of
    digests would otherwise keep a thread working beside it (the hashing of a batch's other
    texts: numpy calls, each taking the GIL back when it ends) waiting up to the interpreter's
    switch interval, 5 ms, at every call."""
    for a in range(0, len(items), _GIL_SLICE):
        if a:
            time.sleep(0)
        yield items[a : a + _GIL_SLICE]


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``p, e`` with ``p = fl(a * b)`` and ``p + e == a * b`` exactly (Dekker's product with
    Veltkamp's split, no fused multiply-add: valid for the magnitudes here, far from
    overflow and underflow)."""
    p = a * b
    ca, cb = a * 134217729.0, b * 134217729.0  # 2**27 + 1
    a_hi, b_hi = ca - (ca - a), cb - (cb - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return p, e


def _rounded_norms2(
    d: int, t: np.ndarray, norm_j2: np.ndarray, margin: float = 2.0**-100
) -> np.ndarray:
    """``float(d * 4**K + t[i]**2 * norm_j2[i])`` for each member: the exact integer (up to
    about 2**133) correctly rounded to float64, as Python's ``int.__float__`` rounds it.

    In float64 with error-free transformations: ``t`` (below 2**58, the integer of a float,
    so exact as one) and ``norm_j2`` (below 2**49) are exact floats, ``t**2`` and its product
    with ``norm_j2`` are split exactly into a rounded part and its error, and the sum is
    carried as ``hi + lo`` within ``6 * 2**-106 * hi`` of the exact value. ``hi`` is then the
    correctly rounded value unless the exact one may lie within ``margin * hi`` (2**-100: over
    ten times that error) of a point halfway between two floats; those rows (about one in
    2**47) are computed in Python integers. The tests hold it against the integers, the
    fallback included (``margin=1.0`` sends every row to it).
    """
    a = float(d * 4**_SCALE_BITS)  # d * 2**104: exact
    tf = t.astype(np.float64)
    nj = norm_j2.astype(np.float64)
    p, e = _two_product(tf, tf)
    q, f = _two_product(p, nj)
    g = e * nj
    s = a + q  # TwoSum(a, q): s + u == a + q exactly
    bb = s - a
    u = (a - (s - bb)) + (q - bb)
    lo = u + (f + g)
    hi = s + lo  # FastTwoSum(s, lo): |s| >= |lo|
    lo = lo - (hi - s)
    # hi is right when hi + lo, widened by the error bound, stays strictly inside the interval
    # of reals that round to hi (its half gaps to the floats below and above).
    half_gap = np.where(lo < 0, hi - np.nextafter(hi, 0.0), np.nextafter(hi, np.inf) - hi) / 2
    unsure = np.flatnonzero(np.abs(lo) + margin * hi >= half_gap)
    if unsure.size:
        scale = 4**_SCALE_BITS
        for i, ti, nji in zip(unsure.tolist(), t[unsure].tolist(), norm_j2[unsure].tolist()):
            hi[i] = float(d * scale + ti * ti * nji)
    return hi


def _encoded_members(keys: Sequence[tuple[str, str]]) -> list[bytes]:
    """``cluster NUL text`` of each member in UTF-8 (lone surrogates kept): the part of a
    member's draws that is its own."""
    return [f"{name}\x00{text}".encode("utf-8", "surrogatepass") for name, text in keys]


def _normalise_counts(counts: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """Divide float64 rows of small integers by their norms, in place (``norms`` the rows'
    squared norms, from :func:`~placeborag._hashing.hashed_counts_norms`).

    The squared norm of a row of integers is a sum of integers below 2**53, exact in float64 in
    any summation order, so the result does not depend on the SIMD path or the BLAS.
    """
    counts /= np.sqrt(norms)[:, None]
    return counts
