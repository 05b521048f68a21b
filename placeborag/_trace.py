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
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from placeborag._filters import copy_filter
from placeborag._results import Match, QueryRecord  # below the pipeline; named here too
from placeborag._validation import shown

if TYPE_CHECKING:
    from placeborag._filters import Filter
    from placeborag._pipeline import QueryResult
    from placeborag._profiles import Profile

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

    Every stored record is here, so an id written again under ``on_existing_id="duplicate"``
    appears once per record, as queries return it: ``occurrence[i]`` tells them apart (0 for
    the first record of an id, 1 for the next...), and ``keys[i]`` is ``(ids[i],
    occurrence[i])``. :meth:`position` of such an id is its newest record (the one :meth:`get
    <placeborag.FakeVectorStore.get>` returns); :meth:`positions` lists them all.

    ``version`` is the store's change counter: it grows with every write that lands (an
    upsert, even one that writes a record as it was, a delete, a ``refresh()`` applying pending
    writes, and what ``churn`` and ``orphans`` do with them) and with nothing else, so two views
    of one store with the same ``version`` hold the same records, and a cache of anything made
    from them (an index, a layout) is fresh while ``records().version`` is what it was built at.
    A write still pending (``visibility="manual"``) changes ``pending``, not ``version``.
    Versions of two different stores are not comparable.
    """

    ids: tuple[str, ...]
    texts: tuple[str, ...]
    metadata: RecordMetadata
    vectors: np.ndarray = field(repr=False)
    sequence: np.ndarray = field(repr=False)
    reachable: tuple[bool, ...] = field(repr=False)
    pending: int = 0
    version: int = field(default=0, repr=False)
    occurrence: tuple[int, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if len(self.occurrence) != len(self.ids):  # no duplicates: every record the first
            object.__setattr__(self, "occurrence", _zeros(len(self.ids)))

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def keys(self) -> tuple[tuple[str, int], ...]:
        """``(id, occurrence)`` of every record: unique even where ids repeat."""
        return tuple(zip(self.ids, self.occurrence))

    def positions(self, id: str) -> tuple[int, ...]:
        """Every index of ``id`` (several for a duplicated id), oldest first."""
        newest = self.position(id)
        return tuple(i for i in range(newest + 1) if self.ids[i] == id)

    @property
    def dimensions(self) -> int:
        return int(self.vectors.shape[1])

    def position(self, id: str, *, occurrence: int | None = None) -> int:
        """The index of ``id`` in these records: its newest record, or its record number
        ``occurrence`` for an id stored more than once (:func:`record_index`)."""
        return record_index(self.ids, id, occurrence, index=self._index)

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
    window: int = 0
    edges: tuple[float | None, float | None] = field(default=(None, None), repr=False)
    records: StoreRecords | None = field(default=None, repr=False)
    restricted: bool = field(default=False, repr=False)
    pending: tuple[str, ...] = field(default=(), repr=False)
    predicate: Filter | None = field(default=None, repr=False)

    def stage_of(self, id: str) -> str:
        """The stage of ``id`` (of its newest record, for an id stored more than once)."""
        return str(self.stage[self.position(id)])

    @property
    def cut_score(self) -> float | None:
        """The reported score of the last record returned (None when nothing was)."""
        return self.edges[0]

    @property
    def window_score(self) -> float | None:
        """The reported score at the edge of the window the index took: the ``window``-th
        best candidate (the k-th under pre-filtering; the post-filter window's last)."""
        return self.edges[1]

    def why(self, id: str, *, occurrence: int | None = None) -> str:
        """Where the query left ``id`` and why, in the terms of the stage that stopped it: the
        filter clause it fails, the recall loss, the top-k cut or the post-filter window (its
        size and the score at its edge), the tie rule, visibility. An id written but not yet
        visible is explained too; any other unknown id raises. For an id stored more than once
        (``on_existing_id="duplicate"``), ``occurrence`` picks its record (0 for the first, as
        ``records().occurrence`` numbers them); None explains the newest."""
        if id in self.pending and id not in self._index:
            return (
                "not visible yet: it was written under visibility='manual' and the store has "
                "not been refreshed (refresh() makes it visible)"
            )
        return _why(self, self.position(id, occurrence=occurrence))

    def position(self, id: str, *, occurrence: int | None = None) -> int:
        """The index of ``id`` in :attr:`ids` (and every array): its newest record, or its
        record number ``occurrence`` for an id stored more than once (:func:`record_index`)."""
        return record_index(self.ids, id, occurrence, index=self._index)

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
        self.position(id)
        return next((t for t in self.ties if id in t.ids), None)

    @property
    def _index(self) -> dict[str, int]:
        return _position_index(self, self.ids)


_BETTER = {True: "higher", False: "lower"}


def _why(trace: QueryTrace, i: int) -> str:
    """The sentence of :meth:`QueryTrace.why` for the record at position ``i``."""
    stage, k, better = str(trace.stage[i]), trace.k, _BETTER[trace.higher_is_better]
    score = f"{float(trace.score[i]):.4f}"
    if stage == RETURNED:
        return f"returned at rank {int(trace.rank[i])} of k={k} (score {score})"
    if stage == FILTERED:
        return f"fails the where filter at {_failing(trace, i)}, so it is never scored"
    if stage == UNREACHABLE:
        if trace.records is not None and not trace.records.reachable[i]:
            return "churn unlinked it from the index: get() finds it, no query reaches it"
        return "outside the ids the query was restricted to (ids=...)"
    if stage == LOST:
        ideal = int(trace.ideal_rank[i])
        where = f"would rank {ideal} with a perfect index" if ideal else "passes the filter"
        return f"{where}; the approximate index (recall {trace.recall:g}) lost it"
    if stage == DROPPED:
        return (
            f"inside the post-filter window of {trace.window} candidates at place "
            f"{int(trace.cut_rank[i])}, then dropped: it fails the where filter at "
            f"{_failing(trace, i)}"
        )
    tie = next((t for t in trace.ties if trace.ids[i] in t.ids), None)
    if stage == TIED and tie is not None:
        kept = ", ".join(map(shown, tie.kept)) or "none of them"
        return (
            f"ties exactly with {len(tie.ids) - 1} other record(s) at score {tie.score:.4f}; "
            f"the tie rule ({tie.rule}) kept {kept}"
        )
    if trace.filter_mode == "post" and trace.predicate is not None:
        edge = trace.window_score  # the index cut before filtering: that is where it stopped
        cut = (
            f"the post-filter window of the {trace.window} best candidates"
            if trace.window > k
            else f"the top-{k} cut, taken before the post-filter"
        )
    else:
        edge, cut = trace.cut_score, f"the top-{k} cut"
    at = f"; the edge is at {edge:.4f}" if edge is not None else ""
    return f"scores {score}, not good enough for {cut} ({better} is better{at})"


def _failing(trace: QueryTrace, i: int) -> str:
    """The clause of the where filter that the record at ``i`` fails, shown."""
    from placeborag._filters import failing_clause

    if trace.predicate is None or trace.records is None:
        return shown(trace.where)
    return shown(failing_clause(trace.predicate, trace.records.metadata[i]))


def _position_index(owner: object, ids: tuple[str, ...]) -> dict[str, int]:
    """id -> position in ``ids``, built once and kept on the frozen ``owner``."""
    cached: dict[str, int] | None = owner.__dict__.get("_index_cache")
    if cached is None:
        cached = {doc_id: i for i, doc_id in enumerate(ids)}
        object.__setattr__(owner, "_index_cache", cached)
    return cached


def record_index(
    ids: Sequence[str],
    id: str,
    occurrence: int | None = None,
    *,
    index: Mapping[str, int] | None = None,
) -> int:
    """The index in ``ids`` of ``id``'s record number ``occurrence`` (0 for its first, 1 for
    the next...), or of its newest record when ``occurrence`` is None.

    An id appears in ``ids`` once per record (several times for one written again under
    ``on_existing_id="duplicate"``). An unknown id raises a :class:`PlaceboragValueError`
    naming the nearest ids, an occurrence the id does not have one naming the ones it has.
    ``index`` (id to its newest index) saves a scan when the caller keeps one.
    """
    from placeborag._errors import PlaceboragValueError
    from placeborag._validation import check_k, unknown_id

    newest = index.get(id) if index is not None else None
    if newest is None:
        newest = next((i for i in range(len(ids) - 1, -1, -1) if ids[i] == id), None)
        if newest is None:
            raise unknown_id(id, ids)
    if occurrence is None:
        return newest
    occurrence = check_k(occurrence, "occurrence", minimum=0)
    found = [i for i in range(newest + 1) if ids[i] == id]
    if occurrence >= len(found):
        raise PlaceboragValueError(
            f"occurrence={shown(occurrence)} must be 0 to {len(found) - 1}: {shown(id)} has "
            f"{len(found)} record(s)"
        )
    return found[occurrence]


_REPEATED: dict[object, tuple[object, ...]] = {}


def repeated(value: object, n: int) -> tuple[Any, ...]:
    """``(value,) * n``: the longest one made so far per value is kept (sliced for shorter
    ones), up to 2**21 entries (16 MB of pointers); a longer one is made each time."""
    longest = _REPEATED.get(value, ())
    if len(longest) < n:
        if n > 1 << 21:
            return (value,) * n
        longest = _REPEATED[value] = (value,) * n
    return longest if len(longest) == n else longest[:n]


def _zeros(n: int) -> tuple[int, ...]:
    return repeated(0, n)


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


# -- building a trace from a finished query ------------------------------------------------


def build_trace(
    result: QueryResult, records: StoreRecords, pending: tuple[str, ...] = ()
) -> QueryTrace:
    """The trace of a finished query over the store's records ``records`` (the same table
    version: both are made under the store's lock). ``pending`` are ids written but not yet
    visible (``visibility="manual"``)."""
    table, profile = result.table, result.settings.profile
    rows = table.stored_rows()
    n = rows.size
    index = np.full(table.count, -1, dtype=np.int64)
    index[rows] = np.arange(n)

    def ranks(selected: Sequence[int]) -> np.ndarray:
        out = np.zeros(n, dtype=np.int64)
        pos = index[np.asarray(selected, dtype=np.int64)] if selected else np.zeros(0, np.int64)
        keep = pos >= 0  # orphans are in the index but not stored records
        out[pos[keep]] = np.arange(1, len(selected) + 1)[keep]
        return out

    code = _stage_codes(result, rows)
    cut_rank, rank = ranks(result.window), ranks(result.final)
    if result.post and result.filter_mask is not None:
        code[(cut_rank > 0) & ~result.filter_mask[rows]] = _CODE[DROPPED]
    code[rank > 0] = _CODE[RETURNED]
    cosine, exact, ties = _cosines(result, rows, index, code)
    score = _profile_scores(profile, cosine)
    for i in np.flatnonzero(exact).tolist():  # the reported number, bit for bit
        score[i] = profile.score(float(cosine[i]))
    ideal_rank = ranks(result.ideal) if result.ideal is not None else rank
    counts = {
        "candidates": n,
        "pass filter": int(np.count_nonzero(result.passing[rows])) if n else 0,
        "survive recall": int(np.count_nonzero(result.survivors[rows])) if n else 0,
        "top-k cut": len(result.window),
        "returned": len(result.final),
    }
    qvec = np.array(
        result.query_vector if result.query_vector is not None else np.zeros(table.dimensions or 0),
        dtype=np.float64,
    )
    stage = _STAGE_NAMES[code]
    for array in (stage, score, cosine, rank, cut_rank, ideal_rank, exact, qvec):
        array.flags.writeable = False
    plan = result.plan
    return QueryTrace(
        text=plan.text,
        k=plan.k,
        where=copy_filter(plan.where),
        profile=profile.name,
        metric=profile.metric,
        filter_mode=profile.filter_mode,
        recall=float(result.settings.options.recall),
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
        matches=result.matches,
        counts=counts,
        query_vector=qvec,
        window=result.window_size if result.post else plan.k,
        edges=_edges(result),
        records=records,
        restricted=plan.ids is not None,
        pending=pending,
        predicate=plan.predicate,
    )


def _stage_codes(result: QueryResult, rows: np.ndarray) -> np.ndarray:
    """Every stored record's stage before the ranking (unreachable, filtered, lost, below)."""
    n = rows.size
    code = np.full(n, _CODE[BELOW], dtype=np.intp)
    if not n:
        return code
    reachable = result.reachable[rows]
    code[~reachable] = _CODE[UNREACHABLE]
    if result.filter_mask is not None and not result.post:
        code[reachable & ~result.filter_mask[rows]] = _CODE[FILTERED]
    code[result.passing[rows] & ~result.survivors[rows]] = _CODE[LOST]
    return code


def _cosines(
    result: QueryResult, rows: np.ndarray, index: np.ndarray, code: np.ndarray
) -> tuple[np.ndarray, np.ndarray, list[TieInfo]]:
    """Every record's cosine (the float32 screen, exact wherever the ranking computed it), which
    ones are exact, and the tie groups the ranking met (their records marked tied)."""
    table, profile, n = result.table, result.settings.profile, rows.size
    qfloat = result.query_vector
    # The float32 screen the ranking itself starts from (kept by the table: no second product).
    screen = table.screen(np.asarray(qfloat))[rows] if n and qfloat is not None else None
    cosine = np.zeros(n) if screen is None else screen.astype(np.float64).clip(-1.0, 1.0)
    exact = np.zeros(n, dtype=bool)
    ties: list[TieInfo] = []
    ranking = result.ranking
    if ranking is None:
        return cosine, exact, ties
    known = [(index[r], c) for r, c in ranking.cosines.items() if index[r] >= 0]
    if known:
        pos, values = zip(*known)
        cosine[list(pos)] = values
        exact[list(pos)] = True
    returned = set(result.final)
    for group in ranking.ties:
        assert result.exact is not None
        group_cos = result.exact.cosines(list(group.rows))
        for r in group.rows:
            if index[r] >= 0:
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
    return cosine, exact, ties


def _edges(result: QueryResult) -> tuple[float | None, float | None]:
    """The reported scores at the top-k cut (the last returned) and at the edge of the window
    the index took (the post-filter window), where there is one."""
    ranking = result.ranking
    if ranking is None:
        return None, None
    score = result.settings.profile.score
    cut = score(ranking.cosines[result.final[-1]]) if result.final else None
    edge = score(ranking.cosines[result.window[-1]]) if result.window else None
    return cut, edge


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


def build_explanation(
    result: QueryResult, trace: QueryTrace, unreachable: tuple[str, ...]
) -> QueryExplanation:
    """The full explanation of a query run with every survivor ranked."""
    table = result.table
    ids = table.ids
    alive = np.flatnonzero(result.reachable)
    passing = np.flatnonzero(result.passing)
    survivors = np.flatnonzero(result.survivors)
    passing_set = set(passing.tolist())
    survivor_set = set(survivors.tolist())
    ranking = result.ranking
    ranked = ranking.order if ranking is not None else []
    filter_mask = result.filter_mask
    plan = result.plan
    return QueryExplanation(
        text=plan.text,
        k=plan.k,
        where=copy_filter(plan.where),
        filter_mode=result.settings.profile.filter_mode,
        recall=float(result.settings.options.recall),
        candidates=tuple(ids[r] for r in alive.tolist()),
        filtered_out=tuple(ids[r] for r in alive.tolist() if r not in passing_set),
        recall_lost=tuple(ids[r] for r in passing.tolist() if r not in survivor_set),
        ranked=tuple(ids[r] for r in ranked),
        top_k=tuple(ids[r] for r in result.window),
        post_filter_dropped=tuple(
            ids[r]
            for r in result.window
            if result.post and filter_mask is not None and not filter_mask[r]
        ),
        matches=result.matches,
        cosines={ids[r]: c for r, c in (ranking.cosines.items() if ranking else ())},
        unreachable=unreachable,
        orphans=tuple(table.orphan_of),
        trace=trace,
    )
