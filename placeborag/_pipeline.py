"""One query pipeline: a query is planned once and run once, into one finished result.

:func:`plan_query` checks a query's arguments (text, or a vector with an optional text; ``k``;
``where``; ``ids``) into a :class:`QueryPlan`; :meth:`Pipeline.run` takes the plan through
every stage, in the order a real index takes them::

    candidates -> (pre: filter) -> recall survivors -> top-k cut -> (post: filter) -> matches

into a frozen :class:`QueryResult`. ``query``, ``query_by_vector``, ``trace`` and ``explain``
all read that one result, so they cannot disagree. :class:`Settings` are a store's options,
checked and resolved once when the store is built.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from placeborag._embedding import ModelVectors
from placeborag._errors import PlaceboragTypeError, PlaceboragValueError
from placeborag._filters import Filter, FilterRules, compile_filter, copy_filter, filter_rules
from placeborag._hashing import splitmix64
from placeborag._metadata import check_id, copy_metadata
from placeborag._options import StoreOptions
from placeborag._profiles import Profile, get_profile
from placeborag._querylog import check_query_log
from placeborag._ranking import ExactScores, Ranking, TieRule, float_to_exact, rank
from placeborag._records import RecordTable, text_hash
from placeborag._results import Match
from placeborag._validation import check_choice, check_k, check_share, check_vector, shown

__all__ = ["Pipeline", "QueryPlan", "QueryResult", "Settings", "plan_query"]

_SHUFFLE_SALT = 0x73687566666C6521  # keeps the shuffle stream apart from recall's


@dataclass(frozen=True)
class Settings:
    """A store's options, checked and resolved (the profile with its overrides, the shares as
    exact fractions): made once, when the store is built."""

    options: StoreOptions
    profile: Profile
    recall: Fraction
    orphans: Fraction
    churn: Fraction
    rules: FilterRules  # how the filter treats what engines disagree on
    query_log: int | None  # how many recent queries the store keeps (None: every one)

    @classmethod
    def of(cls, options: StoreOptions) -> Settings:
        """Check every option (in the constructor's order of old, for the same first error)."""
        overrides = {
            name: options[name]
            for name in ("metric", "tie_order", "seed", "on_existing_id", "pad_missing")
            + ("filter_mode",)
            if options[name] is not None
        }
        profile = get_profile(options.profile).with_options(**overrides)
        recall = check_share(options.recall, "recall")
        rules = filter_rules(profile, options.filter_semantics)
        orphans = check_share(options.orphans, "orphans")
        churn = check_share(options.churn, "churn")
        check_choice(options.visibility, "visibility", ("immediate", "manual"))
        query_log = check_query_log(options.query_log)
        return cls(
            options=options,
            profile=profile,
            recall=recall,
            orphans=orphans,
            churn=churn,
            rules=rules,
            query_log=query_log,
        )

    @property
    def filter_mode(self) -> str:
        return self.profile.filter_mode


class QueryPlan(NamedTuple):
    """A query's checked arguments: what to rank, how many, which records may answer.

    ``text`` is the query's name (logged; hashed wherever the store hashes a query) and is
    ``""`` for a vector given without one; ``vector`` is a given query's unit float64 vector
    (None: the store embeds ``text``), ``exact_vector`` its exact integer form. Immutable (a
    named tuple: one is made for every query, and a tuple is the cheapest immutable record).
    """

    text: str
    k: int
    where: dict[str, Any] | None
    predicate: Filter | None
    ids: tuple[str, ...] | None
    salt: int
    vector: np.ndarray | None
    exact_vector: np.ndarray | None
    given: tuple[float, ...] | None  # the given vector as logged (unit length)


def check_ids(ids: object) -> tuple[str, ...] | None:
    """A query's candidate restriction: None, or a list of ids."""
    if ids is None:
        return None
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise PlaceboragTypeError(
            f"ids={shown(ids)} must be a list of ids, not {type(ids).__name__}"
        )
    out = tuple(ids)
    for i, value in enumerate(out):
        check_id(value, f"ids[{i}]")
    return out


def check_context(context: object) -> None:
    if context is not None and not isinstance(context, Mapping):
        raise PlaceboragTypeError(
            f"context={shown(context)} must be a dict or None, not {type(context).__name__}"
        )


def plan_query(
    settings: Settings,
    vectors: ModelVectors,
    dimensions: int | None,
    *,
    text: object,
    vector: object = None,
    k: object = None,
    where: object = None,
    ids: object = None,
) -> QueryPlan:
    """Check a query's arguments into a plan (nothing is embedded for a text query yet)."""
    if vector is None and not isinstance(text, str):
        raise PlaceboragTypeError(f"text={shown(text)} must be a str, not {type(text).__name__}")
    if vector is not None and text is not None and not isinstance(text, str):
        raise PlaceboragTypeError(
            f"text={shown(text)} must be a str or None, not {type(text).__name__}"
        )
    checked_k = check_k(settings.profile.default_k if k is None else k)
    predicate = compile_filter(where, settings.rules)  # type: ignore[arg-type]
    id_tuple = None if ids is None else check_ids(ids)
    unit = exact = given = None
    if vector is not None:
        raw, unit, exact, salt_text = _given_vector(vector, dimensions)
        given = tuple(unit.tolist())
        if text is not None:  # the query's own text decides what is hashed
            salt_text = str(text)
            if vectors.is_query_vector(raw, salt_text):
                # The text's own vector (embed_query(text)): ranked as query(text), with the
                # embedder's exact integer form, not the float's.
                unit = exact = None
    else:
        salt_text = str(text)
    return QueryPlan(
        text="" if text is None else str(text),
        k=checked_k,
        where=copy_filter(where),
        predicate=predicate,
        ids=id_tuple,
        salt=text_hash(salt_text),
        vector=unit,
        exact_vector=exact,
        given=given,
    )


def _given_vector(
    vector: object, dimensions: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """A given query vector: as given (float64), unit, its exact form, and its bytes' hex."""
    array: np.ndarray = check_vector(vector, "vector")
    if dimensions is not None and array.shape[0] != dimensions:
        raise PlaceboragValueError(
            f"vector of shape {array.shape} must be one-dimensional with the store's "
            f"{dimensions} dimensions"
        )
    raw = array
    with np.errstate(over="ignore", under="ignore"):  # an overflow is rescaled below
        norm = float(np.sqrt(np.dot(array, array)))  # check_vector: every entry finite
    if not math.isfinite(norm) or norm == 0.0:
        scaled = float(np.abs(array).max())
        if scaled > 0:  # over/underflow of the norm: rescale
            array = array / scaled
            norm = float(np.sqrt(np.dot(array, array)))
        else:
            raise PlaceboragValueError("vector must have a nonzero norm; it is all zeros")
    return raw, array / norm, float_to_exact(array[None, :])[0], array.tobytes().hex()


class QueryResult(NamedTuple):
    """A finished query: every stage's rows over one table, and the matches.

    Masks are over the table's rows ``[0, count)``: ``reachable`` (alive, linked, inside an
    ``ids`` restriction), ``filter_mask`` (reachable and matching ``where``; None without one),
    ``passing`` (what the recall stage saw), ``survivors`` (what it kept). ``window`` is the top
    of the ranking the index took (``k`` rows, or the post-filter window), ``final`` the rows
    returned. ``ideal`` is what a perfect index (recall 1) returns, when the run was traced
    under recall below 1. ``query_vector`` is None when nothing needed it. Immutable (a named
    tuple, as :class:`QueryPlan`).
    """

    plan: QueryPlan
    settings: Settings
    table: RecordTable
    post: bool
    window_size: int
    reachable: np.ndarray
    filter_mask: np.ndarray | None
    passing: np.ndarray
    survivors: np.ndarray
    ranking: Ranking | None
    exact: ExactScores | None
    window: tuple[int, ...]
    final: tuple[int, ...]
    matches: tuple[Match, ...]
    query_vector: np.ndarray | None
    ideal: tuple[int, ...] | None


class Pipeline:
    """Runs plans against a store's table with the store's settings and embedding strategy."""

    def __init__(self, settings: Settings, vectors: ModelVectors) -> None:
        self.settings = settings
        self.vectors = vectors

    def run(
        self,
        plan: QueryPlan,
        table: RecordTable,
        *,
        full: bool = False,
        traced: bool = False,
        recall: Fraction | None = None,
    ) -> QueryResult:
        """Take ``plan`` through every stage (ranking all survivors when ``full``; with the
        query vector and the ideal ranking a trace needs when ``traced``)."""
        profile = self.settings.profile
        share = self.settings.recall if recall is None else recall
        count = table.count
        reachable = self._reachable(plan, table)
        post = plan.predicate is not None and profile.filter_mode == "post"
        # A post-filtering index filters a window of candidates (ef_search), not just the top k.
        window_size = max(plan.k, profile.post_filter_candidates) if post else plan.k
        filter_mask = None
        passing = reachable
        if plan.predicate is not None and count:
            filter_mask = plan.predicate.mask(table.columns()) & reachable
            if not post:
                passing = filter_mask
        survivors = passing
        if share.numerator < share.denominator and count:
            survivors = np.zeros(count, dtype=bool)
            survivors[self._recall_survivors(table, plan.salt, np.flatnonzero(passing), share)] = (
                True
            )
        ranking = exact = qvector = qexact = qnorm = None
        window: list[int] = []
        final: list[int] = []
        ranked = bool(count) and bool(survivors.any())
        if ranked or (traced and count):
            if plan.vector is not None and plan.exact_vector is not None:
                qvector, qexact, qnorm = plan.vector, plan.exact_vector, None
            else:
                qvector, qexact, qnorm = self.vectors.query(plan.text, table.dimensions)
        if ranked:
            assert qvector is not None and qexact is not None
            exact = ExactScores(table, qexact, self.vectors.by_text, qnorm)
            shuffled = profile.tie_order == "shuffle"
            ties = TieRule(table, profile.tie_order, self._shuffle_salt(plan) if shuffled else 0)
            mask = None if (survivors.all() and not table.holes) else survivors
            ranking = rank(table, mask, qvector, exact, count if full else window_size, ties)
            window = ranking.order[:window_size]
            final = window
            if post:
                assert filter_mask is not None
                final = [r for r in window if filter_mask[r]][: plan.k]
        ideal = None
        if traced and share.numerator < share.denominator:
            ideal = self.run(plan, table, recall=Fraction(1)).final
        return QueryResult(
            plan=plan,
            settings=self.settings,
            table=table,
            post=post,
            window_size=window_size,
            reachable=reachable,
            filter_mask=filter_mask,
            passing=passing,
            survivors=survivors,
            ranking=ranking,
            exact=exact,
            window=tuple(window),
            final=tuple(final),
            matches=self._matches(table, final, ranking, plan.k),
            query_vector=qvector,
            ideal=ideal,
        )

    @staticmethod
    def _reachable(plan: QueryPlan, table: RecordTable) -> np.ndarray:
        reachable = table.reachable()
        if plan.ids is not None:
            restricted = np.zeros(table.count, dtype=bool)
            restricted[[table.row_of[i] for i in plan.ids if i in table.row_of]] = True
            reachable = reachable & restricted
        return reachable

    def _shuffle_salt(self, plan: QueryPlan) -> int:
        """The salt of the shuffle tie order (the only tie order that reads one)."""
        profile = self.settings.profile
        return int(
            splitmix64(np.array([plan.salt ^ profile.seed ^ _SHUFFLE_SALT], dtype=np.uint64))[0]
        )

    @staticmethod
    def _recall_survivors(
        table: RecordTable, salt: int, rows: np.ndarray, share: Fraction
    ) -> np.ndarray:
        """Exactly floor(recall * n) of the n candidate rows, chosen by hashing (query, id)."""
        keep = math.floor(share * rows.size)
        if keep >= rows.size:
            return rows
        if keep == 0:
            return rows[:0]
        keys = splitmix64(table.id_hash[rows] ^ np.uint64(salt))
        # Order by (hash, insertion sequence): the sequence only matters on a 64-bit collision.
        order = np.lexsort((table.seq[rows], keys))
        return np.sort(rows[order[:keep]])

    def _matches(
        self, table: RecordTable, final: list[int], ranking: Ranking | None, k: int
    ) -> tuple[Match, ...]:
        profile = self.settings.profile
        cosines = ranking.cosines if ranking is not None else {}
        ids, texts, metas, score = table.ids, table.texts, table.metas, profile.score
        matches = tuple(
            [Match(ids[r], texts[r], copy_metadata(metas[r]), score(cosines[r])) for r in final]
        )
        if profile.pad_missing and len(matches) < k:  # FAISS fills every slot it cannot
            matches += (Match("-1", "", {}, profile.pad_score),) * (k - len(matches))
        return matches
