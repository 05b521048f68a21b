"""The paths taken at a million records, checked on small inputs against the plain ones:
an app over a store reads its records as they are (the same views as a store rebuilt from
them), a scenario of a store reads documents on demand, a large store keeps one embedded
copy, and the faster density grid, row spread and below-the-cut pick agree with numpy."""

import json

import numpy as np
import pytest

pytest.importorskip("pandas")
pytest.importorskip("sklearn")
pytest.importorskip("plotly")
pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

from placeborag import FakeVectorStore
from placeborag.explore import Explorer, Scenario, VectorTable, demo_scenario
from placeborag.explore import _state as state_module
from placeborag.explore._compute import _first_sorted, spread_offsets
from placeborag.explore._figures.density import histogram2d
from placeborag.explore._scenario import StoreDocuments, metadata_keys
from placeborag.explore._state import ExplorerState


class CountingTable(VectorTable):
    """A VectorTable that records every batch it is asked to embed."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.asked: list[list[str]] = []

    def embed_batch(self, texts):
        self.asked.append(list(texts))
        return super().embed_batch(texts)


def _vector_store(n=60, dims=6, seed=4):
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, dims)).astype(np.float32)
    texts = [f"doc {i % 50}" for i in range(n)]  # some texts twice, with their own vectors
    table = CountingTable(texts, vectors)
    store = FakeVectorStore(embedder=table)
    metas = [{"lang": "en" if i % 3 else "hu", "n": i} for i in range(n)]
    store.upsert_vectors([f"d{i}" for i in range(n)], vectors, texts, metas)
    return store, table


def _slow_views(store, query, controls):
    """The views as the app built them before: the scenario's documents written into a new
    store with the same embedder (every document embedded again)."""
    scenario = Scenario.from_store(store, query).replace(**controls)
    documents = tuple(scenario.documents)  # a plain tuple: no trace of the store is left
    scenario = Scenario(**{**scenario.__dict__, "documents": documents})
    return ExplorerState(store.embedder).views(scenario, 2, "stage")


@pytest.mark.parametrize(
    "controls",
    [
        {},
        {"profile": "qdrant", "metric": None},
        {"filter_mode": "post", "where": {"lang": "hu"}},
        {"recall": 0.6, "k": 7},
    ],
)
def test_an_app_over_a_store_draws_what_a_rebuilt_store_draws(controls):
    # Texts are unique here, so embedding them again gives each record its own vector back.
    store, _ = _vector_store(n=50)
    query = "doc 7"
    scenario = Scenario.from_store(store, query).replace(**controls)
    fast = ExplorerState(store.embedder, store=store).views(scenario, 2, "stage")
    slow = _slow_views(store, query, controls)
    assert fast.base is not slow.base
    for mode in ("pre", "post"):
        a, b = fast.traces[mode], slow.traces[mode]
        assert (a.profile, a.filter_mode, a.recall) == (b.profile, b.filter_mode, b.recall)
        assert a.ids == b.ids
        assert a.top_k == b.top_k
        np.testing.assert_array_equal(a.score, b.score)
        np.testing.assert_array_equal(a.rank, b.rank)
        assert list(a.stage) == list(b.stage)
    np.testing.assert_array_equal(fast.projection.coords, slow.projection.coords)
    np.testing.assert_array_equal(fast.rows.vectors, slow.rows.vectors)


def test_an_app_over_a_store_embeds_only_its_queries():
    store, table = _vector_store(n=60)
    app = Explorer(store=store, query="doc 3")
    assert app.error == ""
    app.controls["query"].value = "doc 9"
    app.controls["recall"].value = 0.5
    assert app.error == ""
    assert all(len(batch) == 1 for batch in table.asked), table.asked
    assert {batch[0] for batch in table.asked} == {"doc 3", "doc 9"}
    # Each record keeps the vector it was written with (two records share a text here).
    shown = app.shown.rows.vectors
    np.testing.assert_array_equal(shown, store.records().vectors)
    assert not np.array_equal(shown[3], shown[53])  # "doc 3" twice, two vectors


def test_an_app_over_a_fake_embedder_store_uses_its_records():
    demo = demo_scenario()
    store = demo.store()
    app = Explorer(store=store, query=demo.query)
    fresh = Explorer(demo.replace(where=None))
    for mode in ("pre", "post"):
        assert app.tables[mode].equals(fresh.tables[mode])
    app.controls["model_name"].value = "other"
    assert app.error == ""
    again = Explorer(fresh.scenario.replace(model_name="other"))
    for mode in ("pre", "post"):
        assert app.tables[mode].equals(again.tables[mode])


def test_a_scenario_of_a_store_reads_its_documents_on_demand(tmp_path, demo):
    store = demo.store()
    back = Scenario.from_store(store, demo.query, k=demo.k, where=demo.where, name=demo.name)
    assert isinstance(back.documents, StoreDocuments)
    assert back.documents == demo.documents and demo.documents == back.documents
    assert back == demo
    assert len(back.documents) == len(demo.documents)
    assert back.documents[0] == demo.documents[0]
    assert back.documents[-2:] == demo.documents[-2:]
    assert list(back.documents) == list(demo.documents)
    assert (
        metadata_keys(back.documents) == metadata_keys(demo.documents) == ["lang", "tier", "year"]
    )
    # A document's metadata is its own copy: changing it changes neither store nor scenario.
    back.documents[0].metadata["lang"] = "xx"
    assert back.documents[0].metadata["lang"] == demo.documents[0].metadata["lang"]
    # A later write to the store does not change the scenario (a snapshot of the records).
    store.upsert("new", "a new document", {"lang": "en"})
    assert len(back.documents) == len(demo.documents)
    # It saves, loads and scales as a tuple of documents does.
    path = tmp_path / "s.json"
    back.save(path)
    assert Scenario.load(path) == demo
    assert json.loads(path.read_text())["documents"] == json.loads(
        json.dumps(demo.to_dict()["documents"])
    )
    assert back.scaled(60) == demo.scaled(60)
    assert "documents of a store" in repr(back)


def test_records_metadata_is_a_read_only_snapshot():
    store = FakeVectorStore()
    store.upsert_many(["a", "b", "c"], ["x", "y", "z"], [{"k": 1}, None, {"k": 3, "m": [1]}])
    records = store.records()
    meta = records.metadata
    assert meta == ({"k": 1}, {}, {"k": 3, "m": [1]})
    assert meta == [{"k": 1}, {}, {"k": 3, "m": [1]}]
    assert meta != ({"k": 1}, {}, {"k": 3})
    assert meta[1:] == ({}, {"k": 3, "m": [1]}) and isinstance(meta[1:], tuple)
    assert [dict(m) for m in meta] == [{"k": 1}, {}, {"k": 3, "m": [1]}]
    assert meta.key_names() == {"k", "m"}
    with pytest.raises(TypeError):
        meta[0]["k"] = 2  # type: ignore[index]
    store.upsert("a", "x again", {"k": 10})
    store.delete("c")
    assert records.metadata == ({"k": 1}, {}, {"k": 3, "m": [1]})  # the view never changes
    assert store.records().metadata == ({"k": 10}, {})  # "a" rewritten in its place


def test_twins_share_written_ids_until_one_writes():
    store = FakeVectorStore(on_existing_id="error")
    store.upsert_many(["a", "b"], ["x", "y"])
    twin = store.with_options(profile="qdrant")
    twin.upsert("c", "z")
    store.upsert("c", "only in the first")  # "c" is new to the first store
    with pytest.raises(ValueError, match="already stored"):
        twin.upsert("c", "again")
    assert store.delete("b") is True
    assert "b" in twin and twin.delete(["b"]) == 1
    assert store.ids == ["a", "c"] and twin.ids == ["a", "c"]


def test_reembedded_store_does_not_share_writes_with_its_batch():
    demo = demo_scenario()
    origin = demo.store()
    twin = origin.reembedded(demo.replace(model_name="other").embedder())
    before = twin.records().vectors.copy()
    again = origin.reembedded(demo.replace(model_name="other").embedder())
    twin.upsert(twin.ids[0], "rewritten text")
    np.testing.assert_array_equal(again.records().vectors, before)
    assert not np.array_equal(twin.records().vectors[0], before[0])


def test_a_large_store_keeps_one_embedded_copy_and_draws_what_a_fresh_app_draws(monkeypatch):
    monkeypatch.setattr(state_module, "_LARGE_STORE", 20)
    app = Explorer(demo_scenario())
    for control, value in [
        ("cluster_spread", 0.9),
        ("model_name", "other"),
        ("cluster_spread", 0.2),
        ("dimensions", 64),
    ]:
        app.controls[control].value = value
        assert app.error == ""
        assert len(app.state._stores) == 1
        fresh = Explorer(app.scenario)
        for mode in ("pre", "post"):
            assert app.tables[mode].equals(fresh.tables[mode])
        np.testing.assert_array_equal(app.shown.projection.coords, fresh.shown.projection.coords)
        np.testing.assert_array_equal(app.shown.rows.vectors, fresh.shown.rows.vectors)


def test_a_failed_embedding_keeps_the_last_views(monkeypatch):
    monkeypatch.setattr(state_module, "_LARGE_STORE", 20)
    app = Explorer(demo_scenario())
    app.controls["model_name"].value = "second"  # the store on screen is not the first
    shown = app.shown.trace.top_k
    write, reembed = Scenario.store, state_module.reembedded

    def refuse(embedder):
        if embedder.model_name == "third":
            raise MemoryError("no room for another store")

    def failing_write(self, *, embedder=None, **options):
        refuse(embedder or self.embedder())
        return write(self, embedder=embedder, **options)

    def failing_reembed(store, embedder, **kwargs):
        refuse(embedder)
        return reembed(store, embedder, **kwargs)

    # Either way of making the new store (written again, or re-embedded) fails.
    monkeypatch.setattr(Scenario, "store", failing_write)
    monkeypatch.setattr(state_module, "reembedded", failing_reembed)
    app.controls["model_name"].value = "third"
    assert "MemoryError" in app.error
    assert app.shown is not None and app.shown.trace.top_k == shown
    assert app.shown.scenario.model_name == "second"
    assert app.explain(shown[0])["stage"] == "returned"
    assert "placeborag-stale" in app.widget._dom_classes
    app.controls["model_name"].value = "second"  # back to the last valid state
    assert app.error == "" and app.shown.trace.top_k == shown


def test_the_density_grid_counts_as_numpy_does():
    rng = np.random.default_rng(8)
    for case in range(60):
        n = int(rng.integers(1, 3000))
        x = rng.normal(size=n) * rng.uniform(0.01, 50)
        y = rng.uniform(-0.5, 3.5, n)
        if case % 2:  # values on the edges
            x, y = np.round(x, 1), np.round(y * 4) / 4
        bins = (int(rng.integers(1, 160)), int(rng.integers(1, 40)))
        xr = (float(x.min()), float(x.max()) + (0.0 if x.max() > x.min() else 1.0))
        yr = (-0.5, 3.5)
        want = np.histogram2d(x, y, bins=bins, range=[list(xr), list(yr)])
        got = histogram2d(x, y, bins, xr, yr)
        for a, b in zip(want, got):
            np.testing.assert_array_equal(a, b)


def test_the_nearest_below_the_cut_are_a_stable_sort_s_first():
    rng = np.random.default_rng(9)
    for case in range(400):
        values = rng.integers(-3, 4, int(rng.integers(0, 40))).astype(np.float64)
        if case % 3 == 0 and values.size:
            values[rng.integers(0, values.size)] = np.nan
        m = int(rng.integers(1, 5))
        expected = np.argsort(values, kind="stable")[:m]
        assert _first_sorted(values, m).tolist() == expected.tolist()


def test_the_row_spread_is_deterministic_and_in_range():
    ids = [f"d{i}" for i in range(5000)]
    a = spread_offsets(ids)
    b = spread_offsets(list(ids))  # another snapshot of the same ids
    np.testing.assert_array_equal(a, b)
    assert a.min() >= -0.35 and a.max() < 0.35
    assert abs(float(a.mean())) < 0.02  # spread over the row, not piled at one side


def test_a_vector_table_keeps_float32_rows_and_exact_query_vectors():
    vectors = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    query = [0.1234567890123, 0.9]
    table = VectorTable(["a", "b", "a"], vectors, queries={"q": query})
    assert table.embed_batch(["q"]).tolist() == [query]  # float64, not rounded to float32
    np.testing.assert_array_equal(table.embed_batch(["a"])[0], vectors[2])  # the last "a"
    few = table.embed_batch(["b", "a"])
    many = table.embed_batch(["b", "a", "q", "b", "a"])  # the index, not a scan
    np.testing.assert_array_equal(few, many[[0, 1]])
    with pytest.raises(ValueError, match="nearest known texts: 'a'"):
        table.embed_batch(["aa"])
