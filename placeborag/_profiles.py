"""Backend profiles: what a fake store reports, and how it behaves, to look like one real engine.

A profile never changes *which* documents are relevant or their relevance order: that is the
cosine ranking, decided in exact arithmetic by the store. Every vector the store holds is
unit-normalised, so each supported metric is a monotone function of the cosine (``l2`` squared is
``2 - 2 cos``, ``ip`` is ``cos``) and only the reported number and its direction change. A profile
decides that number, the order of exact ties, the default ``k``, what writing an existing id
does, whether ``where`` applies before or after the top-k cut, whether missing results are padded,
and, when engine filter semantics are asked for, how ``$ne``/``$nin`` treat a record without the
key and what an empty ``$in``/``$nin`` list does.

``docs/profiles.md`` lists every profile with the engine version it was measured against, and
every difference from that engine.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from placeborag._errors import PlaceboragTypeError, PlaceboragValueError
from placeborag._validation import shown

__all__ = [
    "EMPTY_IN",
    "FILTER_MODES",
    "METRICS",
    "ON_EXISTING_ID",
    "PROFILES",
    "TIE_ORDERS",
    "MetricScore",
    "Profile",
    "get_profile",
]

TIE_ORDERS = ("insertion", "reverse", "id", "shuffle")
METRICS = ("cosine", "l2", "ip")
ON_EXISTING_ID = ("replace", "ignore", "duplicate", "move_to_end", "error")
FILTER_MODES = ("pre", "post")
# What an empty $in/$nin list does under engine semantics: refused, or read as the empty set.
EMPTY_IN = ("error", "empty_set")
FLOAT32_MAX = 3.4028234663852886e38  # what FAISS reports for a padded slot


def _choices(values: tuple[str, ...]) -> str:
    return ", ".join(map(repr, values))


def _check_choice(name: str, value: object, allowed: tuple[str, ...], where: str = "") -> str:
    if value not in allowed:
        raise PlaceboragValueError(
            f"{name}={shown(value)} must be one of {_choices(allowed)}{where}"
        )
    return value


# The reported number as a function of the exact cosine of two unit vectors.
def _similarity(cos: float) -> float:
    return cos


def _one_minus(cos: float) -> float:
    return 1.0 - cos


def _negated(cos: float) -> float:
    return -cos


def _squared_l2(cos: float) -> float:
    return max(0.0, 2.0 - 2.0 * cos)


def _l2(cos: float) -> float:
    return math.sqrt(max(0.0, 2.0 - 2.0 * cos))


@dataclass(frozen=True)
class MetricScore:
    """How one engine reports one metric: a label, a direction and the function of the cosine."""

    metric: str
    label: str
    higher_is_better: bool
    score: Callable[[float], float] = field(repr=False, compare=False)


def _metric(metric: str, label: str, score: Callable[[float], float]) -> MetricScore:
    return MetricScore(metric, label, score in (_similarity,), score)


@dataclass(frozen=True)
class Profile:
    """How one backend reports and orders a query's matches, and how it takes writes.

    ``score`` maps the exact cosine of a match to the number the backend reports for ``metric``;
    ``higher_is_better`` says which way it points. ``tie_order`` orders matches whose cosines are
    equal in exact arithmetic: ``"insertion"`` (first written first), ``"reverse"`` (last written
    first), ``"id"`` (ascending id) or ``"shuffle"`` (an order with no rule, fixed by ``seed``
    and the query text, so a test that leans on tie order breaks when the seed changes).
    ``on_existing_id`` is what writing an id that is already stored does: ``"replace"`` in
    place, ``"ignore"`` the new record, ``"duplicate"`` it, ``"move_to_end"`` (replace and count
    it as the newest write) or raise (``"error"``). ``filter_mode`` and
    ``post_filter_candidates`` say when ``where`` applies: before the top-k cut, or after the
    best ``max(k, post_filter_candidates)`` were taken. ``pad_missing`` fills a short answer up to
    ``k`` with id ``"-1"``. ``negation_matches_missing`` is whether the engine's ``$ne``/``$nin``
    match a record without the key, and ``empty_in`` what an empty ``$in``/``$nin`` list does:
    ``"error"`` (refused) or ``"empty_set"`` (``$in: []`` matches no record, ``$nin: []`` every
    record); both are used under ``filter_semantics="engine"`` only.
    """

    name: str
    higher_is_better: bool
    tie_order: str
    default_k: int
    score_label: str
    score: Callable[[float], float] = field(repr=False, compare=False)
    metric: str = "cosine"
    metrics: tuple[MetricScore, ...] = field(default=(), repr=False)
    on_existing_id: str = "replace"
    filter_mode: str = "pre"
    post_filter_candidates: int = 0
    pad_missing: bool = False
    negation_matches_missing: bool = False
    empty_in: str = "error"
    seed: int = 0
    engine: str = field(default="", repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_choice("tie_order", self.tie_order, TIE_ORDERS)
        _check_choice("on_existing_id", self.on_existing_id, ON_EXISTING_ID)
        _check_choice("filter_mode", self.filter_mode, FILTER_MODES)
        _check_choice("empty_in", self.empty_in, EMPTY_IN)
        for name in ("default_k", "post_filter_candidates", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise PlaceboragTypeError(
                    f"{name}={shown(value)} must be an int, not {type(value).__name__}"
                )
        if self.default_k < 1:
            raise PlaceboragValueError(f"default_k={shown(self.default_k)} must be >= 1")
        if self.post_filter_candidates < 0:
            raise PlaceboragValueError(
                f"post_filter_candidates={shown(self.post_filter_candidates)} must be >= 0"
            )
        for name in ("pad_missing", "negation_matches_missing"):
            if not isinstance(getattr(self, name), bool):
                raise PlaceboragTypeError(f"{name}={shown(getattr(self, name))} must be a bool")
        if self.metrics and self.metric not in self.supported_metrics:
            raise PlaceboragValueError(
                f"metric={shown(self.metric)} must be one of {_choices(self.supported_metrics)} "
                f"for profile {shown(self.name)}"
            )

    @property
    def supported_metrics(self) -> tuple[str, ...]:
        """The metrics this profile can report (only ``metric`` when none are declared)."""
        return tuple(m.metric for m in self.metrics) or (self.metric,)

    @property
    def pad_score(self) -> float:
        """The score of a padded slot: the worst float32, as FAISS reports it."""
        return -FLOAT32_MAX if self.higher_is_better else FLOAT32_MAX

    def with_options(self, **changes: Any) -> Profile:
        """A copy with some behaviours changed; ``metric=`` also switches the score it reports.

        Every option is validated, and an unknown one raises, listing the known ones.
        """
        known = [f.name for f in dataclasses.fields(self) if f.name not in ("name", "metrics")]
        for key in changes:
            if key not in known:
                raise PlaceboragTypeError(
                    f"unknown profile option {shown(key)}; expected one of {', '.join(known)}"
                )
        metric = changes.get("metric")
        if metric is not None and metric != self.metric:
            _check_choice(
                "metric", metric, self.supported_metrics, f" for profile {shown(self.name)}"
            )
            chosen = next(m for m in self.metrics if m.metric == metric)
            changes = {
                "higher_is_better": chosen.higher_is_better,
                "score_label": chosen.label,
                "score": chosen.score,
                **changes,
            }
        return dataclasses.replace(self, **changes)


def _profile(name: str, engine: str, metrics: tuple[MetricScore, ...], **behaviour: Any) -> Profile:
    default = metrics[0]
    return Profile(
        name=name,
        higher_is_better=default.higher_is_better,
        score_label=default.label,
        score=default.score,
        metric=default.metric,
        metrics=metrics,
        engine=engine,
        **behaviour,
    )


PROFILES: dict[str, Profile] = {
    "chroma": _profile(
        "chroma",
        "Chroma 1.5 (collection.query, HNSW)",
        (
            _metric("cosine", "cosine distance (1 - cos), lower is better", _one_minus),
            _metric("l2", "squared L2 distance (2 - 2 cos), lower is better", _squared_l2),
            _metric("ip", "inner-product distance (1 - dot), lower is better", _one_minus),
        ),
        tie_order="insertion",
        default_k=10,
        negation_matches_missing=True,
    ),
    "qdrant": _profile(
        "qdrant",
        "Qdrant 1.x (query_points; local mode and the Rust engine)",
        (
            _metric("cosine", "cosine similarity, higher is better", _similarity),
            _metric("l2", "Euclidean distance (not squared), lower is better", _l2),
            _metric("ip", "dot product, higher is better", _similarity),
        ),
        tie_order="id",
        default_k=10,
        negation_matches_missing=True,
        empty_in="empty_set",
    ),
    "faiss": _profile(
        "faiss",
        "FAISS 1.x (IndexIDMap2 over IndexFlatIP / IndexFlatL2)",
        (
            _metric("cosine", "inner product of unit vectors (cos), higher is better", _similarity),
            _metric("l2", "squared L2 distance (2 - 2 cos), lower is better", _squared_l2),
            _metric("ip", "inner product, higher is better", _similarity),
        ),
        tie_order="reverse",
        default_k=10,
        on_existing_id="duplicate",
        pad_missing=True,
    ),
    "lancedb": _profile(
        "lancedb",
        "LanceDB 0.x (table.search, flat scan, prefilter=True)",
        (
            _metric("cosine", "cosine distance (1 - cos), lower is better", _one_minus),
            _metric("l2", "squared L2 distance (2 - 2 cos), lower is better", _squared_l2),
            _metric("ip", "dot distance (1 - dot), lower is better", _one_minus),
        ),
        tie_order="insertion",
        default_k=10,
        on_existing_id="move_to_end",
    ),
    "pgvector": _profile(
        "pgvector",
        # Raw SQL over a table with an HNSW index: INSERT ... ON CONFLICT (id) DO UPDATE, then
        # ORDER BY distance LIMIT k, the WHERE applied to the index's ef_search candidates.
        # langchain's PGVector client is reproduced by options: see docs/profiles.md.
        "PostgreSQL + pgvector, raw SQL (upsert by id; ORDER BY distance LIMIT k over an HNSW "
        "index)",
        (
            _metric("cosine", "cosine distance <=> (1 - cos), lower is better", _one_minus),
            _metric("l2", "Euclidean distance <-> (not squared), lower is better", _l2),
            _metric("ip", "negative inner product <#> (-dot), lower is better", _negated),
        ),
        tie_order="insertion",
        default_k=10,
        on_existing_id="move_to_end",
        filter_mode="post",
        post_filter_candidates=40,
        empty_in="empty_set",
    ),
    "langchain": _profile(
        "langchain",
        "LangChain InMemoryVectorStore (similarity_search_with_score)",
        (_metric("cosine", "cosine similarity, higher is better", _similarity),),
        tie_order="shuffle",
        default_k=4,
        negation_matches_missing=True,
        empty_in="empty_set",
    ),
    "weaviate": _profile(
        "weaviate",
        "Weaviate 1.x (near_vector), modelled from its documentation only",
        (
            _metric("cosine", "cosine distance (1 - cos), lower is better", _one_minus),
            _metric("l2", "squared L2 distance (l2-squared), lower is better", _squared_l2),
            _metric("ip", "negative dot product (-dot), lower is better", _negated),
        ),
        tie_order="id",
        default_k=10,
        negation_matches_missing=True,
    ),
}


def get_profile(profile: str | Profile) -> Profile:
    """A profile by name (or the profile itself)."""
    if isinstance(profile, Profile):
        return profile
    if not isinstance(profile, str):
        raise PlaceboragTypeError(
            f"profile={shown(profile)} must be a profile name or a Profile, not "
            f"{type(profile).__name__}"
        )
    try:
        return PROFILES[profile]
    except KeyError:
        raise PlaceboragValueError(
            f"profile={shown(profile)} must be one of {_choices(tuple(PROFILES))}"
        ) from None
