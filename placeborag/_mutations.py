"""The retrieval mutations ``pytest --placeborag-audit`` runs a test under: one table of records.

Each :class:`Mutation` is one record: its name and two-letter code, the application or engine
bug it stands for, how the doubles answer under it, what the store's query log shows under it,
when it cannot apply (decided from what the test's usual run did, :class:`Facts`), and a small
example of its own (run by one parametrised test, ``tests/test_mutations.py``). A new mutation
is one record here and, for a new *kind* of change, one branch in the engine functions below.

The kinds (``side``):

* ``embedder``: the embedder's answers change (and every store ranks in that space);
* ``answer``: the request reaches the store as sent (its log shows it), the answer changes:
  an engine that behaves otherwise;
* ``request``: the store receives another request than the application meant (its log shows
  what it received), and answers that: an application bug on the way to the store;
* ``write``: a write is acknowledged but not (or not wholly) done: an ingestion bug;
* ``seam``: for tests that never touch a placeborag double, the request or the answer is
  changed where the test's code meets the framework (``placeborag._seams``).

This module computes; ``placeborag._recorder`` decides when (it instruments the doubles during
an audit, and only then) and ``placeborag._audit`` reruns the tests.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

__all__ = [
    "MUTATIONS",
    "Call",
    "Facts",
    "Mutation",
    "ShapeOnlyEmbedder",
    "by_name",
    "shape_vectors",
]

# A query that no application means: what "another query" asks.
OTHER_QUESTION = "placeborag audit: a question nobody asked"
_SHAPE_SALT = b"placeborag shape-only mutation\x00"
_RECALL_SALT = b"placeborag recall-lost mutation\x00"
_FLIPPED_TIES = {"insertion": "reverse", "reverse": "insertion", "id": "reverse"}


@dataclass(frozen=True)
class Call:
    """One query as the caller made it (``k`` None: the caller left it to the store)."""

    text: str | None
    vector: Any
    k: int | None
    where: Mapping[str, Any] | None
    ids: tuple[str, ...] | None

    def k_or(self, default: int) -> int:
        return default if self.k is None else int(self.k)


@dataclass
class Facts:
    """What a test's usual run did with the doubles: the applicability of each mutation."""

    queries: int = 0
    embedded: bool = False  # a FakeEmbedder's public embed path answered the test
    filtered: bool = False  # some query had where=
    restricted: bool = False  # some query had ids=
    filter_keys: set[str] = field(default_factory=set)
    k_given: bool = False  # some query named a k other than its store's default
    immediate: bool = False  # some queried store has visibility="immediate"
    read_log: bool = False  # the test read a store's query log
    written: dict[int, int] = field(default_factory=dict)  # store ordinal -> records written
    deleted: int = 0  # ids deleted
    metadata_keys: dict[str, int] = field(default_factory=dict)  # written key -> records
    reads: int = 0  # reads of a store (answers, len, get, ids, records, the log)
    seam_calls: int = 0  # retrieval calls at a framework seam (no placeborag double behind)
    seam_filtered: bool = False
    seam_k: bool = False
    seam_names: set[str] = field(default_factory=set)  # seams that answered retrieval results

    def dropped_key(self) -> str | None:
        """The metadata key ``metadata-key-lost`` drops: the first (by name) the test's filters
        name among those it wrote; else the key most records carry (ties: by name)."""
        keys = {k: n for k, n in self.metadata_keys.items() if not k.startswith("_")}
        named = sorted(keys.keys() & self.filter_keys)
        if named:
            return named[0]
        if not keys:
            return None
        return min(keys, key=lambda k: (-keys[k], k))


def _never(why: str, test: Callable[[Facts], bool]) -> Callable[[Facts], str | None]:
    return lambda facts: why if test(facts) else None


@dataclass(frozen=True)
class Example:
    """A mutation's own example: ``run(store)`` after ``DOCS`` are written, its usual result
    and its result under the mutation (``tests/test_mutations.py`` runs every one)."""

    run: Callable[[Any], Any]
    usual: Any
    mutated: Any
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Mutation:
    """One retrieval mutation: a record of the table the audit runs, reports and documents."""

    name: str
    code: str
    side: str  # embedder, answer, request, write, seam
    stands_for: str  # the bug, in a user's words
    does: str  # how the doubles answer under it
    log: str  # what the store's query log shows under it
    cannot: Callable[[Facts], str | None]  # why it cannot apply to a test (None: it can)
    example: Example | None = None

    def skip_reason(self, facts: Facts) -> str | None:
        return self.cannot(facts)


def _no_query(facts: Facts) -> str | None:
    return "never queried a store" if not facts.queries else None


def _all_of(*checks: Callable[[Facts], str | None]) -> Callable[[Facts], str | None]:
    def check(facts: Facts) -> str | None:
        for c in checks:
            reason = c(facts)
            if reason is not None:
                return reason
        return None

    return check


def _ids(matches: Sequence[Any]) -> list[str]:
    return [m.id for m in matches]


# The documents every example's store holds (tests/test_mutations.py writes them).
DOCS: tuple[tuple[str, str, str], ...] = (
    ("refund", "our refund policy allows returns within 30 days", "en"),
    ("shipping", "delivery times to remote islands", "en"),
    ("warranty", "the warranty covers water damage", "en"),
    ("hu-refund", "pénzvisszatérítési szabályzat harminc napon belül", "hu"),
)

_SENT = "what the application sent, as usual"

MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        "shape-only",
        "SH",
        "embedder",
        "an embedding with no meaning: the usual random-vector mock, or the model swapped",
        "the embedder answers unit vectors made from a hash of each text (the same text, the "
        "same vector; no two texts related), and every store ranks in that space",
        _SENT,
        lambda f: None if (f.embedded or f.queries) else "never embedded a text or queried a store",
        Example(lambda s: _ids(s.query("refund policy", k=1)), ["refund"], ["warranty"]),
    ),
    Mutation(
        "reversed",
        "RV",
        "answer",
        "a sort in the wrong direction (a distance read as a similarity)",
        "the store answers the k worst matches, worst first",
        _SENT,
        _no_query,
        Example(lambda s: _ids(s.query("refund policy", k=1)), ["refund"], ["shipping"]),
    ),
    Mutation(
        "query-changed",
        "QC",
        "request",
        "the question never reached the store: another variable, a template or a rewrite sent "
        "instead",
        "the store receives another question (a fixed one nobody asks; a query vector is "
        "replaced by that question's vector, or negated when the store embeds no text)",
        "the question it received: text='" + OTHER_QUESTION + "'",
        _no_query,
        Example(
            lambda s: (s.query("refund policy", k=1), s.last_query.text)[1],
            "refund policy",
            OTHER_QUESTION,
        ),
    ),
    Mutation(
        "filter-dropped",
        "FD",
        "request",
        "the filter never reached the store (a tenant or permission filter lost on the way)",
        "the store receives the query without where= and ids=, and answers every tenant",
        "where=None and ids=None: the filter did not arrive",
        _all_of(
            _no_query,
            _never(
                "never filtered (no where= or ids=)", lambda f: not (f.filtered or f.restricted)
            ),
        ),
        Example(
            lambda s: _ids(s.query("refund policy", k=1, where={"lang": "hu"})),
            ["hu-refund"],
            ["refund"],
        ),
    ),
    Mutation(
        "filter-after-cut",
        "FC",
        "answer",
        "a post-filtering index that starves a selective filter (or the reverse)",
        "the filter runs on the other side of the top-k cut: pre-filtering becomes "
        "post-filtering and back",
        _SENT,
        _all_of(_no_query, _never("never filtered with where=", lambda f: not f.filtered)),
        Example(
            lambda s: _ids(s.query("refund policy", k=1, where={"lang": "hu"})),
            ["hu-refund"],
            [],
            {"profile": "chroma", "filter_mode": "pre"},
        ),
    ),
    Mutation(
        "k-dropped",
        "KD",
        "request",
        "k was not passed on: the store answers its own default number of matches",
        "the store receives the query without k and answers its profile's default k",
        "k=<the profile's default>: the k asked for did not arrive",
        _all_of(
            _no_query,
            _never("never asked for a k other than its store's default", lambda f: not f.k_given),
        ),
        Example(lambda s: len(s.query("refund policy", k=1)), 1, 4),
    ),
    Mutation(
        "ties-flipped",
        "TF",
        "answer",
        "code that depends on one engine's order of exactly tied matches",
        "exactly tied matches come in the other order (insertion and reverse insertion swap; "
        "ties ordered by id or hash get reverse insertion order)",
        _SENT,
        _no_query,
        Example(
            lambda s: (s.upsert("refund-copy", DOCS[0][1]), _ids(s.query("refund policy", k=2)))[1],
            ["refund", "refund-copy"],
            ["refund-copy", "refund"],
        ),
    ),
    Mutation(
        "recall-lost",
        "RL",
        "answer",
        "an approximate index that misses the best document",
        "the index loses half of the candidates it would rank, chosen by hashing each record's "
        "text (never its id, which an application may draw at random)",
        _SENT,
        _no_query,
        Example(
            lambda s: _ids(s.query("refund policy", k=3)),
            ["refund", "warranty", "hu-refund"],
            ["refund", "warranty"],
        ),
    ),
    Mutation(
        "stale-reads",
        "SR",
        "answer",
        "querying right after a write, on an engine whose writes show up later",
        "writes stay invisible until refresh(), as under visibility='manual' (stores with "
        "visibility='immediate' only)",
        _SENT,
        _all_of(
            _no_query,
            _never(
                "its stores read stale already (visibility='manual')", lambda f: not f.immediate
            ),
        ),
        Example(lambda s: _ids(s.query("refund policy", k=1)), ["refund"], []),
    ),
    Mutation(
        "write-lost",
        "WL",
        "write",
        "a chunk dropped at ingestion (an off-by-one in a batch, a failed write swallowed)",
        "the store acknowledges every write but does not store one record: the second record "
        "written to each store during the test (the only one, when one is written)",
        "as usual (the queries are those sent)",
        _never("never wrote a record", lambda f: not f.written),
        Example(lambda s: len(s), 4, 3),
    ),
    Mutation(
        "delete-ignored",
        "DI",
        "write",
        "a delete that never happens (the wrong id, a swallowed error): stale data served",
        "the store acknowledges every delete (and returns what it would) but removes nothing",
        "as usual",
        _never("never deleted a record", lambda f: not f.deleted),
        Example(lambda s: (s.delete("refund"), "refund" in s)[1], False, True),
    ),
    Mutation(
        "metadata-key-lost",
        "MK",
        "write",
        "metadata written without a key (the tenant or source never attached at ingestion)",
        "every record is stored without one metadata key: the first its filters name, else "
        "the key most records carry",
        "as usual",
        _never("never wrote metadata", lambda f: f.dropped_key() is None),
        Example(
            lambda s: _ids(s.query("refund policy", k=1, where={"lang": "hu"})),
            ["hu-refund"],
            [],
        ),
    ),
    Mutation(
        "seam-query",
        "SQ",
        "seam",
        "the question never reached retrieval",
        "the retrieval call receives another question (a fixed one nobody asks)",
        "the retriever receives that other question",
        _never("made no retrieval call", lambda f: not f.seam_calls),
    ),
    Mutation(
        "seam-filter",
        "SF",
        "seam",
        "the filter never reached retrieval",
        "the retrieval call receives no filter",
        "the retriever receives no filter",
        _never("no retrieval call carried a filter", lambda f: not f.seam_filtered),
    ),
    Mutation(
        "seam-k",
        "SK",
        "seam",
        "another k reached retrieval",
        "the retrieval call receives k+1",
        "the retriever receives the other k",
        _never("no retrieval call carried a k", lambda f: not f.seam_k),
    ),
    Mutation(
        "seam-reversed",
        "SV",
        "seam",
        "a sort in the wrong direction behind the retriever",
        "the retrieval call's answer comes back in reverse order",
        "as usual",
        _never("made no retrieval call", lambda f: not f.seam_calls),
    ),
    Mutation(
        "seam-emptied",
        "SE",
        "seam",
        "retrieval that finds nothing (an empty index, a wrong collection)",
        "the retrieval call answers nothing",
        "as usual",
        _never("made no retrieval call", lambda f: not f.seam_calls),
    ),
)

_BY_NAME = {m.name: m for m in MUTATIONS}
STORE_SIDES = ("embedder", "answer", "request", "write")


def by_name(name: str) -> Mutation:
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        from placeborag._errors import PlaceboragValueError
        from placeborag._validation import shown

        raise PlaceboragValueError(
            f"mutation={shown(name)} must be one of {', '.join(map(repr, _BY_NAME))}"
        ) from None


def store_mutations() -> tuple[Mutation, ...]:
    return tuple(m for m in MUTATIONS if m.side in STORE_SIDES)


def seam_mutations() -> tuple[Mutation, ...]:
    return tuple(m for m in MUTATIONS if m.side == "seam")


# -- requests ---------------------------------------------------------------------------------


def request_under(name: str, store: Any, call: Call) -> Call:
    """The request the store receives under a ``request`` mutation."""
    if name == "filter-dropped":
        return replace(call, where=None, ids=None)
    if name == "k-dropped":
        return replace(call, k=None)
    assert name == "query-changed", name
    if call.vector is None:
        return replace(call, text=OTHER_QUESTION)
    try:
        vector = store.embed_query(OTHER_QUESTION)
    except Exception:  # a vectors-only store embeds no text: the opposite direction
        vector = -np.asarray(call.vector, dtype=np.float64)
    return replace(call, vector=vector, text=OTHER_QUESTION if call.text is not None else None)


def ask(store: Any, call: Call, k: int | None = None) -> list[Any]:
    """``call`` asked of ``store`` (a twin: the audit's own question, logged nowhere the test
    reads)."""
    kk = call.k if k is None else k
    if call.vector is not None:
        return list(
            store.query_by_vector(call.vector, kk, call.where, text=call.text, ids=call.ids)
        )
    return list(store.query(call.text, kk, call.where, ids=call.ids))


# -- answers ----------------------------------------------------------------------------------


def answer_under(
    name: str,
    store: Any,
    call: Call,
    *,
    snapshot: Any,
    shape_twin: Callable[[], Any],
    shape_query: Callable[[Call], Call],
) -> list[Any]:
    """The answer to ``call`` under an ``embedder`` or ``answer`` mutation, computed on a twin
    of ``store`` (so the store's own log and failure queue are untouched).

    ``snapshot`` is what a stale read sees (a store, or None: empty); ``shape_twin()`` the store
    re-embedded by the shape-only embedder; ``shape_query(call)`` the call with its vector
    replaced by the shape-only vector of the text it was embedded from.
    """
    k = call.k_or(store.profile.default_k)
    if name == "shape-only":
        return ask(shape_twin(), shape_query(call))
    if name == "filter-after-cut":
        flipped = "post" if store.filter_mode == "pre" else "pre"
        return ask(store.with_options(filter_mode=flipped), call)
    if name == "ties-flipped":
        flipped = _FLIPPED_TIES.get(store.profile.tie_order, "insertion")
        return ask(store.with_options(tie_order=flipped), call)
    if name == "stale-reads":
        if snapshot is None:
            from placeborag._store import FakeVectorStore

            snapshot = FakeVectorStore(embedder=store.embedder, **store.options)
        return ask(snapshot, call)
    everything = _real(store, ask(store.with_options(), call, k=_all(store, k)))
    if name == "reversed":
        return _padded(store, everything[::-1][:k], k)
    assert name == "recall-lost", name
    kept = [m for m in everything if _kept(m)]
    return _padded(store, kept[:k], k)


def _kept(match: Any) -> bool:
    """Whether a lossy index keeps this record: a hash of its text, never of its id."""
    digest = hashlib.sha256(_RECALL_SALT + match.text.encode("utf-8", "surrogatepass")).digest()
    return digest[0] & 1 == 0


def _all(store: Any, k: int) -> int:
    """A k that takes every record a query could rank (the store caps k at a million)."""
    return min(max(k, len(store.records()) + len(store.orphaned_ids)), 1_000_000)


def _real(store: Any, matches: list[Any]) -> list[Any]:
    """``matches`` without a FAISS-style profile's padding."""
    if not store.profile.pad_missing:
        return matches
    return [m for m in matches if not is_padding(m)]


def is_padding(match: Any) -> bool:
    return bool(match.id == "-1" and match.text == "" and not match.metadata)


def _padded(store: Any, matches: list[Any], k: int) -> list[Any]:
    profile = store.profile
    if not profile.pad_missing or len(matches) >= k:
        return matches
    from placeborag._results import Match

    return matches + [Match("-1", "", {}, profile.pad_score)] * (k - len(matches))


# -- writes -----------------------------------------------------------------------------------


def kept_rows(name: str, facts: Facts | None, ordinal: int, before: int, n: int) -> list[int]:
    """Which rows of a write of ``n`` records the store keeps under ``write-lost``: all but the
    store's second record (its first when the usual run wrote only one). ``before`` records
    were written to it earlier in the run."""
    assert name == "write-lost", name
    total = facts.written.get(ordinal, 0) if facts is not None else 0
    lost = 1 if total >= 2 else 0
    return [i for i in range(n) if before + i != lost]


def without_key(metadatas: Sequence[Any], key: str) -> list[Any]:
    """The metadata of a write with ``key`` removed (``metadata-key-lost``)."""
    out = []
    for meta in metadatas:
        if isinstance(meta, Mapping) and key in meta:
            meta = {k: v for k, v in meta.items() if k != key}
        out.append(meta)
    return out


# -- the shape-only embedder ------------------------------------------------------------------


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
