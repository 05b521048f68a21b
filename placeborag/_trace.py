"""What a store hands back besides matches: records views, query traces, explanations, the log.

:class:`StoreRecords` is the read-only view of a store's visible records; :class:`QueryTrace`
says, for each of them, where one query left it (the stage it reached, its score and rank) and
which exact ties the ranking met; :class:`QueryExplanation` is the older, fuller form (every
survivor ranked), built from the same pass. :class:`QueryPass` carries one query through the
store's stages; only the store makes one.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from placeborag._filters import copy_filter
from placeborag._validation import shown

if TYPE_CHECKING:
    from placeborag._filters import Filter
    from placeborag._profiles import Profile
    from placeborag._ranking import ExactScores, Ranking
    from placeborag._records import RecordTable

__all__ = [
    "BELOW",
    "DROPPED",
    "FILTERED",
    "LOST",
    "RETURNED",
    "STAGES",
    "TIED",
    "UNREACHABLE",
    "Match",
    "QueryExplanation",
    "QueryRecord",
    "QueryTrace",
    "RecordMetadata",
    "StoreRecords",
    "TieInfo",
]

RETURNED = "returned"
DROPPED = "dropped by post-filter"
TIED = "tied at the cut"
BELOW = "below the cut"
LOST = "lost to recall"
FILTERED = "filtered out"
UNREACHABLE = "unreachable"
#: Every stage a trace names, from the best to the earliest a record can stop at.
STAGES = (RETURNED, DROPPED, TIED, BELOW, LOST, FILTERED, UNREACHABLE)
_STAGE_NAMES = np.array(STAGES, dtype=object)
_CODE = {name: i for i, name in enumerate(STAGES)}


@dataclass(frozen=True)
class Match:
    """One result of a query: the record and the score in the profile's convention."""

    id: str
    text: str
    metadata: dict[str, Any]
    score: float


@dataclass(frozen=True)
class QueryRecord:
    """What a store was asked: kept for every query, including ones that failed.

    ``ids`` is the candidate restriction a query was given; ``vector`` the query vector of
    :meth:`~placeborag.FakeVectorStore.query_by_vector` (unit length; ``text`` is then ``""``).
    """

    text: str
    k: int
    where: dict[str, Any] | None
    context: dict[str, Any] | None = None
    ids: tuple[str, ...] | None = None
    vector: tuple[float, ...] | None = field(default=None, repr=False)


_NO_META: Mapping[str, Any] = MappingProxyType({})


def _frozen_meta(meta: dict[str, Any] | None) -> Mapping[str, Any]:
    """A read-only view of a record's metadata (no copy: see :class:`RecordMetadata`)."""
    return MappingProxyType(meta) if meta else _NO_META


class RecordMetadata(Sequence[Mapping[str, Any]]):
    """The ``metadata`` column of :class:`StoreRecords`: one read-only mapping per record,
    made when it is read (a million records are not a million objects until walked).

    It holds the store's metadata dicts as they were when the view was made: a store checks
    and copies metadata when it is written and replaces a record's dict on a later write,
    never changing one in place, so the column never changes. Equal to a tuple (or any
    sequence) of equal mappings; a slice is a tuple.
    """

    __slots__ = ("_dicts",)

    def __init__(self, dicts: Sequence[dict[str, Any] | None]) -> None:
        self._dicts = dicts

    def __len__(self) -> int:
        return len(self._dicts)

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Mapping[str, Any], ...]: ...

    def __getitem__(self, index: int | slice) -> Mapping[str, Any] | tuple[Mapping[str, Any], ...]:
        if isinstance(index, slice):
            return tuple(map(_frozen_meta, self._dicts[index]))
        return _frozen_meta(self._dicts[index])

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return map(_frozen_meta, self._dicts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RecordMetadata) and other._dicts is self._dicts:
            return True
        if isinstance(other, (RecordMetadata, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mappings are not hashable

    def key_names(self) -> set[str]:
        """Every key some record's metadata has (without a mapping per record)."""
        return set(itertools.chain.from_iterable(d for d in self._dicts if d))

    def __repr__(self) -> str:
        shown = ", ".join(repr(dict(m)) for m in self[:10])
        more = f", ... {len(self) - 10} more" if len(self) > 10 else ""
        return f"RecordMetadata([{shown}{more}])"


@dataclass(frozen=True, eq=False)
class StoreRecords:
    """A read-only view of a store's visible records, in insertion order.

    ``vectors[i]`` is the unit float32 vector the store ranks ``ids[i]`` with (a read-only
    array); ``sequence[i]`` its insertion number (later writes have larger ones); ``reachable[i]``
    is False for a record ``churn`` unlinked from queries; ``pending`` counts writes not yet
    visible (``visibility="manual"``).
    """

    ids: tuple[str, ...]
    texts: tuple[str, ...]
    metadata: RecordMetadata
    vectors: np.ndarray = field(repr=False)
    sequence: np.ndarray = field(repr=False)
    reachable: tuple[bool, ...] = field(repr=False)
    pending: int = 0
    version: tuple[int, int] = field(default=(0, 0), repr=False)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dimensions(self) -> int:
        return int(self.vectors.shape[1])

    def position(self, id: str) -> int:
        """The index of ``id`` in these records; an unknown id raises, naming the nearest."""
        index = self._index
        if id not in index:
            import difflib

            from placeborag._errors import PlaceboragValueError

            close = difflib.get_close_matches(str(id), list(index), n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise PlaceboragValueError(f"unknown id {shown(id)}{hint}")
        return index[id]

    @property
    def _index(self) -> dict[str, int]:
        return _position_index(self, self.ids)


@dataclass(frozen=True)
class TieInfo:
    """Records whose exact scores are equal, in the order the profile's tie rule put them.

    ``kept`` are the ones the query returned; ``at_cut`` is True when the tie straddles the
    cut (some of the group returned, some not, for no reason but the rule).
    """

    ids: tuple[str, ...]
    score: float
    kept: tuple[str, ...]
    rule: str

    @property
    def at_cut(self) -> bool:
        return 0 < len(self.kept) < len(self.ids)


@dataclass(frozen=True, eq=False)
class QueryTrace:
    """Where one query left every visible record of a store (the store's :meth:`records`).

    Arrays are aligned with ``ids`` (insertion order): ``stage[i]`` is one of :data:`STAGES`;
    ``rank[i]`` the 1-based rank among the returned matches (0 otherwise); ``cut_rank[i]`` the
    rank at the top-k cut (before a post-filter: the window it filters); ``ideal_rank[i]`` the
    rank a perfect index (``recall=1``) would return it at. ``score[i]`` is the number the
    profile reports: exactly the reported one for every record the ranking looked at (returned,
    dropped, tied, and every near-tie at the cut), and for the others the float64 score of the
    stored float32 vector, within ``2 * (d + 8) * 2**-24`` of exact. ``ties`` are the exact tie
    groups the ranking met, with the rule that ordered them. ``cosine[i]`` is the cosine the
    score was computed from; ``exact[i]`` says whether it is the exact one.
    """

    text: str
    k: int
    where: dict[str, Any] | None
    profile: str
    metric: str
    filter_mode: str
    recall: float
    higher_is_better: bool
    tie_rule: str
    ids: tuple[str, ...]
    stage: np.ndarray = field(repr=False)
    score: np.ndarray = field(repr=False)
    cosine: np.ndarray = field(repr=False)
    rank: np.ndarray = field(repr=False)
    cut_rank: np.ndarray = field(repr=False)
    ideal_rank: np.ndarray = field(repr=False)
    exact: np.ndarray = field(repr=False)
    ties: tuple[TieInfo, ...]
    matches: tuple[Match, ...]
    counts: dict[str, int]
    query_vector: np.ndarray = field(repr=False)

    def stage_of(self, id: str) -> str:
        return str(self.stage[self._position(id)])

    def ids_at(self, stage: str) -> tuple[str, ...]:
        """The ids at ``stage``, in rank order where they have one, else insertion order."""
        if stage not in _CODE:
            from placeborag._errors import PlaceboragValueError

            raise PlaceboragValueError(
                f"stage={shown(stage)} must be one of {', '.join(map(repr, STAGES))}"
            )
        idx = np.flatnonzero(self.stage == stage)
        key = self.rank if stage == RETURNED else self.cut_rank
        ranked = key[idx] > 0
        ordered = np.concatenate([idx[ranked][np.argsort(key[idx][ranked])], idx[~ranked]])
        return tuple(self.ids[i] for i in ordered.tolist())

    @property
    def returned(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.matches if m.id in self._index)

    @property
    def top_k(self) -> tuple[str, ...]:
        """The ids at the top-k cut, in order (before a post-filter)."""
        return _ids_by(self.cut_rank, self.ids)

    @property
    def ideal_top_k(self) -> tuple[str, ...]:
        return _ids_by(self.ideal_rank, self.ids)

    def tie_of(self, id: str) -> TieInfo | None:
        """The tie group ``id`` belongs to, if the ranking met one."""
        self._position(id)
        return next((t for t in self.ties if id in t.ids), None)

    def _position(self, id: str) -> int:
        index = self._index
        if id not in index:
            from placeborag._errors import PlaceboragValueError

            raise PlaceboragValueError(f"unknown id {shown(id)}: not a visible record of the store")
        return index[id]

    @property
    def _index(self) -> dict[str, int]:
        return _position_index(self, self.ids)


def _position_index(owner: object, ids: tuple[str, ...]) -> dict[str, int]:
    """id -> position in ``ids``, built once and kept on the frozen ``owner``."""
    cached: dict[str, int] | None = owner.__dict__.get("_index_cache")
    if cached is None:
        cached = {doc_id: i for i, doc_id in enumerate(ids)}
        object.__setattr__(owner, "_index_cache", cached)
    return cached


def _ids_by(rank: np.ndarray, ids: tuple[str, ...]) -> tuple[str, ...]:
    idx = np.flatnonzero(rank)
    return tuple(ids[i] for i in idx[np.argsort(rank[idx])].tolist())


@dataclass(frozen=True)
class QueryExplanation:
    """Every stage of one query, for explaining (and drawing) why the matches are what they are.

    Id lists are in ranking order where a ranking exists (``ranked``, ``top_k``, ``matches``)
    and in insertion order otherwise. ``trace`` is the same query's :class:`QueryTrace`.
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
    trace: QueryTrace | None = field(default=None, repr=False, compare=False)


# -- the pass ------------------------------------------------------------------------------


@dataclass(eq=False)
class QueryPass:
    """One query on its way through a store: the inputs, then every stage's rows."""

    store: Any
    text: str
    k: int
    where: dict[str, Any] | None
    predicate: Filter | None
    ids: tuple[str, ...] | None
    qfloat: np.ndarray | None
    qexact: np.ndarray | None
    salt: int
    vector_given: tuple[float, ...] | None
    qnorm: int | None = None  # the exact squared norm of qexact, when the embedder knew it
    # Filled by the run:
    table: RecordTable | None = None
    profile: Profile | None = None
    filter_mode: str = "pre"
    recall: float = 1.0
    post: bool = False
    reachable: np.ndarray | None = None
    filter_mask: np.ndarray | None = None
    passing: np.ndarray | None = None
    survivors: np.ndarray | None = None
    ranking: Ranking | None = None
    exact: ExactScores | None = None
    window: list[int] = field(default_factory=list)
    final: list[int] = field(default_factory=list)
    matches: tuple[Match, ...] = ()

    def rerun(self) -> QueryPass:
        """The same inputs, ready for another run."""
        return replace(self, ranking=None, exact=None, window=[], final=[], matches=())


def build_trace(qpass: QueryPass, records: StoreRecords) -> QueryTrace:
    """The trace of a finished pass over the visible records ``records``."""
    table, profile = qpass.table, qpass.profile
    assert table is not None and profile is not None
    rows = table.visible_rows()
    n = rows.size
    code = np.full(n, _CODE[BELOW], dtype=np.intp)
    reachable = qpass.reachable[rows] if qpass.reachable is not None else np.ones(n, bool)
    code[~reachable] = _CODE[UNREACHABLE]
    if qpass.filter_mask is not None and not qpass.post:
        code[reachable & ~qpass.filter_mask[rows]] = _CODE[FILTERED]
    if qpass.survivors is not None and qpass.passing is not None:
        lost = qpass.passing[rows] & ~qpass.survivors[rows]
        code[lost] = _CODE[LOST]
    index = np.full(table.count, -1, dtype=np.int64)
    index[rows] = np.arange(n)

    def ranks(selected: list[int]) -> np.ndarray:
        out = np.zeros(n, dtype=np.int64)
        pos = index[np.asarray(selected, dtype=np.int64)] if selected else np.zeros(0, np.int64)
        keep = pos >= 0  # orphans and shadows are in the index but not visible records
        out[pos[keep]] = np.arange(1, len(selected) + 1)[keep]
        return out

    cut_rank = ranks(qpass.window)
    rank = ranks(qpass.final)
    if qpass.post and qpass.filter_mask is not None:
        code[(cut_rank > 0) & ~qpass.filter_mask[rows]] = _CODE[DROPPED]
    code[rank > 0] = _CODE[RETURNED]
    # Scores: the float32 screen for every record, the exact number where the ranking has it.
    qfloat = qpass.qfloat
    if qfloat is None:
        qfloat = np.zeros(table.dimensions or 0)
        if n:
            qfloat, qpass.qexact, qpass.qnorm = qpass.store._query_vector(qpass.text)
    # The float32 screen the ranking itself starts from (one matrix-vector product, no
    # float64 copy of the matrix); every record the ranking looked at gets its exact cosine.
    # (the table's own screen of this query, kept: the ranking just took it)
    screen = table.screen(np.asarray(qfloat))[rows] if n else np.zeros(0, np.float32)
    cosine = screen.astype(np.float64).clip(-1.0, 1.0)
    exact = np.zeros(n, dtype=bool)
    ties: list[TieInfo] = []
    if qpass.ranking is not None:
        known = [(index[r], c) for r, c in qpass.ranking.cosines.items() if index[r] >= 0]
        if known:
            pos, values = zip(*known)
            cosine[list(pos)] = values
            exact[list(pos)] = True
        returned = set(qpass.final)
        for group in qpass.ranking.ties:
            assert qpass.exact is not None
            visible = [r for r in group.rows if index[r] >= 0]
            group_cos = qpass.exact.cosines(list(group.rows))
            for r in visible:
                cosine[index[r]] = group_cos[r]
                exact[index[r]] = True
                if code[index[r]] == _CODE[BELOW]:
                    code[index[r]] = _CODE[TIED]
            ties.append(
                TieInfo(
                    ids=tuple(table.ids[r] for r in group.rows),
                    score=float(profile.score(group_cos[group.rows[0]])),
                    kept=tuple(table.ids[r] for r in group.rows if r in returned),
                    rule=profile.tie_order,
                )
            )
    score = _profile_scores(profile, cosine)
    for i in np.flatnonzero(exact).tolist():  # the reported number, bit for bit
        score[i] = profile.score(float(cosine[i]))
    ideal_rank = ranks(qpass.store._ideal(qpass)) if qpass.recall < 1.0 else rank
    passing = int(np.count_nonzero(qpass.passing[rows])) if qpass.passing is not None else n
    survivors = int(np.count_nonzero(qpass.survivors[rows])) if qpass.survivors is not None else n
    counts = {
        "candidates": n,
        "pass filter": passing,
        "survive recall": survivors,
        "top-k cut": len(qpass.window),
        "returned": len(qpass.final),
    }
    qvec = np.array(qfloat, dtype=np.float64)
    qvec.flags.writeable = False
    stage = _STAGE_NAMES[code]
    for array in (stage, score, cosine, rank, cut_rank, ideal_rank, exact):
        array.flags.writeable = False
    return QueryTrace(
        text=qpass.text,
        k=qpass.k,
        where=copy_filter(qpass.where),
        profile=profile.name,
        metric=profile.metric,
        filter_mode=qpass.filter_mode,
        recall=qpass.recall,
        higher_is_better=profile.higher_is_better,
        tie_rule=profile.tie_order,
        ids=records.ids,
        stage=stage,
        score=score,
        cosine=cosine,
        rank=rank,
        cut_rank=cut_rank,
        ideal_rank=ideal_rank,
        exact=exact,
        ties=tuple(ties),
        matches=qpass.matches,
        counts=counts,
        query_vector=qvec,
    )


def _profile_scores(profile: Profile, cosines: np.ndarray) -> np.ndarray:
    """The profile's number for each cosine (vectorised where the score function allows)."""
    score: Any = profile.score  # a float function that numpy arrays also pass through
    try:
        out: np.ndarray = np.asarray(score(cosines), dtype=np.float64)
        if out.shape == cosines.shape:
            copied: np.ndarray = out.copy()
            return copied
    except (TypeError, ValueError):
        pass
    return np.array([profile.score(float(c)) for c in cosines], dtype=np.float64)


def build_explanation(qpass: QueryPass, trace: QueryTrace) -> QueryExplanation:
    """The full explanation of a pass run with every survivor ranked."""
    table = qpass.table
    assert table is not None
    ids = table.ids
    reachable = qpass.reachable if qpass.reachable is not None else np.zeros(0, bool)
    alive = np.flatnonzero(reachable)
    passing = alive if qpass.passing is None else np.flatnonzero(qpass.passing)
    survivors = passing if qpass.survivors is None else np.flatnonzero(qpass.survivors)
    passing_set = set(passing.tolist())
    survivor_set = set(survivors.tolist())
    ranking = qpass.ranking
    ranked = ranking.order if ranking is not None else []
    filter_mask = qpass.filter_mask
    return QueryExplanation(
        text=qpass.text,
        k=qpass.k,
        where=copy_filter(qpass.where),
        filter_mode=qpass.filter_mode,
        recall=qpass.recall,
        candidates=tuple(ids[r] for r in alive.tolist()),
        filtered_out=tuple(ids[r] for r in alive.tolist() if r not in passing_set),
        recall_lost=tuple(ids[r] for r in passing.tolist() if r not in survivor_set),
        ranked=tuple(ids[r] for r in ranked),
        top_k=tuple(ids[r] for r in qpass.window),
        post_filter_dropped=tuple(
            ids[r]
            for r in qpass.window
            if qpass.post and filter_mask is not None and not filter_mask[r]
        ),
        matches=qpass.matches,
        cosines={ids[r]: c for r, c in (ranking.cosines.items() if ranking else ())},
        unreachable=qpass.store.unreachable_ids,
        orphans=tuple(table.orphan_of),
        trace=trace,
    )
