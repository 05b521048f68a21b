"""Arguments of placeborag.explore's public functions: each bad one raises a PlaceboragError
naming the argument and what is allowed, never a bare exception from inside."""

import numpy as np
import pytest

from placeborag import FakeEmbedder, FakeVectorStore, PlaceboragTypeError, PlaceboragValueError
from placeborag._cli import main
from placeborag.explore import (
    AnchorsDisplay,
    Document,
    FilterModesDisplay,
    ProjectionDisplay,
    Scenario,
    anchor_geometry,
    app,
    demo_scenario,
    export_pytest,
    filter_mode_table,
    fit_projector,
    funnel_counts,
    project,
    render_report,
    store_from_vectors,
    store_rows,
    trace_query,
)

# -- lone surrogates: a scenario is UTF-8 (its JSON file, its HTML report) ------------------


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"query": "\ud800"}, "query="),
        ({"name": "a\udfffb"}, "name="),
        ({"where": {"lang": "\ud800"}}, "where['lang']="),
        ({"where": {"$and": [{"\ud800": 1}]}}, "where['$and'][0] key="),
        ({"clusters": {"c": ["ok", "x\ud800"]}}, "clusters['c'][1]="),
    ],
)
def test_a_lone_surrogate_in_a_field_is_refused_naming_it(demo, changes, named):
    with pytest.raises(PlaceboragValueError, match="lone surrogate") as info:
        demo.replace(**changes)
    assert str(info.value).startswith(named)
    assert "at index" in str(info.value)


def test_a_lone_surrogate_in_a_document_is_refused_naming_the_document(demo):
    docs = demo.documents[:4]
    with pytest.raises(PlaceboragValueError, match=r"^documents\[4\]\.text='a\\ud800b'"):
        demo.replace(documents=(*docs, Document("x", "a\ud800b", {})))
    with pytest.raises(PlaceboragValueError, match=r"^documents\[1\]\.id="):
        Scenario(documents=[{"id": "a", "text": "t"}, {"id": "\udc00", "text": "t"}], query="q")
    with pytest.raises(PlaceboragValueError, match=r"^documents\[0\]\.metadata\['k'\]\[1\]="):
        Scenario(documents=[Document("a", "t", {"k": ["ok", "\ud800"]})], query="q")


def test_a_store_holding_a_lone_surrogate_makes_no_scenario():
    store = FakeVectorStore()
    store.upsert_many(["a", "b"], ["fine", "bad \ud800"])  # a store hashes any str
    store.refresh()
    with pytest.raises(PlaceboragValueError, match=r"^documents\[1\]\.text="):
        Scenario.from_store(store, "q")


def test_render_report_never_meets_a_lone_surrogate(demo):
    with pytest.raises(PlaceboragValueError, match="lone surrogate"):
        render_report(demo.replace(query="\ud800"))


def test_report_cli_names_a_lone_surrogate_in_the_scenario_file(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(
        '{"documents": [{"id": "a", "text": "x"}], "query": "\\ud800"}', encoding="utf-8"
    )
    out = tmp_path / "r.html"
    assert main(["report", "--out", str(out), "--scenario", str(path)]) == 1
    err = capsys.readouterr().err
    assert "query='\\ud800' holds the lone surrogate" in err
    assert not out.exists()


# -- Scenario.scaled and replace ------------------------------------------------------------


def test_scaling_a_scenario_without_documents_is_refused():
    empty = Scenario(documents=[], query="q")
    with pytest.raises(PlaceboragValueError, match=r"n=3: a scenario without documents"):
        empty.scaled(3)


def test_scaling_is_bounded():
    from placeborag.explore._scenario import MAX_SCALED_DOCUMENTS

    assert MAX_SCALED_DOCUMENTS == 1_000_000
    with pytest.raises(PlaceboragValueError, match="must be between 1 and 1,000,000 documents"):
        demo_scenario().scaled(10**400)
    with pytest.raises(PlaceboragValueError, match=r"n=1000001 must be between 1 and 1,000,000"):
        demo_scenario(MAX_SCALED_DOCUMENTS + 1)


def test_replace_names_an_unknown_field_also_beside_documents(demo):
    with pytest.raises(PlaceboragTypeError, match=r"unknown scenario field.*'foo'"):
        demo.replace(documents=(), foo=1)
    with pytest.raises(PlaceboragTypeError, match=r"unknown scenario field.*'foo'"):
        demo.replace(clusters={}, foo=1)


# -- every public function checks its arguments ----------------------------------------------

V = np.random.default_rng(0).normal(size=(4, 3))


@pytest.fixture(scope="module")
def store():
    return demo_scenario().store()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda st: store_rows(None), PlaceboragTypeError, "store=None must be a FakeVectorStore"),
        (lambda st: funnel_counts(None), PlaceboragTypeError, "trace=None must be a QueryTrace"),
        (lambda st: app("x"), PlaceboragTypeError, "scenario='x' must be a Scenario or None"),
        (lambda st: app(mode="web"), PlaceboragValueError, "mode='web' must be one of"),
        (lambda st: app(max_k=0), PlaceboragValueError, "max_k=0 must be >= 1"),
        (lambda st: app(dimension_choices=[8, "x"]), PlaceboragTypeError, "dimension_choices[1]="),
        (lambda st: project(st, "refund", rows=5), PlaceboragTypeError, "rows=5 must be StoreRows"),
        (lambda st: project(st, "refund", projector=5), PlaceboragTypeError, "projector=5 must"),
        (lambda st: project(st, "refund", trace=5), PlaceboragTypeError, "trace=5 must be a Query"),
        (lambda st: project(st, 5), PlaceboragTypeError, "query=5 must be a str"),
        (
            lambda st: filter_mode_table(
                trace_query(st, "refund", 2), store_rows(FakeVectorStore())
            ),
            PlaceboragValueError,
            "rows of 0 documents must be the rows of the store the trace was taken from",
        ),
        (
            lambda st: store_from_vectors(V, list("abcd"), ["t"] * 4, queries=[("q", [1, 2, 3])]),
            PlaceboragTypeError,
            "queries=[('q', [1, 2, 3])] must be a mapping",
        ),
        (
            lambda st: store_from_vectors(V, list("abcd"), ["t"] * 4, embedder=FakeEmbedder()),
            PlaceboragTypeError,
            "cannot be given: the store's embedder is a VectorTable",
        ),
        (
            lambda st: anchor_geometry({"a": ["x"]}, dimensions="64"),
            PlaceboragTypeError,
            "dimensions='64' must be an int or a sequence of ints",
        ),
        (
            lambda st: anchor_geometry({"a": ["x"]}, dimensions=[64, 1]),
            PlaceboragValueError,
            "dimensions[1]=1 must be between 2 and 65536",
        ),
        (
            lambda st: anchor_geometry({"a": ["x", "y"]}, max_pairs=-1),
            PlaceboragValueError,
            "max_pairs=-1 must be >= 0",
        ),
        (
            lambda st: anchor_geometry({"a": ["x", "y"]}, max_members=0),
            PlaceboragValueError,
            "max_members=0 must be >= 1",
        ),
        (
            lambda st: anchor_geometry({"a": ["x"]}, cluster_spread=10**400),
            PlaceboragValueError,
            "cluster_spread=<an int of about 401 digits> must be a finite real number",
        ),
        (
            lambda st: anchor_geometry({"a": ["x"]}, cluster_match="fuzzy"),
            PlaceboragValueError,
            "cluster_match='fuzzy' must be one of",
        ),
        (
            lambda st: anchor_geometry(["a"]),
            PlaceboragTypeError,
            "clusters=['a'] must be a mapping",
        ),
        (
            lambda st: fit_projector(V * np.nan, 2),
            PlaceboragValueError,
            "vectors holds a value that is not finite",
        ),
        (
            lambda st: fit_projector(V.reshape(2, 2, 3), 2),
            PlaceboragValueError,
            "vectors of shape (2, 2, 3) must be 2-D",
        ),
        (lambda st: fit_projector([["a"]], 2), PlaceboragTypeError, "must be a 2-D array"),
        (
            lambda st: fit_projector(V, 10**400),
            PlaceboragValueError,
            "n_components=<an int of about 401 digits> must be between 1 and 1024",
        ),
        (
            lambda st: fit_projector(V, True),
            PlaceboragTypeError,
            "n_components=True must be an int",
        ),
        (lambda st: fit_projector(V, 2).head(3), PlaceboragValueError, "n_components=3 must be"),
        (lambda st: export_pytest("x"), PlaceboragTypeError, "scenario='x' must be a Scenario"),
        (lambda st: ProjectionDisplay(5), PlaceboragTypeError, "projection=5 must be a Projection"),
        (lambda st: AnchorsDisplay(5), PlaceboragTypeError, "geometry=5 must be an AnchorGeometry"),
        (
            lambda st: AnchorsDisplay.from_embedder(5),
            PlaceboragTypeError,
            "embedder=5 must be a FakeEmbedder",
        ),
        (
            lambda st: FilterModesDisplay.from_stores({"pre": st}, "q"),
            PlaceboragTypeError,
            "stores['post']=None must be a FakeVectorStore",
        ),
        (
            lambda st: ProjectionDisplay.from_scenario(demo_scenario()).plot(figure=5),
            PlaceboragTypeError,
            "figure=5 must be a plotly Figure",
        ),
    ],
)
def test_a_bad_argument_is_refused_by_name(store, call, error, message):
    with pytest.raises(error) as info:
        call(store)
    assert message in str(info.value)


def test_anchor_geometry_takes_one_int_as_one_dimension():
    one = anchor_geometry({"a": ["x", "y"]}, dimensions=64)
    assert one.dimensions == (64,)
    assert set(one.members["dimensions"]) == {64}
    listed = anchor_geometry({"a": ["x", "y"]}, dimensions=[64])
    assert one.members.equals(listed.members)


def test_anchor_geometry_takes_any_number_of_pairs_as_all_of_them():
    everything = anchor_geometry({"a": ["x", "y", "z"]}, dimensions=16, max_pairs=10**30)
    assert len(everything.pairs) == 3
