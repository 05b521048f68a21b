"""The store's inspection API: records(), with_options(), reembedded(), trace(), query_by_vector().

What a user (and the explorer, and the adapters) relies on: a twin answers exactly as a store
built fresh with its options; a trace agrees with query() on every record; nothing is copied
that need not be, and nothing is shared that must not be.
"""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placeborag import (
    PROFILES,
    STAGES,
    FakeEmbedder,
    FakeVectorStore,
    PlaceboragTypeError,
    PlaceboragValueError,
    QueryTrace,
    RetrievalTimeout,
)

ROOT = pathlib.Path(__file__).resolve().parents[1]

TEXTS = [
    "refund policy for damaged parcels",
    "money back guarantee",
    "refund policy for damaged parcels",  # an exact duplicate: ties under every profile
    "delivery times to hungary",
    "track my parcel",
    "refund policy for damaged parcels",
    "opening hours",
    "csomag kovetes",
]
METAS = [
    {"lang": "en", "year": 2024, "tier": "public"},
    {"lang": "en", "year": 2023},
    {"lang": "hu", "year": 2024, "tier": "internal"},
    {"lang": "hu"},
    {"lang": "en", "year": 2025, "tier": "public"},
    {"year": 2022},
    {"lang": "de", "tier": "internal"},
    None,
]


def _outcome(call):
    """A query's result, or the exception it raised (type and message)."""
    try:
        return call()
    except Exception as exc:  # the comparison is the point: both sides must agree
        return (type(exc), str(exc))


profiles = st.sampled_from(sorted(PROFILES))
filter_modes = st.sampled_from([None, "pre", "post"])
semantics = st.sampled_from(["strict", "engine"])
recalls = st.sampled_from([1.0, 0.9, 0.7, 0.5, 0.3, 0.0])
values = st.one_of(
    st.sampled_from(["en", "hu", "de", "public", "internal"]), st.integers(2021, 2026)
)
leaf = st.one_of(
    st.fixed_dictionaries({"lang": st.sampled_from(["en", "hu", "de"])}),
    st.fixed_dictionaries({"lang": st.fixed_dictionaries({"$ne": st.sampled_from(["en", "hu"])})}),
    st.fixed_dictionaries(
        {
            "tier": st.fixed_dictionaries(
                {"$nin": st.lists(st.sampled_from(["public", "x"]), min_size=1, max_size=2)}
            )
        }
    ),
    st.fixed_dictionaries({"tier": st.fixed_dictionaries({"$ne": st.just("internal")})}),
    st.fixed_dictionaries({"year": st.fixed_dictionaries({"$gte": st.integers(2021, 2026)})}),
    st.fixed_dictionaries(
        {
            "lang": st.fixed_dictionaries(
                {"$in": st.lists(st.sampled_from(["en", "hu", "de"]), min_size=1, max_size=3)}
            )
        }
    ),
)
wheres = st.one_of(
    st.none(),
    leaf,
    st.builds(
        lambda op, xs: {op: xs},
        st.sampled_from(["$and", "$or"]),
        st.lists(leaf, min_size=1, max_size=3),
    ),
)


def _store(**options):
    store = FakeVectorStore(**options)
    store.upsert_many([f"d{i}" for i in range(len(TEXTS))], TEXTS, METAS)
    return store


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    profile=profiles,
    target=profiles,
    filter_mode=filter_modes,
    filter_semantics=semantics,
    recall=recalls,
    where=wheres,
    k=st.integers(1, 9),
    query=st.sampled_from(["refund policy", "parcel", "hours", "csomag"]),
)
def test_with_options_answers_every_query_as_a_freshly_built_store(
    profile, target, filter_mode, filter_semantics, recall, where, k, query
):
    options = {
        "profile": target,
        "filter_mode": filter_mode,
        "filter_semantics": filter_semantics,
        "recall": recall,
    }
    fresh = _store(**options)
    twin = _store(profile=profile).with_options(**options)
    assert _outcome(lambda: twin.query(query, k, where)) == _outcome(
        lambda: fresh.query(query, k, where)
    )
    assert twin.profile == fresh.profile
    assert twin.filter_semantics == fresh.filter_semantics


def test_a_pgvector_twin_under_engine_semantics_lets_ne_match_a_record_without_the_key():
    def build(**options):
        store = FakeVectorStore(**options)
        store.upsert("a", "refund", {"lang": "en"})
        store.upsert("b", "refund", {})
        return store

    where = {"lang": {"$ne": "hu"}}
    fresh = build(profile="pgvector", filter_semantics="engine")
    twin = build().with_options(profile="pgvector", filter_semantics="engine")
    assert [m.id for m in twin.query("refund", 5, where)] == [
        m.id for m in fresh.query("refund", 5, where)
    ]
    assert [m.id for m in fresh.query("refund", 5, where)] == ["a"]


def test_a_twin_shares_the_vectors_and_has_its_own_log_and_failures():
    store = _store()
    store.fail_next_query()
    store.query("q") if False else None
    twin = store.with_options(profile="qdrant")
    assert np.shares_memory(twin.records().vectors, store.records().vectors)
    assert twin.queries == ()
    twin.query("refund policy")  # the source's queued failure is not the twin's
    assert len(twin.queries) == 1 and store.queries == ()
    with pytest.raises(RetrievalTimeout):
        store.query("refund policy")


def test_writes_after_twinning_stay_in_their_own_store():
    store = _store()
    twin = store.with_options(profile="qdrant")
    before = twin.records().vectors.copy()
    store.upsert("d0", "a completely different text")
    store.upsert("new", "another one")
    twin.delete("d1")
    assert "new" not in twin and "d1" in store
    assert twin.get("d0").text == TEXTS[0]
    np.testing.assert_array_equal(twin.records().vectors[: len(before)][[0]], before[[0]])
    assert store.get("d0").text == "a completely different text"


def test_with_options_refuses_an_unknown_option_before_building_anything():
    with pytest.raises(PlaceboragTypeError, match=r"unknown store option.*'profle'"):
        _store().with_options(profle="faiss")
    with pytest.raises(PlaceboragValueError, match="recall=2"):
        _store().with_options(recall=2)


def test_records_is_a_read_only_view_cached_until_the_next_write():
    store = _store()
    records = store.records()
    assert records is store.records()
    assert list(records.ids) == store.ids
    assert records.texts == tuple(TEXTS)
    assert dict(records.metadata[0]) == METAS[0]
    assert records.vectors.dtype == np.float32 and records.vectors.shape == (8, 256)
    with pytest.raises(ValueError):
        records.vectors[0, 0] = 1.0
    with pytest.raises(TypeError):
        records.metadata[0]["lang"] = "xx"  # type: ignore[index]
    kept = records.vectors.copy()
    store.upsert("d0", "rewritten in place")
    assert store.records() is not records
    np.testing.assert_array_equal(records.vectors, kept)  # the old view never changes
    assert records.position("d3") == 3
    with pytest.raises(PlaceboragValueError, match="unknown id 'd33'; did you mean"):
        records.position("d33")


def test_records_skip_deleted_records_and_report_pending_writes():
    store = _store(visibility="manual")
    store.refresh()
    store.delete("d1")
    store.upsert("late", "not visible yet")
    assert store.records().pending == 2
    store.refresh()
    records = store.records()
    assert "d1" not in records.ids and records.ids[-1] == "late"
    assert records.vectors.shape[0] == len(records.ids)


@pytest.mark.parametrize(
    "options",
    [
        {"model_name": "other-model"},
        {"dimensions": 64},
        {"cluster_spread": 0.9, "clusters": {"refund": ["refund policy for damaged parcels"]}},
    ],
)
def test_reembedded_is_what_a_store_built_with_the_new_embedder_holds(options):
    store = _store(profile="qdrant")
    store.delete("d4")
    embedder = FakeEmbedder(**options)
    fresh = FakeVectorStore(embedder=embedder, profile="qdrant")
    fresh.upsert_many([f"d{i}" for i in range(len(TEXTS))], TEXTS, METAS)
    fresh.delete("d4")
    twin = store.reembedded(embedder)
    assert twin.ids == fresh.ids
    np.testing.assert_array_equal(twin.records().vectors, fresh.records().vectors)
    for where in (None, {"lang": "en"}):
        assert twin.query("refund policy", 5, where) == fresh.query("refund policy", 5, where)
    assert store.records().vectors.shape[1] == 256  # the source is untouched


def test_reembedded_reuses_the_vectors_it_is_told_to():
    clusters = {"refund": ["refund policy for damaged parcels"]}
    store = FakeVectorStore(embedder=FakeEmbedder(clusters=clusters, cluster_spread=0.2))
    store.upsert_many([f"d{i}" for i in range(len(TEXTS))], TEXTS, METAS)
    wider = FakeEmbedder(clusters=clusters, cluster_spread=0.8)
    unclustered = [i for i, t in zip(store.ids, TEXTS) if wider.cluster_of(t) is None]
    twin = store.reembedded(wider, reuse=(store, unclustered))
    np.testing.assert_array_equal(twin.records().vectors, store.reembedded(wider).records().vectors)
    with pytest.raises(PlaceboragValueError, match="unknown id 'zz'"):
        store.reembedded(wider, reuse=(store, ["zz"]))


def test_reembedded_reuses_by_id_whatever_the_other_store_s_row_order():
    """The reused vectors are found by id: from a re-embedding of this store (the same rows,
    taken by position), from one of its re-embeddings after a delete, and from a store
    holding the same records written in reverse order, each gives the vectors a fresh
    re-embedding gives."""
    clusters = {"refund": ["refund policy for damaged parcels"]}
    ids = [f"d{i}" for i in range(len(TEXTS))]
    store = FakeVectorStore(embedder=FakeEmbedder(clusters=clusters, cluster_spread=0.2))
    store.upsert_many(ids, TEXTS, METAS)
    wider = FakeEmbedder(clusters=clusters, cluster_spread=0.8)
    want = store.reembedded(wider).records().vectors
    unclustered = [i for i, t in zip(ids, TEXTS) if wider.cluster_of(t) is None]
    middle = store.reembedded(FakeEmbedder(clusters=clusters, cluster_spread=0.5))
    reversed_store = FakeVectorStore(embedder=FakeEmbedder(clusters=clusters))
    reversed_store.upsert_many(ids[::-1], TEXTS[::-1], METAS[::-1])
    holed = store.reembedded(FakeEmbedder(clusters=clusters, cluster_spread=0.5))
    holed.delete([ids[0]])
    for other in (middle, reversed_store, holed):
        reuse = [i for i in unclustered if i != ids[0]] if other is holed else unclustered
        got = store.reembedded(wider, reuse=(other, reuse)).records().vectors
        np.testing.assert_array_equal(got, want)


@st.composite
def stores_and_queries(draw):
    n = draw(st.integers(0, 14))
    pool = ["refund policy", "money back", "parcel", "refund", "hours", "x", "parcel tracking"]
    texts = [draw(st.sampled_from(pool)) for _ in range(n)]
    metas = [draw(st.sampled_from([{"lang": "en"}, {"lang": "hu"}, {}])) for _ in range(n)]
    options = {
        "profile": draw(profiles),
        "filter_mode": draw(filter_modes),
        "recall": draw(recalls),
    }
    deletes = draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=3)) if n else []
    where = draw(st.sampled_from([None, {"lang": "en"}, {"lang": {"$ne": "hu"}}]))
    return (
        texts,
        metas,
        options,
        deletes,
        where,
        draw(st.integers(1, 8)),
        draw(st.sampled_from(pool)),
    )


@settings(max_examples=200, deadline=None)
@given(case=stores_and_queries())
def test_the_trace_agrees_with_query_on_every_record(case):
    texts, metas, options, deletes, where, k, query = case
    store = FakeVectorStore(**options)
    store.upsert_many([f"d{i}" for i in range(len(texts))], texts, metas)
    for i in deletes:
        store.delete([f"d{i}"], missing_ok=True)
    matches = store.query(query, k, where)
    trace = store.trace(query, k, where)
    assert trace.ids == store.records().ids
    returned = [m.id for m in matches if m.id != "-1"]
    assert list(trace.ids_at("returned")) == returned
    assert trace.matches == tuple(matches)
    for m in matches:
        if m.id == "-1":
            continue
        i = trace.ids.index(m.id)
        assert trace.score[i] == m.score  # the reported number, bit for bit
        assert trace.exact[i]
    explained = store.explain(query, k, where)
    assert set(trace.ids_at("filtered out")) == set(explained.filtered_out)
    assert set(trace.ids_at("lost to recall")) == set(explained.recall_lost)
    assert set(trace.ids_at("dropped by post-filter")) == set(explained.post_filter_dropped)
    assert trace.top_k == explained.top_k
    # Every tie group is exactly tied, in the rule's order, and its losers are marked.
    for tie in trace.ties:
        assert tie.rule == store.profile.tie_order
        scores = {trace.score[trace.ids.index(i)] for i in tie.ids if i in trace.ids}
        assert len(scores) <= 1
        for doc_id in tie.ids:
            if doc_id in trace.ids and doc_id not in tie.kept:
                assert trace.stage_of(doc_id) in ("tied at the cut", "dropped by post-filter")
    assert set(trace.stage.tolist()) <= set(STAGES)


def test_identical_texts_at_the_cut_are_a_named_tie_decided_by_the_profiles_rule():
    store = FakeVectorStore(profile="chroma")  # ties by insertion order
    store.upsert_many(["c", "a", "b"], ["refund policy"] * 3)
    trace = store.trace("refund policy", k=2)
    assert isinstance(trace, QueryTrace)
    assert trace.ids_at("returned") == ("c", "a")
    assert trace.stage_of("b") == "tied at the cut"
    (tie,) = trace.ties
    assert tie.ids == ("c", "a", "b") and tie.kept == ("c", "a") and tie.at_cut
    assert tie.rule == "insertion"
    by_id = FakeVectorStore(profile="qdrant")  # ties by id
    by_id.upsert_many(["c", "a", "b"], ["refund policy"] * 3)
    (tie,) = by_id.trace("refund policy", k=2).ties
    assert tie.ids == ("a", "b", "c") and tie.kept == ("a", "b") and tie.rule == "id"


def test_the_trace_is_neither_logged_nor_failed():
    store = _store()
    store.fail_next_query()
    store.trace("refund policy")
    store.explain("refund policy")
    assert store.queries == ()
    with pytest.raises(RetrievalTimeout):
        store.query("refund policy")


def test_the_trace_marks_unreachable_records_and_the_ideal_ranking_under_degraded_recall():
    store = _store(recall=0.5)
    trace = store.trace("refund policy", k=3)
    assert trace.counts["survive recall"] == 4  # floor(0.5 * 8)
    ideal = _store().query("refund policy", 3)
    assert trace.ideal_top_k == tuple(m.id for m in ideal)


def test_query_by_vector_ranks_a_given_vector_like_the_text_it_came_from():
    store = _store(profile="qdrant")
    vector = store.embed_query("refund policy")
    assert store.query_by_vector(vector, 4) == store.query("refund policy", 4)
    assert store.query_by_vector(list(vector * 3.5), 4) == store.query("refund policy", 4)
    assert store.queries[-2].text == "" and store.queries[-2].vector is not None
    with pytest.raises(PlaceboragValueError, match="nonzero norm"):
        store.query_by_vector(np.zeros(256))
    with pytest.raises(PlaceboragValueError, match="shape"):
        store.query_by_vector(np.ones(3))


def test_ids_restricts_the_candidates_and_is_logged():
    store = _store()
    got = store.query("refund policy", 5, ids=["d3", "d4", "nope"])
    assert {m.id for m in got} == {"d3", "d4"}
    assert store.last_query.ids == ("d3", "d4", "nope")
    with pytest.raises(PlaceboragTypeError, match="ids='d3' must be a list of ids"):
        store.query("refund policy", ids="d3")


def test_the_embedders_cluster_accessors_are_public():
    clusters = {"refund": ["refund policy", "money back"], "ship": ["parcel"]}
    embedder = FakeEmbedder(clusters=clusters, cluster_spread=0.3)
    assert embedder.clusters_of(["money back", "other"]) == ["refund", None]
    jitters = embedder.jitters_of(["money back", "other"])
    assert jitters[0] == embedder.jitter_of("money back") and np.isnan(jitters[1])
    anchors = embedder.cluster_anchors()
    assert anchors.shape == (2, embedder.dimensions)
    np.testing.assert_array_equal(anchors[1], embedder.cluster_anchor("ship"))


# -- layers talk through public API ------------------------------------------------------------


def _private_reaches(path: pathlib.Path) -> list[str]:
    """``obj._name`` where ``obj`` is not ``self``/``cls``/``super()`` (dunders aside): a
    reach into another object's private state."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
            continue
        if name.startswith(("_repr_", "_ipython_")) and name.endswith("_"):
            continue  # IPython's rich display protocol (_repr_mimebundle_ ...): public by contract
        if name in ("_esm", "_css"):
            continue  # anywidget's front-end module and style: how a widget is defined, by contract
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        # super()._hook(): a subclass extending its framework's protected hook (LangChain's
        # BaseChatModel is implemented through _generate, _llm_type, ...): its own object.
        if (
            isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "super"
        ):
            continue
        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{name}")
    return found


def test_the_check_catches_a_private_reach(tmp_path):
    bad = ROOT / "placeborag" / "explore" / "_probe_for_test.py"
    try:
        bad.write_text("def f(store):\n    return store._table\n", encoding="utf-8")
        assert _private_reaches(bad) == ["placeborag/explore/_probe_for_test.py:2: ._table"]
    finally:
        bad.unlink()


@pytest.mark.parametrize("layer", ["explore", "integrations"])
def test_no_layer_reaches_a_private_attribute_of_another_object(layer):
    reaches = []
    for path in sorted((ROOT / "placeborag" / layer).rglob("*.py")):
        reaches += _private_reaches(path)
    assert reaches == []


def test_a_store_pickles_with_its_records_log_and_failures():
    import pickle

    store = _store(profile="qdrant", recall=0.7)
    store.query("refund policy", 3)
    store.fail_next_query(times=2)
    copy = pickle.loads(pickle.dumps(store))
    assert copy.ids == store.ids and copy.queries == store.queries
    np.testing.assert_array_equal(copy.records().vectors, store.records().vectors)
    with pytest.raises(RetrievalTimeout):
        copy.query("refund policy")
    copy.upsert("new", "a write after unpickling")  # the lock is back
    assert "new" in copy and "new" not in store


# -- records from vectors: upsert_vectors() and from_vectors() ---------------------------------


def _fake_records(profile="chroma"):
    store = FakeVectorStore(embedder=FakeEmbedder(dimensions=32), profile=profile)
    store.upsert_many([f"id{i}" for i in range(len(TEXTS))], TEXTS)
    return store


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_from_vectors_of_records_ranks_as_the_store_did(profile):
    rng = np.random.default_rng(11)
    raw = np.repeat(rng.normal(size=(6, 12)), 2, axis=0)  # pairs of equal rows: exact ties
    first = FakeVectorStore.from_vectors([f"r{i:02d}" for i in range(12)], raw, profile=profile)
    records = first.records()
    twin = FakeVectorStore.from_vectors(list(records.ids), records.vectors, profile=profile)
    # float32 unit rows are kept bit for bit, so every score and tie comes out the same
    assert twin.records().vectors.tobytes() == records.vectors.tobytes()
    for row in (raw[0], raw[5], rng.normal(size=12)):
        assert twin.query_by_vector(row, 5) == first.query_by_vector(row, 5)


def test_from_vectors_of_a_fake_embedder_s_records_keeps_its_ranking():
    store = _fake_records()
    records = store.records()
    twin = FakeVectorStore.from_vectors(list(records.ids), records.vectors, list(records.texts))
    assert twin.records().vectors.tobytes() == records.vectors.tobytes()
    for text in ("refund policy for damaged parcels", "parcel", "opening hours"):
        got = twin.query_by_vector(store.embed_query(text), 4)
        assert [m.id for m in got] == [m.id for m in store.query(text, 4)]


def test_from_vectors_round_trips_float32_rows_through_plain_floats():
    records = _fake_records().records()
    as_lists = records.vectors.tolist()  # what JSON carries: float64 values of float32 rows
    twin = FakeVectorStore.from_vectors(list(records.ids), as_lists)
    assert twin.records().vectors.tobytes() == records.vectors.tobytes()
    assert twin.records().texts == ("",) * len(records)


def test_upsert_vectors_normalises_other_rows_in_float64():
    rng = np.random.default_rng(7)
    raw = rng.normal(size=(5, 6)) * 1e3
    store = FakeVectorStore.from_vectors(list("abcde"), raw, metadatas=[{"n": i} for i in range(5)])
    expected = (raw / np.linalg.norm(raw, axis=1, keepdims=True)).astype(np.float32)
    assert store.records().vectors.tobytes() == expected.tobytes()
    assert store.records().metadata[2] == {"n": 2}
    best = store.query_by_vector(raw[3], 1)[0]
    assert best.id == "d" and best.score == pytest.approx(0.0, abs=1e-6)  # chroma: distance


def test_a_vectors_only_store_refuses_text_queries_with_a_way_out():
    store = FakeVectorStore.from_vectors(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], ["x", "y"])
    for call in (lambda: store.query("x"), lambda: store.embed_query("x")):
        with pytest.raises(PlaceboragValueError, match=r"query_by_vector.*embedder"):
            call()
    assert [m.id for m in store.query_by_vector([0.2, 1.0], 2)] == ["b", "a"]
    with pytest.raises(PlaceboragTypeError, match="from_vectors\\(\\) makes its own"):
        FakeVectorStore.from_vectors(["a"], [[1.0, 0.0]], embedder=FakeEmbedder())


def test_from_vectors_takes_every_store_option_and_shows_its_records_at_once():
    store = FakeVectorStore.from_vectors(
        ["b", "a"], [[1.0, 0.0], [1.0, 0.0]], profile="qdrant", visibility="manual"
    )
    assert store.options["profile"] == "qdrant" and store.visibility == "manual"
    assert [m.id for m in store.query_by_vector([1.0, 0.0], 2)] == ["a", "b"]  # ties by id
    store.upsert_vectors(["c"], [[1.0, 0.0]])
    assert store.pending_writes == 1 and "c" not in store


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((["a", "b"], [[1.0, 0.0]]), PlaceboragValueError, r"shape \(1, 2\).*\(2, dimensions\)"),
        ((["a"], [[1.0, 0.0, 0.0]]), PlaceboragValueError, "3 columns.*2-dimensional"),
        ((["a", "b"], [[1.0, 0.0], [0.0, 0.0]]), PlaceboragValueError, r"vectors\[1\] \(id 'b'\)"),
        ((["a"], [[np.nan, 1.0]]), PlaceboragValueError, r"vectors\[0\].*finite"),
        ((["a"], [[np.inf, 1.0]]), PlaceboragValueError, r"vectors\[0\].*finite"),
        ((["a", "a"], [[1.0, 0.0], [0.0, 1.0]]), PlaceboragValueError, r"repeats ids\[0\]"),
        ((["a"], [["x", "y"]]), PlaceboragTypeError, "rectangular array of numbers"),
        (("ab", [[1.0, 0.0]] * 2), PlaceboragTypeError, "ids='ab' must be a list"),
        ((["a"], [[1.0, 0.0]], [3]), PlaceboragTypeError, r"texts\[0\]=3 must be a str"),
        ((["a"], [[1.0, 0.0]], None, [{"$x": 1}]), PlaceboragValueError, "not starting with"),
    ],
)
def test_upsert_vectors_checks_everything_before_writing(args, error, message):
    store = FakeVectorStore.from_vectors(["z"], [[0.6, 0.8]])
    before = store.records()
    with pytest.raises(error, match=message):
        store.upsert_vectors(*args)
    after = store.records()
    assert after.ids == before.ids == ("z",)
    assert after.vectors.tobytes() == before.vectors.tobytes()


def test_upsert_vectors_follows_the_profile_on_an_existing_id():
    store = FakeVectorStore.from_vectors(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], profile="chroma")
    store.upsert_vectors(["a"], [[0.0, 2.0]], ["moved"])
    assert store.ids == ["a", "b"]  # replace keeps the insertion position
    assert store.get("a").text == "moved"
    assert [m.id for m in store.query_by_vector([0.0, 1.0], 1)] == ["a"]  # ties: insertion
    strict = FakeVectorStore.from_vectors(["a"], [[1.0, 0.0]], on_existing_id="error")
    with pytest.raises(PlaceboragValueError, match="already stored"):
        strict.upsert_vectors(["a"], [[0.0, 1.0]])


def test_upsert_vectors_refuses_a_fake_embedder_store():
    store = FakeVectorStore(embedder=FakeEmbedder(dimensions=2))
    with pytest.raises(PlaceboragTypeError, match="from_vectors"):
        store.upsert_vectors(["a"], [[1.0, 0.0]])
    assert len(store) == 0


def test_upsert_vectors_into_a_store_with_its_own_embedder():
    class Table:
        dimensions = 2

        def embed_batch(self, texts):
            return np.array([[1.0, 0.0] if t == "east" else [0.0, 1.0] for t in texts])

    store = FakeVectorStore(embedder=Table(), profile="qdrant")
    store.upsert_vectors(["n", "e"], [[0.0, 1.0], [1.0, 0.1]], ["north", "east-ish"])
    assert [m.id for m in store.query("east", 2)] == ["e", "n"]
    with pytest.raises(PlaceboragValueError, match="3 columns"):
        store.upsert_vectors(["x"], [[1.0, 0.0, 0.0]])


@pytest.mark.parametrize("options", [{"recall": 0.5}, {"profile": "weaviate"}, {"recall": 0.7}])
def test_a_vector_query_named_by_its_text_ranks_exactly_as_the_text_query(options):
    """recall and shuffled ties hash the query: given its text, a vector query hashes the same."""
    store = FakeVectorStore(**options)
    store.upsert_many([f"d{i}" for i in range(12)], ["refund policy"] * 6 + ["parcel"] * 6)
    for text in ("refund policy", "parcel", "refund"):
        vector = store.embed_query(text)
        assert store.query_by_vector(vector, 5, text=text) == store.query(text, 5)
    assert store.last_query.text == "refund"
    with pytest.raises(PlaceboragTypeError, match="text=5 must be a str or None"):
        store.query_by_vector(vector, 5, text=5)


def test_reembedded_into_place_zeroes_nothing_alive_and_checks_the_reused_dimension():
    """The new matrix is filled in place: deleted rows stay out of the records, reused rows
    are copied, and reusing a store of another dimension is refused before anything is built."""
    clusters = {"refund": ["refund policy for damaged parcels"]}
    store = FakeVectorStore(embedder=FakeEmbedder(clusters=clusters, cluster_spread=0.2))
    store.upsert_many([f"d{i}" for i in range(len(TEXTS))], TEXTS, METAS)
    store.delete("d2")
    wider = FakeEmbedder(clusters=clusters, cluster_spread=0.8)
    unclustered = [i for i in store.ids if wider.cluster_of(store.get(i).text) is None]
    twin = store.reembedded(wider, reuse=(store, unclustered))
    fresh = FakeVectorStore(embedder=wider)
    fresh.upsert_many([f"d{i}" for i in range(len(TEXTS))], TEXTS, METAS)
    fresh.delete("d2")
    assert twin.ids == fresh.ids
    np.testing.assert_array_equal(twin.records().vectors, fresh.records().vectors)
    narrow = FakeEmbedder(clusters=clusters, cluster_spread=0.8, dimensions=64)
    with pytest.raises(PlaceboragValueError, match="64-dimensional vectors; the store of reuse"):
        store.reembedded(narrow, reuse=(store, unclustered))


def test_a_kept_query_screen_never_outlives_a_write():
    """The float32 screen of a query is kept per table until its rows change (and shared by
    the twins that share them): every kind of write in between gives what a fresh store of
    the same records gives, in the store written and not in its twin."""

    def fresh_like(store):
        records = store.records()
        again = FakeVectorStore(profile="qdrant")
        again.upsert_many(
            list(records.ids), list(records.texts), [dict(m) for m in records.metadata]
        )
        return again

    store = _store(profile="qdrant")
    twin = store.with_options(filter_mode="post")
    query = "refund policy for damaged parcels"
    before = twin.query(query, 3)
    assert store.query(query, 3) == fresh_like(store).query(query, 3)
    writes = [
        lambda s: s.upsert("new", query),  # a new row, the best match
        lambda s: s.upsert("d1", "completely different words now"),  # a row rewritten
        lambda s: s.delete("new"),
        lambda s: s.upsert_many(
            [f"x{i}" for i in range(1500)], [f"filler {i}" for i in range(1500)]
        ),
        lambda s: s.delete([f"x{i}" for i in range(1400)]),  # enough holes to compact
    ]
    for write in writes:
        store.query(query, 3)  # the screen is kept ...
        write(store)  # ... and this write must drop it
        assert store.query(query, 3) == fresh_like(store).query(query, 3)
        trace = store.trace(query, 3)
        expected = fresh_like(store).trace(query, 3)
        assert trace.ids == expected.ids
        np.testing.assert_array_equal(trace.score, expected.score)
        assert twin.query(query, 3) == before  # the twin's rows did not change


def test_records_count_a_write_held_back_after_the_view_was_made():
    # issue 27: the view was cached per table version, so a write held back under
    # visibility="manual" after the last read left records().pending at its old count.
    store = _store(visibility="manual")
    store.refresh()
    before = store.records()
    assert before.pending == 0
    store.upsert("late", "not visible yet")
    after = store.records()
    assert after.pending == 1 == store.pending_writes
    assert after.ids == before.ids and after.version == before.version
    assert before.pending == 0  # a view handed out never changes


def test_the_records_version_moves_exactly_when_a_write_lands():
    store = _store(on_existing_id="duplicate", churn=0.5, orphans=0.5)
    seen = [store.records().version]

    def moved(expected: bool) -> None:
        version = store.records().version
        assert isinstance(version, int)
        assert (version > seen[-1]) if expected else (version == seen[-1]), (seen, version)
        seen.append(version)

    store.query("refund policy")
    store.trace("refund policy", 3)
    store.explain("refund policy", 3)
    store.with_options(recall=0.5).upsert("twin-only", "written to the twin")
    store.delete("never-written", missing_ok=True)
    store.refresh()
    moved(False)
    store.upsert("new", "a new record")
    moved(True)
    store.upsert("new", "a new record")  # the same content again: a write that lands
    moved(True)
    store.upsert_many(["d2", "d3"], ["rewritten", "rewritten too"])
    moved(True)
    store.delete("d4")
    moved(True)
    manual = _store(visibility="manual")
    manual.refresh()
    version = manual.records().version
    manual.upsert("late", "held back")
    manual.delete("d0")
    assert manual.records().version == version
    manual.refresh()
    assert manual.records().version > version
    twin = store.with_options(profile="qdrant")
    assert twin.records().version == store.records().version  # the same records
    assert twin.records().ids == store.records().ids
