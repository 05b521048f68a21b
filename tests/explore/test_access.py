"""trace_query must agree with FakeVectorStore.explain() on every stage it reports."""

import numpy as np
import pytest

pytest.importorskip("pandas")

from placeborag.explore import store_rows, trace_query
from placeborag.explore._access import reembedded, with_options

CASES = [
    (mode, recall, where)
    for mode in ("pre", "post")
    for recall in (1.0, 0.5)
    for where in (None, {"lang": "hu"}, {"tier": "internal"}, {"year": {"$gte": 2024}})
]


def _ids_with(trace, status):
    return sorted(i for i, s in zip(trace.ids, trace.stage) if s == status)


@pytest.mark.parametrize(("mode", "recall", "where"), CASES)
@pytest.mark.parametrize("n", [None, 300])
def test_trace_agrees_with_explain_at_every_stage(mode, recall, where, n):
    from placeborag.explore import demo_scenario

    scenario = demo_scenario(n)
    store = scenario.store(filter_mode=mode, recall=recall)
    explained = store.explain(scenario.query, 5, where)
    trace = trace_query(store, scenario.query, 5, where)
    assert list(trace.ids) == list(explained.candidates)
    assert trace.counts["candidates"] == len(explained.candidates)
    assert _ids_with(trace, "filtered out") == sorted(explained.filtered_out)
    assert _ids_with(trace, "lost to recall") == sorted(explained.recall_lost)
    assert trace.counts["survive recall"] == len(explained.ranked)
    assert trace.top_k == tuple(explained.top_k)
    assert trace.counts["top-k cut"] == len(explained.top_k)
    assert _ids_with(trace, "dropped by post-filter") == sorted(explained.post_filter_dropped)
    assert list(trace.matches) == list(explained.matches)
    assert _ids_with(trace, "returned") == sorted(m.id for m in explained.matches)
    # Every survivor is ranked; the trace's float32 screen orders them as the exact ranking
    # does, except inside near-ties the store breaks exactly.
    survivors = {
        i for i, s in zip(trace.ids, trace.stage) if s not in ("lost to recall", "filtered out")
    }
    assert survivors == set(explained.ranked)
    cosine = dict(zip(trace.ids, trace.cosine))
    ranked = np.array([cosine[i] for i in explained.ranked])
    assert (np.diff(ranked) <= 1e-5).all()
    for doc_id, exact in explained.cosines.items():
        assert cosine[doc_id] == pytest.approx(exact, abs=1e-6)


def test_trace_does_not_record_a_query(demo):
    store = demo.store()
    trace_query(store, demo.query, 3)
    assert store.queries == ()


def test_store_rows_are_in_insertion_order(demo):
    store = demo.store()
    rows = store_rows(store)
    assert list(rows.ids) == store.ids
    assert rows.vectors.shape == (len(demo.documents), demo.dimensions)


@pytest.mark.parametrize(
    "options", [{"profile": "qdrant"}, {"filter_mode": "post"}, {"recall": 0.3}]
)
def test_with_options_matches_a_freshly_built_store(demo, options):
    fresh = demo.store(**options)
    twin = with_options(demo.store(), **options)
    assert twin.query(demo.query, 5, demo.where) == fresh.query(demo.query, 5, demo.where)
    np.testing.assert_array_equal(
        trace_query(twin, demo.query, 5, demo.where).score,
        trace_query(fresh, demo.query, 5, demo.where).score,
    )


@pytest.mark.parametrize(
    "embedder_options",
    [
        {"model_name": "other-model"},
        {"dimensions": 64},
        {"cluster_spread": 1.2},
        {"dimensions": 1024, "cluster_spread": 0.1},
    ],
)
def test_reembedded_matches_a_store_built_with_the_new_embedder(demo, embedder_options):
    origin = demo.scaled(300).store()
    scenario = demo.scaled(300).replace(**embedder_options)
    fresh = scenario.store()
    twin, rows = reembedded(origin, scenario.embedder())
    expected = store_rows(fresh)
    assert rows.ids == expected.ids
    np.testing.assert_array_equal(rows.vectors, expected.vectors)
    for query in (demo.query, "money back", "csomag"):
        for where in (None, demo.where, {"lang": "hu"}):
            assert twin.query(query, 7, where) == fresh.query(query, 7, where)
    assert len(twin.queries) == 9
    assert origin.queries == ()  # the twin keeps its own log


def test_reembedded_checks_the_embedder(demo):
    origin = demo.store()
    with pytest.raises(TypeError, match="embed_batch"):
        reembedded(origin, object())
