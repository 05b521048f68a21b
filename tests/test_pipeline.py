"""One query pipeline: query, query_by_vector, trace, explain and records describe one store.

The property test drives generated write sequences over every profile and option and checks
that what inspection reports is what the query did; the regression tests are the cases a
real application met, each of which failed before the pipeline was one.
"""

from __future__ import annotations

import ast
import copy
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import placeborag
from placeborag import (
    Embedder,
    ExactEmbedder,
    FakeEmbedder,
    FakeVectorStore,
    PlaceboragTypeError,
    PlaceboragValueError,
    RetrievalTimeout,
    StoreOptions,
    WriteError,
)

PACKAGE = Path(placeborag.__file__).parent
WORDS = ["refund", "policy", "parcel", "shipping", "password", "reset", "sale", "days"]
LANGS = ["hu", "en", "de"]

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
doc_ids = st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"])
metas = st.one_of(
    st.none(), st.fixed_dictionaries({"lang": st.sampled_from(LANGS), "n": st.integers(0, 3)})
)
writes = st.one_of(
    st.tuples(st.just("upsert"), doc_ids, texts, metas),
    st.tuples(st.just("delete"), doc_ids),
    st.tuples(st.just("refresh")),
)
options = st.fixed_dictionaries(
    {
        "profile": st.sampled_from(sorted(placeborag.PROFILES)),
        "filter_mode": st.sampled_from([None, "pre", "post"]),
        "recall": st.sampled_from([1.0, 0.7, 0.5, 1 / 3]),
        "visibility": st.sampled_from(["immediate", "manual"]),
        "tie_order": st.sampled_from([None, "insertion", "reverse", "id", "shuffle"]),
        "on_existing_id": st.sampled_from([None, "replace", "ignore", "duplicate", "move_to_end"]),
        "filter_semantics": st.sampled_from(["strict", "engine"]),
        "orphans": st.sampled_from([0.0, 0.5]),
        "churn": st.sampled_from([0.0, 0.5]),
    }
)
wheres = st.one_of(
    st.none(),
    st.fixed_dictionaries({"lang": st.sampled_from(LANGS)}),
    st.fixed_dictionaries({"n": st.fixed_dictionaries({"$gte": st.integers(0, 3)})}),
)


def _apply(store: FakeVectorStore, ops: list[tuple]) -> None:
    for op in ops:
        if op[0] == "upsert":
            store.upsert(op[1], op[2], op[3])
        elif op[0] == "delete":
            store.delete(op[1])
        else:
            store.refresh()


def _returned_records(trace: placeborag.QueryTrace) -> list[str]:
    """The ids of a query's matches that are stored records (not orphans or padding)."""
    stored = set(trace.ids)
    return [m.id for m in trace.matches if m.id in stored]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    opts=options,
    ops=st.lists(writes, max_size=14),
    query=texts,
    k=st.integers(1, 6),
    where=wheres,
    by_vector=st.booleans(),
    named=st.booleans(),
)
def test_trace_explain_and_records_agree_with_the_query_exactly(
    opts, ops, query, k, where, by_vector, named
):
    store = FakeVectorStore(**opts)
    _apply(store, ops)
    if by_vector:
        vector = store.embed_query(query) * 3.0  # not the text's own vector: ranked as given
        form = {"vector": vector, "text": query if named else None}
        matches = store.query_by_vector(vector, k, where, text=form["text"])
    else:
        form = {"text": query}
        matches = store.query(query, k, where)
    trace = store.trace(k=k, where=where, **form)
    explanation = store.explain(k=k, where=where, **form)
    records = store.records()

    assert trace.matches == tuple(matches) == explanation.matches
    assert list(trace.ids_at("returned")) == _returned_records(trace)
    assert trace.ids == records.ids  # aligned with every stored record, duplicates included
    assert len(records.ids) == len(set(records.keys))
    ranked = sorted(np.flatnonzero(trace.rank > 0).tolist(), key=lambda i: trace.rank[i])
    stored = set(records.ids)
    assert [(records.ids[i], records.texts[i]) for i in ranked] == [
        (m.id, m.text) for m in matches if m.id in stored
    ]
    assert all(trace.stage[i] == "returned" for i in ranked)
    assert [m.id for m in matches if m.id != "-1"] == [
        m.id for m in explanation.matches if m.id != "-1"
    ]
    assert set(trace.ids_at("lost to recall")) <= set(explanation.recall_lost)
    assert set(trace.ids_at("filtered out")) <= set(explanation.filtered_out)
    assert trace.counts["returned"] == len([m for m in matches if m.id != "-1"])
    for doc_id in set(records.ids):
        assert isinstance(trace.why(doc_id), str)


@settings(max_examples=60, deadline=None)
@given(opts=options, ops=st.lists(writes, max_size=10), query=texts, k=st.integers(1, 5))
def test_query_by_a_texts_own_vector_is_query_of_the_text(opts, ops, query, k):
    store = FakeVectorStore(**opts)
    _apply(store, ops)
    vector = store.embed_query(query)
    assert store.query_by_vector(vector, k, text=query) == store.query(query, k)
    assert store.trace(query, k).matches == store.trace(vector=vector, text=query, k=k).matches


# -- duplicates are visible (the shared-id ingestion of a real RAG service) ------------------


def _duplicated() -> FakeVectorStore:
    store = FakeVectorStore(on_existing_id="duplicate")
    store.upsert("f", "refund policy for orders", {"file": "terms.pdf"})
    store.upsert("g", "refund policy exceptions", {"file": "faq.pdf"})
    store.upsert("f", "refund policy in detail", {"file": "terms.pdf"})
    return store


def test_every_record_of_a_duplicated_id_is_in_records_and_the_trace():
    store = _duplicated()
    returned = [m.id for m in store.query("refund policy", k=3)]
    assert sorted(returned) == ["f", "f", "g"]
    records = store.records()
    assert records.ids == ("f", "g", "f")
    assert records.keys == (("f", 0), ("g", 0), ("f", 1))
    assert records.positions("f") == (0, 2)
    assert records.position("f") == 2  # the newest, the one get() returns
    assert store.get("f").text == "refund policy in detail"
    trace = store.trace("refund policy", k=3)
    assert list(trace.ids_at("returned")) == returned
    assert len(store) == 2 and store.ids == ["g", "f"]  # each id once, at its newest


def test_a_record_is_found_by_id_and_occurrence_the_same_way_everywhere():
    from placeborag._trace import record_index
    from placeborag.explore import store_rows

    store = _duplicated()
    records, trace, rows = store.records(), store.trace("refund policy", k=3), store_rows(store)
    for occurrence, expected in ((None, 2), (0, 0), (1, 2)):
        assert record_index(records.ids, "f", occurrence) == expected
        assert records.position("f", occurrence=occurrence) == expected
        assert rows.at("f", occurrence) == expected
        assert records.ids[trace.position("f", occurrence=occurrence)] == "f"
    assert trace.ids == records.ids  # one row per record, in the same order
    for where in (
        lambda o: record_index(records.ids, "f", o),
        lambda o: records.position("f", occurrence=o),
        lambda o: trace.position("f", occurrence=o),
        lambda o: rows.at("f", o),
    ):
        with pytest.raises(PlaceboragValueError, match=r"occurrence=2 must be 0 to 1: 'f' has 2"):
            where(2)
        with pytest.raises(PlaceboragValueError, match="occurrence=-1"):
            where(-1)
        with pytest.raises(PlaceboragTypeError, match="occurrence=True"):
            where(True)
    for where in (
        lambda: record_index(records.ids, "ff"),
        lambda: records.position("ff"),
        lambda: trace.position("ff"),
        lambda: rows.at("ff"),
    ):
        with pytest.raises(PlaceboragValueError, match=r"unknown id 'ff'.*did you mean 'f'"):
            where()


@settings(max_examples=300, deadline=None)
@given(
    ids=st.lists(st.sampled_from(["a", "b", "c"]), max_size=8),
    wanted=st.one_of(st.sampled_from(["a", "b", "c", "", "A"]), st.integers(), st.none()),
    occurrence=st.one_of(
        st.none(), st.integers(-3, 9), st.booleans(), st.floats(), st.text(max_size=2)
    ),
)
def test_record_index_finds_the_record_or_refuses_by_name(ids, wanted, occurrence):
    from placeborag import PlaceboragError
    from placeborag._trace import record_index

    places = [i for i, value in enumerate(ids) if value == wanted]
    try:
        found = record_index(tuple(ids), wanted, occurrence)
    except PlaceboragError as error:
        assert not places or not (type(occurrence) is int and 0 <= occurrence < len(places)), error
        return
    assert places and found == (places[-1] if occurrence is None else places[occurrence])


def test_deleting_a_duplicated_id_removes_every_record_of_it():
    store = _duplicated()
    store.delete("f")
    assert store.records().ids == ("g",)
    assert [m.id for m in store.query("refund policy", k=3)] == ["g"]


# -- a query made by vector can be explained --------------------------------------------------


@pytest.mark.parametrize("opts", [{"recall": 0.5}, {"tie_order": "shuffle"}])
def test_trace_and_explain_take_the_vector_the_app_queried_with(opts):
    store = FakeVectorStore(**opts)
    store.upsert_many([f"h{i}" for i in range(8)], ["refund policy"] * 4 + ["parcel"] * 4)
    vector = np.asarray(store.embed_query("refund policy rules")) + 0.01
    matches = store.query_by_vector(vector, k=3, text="where is my refund")
    trace = store.trace("where is my refund", k=3, vector=vector)
    explanation = store.explain("where is my refund", k=3, vector=vector)
    assert trace.matches == tuple(matches) == explanation.matches
    unnamed = store.query_by_vector(vector, k=3)
    assert store.trace(vector=vector, k=3).matches == tuple(unnamed)


def test_trace_refuses_a_query_with_neither_text_nor_vector():
    store = FakeVectorStore()
    with pytest.raises(PlaceboragTypeError, match=r"text=None must be a str"):
        store.trace(k=2)


# -- the why names the stage that stopped a record -------------------------------------------


def _post_filtered() -> FakeVectorStore:
    store = FakeVectorStore(profile="pgvector", filter_mode="post")
    docs = [f"refund policy clause {i}" for i in range(50)]
    langs = ["en"] * 45 + ["hu"] * 5
    store.upsert_many([f"d{i:02d}" for i in range(50)], docs, [{"lang": x} for x in langs])
    return store


def test_the_why_under_post_filtering_names_the_window_not_the_top_k():
    store = _post_filtered()
    trace = store.trace("refund policy clause 7", k=4, where={"lang": "hu"})
    assert trace.window == 40
    below = trace.ids_at("below the cut")[0]
    why = trace.why(below)
    assert "post-filter window of the 40 best candidates" in why
    assert f"{trace.window_score:.4f}" in why
    ranked = sorted(trace.score[trace.cut_rank > 0])
    assert trace.window_score == ranked[-1]  # lower is better: the 40th is the worst kept
    dropped = trace.ids_at("dropped by post-filter")[0]
    assert "window of 40 candidates" in trace.why(dropped)
    assert "{'lang': 'hu'}" in trace.why(dropped)


def test_the_why_names_the_cut_the_filter_clause_recall_ties_and_visibility():
    store = FakeVectorStore(recall=0.5, visibility="manual")
    store.upsert_many(
        ["a", "b", "c", "d", "e"],
        ["refund policy", "refund policy", "refund", "parcel", "refund policy rules"],
        [{"lang": "en"}, {"lang": "en"}, {"lang": "hu"}, {"lang": "en"}, {"lang": "en"}],
    )
    store.refresh()
    store.upsert("late", "refund policy")
    trace = store.trace("refund policy", k=1, where={"lang": "en"})
    assert "fails the where filter at {'lang': 'en'}" in trace.why("c")
    lost = trace.ids_at("lost to recall")
    assert lost and "recall 0.5" in trace.why(lost[0])
    assert "not visible yet" in trace.why("late")
    with pytest.raises(PlaceboragValueError, match="unknown id 'nope'"):
        trace.why("nope")
    ties = FakeVectorStore(tie_order="id")
    ties.upsert_many(["b", "a", "c"], ["refund policy"] * 3)
    tied = ties.trace("refund policy", k=1)
    assert "the tie rule (id) kept 'a'" in tied.why("b")
    below = FakeVectorStore()
    below.upsert_many(["a", "b"], ["refund policy", "parcel"])
    assert "not good enough for the top-1 cut" in below.trace("refund policy", 1).why("b")


def test_the_why_of_a_nested_filter_names_the_failing_condition():
    store = FakeVectorStore()
    store.upsert("a", "refund", {"lang": "en", "year": 2020})
    trace = store.trace("refund", 1, {"$and": [{"lang": "en"}, {"year": {"$gte": 2024}}]})
    assert "{'year': {'$gte': 2024}}" in trace.why("a")


# -- writes can fail on purpose --------------------------------------------------------------


def _snapshot(store: FakeVectorStore) -> tuple:
    records = store.records()
    return (
        records.keys,
        records.texts,
        tuple(map(dict, records.metadata)),
        records.vectors.tobytes(),
        store.pending_writes,
        store.orphaned_ids,
        store.unreachable_ids,
        [m.id for m in store.query("refund policy", k=8)],
    )


def _writes_of(store: FakeVectorStore) -> dict:
    vectors = FakeEmbedder(dimensions=8).embed_array(["x", "y"])
    return {
        "upsert": lambda: store.upsert("new", "refund policy new"),
        "upsert_many": lambda: store.upsert_many(["n1", "a"], ["refund", "policy"]),
        "delete": lambda: store.delete(["a"]),
        "upsert_vectors": lambda: store.upsert_vectors(["v1", "v2"], vectors),
    }


@pytest.mark.parametrize("write", ["upsert", "upsert_many", "delete"])
def test_a_failed_write_raises_and_leaves_the_store_exactly_as_it_was(write):
    store = FakeVectorStore(orphans=0.5, churn=0.5)
    store.upsert_many(["a", "b"], ["refund policy", "parcel"], [{"n": 1}, {"n": 2}])
    before = _snapshot(store)
    store.fail_next_write()
    with pytest.raises(WriteError, match=r"injected by fail_next_write\(\)"):
        _writes_of(store)[write]()
    assert _snapshot(store) == before
    _writes_of(store)[write]()  # one failure, spent
    assert _snapshot(store) != before


def test_fail_next_write_covers_upsert_vectors_and_counts_times():
    store = FakeVectorStore(embedder=_Model(8))
    store.fail_next_write(ConnectionError("pgbouncer went away"), times=2)
    vectors = np.eye(8)[:2]
    for _ in range(2):
        with pytest.raises(ConnectionError, match="pgbouncer"):
            store.upsert_vectors(["a", "b"], vectors)
    assert len(store) == 0
    store.upsert_vectors(["a", "b"], vectors)
    assert store.ids == ["a", "b"]


def test_a_write_failure_never_fails_a_query_and_a_query_failure_never_a_write():
    store = FakeVectorStore()
    store.fail_next_write()
    store.fail_next_query()
    with pytest.raises(RetrievalTimeout):
        store.query("refund")
    with pytest.raises(WriteError):
        store.upsert("a", "refund")
    store.upsert("a", "refund")
    assert [m.id for m in store.query("refund")] == ["a"]


def test_calls_that_change_nothing_spend_no_write_failure():
    store = FakeVectorStore()
    store.upsert("a", "refund")
    store.fail_next_write()
    with pytest.raises(PlaceboragTypeError):
        store.upsert("b", None)  # type: ignore[arg-type]
    store.upsert_many([], [])
    assert store.delete("missing") is False
    with pytest.raises(WriteError):
        store.upsert("b", "parcel")


def test_fail_next_write_checks_its_arguments_before_queueing():
    store = FakeVectorStore()
    with pytest.raises(PlaceboragTypeError, match=r"error='boom' must be an exception"):
        store.fail_next_write("boom")  # type: ignore[arg-type]
    with pytest.raises(PlaceboragValueError, match=r"times=0 must be >= 1"):
        store.fail_next_write(times=0)
    store.upsert("a", "refund")  # nothing was queued
    assert store.ids == ["a"]


store_ops = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), st.lists(doc_ids, min_size=1, max_size=3, unique=True)),
        st.tuples(st.just("delete"), st.lists(doc_ids, min_size=1, max_size=3, unique=True)),
        st.tuples(st.just("fail"), st.integers(1, 2)),
        st.tuples(st.just("refresh")),
    ),
    max_size=16,
)


@settings(max_examples=120, deadline=None)
@given(opts=options, ops=store_ops)
def test_failed_writes_leave_the_store_as_if_they_were_never_made(opts, ops):
    """Replaying only the writes that succeeded on a fresh store gives the same store."""
    store = FakeVectorStore(**opts)
    replay = FakeVectorStore(**opts)
    for op in ops:
        if op[0] == "fail":
            store.fail_next_write(times=op[1])
            continue
        if op[0] == "refresh":
            store.refresh()
            replay.refresh()
            continue
        if op[0] == "upsert":
            call = lambda s, ids=op[1]: s.upsert_many(ids, [f"refund {i}" for i in ids])  # noqa: E731
        else:
            call = lambda s, ids=op[1]: s.delete(ids, missing_ok=True)  # noqa: E731
        try:
            call(store)
        except WriteError:
            continue
        call(replay)
    assert _snapshot(store) == _snapshot(replay)


# -- the embedder contract ---------------------------------------------------------------------


class _Model:
    """An embedder of the plain protocol only: a model's float vectors."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions

    def embed_batch(self, texts):
        return [FakeEmbedder(dimensions=self.dimensions).embed(t) for t in texts]


class _Subclassed(FakeEmbedder):
    """A user's FakeEmbedder subclass (a logging wrapper, say)."""

    __slots__ = ()


def test_the_fake_embedder_implements_the_exact_extension_and_a_model_only_the_protocol():
    assert isinstance(FakeEmbedder(), ExactEmbedder)
    assert isinstance(_Subclassed(), ExactEmbedder)
    assert isinstance(_Model(4), Embedder) and not isinstance(_Model(4), ExactEmbedder)


class _ExactButOneMethodNone(FakeEmbedder):
    """Switches off part of the exact extension: no longer an ExactEmbedder."""

    __slots__ = ()
    embed_into = None  # type: ignore[assignment]


class _NoDimensions:
    """The exact methods without the ``dimensions`` data member."""

    def __init__(self) -> None:
        inner = FakeEmbedder(dimensions=8)
        for name in ("embed_batch", "exact_vectors", "exact_query", "embed_rows", "embed_into"):
            setattr(self, name, getattr(inner, name))


def test_the_store_chooses_its_strategy_as_isinstance_against_the_protocols_answers():
    from unittest.mock import Mock

    from placeborag._embedding import ExactVectors, ModelVectors, vectors_for

    for embedder in (
        FakeEmbedder(),
        _Subclassed(),
        _Model(4),
        _ExactButOneMethodNone(),
        _NoDimensions(),
        Mock(),  # every attribute exists: both answers say exact
        Mock(spec=["embed_batch", "dimensions"]),
    ):
        strategy = vectors_for(embedder)
        if isinstance(embedder, ExactEmbedder):
            assert type(strategy) is ExactVectors, embedder
        else:
            assert isinstance(embedder, Embedder) and type(strategy) is ModelVectors, embedder
    with pytest.raises(PlaceboragTypeError, match="must have an embed_batch"):
        vectors_for(object())


def test_a_fake_embedder_subclass_keeps_exact_ties():
    texts = ["refund policy", "refund policy", "refund policy"]
    for embedder in (FakeEmbedder(), _Subclassed()):
        store = FakeVectorStore(embedder=embedder, profile="qdrant")
        store.upsert_many(["c", "a", "b"], texts)
        trace = store.trace("refund policy", k=2)
        assert [m.id for m in store.query("refund policy", k=2)] == ["a", "b"]  # ties by id
        assert trace.ties and trace.ties[0].ids == ("a", "b", "c")
    with pytest.raises(PlaceboragTypeError, match="upsert_vectors"):
        FakeVectorStore(embedder=_Subclassed()).upsert_vectors(["a"], [[1.0, 0.0]])


EMBEDDER_PRIVATES = {"_embed_ints", "_embed_query", "_embed_floats", "_embed_into", "_embed_exact"}


def test_the_store_never_checks_the_embedders_class_or_calls_its_private_methods():
    sources = [PACKAGE / name for name in ("_store.py", "_storage.py", "_pipeline.py")]
    sources.append(PACKAGE / "_embedding.py")
    for path in sources:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                for side in (node.left, *node.comparators):
                    if isinstance(side, ast.Call) and getattr(side.func, "id", None) == "type":
                        pytest.fail(f"{path.name}:{node.lineno} compares a type()")
            if isinstance(node, ast.Attribute) and node.attr in EMBEDDER_PRIVATES:
                pytest.fail(f"{path.name}:{node.lineno} reads the embedder's {node.attr}")
            if isinstance(node, ast.Name) and node.id == "FakeEmbedder":
                parent_is_default = path.name == "_store.py"
                assert parent_is_default, f"{path.name}:{node.lineno} names FakeEmbedder"


def test_no_core_function_is_longer_than_80_lines():
    long = []
    for path in sorted(PACKAGE.glob("_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = node.end_lineno - node.lineno + 1
                if size > 80:
                    long.append(f"{path.name}:{node.lineno} {node.name} ({size} lines)")
    assert long == []


def test_the_store_class_is_one_a_reader_can_hold_in_mind():
    source = (PACKAGE / "_store.py").read_text(encoding="utf-8")
    assert len(source.splitlines()) <= 710


# -- one list of options -------------------------------------------------------------------------


def test_store_options_is_the_one_list_of_options():
    store = FakeVectorStore(profile="qdrant", recall=0.7)
    assert isinstance(store.options, StoreOptions)
    assert store.options["recall"] == store.options.recall == 0.7
    assert dict(store.options) == {**dict(StoreOptions()), "profile": "qdrant", "recall": 0.7}
    assert FakeVectorStore(**store.options).options == store.options
    assert tuple(StoreOptions()) == placeborag._options.STORE_OPTIONS
    with pytest.raises(PlaceboragTypeError, match=r"unknown store option 'recal'.*'recall'"):
        store.with_options(recal=0.5)
    assert store.with_options(recall=0.5).options.replace(recall=0.7) == store.options


def test_a_copied_store_keeps_its_records_failures_and_strategy():
    store = FakeVectorStore(on_existing_id="duplicate")
    store.upsert_many(["f", "g"], ["refund policy", "parcel"])
    store.upsert("f", "refund policy two")
    store.fail_next_write()
    for twin in (copy.deepcopy(store), pickle.loads(pickle.dumps(store))):
        assert twin.records().keys == store.records().keys
        assert twin.query("refund policy", k=3) == store.query("refund policy", k=3)
        with pytest.raises(WriteError):
            twin.upsert("h", "x")
        twin.upsert("h", "x")
        assert "h" not in store


def test_a_scenario_of_a_store_with_duplicates_holds_and_rebuilds_every_record():
    pytest.importorskip("pandas")
    from placeborag.explore import Scenario

    store = _duplicated()
    scenario = Scenario.from_store(store, "refund policy")
    assert [d.id for d in scenario.documents] == ["f", "g", "f"]
    rebuilt = scenario.store()
    assert rebuilt.records().keys == store.records().keys
    assert rebuilt.query("refund policy", k=3) == store.query("refund policy", k=3)
