"""Conformance: each profile against its real engine, on the same hand-made vectors.

Every test builds one scenario twice, in the engine and in a FakeVectorStore with the engine's
profile, queries both the same way and records the comparison as one cell of the table that the
session prints at the end. A difference passes only when it is documented
(``_differences.py`` and ``docs/profiles.md``); a documented difference that disappears fails
too, so the documentation cannot go stale.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from _engines import ENGINES, Engine, EngineError, Record, VectorTable

from placeborag import FakeVectorStore, PlaceboragError

pytestmark = pytest.mark.engines

QUERY = "the query"
Q = (1.0, 0.0, 0.0, 0.0)

DISTINCT = [
    Record("d-best", "identical to the query", (1.0, 0.0, 0.0, 0.0)),
    Record("d-0.8", "close", (0.8, 0.6, 0.0, 0.0)),
    Record("d-0.6", "nearby", (0.6, 0.0, 0.8, 0.0)),
    Record("d-0.28", "far", (0.28, 0.96, 0.0, 0.0)),
    Record("d-0", "orthogonal", (0.0, 0.0, 0.6, 0.8)),
    Record("d-neg", "opposed", (-0.6, 0.0, 0.0, 0.8)),
]
TIE = (0.6, 0.8, 0.0, 0.0)
TIES = [
    Record("d-best", "identical to the query", (1.0, 0.0, 0.0, 0.0)),
    *(Record(i, f"tied {i}", TIE) for i in ("c", "a", "b", "10", "2")),
    Record("d-0", "orthogonal", (0.0, 0.0, 0.6, 0.8)),
]
FILTERED = [  # the engine-behaviour data set, each record at its own distance from the query
    Record("f1", "f1", (1.0, 0.0, 0.0, 0.0), {"color": "red", "n": 1}),
    Record("f2", "f2", (0.96, 0.28, 0.0, 0.0), {"color": "blue", "n": 5}),
    Record("f3", "f3", (0.8, 0.6, 0.0, 0.0), {"color": "red", "n": 10}),
    Record("f4", "f4", (0.6, 0.8, 0.0, 0.0), {"n": 7}),
    Record("f5", "f5", (0.28, 0.96, 0.0, 0.0), {"color": "green"}),
    Record("f6", "f6", (0.0, 1.0, 0.0, 0.0), {"color": "red", "n": "7"}),
    Record("f7", "f7", (0.0, 0.6, 0.8, 0.0), None),
]
FILTERS = {
    "$eq": {"color": "red"},
    "$ne, key missing": {"color": {"$ne": "red"}},
    "$nin, key missing": {"color": {"$nin": ["red"]}},
    "$gt, a str value stored": {"n": {"$gt": 4}},
    "int stored, float asked": {"n": 5.0},
    "int stored, str asked": {"n": "7"},
}


def _unit(v: Sequence[float]) -> tuple[float, ...]:
    norm = math.sqrt(sum(x * x for x in v))
    return tuple(x / norm for x in v)


def _spread(n: int, sign: float) -> list[tuple[float, ...]]:
    """n distinct unit vectors near ``sign * Q``, each at its own angle (deterministic)."""
    return [
        _unit((sign * 4.0, 0.01 * (i + 1), 0.003 * ((7 * i) % 11), 0.002 * ((5 * i) % 13)))
        for i in range(n)
    ]


UNDER_RETURN = [
    *(
        Record(f"near-{i}", f"near {i}", v, {"grp": "near"})
        for i, v in enumerate(_spread(290, 1.0))
    ),
    *(Record(f"far-{i}", f"far {i}", v, {"grp": "far"}) for i, v in enumerate(_spread(10, -1.0))),
]


# -- both sides of a scenario ----------------------------------------------------------------------


def fake_store(engine: Engine, records: Sequence[Record], **options: Any) -> FakeVectorStore:
    table = VectorTable({QUERY: Q, **{r.text: r.vector for r in records}})
    store = FakeVectorStore(embedder=table, profile=engine.profile, **options)
    store.upsert_many(
        [r.id for r in records],
        [r.text for r in records],
        [engine.stored_metadata(r.metadata) for r in records],
    )
    return store


def fake_write(store: FakeVectorStore, records: Sequence[Record], engine: Engine) -> Any:
    store.embedder.add(records)
    try:
        store.upsert_many(
            [r.id for r in records],
            [r.text for r in records],
            [engine.stored_metadata(r.metadata) for r in records],
        )
    except PlaceboragError:
        return "error"
    return None


def fake_hits(store: FakeVectorStore, k: int | None, where: Any = None) -> Any:
    try:
        return [(m.id, m.score) for m in store.query(QUERY, k=k, where=where)]
    except PlaceboragError:
        return "error"


def engine_hits(handle: Any, k: int | None, where: Any = None, **options: Any) -> Any:
    try:
        return handle.query(Q, k, where, **options)
    except EngineError:
        return "error"


def ids(hits: Any) -> Any:
    return hits if isinstance(hits, str) else [i for i, _ in hits]


def same_scores(a: Any, b: Any) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return ids(a) == ids(b) and all(abs(x - y) <= 1e-6 for (_, x), (_, y) in zip(a, b))


def as_multiset(a: Any, b: Any) -> bool:
    return Counter(a) == Counter(b) if not isinstance(a, str) else a == b


def _option_label(options: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in options.items())


# -- the checks ------------------------------------------------------------------------------------


def cases(*options: Any) -> list[Any]:
    """Parametrize over the engines for which each option applies (decided at collection)."""
    return [pytest.param(*case, id="-".join(map(str, case))) for case in options]


@pytest.mark.parametrize(
    ("engine", "metric"),
    cases(*((key, m) for key, cls in ENGINES.items() for m in cls.metrics)),
    indirect=["engine"],
)
def test_reported_scores_and_order(engine: Engine, check: Any, metric: str) -> None:
    handle = engine.build(DISTINCT, metric=metric)
    store = fake_store(engine, DISTINCT, metric=metric)
    k = len(DISTINCT)
    check(
        engine,
        f"score and order: {metric}",
        engine_hits(handle, k),
        fake_hits(store, k),
        same=same_scores,
    )


def test_order_of_exact_ties(engine: Engine, check: Any) -> None:
    handle = engine.build(TIES)
    k = len(TIES)
    if engine.tie_rule:
        store = fake_store(engine, TIES)
        check(
            engine,
            "ties: order (k covers them)",
            ids(engine_hits(handle, k)),
            ids(fake_hits(store, k)),
        )
    else:
        store = fake_store(engine, TIES, tie_order="shuffle")
        check(
            engine,
            "ties: order (k covers them)",
            ids(engine_hits(handle, k)),
            ids(fake_hits(store, k)),
            same=as_multiset,
            how="as a set, opt-in tie_order='shuffle'",
        )


def test_ties_cut_by_k(engine: Engine, check: Any) -> None:
    handle = engine.build(TIES)
    store = fake_store(engine, TIES)
    k = 4  # the best record and three of the five ties
    got, want = ids(engine_hits(handle, k)), ids(fake_hits(store, k))
    if engine.tie_rule_when_cut == "order":
        check(engine, "ties: which ones a cutting k keeps", got, want)
    elif engine.tie_rule_when_cut == "set":
        check(
            engine,
            "ties: which ones a cutting k keeps",
            got,
            want,
            same=as_multiset,
            how="as a set",
        )
    else:
        check(
            engine,
            "ties: which ones a cutting k keeps",
            len(got),
            len(want),
            how="count only",
        )


def _rewrite(engine: Engine, write: str, options: dict[str, Any]) -> tuple[Any, Any]:
    base = TIES[:4]  # d-best, then c, a, b tied
    handle = engine.build(base)
    store = fake_store(engine, base, **options)
    # "c", the first of the ties, keeps its vector (does it keep its place among them?); "b"
    # moves to the top (is the new version there, the old one, or both?).
    again = [Record("c", "tied c, rewritten", TIE), Record("b", "tied b, now the best", Q)]
    try:
        getattr(handle, write)(again)
        engine_outcome = ids(engine_hits(handle, 8))
    except EngineError:
        engine_outcome = "error"
    failed = fake_write(store, again, engine)
    fake_outcome = failed or ids(fake_hits(store, 8))
    return engine_outcome, fake_outcome


@pytest.mark.parametrize(
    ("engine", "write"),
    cases(
        *(
            (key, write)
            for key, cls in ENGINES.items()
            for write in ("upsert", "add")
            if write == "upsert" or not cls.add_is_upsert  # one write: the upsert covers it
        )
    ),
    indirect=["engine"],
)
def test_writing_an_existing_id(engine: Engine, check: Any, write: str) -> None:
    options = dict(getattr(engine, f"{write}_option"))
    how = f"opt-in {_option_label(options)}" if options else ""
    engine_outcome, fake_outcome = _rewrite(engine, write, options)
    behaviour = f"existing id: engine's {write}"
    if engine.tie_rule:
        check(engine, behaviour, engine_outcome, fake_outcome, how=how)
    else:
        check(
            engine,
            behaviour,
            engine_outcome,
            fake_outcome,
            same=as_multiset,
            how=", ".join(filter(None, [how, "as a set"])),
        )


def test_k_larger_than_the_collection(engine: Engine, check: Any) -> None:
    records = DISTINCT[:3]
    handle = engine.build(records)
    store = fake_store(engine, records)
    check(
        engine,
        "k > collection size",
        engine_hits(handle, 10),
        fake_hits(store, 10),
        same=same_scores,
    )


def test_k_zero(engine: Engine, check: Any) -> None:
    handle = engine.build(DISTINCT[:3])
    store = fake_store(engine, DISTINCT[:3])
    try:
        engine_outcome = engine_hits(handle, 0)
    except Exception:  # some engines fail outside their documented error types here
        engine_outcome = "error"
    check(engine, "k = 0", ids(engine_outcome), ids(fake_hits(store, 0)))


@pytest.mark.parametrize(
    "engine", cases(*((key,) for key, cls in ENGINES.items() if cls.default_k)), indirect=True
)
def test_default_k(engine: Engine, check: Any) -> None:
    records = [Record(f"r{i}", f"r{i}", _spread(12, 1.0)[i]) for i in range(12)]
    handle = engine.build(records)
    store = fake_store(engine, records)
    check(engine, "default k", len(engine_hits(handle, None)), len(fake_hits(store, None)))


@pytest.mark.parametrize(
    ("engine", "name", "semantics"),
    cases(
        *(
            (key, name, semantics)
            for key, cls in ENGINES.items()
            for name in cls.filter_checks
            for semantics in ("strict", "engine")
        )
    ),
    indirect=["engine"],
)
def test_filter_results(engine: Engine, check: Any, name: str, semantics: str) -> None:
    where = FILTERS[name]
    handle = engine.build(FILTERED)
    store = fake_store(engine, FILTERED, filter_semantics=semantics)
    label = f"filter {name}" + (" (filter_semantics='engine')" if semantics == "engine" else "")
    check(engine, label, ids(engine_hits(handle, 10, where)), ids(fake_hits(store, 10, where)))


EMPTY_LISTS = {
    "$in, empty list": {"color": {"$in": []}},
    "$nin, empty list": {"color": {"$nin": []}},
}


@pytest.mark.parametrize(
    ("engine", "name", "semantics"),
    cases(
        *(
            (key, name, semantics)
            for key, cls in ENGINES.items()
            if cls.filters
            for name in EMPTY_LISTS
            for semantics in ("strict", "engine")
        )
    ),
    indirect=["engine"],
)
def test_an_empty_in_or_nin_list(
    engine: Engine, check: Any, name: str, semantics: str, request: pytest.FixtureRequest
) -> None:
    # Which records match, or "error": $nin [] matches all seven, two of them tied at cos 0,
    # and the engine's order of those two is not the point here.
    where = EMPTY_LISTS[name]
    handle = engine.build(FILTERED)
    store = fake_store(engine, FILTERED, filter_semantics=semantics)
    label = f"filter {name}" + (" (filter_semantics='engine')" if semantics == "engine" else "")
    engine_ids, fake_ids = ids(engine_hits(handle, 10, where)), ids(fake_hits(store, 10, where))
    check(engine, label, engine_ids, fake_ids, same=as_multiset, how="as a set")


def test_filtered_top_k_under_return(engine: Engine, check: Any) -> None:
    where = {"grp": "far"}
    handle = engine.build(UNDER_RETURN)
    for label, engine_options, fake_options in engine.under_return_variants:
        if engine_options.get("index_scan"):
            handle.create_hnsw_index()
        if engine_options.get("allowed") is True:
            engine_options = {"allowed": [r.id for r in UNDER_RETURN if r.metadata == where]}
        store = fake_store(engine, UNDER_RETURN, **fake_options)
        how = f"opt-in {_option_label(fake_options)}" if fake_options else ""
        check(
            engine,
            f"filtered top-k, 10 of 300 match{label}",
            ids(engine_hits(handle, 10, where if engine.filters else None, **engine_options)),
            ids(fake_hits(store, 10, where)),
            how=how,
        )
