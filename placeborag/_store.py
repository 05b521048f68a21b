"""FakeVectorStore: an in-memory vector store that reproduces the quirks of real backends.

Ranking is exact. Scores are screened in float32 (one matrix-vector product over every row),
and any matches whose float scores are too close for float32 to order (closer than twice its
proven error bound) are re-ranked from the embedder's exact integer vectors, comparing
``sign(p) * p**2 / |d|**2`` (``p`` the exact dot product with the query) as fractions. Exact ties
are then ordered by the profile's tie rule, never by floating-point noise, so the same store
gives the same ranking on every machine. Reported scores are computed from the same exact
rationals, so tied matches report identical numbers.

The query path, in the order a real index takes it::

    candidates -> (pre: filter) -> recall survivors -> top-k cut -> (post: filter) -> matches
"""

from __future__ import annotations

import copy
import hashlib
import heapq
import math
import operator
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from placeborag._embedder import FakeEmbedder
from placeborag._errors import (
    PlaceboragTypeError,
    PlaceboragValueError,
    RetrievalTimeout,
)
from placeborag._filters import Columns, Filter, compile_filter
from placeborag._hashing import splitmix64
from placeborag._metadata import check_id as _check_id
from placeborag._metadata import check_metadata as _check_metadata
from placeborag._profiles import Profile, get_profile

__all__ = ["FakeVectorStore", "Match", "QueryExplanation", "QueryRecord"]

_VISIBILITY = ("immediate", "manual")
_FILTER_SEMANTICS = ("strict", "engine")
# Salts that keep the hash streams of the quirks independent of each other and of recall.
_ORPHAN_SALT = 0x6F727068616E2121
_CHURN_SALT = 0x636875726E212121
_SHUFFLE_SALT = 0x73687566666C6521
_UNIT_ROUNDOFF = 2.0**-24  # float32
_SCORE_BITS = 64


@dataclass(frozen=True)
class Match:
    """One result of a query: the record and the score in the profile's convention."""

    id: str
    text: str
    metadata: dict[str, Any]
    score: float


@dataclass(frozen=True)
class QueryRecord:
    """What a store was asked: kept for every query, including ones that failed."""

    text: str
    k: int
    where: dict[str, Any] | None
    context: dict[str, Any] | None = None


@dataclass(frozen=True)
class QueryExplanation:
    """Every stage of one query, for explaining (and drawing) why the matches are what they are.

    Id lists are in ranking order where a ranking exists (``ranked``, ``top_k``, ``matches``)
    and in insertion order otherwise.
    """

    text: str
    k: int
    where: dict[str, Any] | None
    filter_mode: str
    recall: float
    candidates: tuple[str, ...]
    filtered_out: tuple[str, ...]
    recall_lost: tuple[str, ...]
    ranked: tuple[str, ...]
    top_k: tuple[str, ...]
    post_filter_dropped: tuple[str, ...]
    matches: tuple[Match, ...]
    cosines: dict[str, float] = field(repr=False)
    unreachable: tuple[str, ...] = ()  # live records churn has unlinked from the index
    orphans: tuple[str, ...] = ()  # deleted ids the index still holds


@dataclass
class _Pending:
    op: str  # "upsert" or "delete"
    ids: list[str]
    texts: list[str] = field(default_factory=list)
    metadatas: list[dict[str, Any] | None] = field(default_factory=list)
    vectors: np.ndarray | None = None


def _id_hashes(ids: Sequence[str]) -> np.ndarray:
    return np.fromiter(
        (
            int.from_bytes(
                hashlib.blake2b(i.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                "little",
            )
            for i in ids
        ),
        dtype=np.uint64,
        count=len(ids),
    )


def _check_share(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
        raise PlaceboragTypeError(f"{name}={value!r} must be a number, not {type(value).__name__}")
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise PlaceboragValueError(f"{name}={value!r} must be between 0.0 and 1.0")
    return float(value)


def _below_share(key: int, share: float) -> bool:
    """Whether a 64-bit hash falls in the lowest ``share`` of its range (exactly)."""
    return key < math.floor(Fraction(share) * 2**64)


def _text_hash(text: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little"
    )


def _float_to_exact(vectors: np.ndarray) -> np.ndarray:
    """Exact integer forms of float64 rows: each row scaled by one power of two (object dtype)."""
    rows = []
    for row in np.asarray(vectors, dtype=np.float64):
        ratios = [v.as_integer_ratio() for v in row.tolist()]
        den = max(d for _, d in ratios)
        rows.append([n * (den // d) for n, d in ratios])
    return np.array(rows, dtype=object).reshape(len(rows), -1)


def _exact_dot(a: np.ndarray, b: np.ndarray) -> list[int]:
    """Rows of ``a`` dotted with ``b``, exactly (in Python integers where int64 could overflow)."""
    return _exact_products(a, np.broadcast_to(b, a.shape))


def _exact_products(a: np.ndarray, b: np.ndarray) -> list[int]:
    """``sum(a[i] * b[i])`` for every row ``i`` of two same-shape integer arrays, exactly.

    int64 sums when they cannot overflow; otherwise (a cluster member's ``2**52``-scaled
    entries) each int64 entry is cut into three limbs of 20, 20 and 24 signed bits, so every
    limb product is below ``2**46`` and a row of up to ``2**16`` of them below ``2**62``;
    the nine limb sums are then put together in Python integers. Object arrays (exact forms
    of arbitrary floats) are summed in Python integers directly.
    """
    if a.dtype != object and b.dtype != object:
        bound = _magnitude(a) * _magnitude(b) * a.shape[1]
        if bound < 2**62:
            return [int(x) for x in np.einsum("ij,ij->i", a, b)]
        if a.shape[1] <= 2**16:
            la, lb = _limbs(a), _limbs(b)
            sums = {
                (i, j): np.einsum("ij,ij->i", la[i], lb[j]).tolist()
                for i in range(3)
                for j in range(3)
            }
            return [
                sum(sums[i, j][row] << (20 * (i + j)) for i in range(3) for j in range(3))
                for row in range(a.shape[0])
            ]
    return [sum(map(operator.mul, x, y)) for x, y in zip(a.tolist(), b.tolist())]


def _magnitude(x: np.ndarray) -> int:
    """The largest absolute value in ``x``, as a Python int (``abs`` of int64 min overflows)."""
    if not x.size:
        return 0
    return max(int(x.max()), -int(x.min()))


def _limbs(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``x == l0 + l1 * 2**20 + l2 * 2**40`` with l0, l1 in [0, 2**20) and l2 signed."""
    x = x.astype(np.int64, copy=False)
    mask = np.int64(2**20 - 1)
    return x & mask, (x >> 20) & mask, x >> 40


def _sqrt_score(p: int, norm2_product: int) -> float:
    """``p / sqrt(norm2_product)`` as a pure function of the reduced rational (so ties tie)."""
    if p == 0:
        return 0.0
    r = Fraction(p * p, norm2_product)
    root = math.isqrt(r.numerator * 4**_SCORE_BITS // r.denominator)
    value = min(1.0, float(Fraction(root, 2**_SCORE_BITS)))
    return value if p > 0 else -value


class FakeVectorStore:
    """A deterministic in-memory vector store with the quirks of real ones, on request.

    ``profile`` decides the score convention and tie order (``"chroma"``: distance ``1 - cos``,
    lower is better, ties by insertion order; ``"qdrant"``: cosine similarity, higher is better,
    ties by id). ``filter_mode="post"`` applies ``where`` after the top-k cut, as an approximate
    index does; ``recall`` below 1.0 loses a deterministic share of the candidates before the
    cut; ``visibility="manual"`` keeps writes invisible until :meth:`refresh`.

    The other profiles (``"faiss"``, ``"lancedb"``, ``"pgvector"``, ``"langchain"``,
    ``"weaviate"``) and every option that overrides one behaviour of a profile (``metric``,
    ``tie_order`` and ``seed``, ``on_existing_id``, ``pad_missing``, ``filter_mode``) are
    described in ``docs/profiles.md``. ``filter_semantics="engine"`` lets ``$ne``/``$nin`` match
    a record without the key where the profile's engine does. ``orphans`` keeps that share of
    deleted ids searchable; ``churn`` is the chance that a delete or rewrite unlinks another
    live record from queries. Both are chosen by hashing, so every run repeats exactly.
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
        recall = _check_share(recall, "recall")
        if filter_semantics not in _FILTER_SEMANTICS:
            raise PlaceboragValueError(
                f"filter_semantics={filter_semantics!r} must be one of 'strict', 'engine'"
            )
        self._orphans = _check_share(orphans, "orphans")
        self._churn = _check_share(churn, "churn")
        if visibility not in _VISIBILITY:
            raise PlaceboragValueError(
                f"visibility={visibility!r} must be one of 'immediate', 'manual'"
            )
        if embedder is None:
            embedder = FakeEmbedder()
        elif not callable(getattr(embedder, "embed_batch", None)):
            raise PlaceboragTypeError(
                f"embedder={embedder!r} must have an embed_batch(texts) method "
                "(a FakeEmbedder, a ReplayEmbedder or a compatible object)"
            )
        self._embedder = embedder
        self._profile = prof
        self._filter_mode = prof.filter_mode
        self._filter_semantics = filter_semantics
        self._negations_match_missing = (
            filter_semantics == "engine" and prof.negation_matches_missing
        )
        self._recall = float(recall)
        self._visibility = visibility
        self._lock = threading.RLock()
        self._dimensions: int | None = getattr(embedder, "dimensions", None)
        # Row storage: rows are appended; a deleted row is a hole until compaction.
        self._vectors = np.zeros((0, self._dimensions or 0), dtype=np.float32)
        self._count = 0  # rows in use (alive or holes)
        self._alive = np.zeros(0, dtype=bool)
        self._seq = np.zeros(0, dtype=np.int64)
        self._id_hash = np.zeros(0, dtype=np.uint64)
        self._ids: list[str | None] = []
        self._texts: list[str | None] = []
        self._metas: list[dict[str, Any] | None] = []
        self._row_of: dict[str, int] = {}
        self._next_seq = 0
        self._holes = 0
        self._columns: Columns | None = None
        self._pending: list[_Pending] = []
        self._written: set[str] = set()  # ids present once every pending write lands
        self._failures: list[list[Any]] = []  # [exception, remaining]
        self._queries: list[QueryRecord] = []
        # Quirks: older copies of a duplicated id, deleted ids still in the index, live ids
        # unlinked by churn, and the salt of the current query's shuffled tie order.
        self._shadows: dict[str, list[int]] = {}
        self._orphan_of: dict[str, int] = {}
        self._unreachable: set[str] = set()
        self._churn_events = 0
        self._tie_salt = 0

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
    def orphaned_ids(self) -> tuple[str, ...]:
        """Deleted ids the index still holds (``orphans``), in the order they were deleted."""
        with self._lock:
            return tuple(self._orphan_of)

    @property
    def unreachable_ids(self) -> tuple[str, ...]:
        """Live ids that ``churn`` unlinked: :meth:`get` finds them, queries do not."""
        with self._lock:
            return tuple(sorted(self._unreachable, key=lambda i: self._seq[self._row_of[i]]))

    def __repr__(self) -> str:
        return (
            f"FakeVectorStore(profile={self._profile.name!r}, filter_mode={self._filter_mode!r}, "
            f"recall={self._recall!r}, visibility={self._visibility!r}, records={len(self)})"
        )

    # -- reads of the visible state ----------------------------------------------------------

    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, id: object) -> bool:
        return id in self._row_of

    @property
    def ids(self) -> tuple[str, ...]:
        """The visible ids, in insertion order."""
        with self._lock:
            rows = sorted(self._row_of.values(), key=lambda r: self._seq[r])
            return tuple(self._ids[r] for r in rows)  # type: ignore[misc]

    def get(self, id: str) -> Match:
        """The visible record with this id, as a Match whose score is NaN."""
        _check_id(id)
        with self._lock:
            row = self._row_of.get(id)
            if row is None:
                raise PlaceboragValueError(self._unknown_id_message(id, self._row_of))
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
            raise PlaceboragTypeError(f"text={text!r} must be a str, not {type(text).__name__}")
        self._write([id], [text], [_check_metadata(metadata)])

    def upsert_many(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> None:
        """Write many records with one embedding call; all are validated before any is written."""
        id_list = self._check_column(ids, "ids")
        text_list = self._check_column(texts, "texts")
        if len(text_list) != len(id_list):
            raise PlaceboragValueError(
                f"texts has {len(text_list)} items and ids has {len(id_list)}; "
                "they must have the same length"
            )
        for i, value in enumerate(id_list):
            _check_id(value, f"ids[{i}]")
        for i, value in enumerate(text_list):
            if not isinstance(value, str):
                raise PlaceboragTypeError(
                    f"texts[{i}]={value!r} must be a str, not {type(value).__name__}"
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
            meta_list = [_check_metadata(m, f"metadatas[{i}]") for i, m in enumerate(raw)]
        seen: dict[str, int] = {}
        for i, value in enumerate(id_list):
            if value in seen:
                raise PlaceboragValueError(
                    f"ids[{i}]={value!r} repeats ids[{seen[value]}]; an id may appear once per call"
                )
            seen[value] = i
        self._write(id_list, text_list, meta_list)

    def _write(
        self, ids: list[str], texts: list[str], metadatas: list[dict[str, Any] | None]
    ) -> None:
        if not ids:
            return
        vectors = self._embed_documents(texts)
        op = _Pending("upsert", ids, texts, metadatas, vectors)
        with self._lock:
            if self._profile.on_existing_id == "error":
                for value in ids:
                    if value in self._written:
                        raise PlaceboragValueError(
                            f"id {value!r} is already stored and on_existing_id='error' "
                            "forbids writing it again"
                        )
            self._written.update(ids)
            if self._visibility == "manual":
                self._pending.append(op)
            else:
                self._apply(op)

    def delete(self, ids: str | Sequence[str], *, missing_ok: bool = False) -> None:
        """Delete records by id. An unknown id raises unless ``missing_ok=True``."""
        id_list = [ids] if isinstance(ids, str) else self._check_column(ids, "ids")
        for i, value in enumerate(id_list):
            _check_id(value, "ids" if isinstance(ids, str) else f"ids[{i}]")
        with self._lock:
            if not missing_ok:
                for value in id_list:
                    if value not in self._written:
                        raise PlaceboragValueError(self._unknown_id_message(value, self._written))
            present = [value for value in dict.fromkeys(id_list) if value in self._written]
            if not present:
                return
            self._written.difference_update(present)
            op = _Pending("delete", present)
            if self._visibility == "manual":
                self._pending.append(op)
            else:
                self._apply(op)

    def refresh(self) -> None:
        """Make every pending write visible (a no-op under ``visibility="immediate"``)."""
        with self._lock:
            pending, self._pending = self._pending, []
            for op in pending:
                self._apply(op)

    def fail_next_query(
        self, error: BaseException | type[BaseException] | None = None, *, times: int = 1
    ) -> None:
        """Make the next ``times`` queries raise ``error`` (default :class:`RetrievalTimeout`).

        Failures queue up: a second call takes effect after the first one's queries are spent.
        Writes are never affected.
        """
        if error is None:
            error = RetrievalTimeout("injected by fail_next_query(): the query timed out")
        elif not (
            isinstance(error, BaseException)
            or (isinstance(error, type) and issubclass(error, BaseException))
        ):
            raise PlaceboragTypeError(
                f"error={error!r} must be an exception instance or class, "
                f"not {type(error).__name__}"
            )
        if isinstance(times, bool) or not isinstance(times, int):
            raise PlaceboragTypeError(f"times={times!r} must be an int, not {type(times).__name__}")
        if times < 1:
            raise PlaceboragValueError(f"times={times!r} must be >= 1")
        with self._lock:
            self._failures.append([error, times])

    # -- queries -----------------------------------------------------------------------------

    def query(
        self,
        text: str,
        k: int | None = None,
        where: Mapping[str, Any] | None = None,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> list[Match]:
        """The top ``k`` visible records for ``text`` (``k`` defaults to the profile's).

        ``context`` is anything the caller wants recorded with the query (an identity, a
        tenant): the store does not read it, but :attr:`queries` keeps it for assertions.
        """
        text, k, predicate = self._check_query(text, k, where)
        if context is not None and not isinstance(context, Mapping):
            raise PlaceboragTypeError(
                f"context={context!r} must be a dict or None, not {type(context).__name__}"
            )
        with self._lock:
            self._queries.append(
                QueryRecord(
                    text,
                    k,
                    copy.deepcopy(dict(where)) if where is not None else None,
                    copy.deepcopy(dict(context)) if context is not None else None,
                )
            )
            if self._failures:
                failure = self._failures[0]
                failure[1] -= 1
                if failure[1] == 0:
                    self._failures.pop(0)
                raise failure[0]
            return list(self._run(text, k, predicate, where, explain=False))

    def explain(
        self, text: str, k: int | None = None, where: Mapping[str, Any] | None = None
    ) -> QueryExplanation:
        """Run a query and return every stage of it. Not recorded, never an injected failure."""
        text, k, predicate = self._check_query(text, k, where)
        with self._lock:
            return self._run(text, k, predicate, where, explain=True)

    # -- internals ---------------------------------------------------------------------------

    @staticmethod
    def _check_column(values: object, name: str) -> list[Any]:
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise PlaceboragTypeError(
                f"{name}={values!r} must be a list, not {type(values).__name__}"
            )
        return list(values)

    def _check_query(
        self, text: object, k: object, where: object
    ) -> tuple[str, int, Filter | None]:
        if not isinstance(text, str):
            raise PlaceboragTypeError(f"text={text!r} must be a str, not {type(text).__name__}")
        if k is None:
            k = self._profile.default_k
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise PlaceboragTypeError(f"k={k!r} must be an int, not {type(k).__name__}")
        if k < 1:
            raise PlaceboragValueError(f"k={k!r} must be >= 1")
        predicate = compile_filter(
            where,  # type: ignore[arg-type]
            negations_match_missing=self._negations_match_missing,
        )
        return text, int(k), predicate

    @staticmethod
    def _unknown_id_message(value: str, known: Iterable[str]) -> str:
        import difflib

        close = difflib.get_close_matches(value, list(known), n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        return f"unknown id {value!r}{hint}"

    def _embed_documents(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of ``texts``, one row each: float32 from a FakeEmbedder (unit rows by
        construction, finite and never zero: the same bits as its float64 rows cast), and
        normalised float64 from any other embedder."""
        fake = type(self._embedder) is FakeEmbedder
        if fake:
            vectors = self._embedder._embed_floats(texts, dtype=np.float32)
        else:
            returned = self._embedder.embed_batch(texts)
            vectors = np.asarray(returned, dtype=np.float64)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise PlaceboragValueError(
                f"the embedder returned an array of shape {vectors.shape} for {len(texts)} texts"
            )
        if self._dimensions is None:
            self._dimensions = vectors.shape[1]
            self._vectors = np.zeros((0, self._dimensions), dtype=np.float32)
        if vectors.shape[1] != self._dimensions:
            raise PlaceboragValueError(
                f"the embedder returned {vectors.shape[1]}-dimensional vectors; "
                f"the store holds {self._dimensions}-dimensional ones"
            )
        if fake:
            return vectors
        norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
        bad = np.flatnonzero(~np.isfinite(norms) | (norms == 0))
        if bad.size:
            raise PlaceboragValueError(
                f"the embedder returned a zero or non-finite vector for {texts[bad[0]]!r}"
            )
        # In place only where the array is a copy made here: an embedder may keep its own.
        return np.divide(vectors, norms[:, None], out=vectors if vectors is not returned else None)

    def _grow(self, needed: int) -> None:
        capacity = self._vectors.shape[0]
        if needed <= capacity:
            return
        # Grow by an eighth, not double: the memory target is 1.5x the raw float32 matrix.
        new_capacity = max(needed, capacity + capacity // 8, 64)
        vectors = np.zeros((new_capacity, self._dimensions or 0), dtype=np.float32)
        vectors[: self._count] = self._vectors[: self._count]
        self._vectors = vectors
        for name, dtype in (("_alive", bool), ("_seq", np.int64), ("_id_hash", np.uint64)):
            grown = np.zeros(new_capacity, dtype=dtype)
            grown[: self._count] = getattr(self, name)[: self._count]
            setattr(self, name, grown)

    def _apply(self, op: _Pending) -> None:
        self._columns = None
        if op.op == "delete":
            for value in op.ids:
                row = self._row_of.pop(value, None)
                if row is None:
                    continue
                self._unreachable.discard(value)
                for shadow in self._shadows.pop(value, ()):
                    self._kill(shadow)
                if self._orphans and _below_share(
                    int(splitmix64(self._id_hash[row : row + 1] ^ np.uint64(_ORPHAN_SALT))[0]),
                    self._orphans,
                ):
                    self._orphan_of[value] = row  # gone for get(), still in the index
                else:
                    self._kill(row)
                self._churn_event(op.ids)
            if self._holes > max(1024, self._count // 2):
                self._compact()
            return
        assert op.vectors is not None
        if not self._orphan_of and self._row_of.keys().isdisjoint(op.ids):
            self._append(op)
            return
        mode = self._profile.on_existing_id
        fresh = mode in ("duplicate", "move_to_end")  # a rewrite takes a new row
        new = [i for i, value in enumerate(op.ids) if fresh or value not in self._row_of]
        self._grow(self._count + len(new))
        rows: list[int] = []
        written: list[int] = []
        for i, value in enumerate(op.ids):
            row = self._row_of.get(value)
            if row is None and value in self._orphan_of:  # writing it again reuses the slot
                row = self._row_of[value] = self._orphan_of.pop(value)
            if row is not None:
                if mode == "ignore":
                    continue
                self._unreachable.discard(value)
                if mode == "duplicate":
                    self._shadows.setdefault(value, []).append(row)
                    row = None
                elif mode == "move_to_end":
                    self._kill(row)
                    row = None
                self._churn_event(op.ids)
            if row is None:
                row = self._count
                self._count += 1
                self._row_of[value] = row
                self._ids.append(value)
                self._texts.append(op.texts[i])
                self._metas.append(op.metadatas[i])
                self._seq[row] = self._next_seq
                self._next_seq += 1
                self._alive[row] = True
            else:
                self._texts[row] = op.texts[i]
                self._metas[row] = op.metadatas[i]
            rows.append(row)
            written.append(i)
        self._vectors[rows] = op.vectors[written].astype(np.float32)
        self._id_hash[rows] = _id_hashes([op.ids[i] for i in written])
        if self._holes > max(1024, self._count // 2):
            self._compact()

    def _append(self, op: _Pending) -> None:
        """Every id of ``op`` is new: its records take the next rows, in order, in one pass."""
        assert op.vectors is not None
        n = len(op.ids)
        start = self._count
        self._grow(start + n)
        stop = start + n
        self._row_of.update(zip(op.ids, range(start, stop)))
        self._ids.extend(op.ids)
        self._texts.extend(op.texts)
        self._metas.extend(op.metadatas)
        self._seq[start:stop] = np.arange(self._next_seq, self._next_seq + n)
        self._next_seq += n
        self._alive[start:stop] = True
        self._vectors[start:stop] = op.vectors
        self._id_hash[start:stop] = _id_hashes(op.ids)
        self._count = stop

    def _kill(self, row: int) -> None:
        """Turn a row into a hole (compaction reclaims it)."""
        self._alive[row] = False
        self._ids[row] = self._texts[row] = self._metas[row] = None
        self._holes += 1

    def _churn_event(self, batch: list[str]) -> None:
        """A delete or rewrite: with chance ``churn``, unlink a live record outside the batch."""
        if not self._churn:
            return
        skip = set(batch)
        self._churn_events += 1
        event = splitmix64(np.array([self._churn_events ^ _CHURN_SALT], dtype=np.uint64))
        if not _below_share(int(event[0]), self._churn):
            return
        rows = np.array(
            [r for i, r in self._row_of.items() if i not in skip and i not in self._unreachable],
            dtype=np.int64,
        )
        if rows.size:
            victim = rows[np.argmin(splitmix64(self._id_hash[rows] ^ event[0]))]
            self._unreachable.add(self._ids[victim])  # type: ignore[arg-type]

    def _compact(self) -> None:
        keep = np.flatnonzero(self._alive[: self._count])
        self._vectors = np.ascontiguousarray(self._vectors[keep])
        self._alive = self._alive[keep]
        self._seq = self._seq[keep]
        self._id_hash = self._id_hash[keep]
        self._ids = [self._ids[r] for r in keep]
        self._texts = [self._texts[r] for r in keep]
        self._metas = [self._metas[r] for r in keep]
        remap = np.full(self._count, -1, dtype=np.int64)
        remap[keep] = np.arange(keep.size)
        self._row_of = {value: int(remap[row]) for value, row in self._row_of.items()}
        self._orphan_of = {value: int(remap[row]) for value, row in self._orphan_of.items()}
        self._shadows = {
            value: [int(remap[row]) for row in rows] for value, rows in self._shadows.items()
        }
        self._count = len(keep)
        self._holes = 0

    def _match(self, row: int, score: float) -> Match:
        meta = self._metas[row]
        return Match(
            id=self._ids[row],  # type: ignore[arg-type]
            text=self._texts[row],  # type: ignore[arg-type]
            metadata=dict(meta) if meta else {},
            score=score,
        )

    def _filter_mask(self, predicate: Filter) -> np.ndarray:
        if self._columns is None:
            self._columns = Columns(self._metas)
        return predicate.mask(self._columns)

    def _recall_survivors(self, text: str, rows: np.ndarray) -> np.ndarray:
        """Exactly floor(recall * n) of the n candidate rows, chosen by hashing (query, id)."""
        keep = math.floor(Fraction(self._recall) * rows.size)
        if keep >= rows.size:
            return rows
        if keep == 0:
            return rows[:0]
        keys = splitmix64(self._id_hash[rows] ^ np.uint64(_text_hash(text)))
        # Order by (hash, insertion sequence): the sequence only matters on a 64-bit collision.
        order = np.lexsort((self._seq[rows], keys))
        return np.sort(rows[order[:keep]])

    def _exact(self, texts: list[str]) -> np.ndarray:
        exact = getattr(self._embedder, "_embed_exact", None)
        if exact is not None:
            return exact(texts)[1]
        return _float_to_exact(np.asarray(self._embedder.embed_batch(texts), dtype=np.float64))

    def _query_vector(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        exact = getattr(self._embedder, "_embed_exact", None)
        if exact is not None:
            floats, ints = exact([text])
            return floats[0], ints[0]
        embed_query = getattr(self._embedder, "embed_queries", None)
        floats = np.asarray((embed_query or self._embedder.embed_batch)([text]), dtype=np.float64)
        if floats.shape != (1, self._dimensions):
            raise PlaceboragValueError(
                f"the embedder returned an array of shape {floats.shape} for the query {text!r}"
            )
        return floats[0], _float_to_exact(floats)[0]

    def _rank(
        self, mask: np.ndarray | None, qfloat: np.ndarray, qexact: np.ndarray, k: int
    ) -> tuple[list[int], dict[int, float]]:
        """The best k eligible rows in exact order, and the exact cosine of each one returned.

        ``mask`` marks the eligible rows among ``[0, count)``; None means every alive row.
        """
        count = self._count
        if mask is None:
            mask = self._alive[:count] if self._holes else None
        elif mask.dtype != bool:  # row indices (the explorer's trace passes those)
            rows, mask = mask, np.zeros(count, dtype=bool)
            mask[rows] = True
        eligible = count if mask is None else int(np.count_nonzero(mask))
        if eligible == 0 or k == 0:
            return [], {}
        d = self._vectors.shape[1]
        scores = self._vectors[:count] @ qfloat.astype(np.float32)
        if mask is not None:
            scores = np.where(mask, scores, np.float32(-np.inf))
        # Proven bound on |float32 score - exact cosine| for unit vectors, doubled for safety.
        tol = 2.0 * (d + 8) * _UNIT_ROUNDOFF
        take = min(k, eligible)
        if eligible > take:
            threshold = float(scores[np.argpartition(scores, count - take)[count - take :]].min())
        else:
            threshold = float(scores[scores > -np.inf].min())
        low = np.nextafter(np.float32(threshold - 2 * tol), np.float32(-np.inf))
        contenders = np.flatnonzero(scores >= low)
        contenders = contenders[np.argsort(-scores[contenders], kind="stable")]
        values = scores[contenders].astype(np.float64)
        chains = np.split(contenders, np.flatnonzero(values[:-1] - values[1:] > 2 * tol) + 1)
        cache: dict[str, tuple[int, int]] = {}
        order: list[int] = []
        for chain in chains:
            if len(order) >= take:
                break
            if chain.size == 1:
                order.append(int(chain[0]))
            else:
                order.extend(self._exact_order(chain, qexact, take - len(order), cache))
        order = order[:take]
        return order, self._exact_cosines(order, qexact, cache)

    def _exact_keys(
        self, texts: list[str], qexact: np.ndarray, cache: dict[str, tuple[int, int]]
    ) -> None:
        """Fill ``cache`` with (exact dot with the query, exact squared norm) per distinct text."""
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if not missing:
            return
        exact = self._exact(missing)
        dots = _exact_dot(exact, qexact)
        norms = _exact_products(exact, exact)
        for text, dot, norm in zip(missing, dots, norms):
            cache[text] = (dot, norm)

    def _exact_order(
        self,
        chain: np.ndarray,
        qexact: np.ndarray,
        need: int,
        cache: dict[str, tuple[int, int]],
    ) -> list[int]:
        """The best ``need`` rows of a chain of near-equal float scores, in exact order.

        Rows are grouped by their exact key ``sign(p) * p**2 / |d|**2``; groups are taken best
        first, and within a group (an exact tie) the profile's tie rule decides.
        """
        texts = [self._texts[r] for r in chain]
        self._exact_keys(texts, qexact, cache)  # type: ignore[arg-type]
        key_of = {t: Fraction(cache[t][0] * abs(cache[t][0]), cache[t][1]) for t in set(texts)}  # type: ignore[index]
        groups: dict[Fraction, list[int]] = {}
        for row, text in zip(chain.tolist(), texts):
            groups.setdefault(key_of[text], []).append(row)  # type: ignore[index]
        out: list[int] = []
        for key in sorted(groups, reverse=True):
            out.extend(self._tie_order(groups[key], need - len(out)))
            if len(out) >= need:
                break
        return out

    def _tie_order(self, rows: list[int], need: int) -> list[int]:
        """Exactly tied rows ordered by the profile's tie rule; only the first ``need`` kept."""
        if len(rows) == 1:
            return rows
        rule = self._profile.tie_order
        if rule == "id":
            return heapq.nsmallest(need, rows, key=self._ids.__getitem__)
        if rule == "shuffle":
            keys = splitmix64(self._id_hash[rows] ^ np.uint64(self._tie_salt))
            order = np.lexsort((self._seq[rows], keys))[:need]
            return [rows[i] for i in order]
        seq = self._seq[rows] if rule == "insertion" else -self._seq[rows]
        if need < len(rows):
            part = np.argpartition(seq, need - 1)[:need]
            return [rows[i] for i in part[np.argsort(seq[part])]]
        return [rows[i] for i in np.argsort(seq)]

    def _exact_cosines(
        self, rows: list[int], qexact: np.ndarray, cache: dict[str, tuple[int, int]]
    ) -> dict[int, float]:
        if not rows:
            return {}
        texts = [self._texts[r] for r in rows]
        self._exact_keys(texts, qexact, cache)  # type: ignore[arg-type]
        qnorm = _exact_dot(qexact[None, :], qexact)[0]
        return {
            r: _sqrt_score(cache[t][0], cache[t][1] * qnorm)  # type: ignore[index]
            for r, t in zip(rows, texts)
        }

    def _run(
        self,
        text: str,
        k: int,
        predicate: Filter | None,
        where: Mapping[str, Any] | None,
        *,
        explain: bool,
    ) -> Any:
        count = self._count
        alive_mask = self._alive[:count]
        if self._unreachable:  # churn: live records the index can no longer reach
            alive_mask = alive_mask.copy()
            alive_mask[[self._row_of[i] for i in self._unreachable]] = False
        profile = self._profile
        if profile.tie_order == "shuffle":
            self._tie_salt = splitmix64(
                np.array([_text_hash(text) ^ profile.seed ^ _SHUFFLE_SALT], dtype=np.uint64)
            )[0]
        post = predicate is not None and self._filter_mode == "post"
        # A post-filtering index filters a window of candidates (ef_search), not just the top k.
        cut = max(k, profile.post_filter_candidates) if post else k
        ranked: list[int] = []
        order: list[int] = []
        final: list[int] = []
        cosines: dict[int, float] = {}
        eligible = alive_mask if self._unreachable else None  # None: every alive row
        filter_mask = None
        if predicate is not None and count:
            filter_mask = self._filter_mask(predicate) & alive_mask
            if self._filter_mode == "pre":
                eligible = filter_mask
        passing = eligible
        if self._recall < 1.0 and count:
            rows = np.flatnonzero(alive_mask if eligible is None else eligible)
            eligible = np.zeros(count, dtype=bool)
            eligible[self._recall_survivors(text, rows)] = True
        if len(self._row_of) or self._orphan_of:
            qfloat, qexact = self._query_vector(text)
            # explain() ranks every survivor, so a view can show where the lost ones stood.
            order, cosines = self._rank(eligible, qfloat, qexact, count if explain else cut)
            if explain:
                ranked, order = order, order[:cut]
            final = order
            if post:
                assert filter_mask is not None
                final = [r for r in order if filter_mask[r]][:k]
        matches = tuple(self._match(r, profile.score(cosines[r])) for r in final)
        if profile.pad_missing and len(matches) < k:  # FAISS fills every slot it cannot fill
            matches += (Match("-1", "", {}, profile.pad_score),) * (k - len(matches))
        if not explain:
            return matches
        ids = self._ids
        alive = np.flatnonzero(alive_mask)
        passing_rows = alive if passing is None else np.flatnonzero(passing)
        survivor_rows = passing_rows if eligible is passing else np.flatnonzero(eligible)
        passing_set = set(passing_rows.tolist())
        survivor_set = set(survivor_rows.tolist())
        return QueryExplanation(
            text=text,
            k=k,
            where=copy.deepcopy(dict(where)) if where is not None else None,
            filter_mode=self._filter_mode,
            recall=self._recall,
            candidates=tuple(ids[r] for r in alive),  # type: ignore[misc]
            filtered_out=tuple(ids[r] for r in alive if r not in passing_set),  # type: ignore[misc]
            recall_lost=tuple(ids[r] for r in passing_rows if r not in survivor_set),  # type: ignore[misc]
            ranked=tuple(ids[r] for r in ranked),  # type: ignore[misc]
            top_k=tuple(ids[r] for r in order),  # type: ignore[misc]
            post_filter_dropped=tuple(  # type: ignore[misc]
                ids[r]
                for r in order
                if post and not filter_mask[r]  # type: ignore[index]
            ),
            matches=matches,
            cosines={ids[r]: c for r, c in cosines.items()},  # type: ignore[misc]
            unreachable=self.unreachable_ids,
            orphans=tuple(self._orphan_of),
        )
