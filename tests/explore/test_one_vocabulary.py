"""The explorer speaks the store's language: the store's own trace, its stage names, its "why",
and every record of an id stored twice (issue 23).

Before, the explorer wrapped the store's trace in a class of its own that renamed ``stage`` to
``status``, wrote its own sentence for the inspect panel (which named the top-k cut where the
post-filter window stopped a record), and keyed its rows by id, so the older record of an id
written twice under ``on_existing_id="duplicate"`` could not be told apart or inspected.
"""

import pytest

pytest.importorskip("pandas")
pytest.importorskip("sklearn")
pytest.importorskip("plotly")
pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

import placeborag
from placeborag import STAGES, FakeEmbedder, FakeVectorStore, PlaceboragValueError
from placeborag.explore import app, filter_mode_table, store_rows, trace_query

CLUSTERS = {"refund": ["refund", "money back"], "shipping": ["shipping", "delivery"]}


def _post_filter_store() -> FakeVectorStore:
    """pgvector, post-filtering: the index takes a window of 40 candidates, then filters."""
    store = FakeVectorStore(
        embedder=FakeEmbedder(clusters=CLUSTERS, cluster_match="substring", dimensions=64),
        profile="pgvector",
        filter_mode="post",
    )
    for i in range(60):
        topic = "refund" if i % 2 else "shipping"
        lang = "hu" if i % 7 == 0 else "en"
        store.upsert(f"d{i:02d}", f"{topic} question number {i}", {"lang": lang})
    return store


def _duplicate_store() -> FakeVectorStore:
    store = FakeVectorStore(
        embedder=FakeEmbedder(clusters=CLUSTERS, cluster_match="substring", dimensions=64),
        on_existing_id="duplicate",
    )
    store.upsert("f", "refund policy, first chunk", {"part": 1})
    store.upsert("g", "shipping times", {"part": 1})
    store.upsert("f", "refund policy, second chunk about money back", {"part": 2})
    store.upsert("h", "delivery of parcels", {"part": 1})
    return store


def test_the_explorers_trace_is_the_stores_own_trace_with_its_stage_names():
    store = _post_filter_store()
    trace = trace_query(store, "refund", 4, {"lang": "hu"})
    assert type(trace) is placeborag.QueryTrace
    assert not hasattr(trace, "status")
    assert not hasattr(placeborag.explore, "QueryTrace")
    assert not hasattr(placeborag.explore, "STATUSES")
    explorer = app(store=store, query="refund", k=4, where={"lang": "hu"})
    assert type(explorer.shown.trace) is placeborag.QueryTrace
    for mode in ("pre", "post"):
        table = explorer.tables[mode]
        assert "status" not in table.columns
        assert set(table["stage"]) <= set(STAGES)
    assert 'data-stage="' in explorer.results_html.value
    assert "data-status" not in explorer.results_html.value


def test_the_inspect_panel_says_what_the_trace_says_for_every_record():
    store = _post_filter_store()
    explorer = app(store=store, query="refund", k=4, where={"lang": "hu"}, filter_mode="post")
    trace = explorer.shown.trace
    assert trace.filter_mode == "post"
    for doc_id in trace.ids:
        assert explorer.explain(doc_id)["why"] == trace.why(doc_id)
        assert explorer.explain(doc_id)["stage"] == trace.stage_of(doc_id)


def test_a_record_the_post_filter_window_stopped_is_explained_by_the_window_not_the_top_k():
    store = _post_filter_store()
    explorer = app(store=store, query="refund", k=4, where={"lang": "hu"}, filter_mode="post")
    trace = explorer.shown.trace
    assert trace.window > trace.k  # pgvector's post-filter window is wider than k
    below = trace.ids_at("below the cut")
    assert below
    info = explorer.inspect(below[0])
    assert f"post-filter window of the {trace.window} best candidates" in info["why"]
    assert f"{trace.window_score:.4f}" in info["why"]
    assert f"top-{trace.k}" not in info["why"]  # the window stopped it, not the top-k cut
    assert f"post-filter window of the {trace.window}" in explorer.inspect_html.value


def test_every_record_of_an_id_stored_twice_is_a_row_told_apart_by_its_occurrence():
    store = _duplicate_store()
    assert [m.id for m in store.query("refund policy", k=3)].count("f") == 2
    rows = store_rows(store)
    assert list(rows.ids) == ["f", "g", "f", "h"]
    assert list(rows.occurrence) == [0, 0, 1, 0]
    assert rows.at("f") == 2 and rows.at("f", 0) == 0 and rows.at("f", 1) == 2
    with pytest.raises(PlaceboragValueError, match=r"occurrence=2 must be 0 to 1"):
        rows.at("f", 2)
    matches = store.query("refund policy", k=3)
    table = filter_mode_table(store.trace("refund policy", 3), rows)
    returned = table[table["stage"] == "returned"].sort_values("rank")
    assert list(zip(returned["id"], returned["text"])) == [(m.id, m.text) for m in matches]
    by_text = dict(zip(rows.texts, rows.occurrence))
    assert list(returned["occurrence"]) == [by_text[m.text] for m in matches]
    assert sorted(returned.loc[returned["id"] == "f", "occurrence"]) == [0, 1]


def test_the_app_shows_and_inspects_each_record_of_a_duplicated_id():
    store = _duplicate_store()
    explorer = app(store=store, query="refund policy", k=3)
    assert list(explorer.shown.rows.ids) == ["f", "g", "f", "h"]
    table = explorer.tables["pre"]
    assert sorted(table.loc[table["id"] == "f", "occurrence"]) == [0, 1]
    html = explorer.results_html.value
    assert "<th>record</th>" in html
    assert 'data-occurrence="1" data-id="f"' in html
    first, second = explorer.explain("f", 0), explorer.explain("f", 1)
    assert first["text"] == "refund policy, first chunk"
    assert second["text"] == "refund policy, second chunk about money back"
    assert explorer.explain("f")["text"] == second["text"]  # the newest, as get() returns
    trace = explorer.shown.trace
    assert first["why"] == trace.why("f", occurrence=0)
    assert second["why"] == trace.why("f", occurrence=1)
    # A row click names its record: the older one is inspected, not the newest.
    tables = explorer.results_html
    tables._handle(
        tables, {"kind": "row", "revision": tables.revision, "id": "f", "occurrence": 0}, []
    )
    assert "first chunk" in explorer.inspect_html.value
    assert "record 1 of 2 under this id" in explorer.inspect_html.value
    for bad in (-1, 1.0, True, "0"):
        tables._handle(
            tables, {"kind": "row", "revision": tables.revision, "id": "f", "occurrence": bad}, []
        )
    assert tables.refused == 4


def test_why_of_an_occurrence_that_does_not_exist_names_what_there_is():
    trace = _duplicate_store().trace("refund policy", 3)
    assert trace.why("f", occurrence=0) != trace.why("f", occurrence=1)
    assert trace.why("f") == trace.why("f", occurrence=1)
    assert trace.position("f", occurrence=0) == 0
    with pytest.raises(PlaceboragValueError, match=r"occurrence=5 must be 0 to 1: 'f' has 2"):
        trace.why("f", occurrence=5)
    with pytest.raises(TypeError, match=r"occurrence=True must be an int"):
        trace.why("f", occurrence=True)
    with pytest.raises(PlaceboragValueError, match=r"unknown id 'zz'"):
        trace.position("zz")
