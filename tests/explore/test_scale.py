"""The explorer past its thresholds, tested on the small demo with the thresholds lowered:
binary arrays and no per-point strings, a density layer under the points, the marks that
must never be hidden drawn last, a stride sample that keeps every ranked document, the
ranking's far side squeezed, and the inspect / find / table-click features."""

import base64

import numpy as np
import pytest

pytest.importorskip("pandas")
pytest.importorskip("plotly")
pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

from plotly.serializers import _py_to_js

from placeborag.explore import Explorer, ProjectionDisplay, RankingDisplay, demo_scenario
from placeborag.explore._figures import base, projection, ranking
from placeborag.explore._figures.base import drawn_rows, point_opacity
from placeborag.explore._figures.score_axis import ScoreAxis
from placeborag.explore._figures.wire import wire


def thresholds(monkeypatch, **values):
    """Set the figure layer's thresholds by document count in every module that reads them."""
    for name, value in values.items():
        for module in (base, projection, ranking):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, value)


DOC_TRACES = 3  # the demo's projection, coloured by cluster: refund, shipping, parcel, ...


@pytest.fixture
def large(monkeypatch):
    """The 50-document demo drawn as if it were a large store."""
    thresholds(monkeypatch, WEBGL_FROM=10, DENSITY_FROM=20, HOVER_TEXT_UP_TO=20)
    monkeypatch.setattr(ScoreAxis, "SQUEEZE_FROM", 20)
    s = demo_scenario()
    return s, s.store()


def _binary(array):
    sent = _py_to_js(array, None)
    return isinstance(sent, dict) and isinstance(sent.get("buffer"), memoryview)


def test_large_projection_sends_numbers_as_binary_and_no_per_point_strings(large):
    s, store = large
    display = ProjectionDisplay.from_store(store, s.query, s.k, s.where)
    fig = display.plot().figure_
    docs = [t for t in fig.data if t.legendgroup == "docs"]
    assert docs
    for t in docs:
        assert t.text is None and t.hovertext is None
        for name in ("x", "y", "customdata"):
            assert _binary(getattr(t, name)), (t.name, name)
    # The hover's row number is the document's row: click maps back through it.
    groups = display.groups()
    assert sorted(np.concatenate(groups[:-1]).tolist()) == list(range(len(s.documents)))
    for t, rows in zip(docs, groups):
        assert list(t.customdata) == rows.tolist()


def test_density_goes_under_and_the_top_k_query_anchors_on_top(large):
    s, store = large
    fig = ProjectionDisplay.from_store(store, s.query, s.k, s.where).plot().figure_
    names = [t.name for t in fig.data]
    assert names[-1] == "density" and fig.data[-1].type == "heatmap"
    # The marks share the points' WebGL renderer (drawn above any SVG trace) and come after.
    kinds = {t.name: t.type for t in fig.data}
    for mark in ("top-k (rank)", "cluster anchors", "query"):
        assert kinds[mark] == "scattergl"
        assert names.index(mark) > max(i for i, t in enumerate(fig.data) if t.legendgroup == "docs")
    z = _grid(fig.data[-1].z)  # NaN for an empty cell
    counts = np.expm1(z[np.isfinite(z)])
    # every document is counted once (log1p rounded to 3 decimals: within a few percent)
    assert abs(counts.sum() - len(s.documents)) <= 0.01 * len(s.documents) + 1
    assert z.shape == (120, 160)
    for axis in ("x", "y"):
        assert _binary(np.asarray(getattr(fig.data[-1], axis)))


def test_density_counts_documents_in_the_ranking_too(large):
    s, store = large
    fig = RankingDisplay.from_store(store, s.query, s.k, s.where).plot().figure_
    dens = fig.data[-1]
    assert dens.name == "density"
    z = _grid(dens.z)
    finite = int(np.isfinite(np.asarray(store.trace(s.query, s.k, s.where).score)).sum())
    assert abs(np.expm1(z[np.isfinite(z)]).sum() - finite) <= 0.01 * finite + 1


def test_opacity_fades_with_the_count():
    assert point_opacity(100) == 0.75
    assert point_opacity(100_000) < point_opacity(20_001) < 0.75
    assert point_opacity(10**9) == 0.12


def test_the_sample_keeps_every_document_that_ranks(monkeypatch):
    thresholds(monkeypatch, MAX_POINTS=10)
    keep = np.zeros(95, dtype=bool)
    keep[[3, 41, 94]] = True
    rows = drawn_rows(95, keep)
    assert {3, 41, 94} <= set(rows.tolist())
    assert len(rows) <= 10 + 3 and list(rows) == sorted(rows)
    assert drawn_rows(9, np.zeros(9, dtype=bool)).tolist() == list(range(9))


def test_a_selection_on_a_sampled_view_maps_to_the_right_ids(monkeypatch):
    thresholds(monkeypatch, MAX_POINTS=12)
    app = Explorer()
    rows = app._trace_rows["projection"]
    trace, members = next((t, m) for t, m in rows.items() if len(m) >= 2)
    picked = app.select_points("projection", {trace: [0, 1]})
    assert picked == [app._ids[int(members[0])], app._ids[int(members[1])]]
    # every ranked document is still drawn, so a box over the top-k reaches all of them
    top = set(app.shown.trace.top_k)
    drawn = {app._ids[int(i)] for m in rows.values() for i in m}
    assert top <= drawn


def test_the_squeezed_axis_keeps_order_and_gives_the_cut_its_room():
    rng = np.random.default_rng(3)
    scores = np.concatenate([rng.uniform(0.0, 0.5, 5000), rng.uniform(0.49, 0.52, 40)])
    axis = ScoreAxis.fit(scores, higher_is_better=True, k=5)
    assert axis.squeeze is not None
    pos = axis.position(np.sort(scores))
    assert np.all(np.diff(pos) >= 0)  # order is the ranking
    span = pos[-1] - pos[0]
    best = np.sort(scores)[-(3 * 5 + 30) :]
    near = axis.position(best)
    assert (near[-1] - near[0]) >= 0.6 * span  # the near side keeps most of the axis
    # a lower-is-better profile squeezes the other side
    axis = ScoreAxis.fit(-scores, higher_is_better=False, k=5)
    assert axis.squeeze is not None and axis.squeeze[1] == pytest.approx(float((-scores).max()))


def test_a_small_store_is_not_squeezed(demo):
    axis = ScoreAxis.fit(demo.store().trace(demo.query, demo.k).score, k=demo.k)
    assert axis.squeeze is None


@pytest.fixture(scope="module")
def app():
    return Explorer()


def test_explain_says_where_and_why(app):
    t = app.shown.trace
    first = t.top_k[0]
    info = app.explain(first)
    assert info["stage"] == "returned" and info["rank"] == 1
    assert info["score"] == pytest.approx(t.matches[0].score)
    assert len(info["neighbours"]) == 5 and first not in [n["id"] for n in info["neighbours"]]
    cos = [n["cosine"] for n in info["neighbours"]]
    assert cos == sorted(cos, reverse=True)
    out = next(i for i, st in zip(t.ids, t.stage) if st == "filtered out")
    assert "where filter" in app.explain(out)["why"]
    with pytest.raises(ValueError, match="unknown id"):
        app.explain("no-such-id")


def test_explain_names_the_tie_rule():
    from placeborag.explore import Document, Scenario

    docs = tuple(Document(f"d{i}", "same words", {}) for i in range(3)) + (
        Document("other", "something else entirely", {}),
    )
    tie_app = Explorer(Scenario(documents=docs, query="same words", k=2, where=None))
    loser = next(
        i
        for i, st in zip(tie_app.shown.trace.ids, tie_app.shown.trace.stage)
        if st == "tied at the cut"
    )
    info = tie_app.explain(loser)
    assert info["tie"]["rule"] == tie_app.shown.trace.tie_rule
    assert set(info["tie"]["ids"]) == {"d0", "d1", "d2"} and len(info["tie"]["kept"]) == 2


def test_a_click_on_a_point_inspects_its_document(app):
    rows = app._trace_rows["ranking"]
    trace, members = next((t, m) for t, m in rows.items() if len(m))
    app._on_click("ranking", (trace, 0))
    assert app.inspected == app._ids[int(members[0])]
    assert app.inspected in app.inspect_html.value


def test_find_by_id_and_by_words(app):
    assert app.find("hu-refund-1") == ["hu-refund-1"]
    assert app.inspected == "hu-refund-1"
    found = app.find("CSOMAG")
    assert found and all(
        "csomag" in app.shown.rows.texts[app.shown.rows.position[i]].lower() or "csomag" in i
        for i in found
    )
    assert app.find("zzz-nothing-zzz") == [] and "no document" in app.inspect_html.value


def test_a_table_row_click_toggles_the_selection_and_marks_the_row(app):
    app.select([])
    doc = app.shown.trace.top_k[0]
    app._on_row(doc)
    assert app.selection == [doc]
    assert f'data-id="{doc}" data-selected' in app.results_html.value
    app._on_row(doc)
    assert app.selection == [] and "data-selected" not in app.results_html.value


def test_the_app_carries_a_static_html_fallback(app):
    bundle = app._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    page = bundle["text/html"]
    assert "<script" not in page
    for doc in app.shown.trace.top_k:
        assert f"<li>{doc}</li>" in page


def test_the_app_s_widget_goes_into_a_layout_of_the_user_s(app):
    """`explorer.widget` (documented) is the box displaying the app shows: placed in a Tab of
    the user's, it is the same view, with every figure of the app inside it."""
    w = pytest.importorskip("ipywidgets")
    assert isinstance(app.widget, w.Box)
    view = app._repr_mimebundle_()["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] == app.widget.model_id
    tabs = w.Tab([w.HTML("another app"), app.widget])
    assert tabs.children[1] is app.widget

    def inside(box):
        for child in getattr(box, "children", ()):
            yield child
            yield from inside(child)

    assert all(any(c is f for c in inside(app.widget)) for f in app.views.values())


def test_your_own_coordinates_replace_the_pca():
    s = demo_scenario()
    n = len(s.documents)
    coords = np.column_stack([np.arange(n, dtype=float), np.arange(n, dtype=float) % 7])
    own = Explorer(s, coords=coords)
    fig = own.figures["projection"]
    docs = [t for t in fig.data if t.legendgroup == "docs"]
    rows = own._trace_rows["projection"]
    for i, t in enumerate(docs):
        np.testing.assert_array_equal(np.asarray(t.x), coords[rows[i], 0])
        np.testing.assert_array_equal(np.asarray(t.y), coords[rows[i], 1])
    top = [own.shown.rows.position[i] for i in own.shown.trace.top_k]
    query = next(t for t in fig.data if t.name == "query")
    assert (query.x[0], query.y[0]) == pytest.approx(tuple(coords[top].mean(axis=0)))
    assert "your coordinates" in fig.figure_layout.xaxis.title.text
    assert not list(next(t for t in fig.data if t.name == "cluster anchors").x)


@pytest.mark.parametrize(
    ("coords", "message"),
    [
        (np.zeros((3, 2)), "must have shape"),
        (np.zeros((38, 3)), "must have shape"),
        ("abc", "must be an"),
        (np.full((38, 2), np.nan), "not finite"),
    ],
)
def test_bad_coordinates_raise_before_the_app_is_built(coords, message):
    with pytest.raises(ValueError, match=message):
        Explorer(coords=coords)


def _grid(z):
    """The density grid as a 2-D float32 array (one binary buffer on the wire, with its
    shape: no nested lists of 19,200 numbers); a plotly 6 figure holds it as a typed-array
    spec."""
    if isinstance(z, dict):
        shape = tuple(int(n) for n in z["shape"].split(","))
        return np.frombuffer(base64.b64decode(z["bdata"]), "<f4").reshape(shape).astype(float)
    z = np.asarray(z)
    assert z.ndim == 2 and z.dtype == np.float32
    spec = wire(z)
    assert spec["dtype"] == "f4" and spec["shape"] == f"{z.shape[0]}, {z.shape[1]}"
    return z.astype(float)
