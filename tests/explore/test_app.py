"""The app, headless: setting a control's value redraws the figures and the tables."""

import json

import pytest

pytest.importorskip("pandas")
pytest.importorskip("sklearn")
pytest.importorskip("plotly")
pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

from placeborag.explore import CSS_CLASSES, Explorer, store_from_vectors


@pytest.fixture(scope="module")
def explorer():
    return Explorer()


def _returned(explorer, mode):
    t = explorer.tables[mode]
    return list(t.loc[t["stage"] == "returned"].sort_values("rank")["id"])


def _trace(figure, name):
    return next(t for t in figure.data if t.name == name)


def test_initial_state_matches_the_store(explorer):
    s = explorer.scenario
    assert explorer.error == ""
    for mode in ("pre", "post"):
        expected = [m.id for m in s.store(filter_mode=mode).query(s.query, s.k, s.where)]
        assert _returned(explorer, mode) == expected


@pytest.mark.parametrize(
    ("control", "value"),
    [
        ("k", 3),
        ("profile", "qdrant"),
        ("recall", 0.5),
        ("where", '{"tier": "public"}'),
        ("query", "money back"),
        ("dimensions", 64),
        ("cluster_spread", 0.3),
        ("model_name", "placebo-embed-v2"),
        ("filter_mode", "post"),
    ],
)
def test_each_control_redraws_to_what_the_store_returns(explorer, control, value):
    explorer.controls[control].value = value
    s = explorer.scenario
    assert explorer.error == ""
    expected = [m.id for m in s.store().query(s.query, s.k, s.where)]
    assert _returned(explorer, s.filter_mode) == expected
    assert len(_trace(explorer.figures["ranking"], "returned").x) == len(expected)
    assert len(_trace(explorer.figures["projection"], "top-k (rank)").x) == len(expected)


def test_colour_by_metadata_changes_the_traces(explorer):
    explorer.controls["color_by"].value = "lang"
    names = [t.name for t in explorer.figures["projection"].data]
    assert names[:2] == ["en", "hu"]
    explorer.controls["color_by"].value = "cluster"


def test_projection_toggles_to_three_d(explorer):
    explorer.controls["projection"].value = "3-D"
    assert explorer.figures["projection"].data[0].type == "scatter3d"
    explorer.controls["projection"].value = "2-D"
    assert explorer.figures["projection"].data[0].type != "scatter3d"


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ('{"lang": {"$regex": "h"}}', "unknown operator '$regex'"),
        ("{not json", "where is not valid JSON"),
    ],
)
def test_an_invalid_filter_is_shown_inline_not_raised(explorer, where, message):
    figure = explorer.figures["ranking"]
    explorer.controls["where"].value = where
    assert message in explorer.error
    assert message.split("'")[0] in explorer.error_html.value
    assert explorer.figures["ranking"] is figure
    explorer.controls["where"].value = '{"lang": "hu"}'
    assert explorer.error == ""
    assert explorer.error_html.value == ""


def test_figure_widgets_hold_their_whole_figure_in_their_state(explorer):
    # A front end that opens a view later (or restores a saved notebook) draws from the
    # widget's state alone: every trace and the layout are in it.
    for name, figure in explorer.figures.items():
        assert explorer.views[name].children == (figure,)
        # The last figure sent whole, and the patch on it (when a redraw sent only changes).
        state, patch = figure.get_state()["figure"], figure.get_state()["patch"]
        assert state["data"] and state["layout"]["template"]["layout"], name  # plotly_white
        if "revision" in patch:
            assert patch["base"] == state["revision"]
            assert patch["revision"] == figure.revision
            assert patch["length"] == len(figure.data) > 0, name
        else:
            assert state["revision"] == figure.revision
            assert len(state["data"]) == len(figure.data) > 0, name


def test_figures_are_long_lived_widgets(explorer):
    before = dict(explorer.figures)
    revisions = {name: f.revision for name, f in before.items()}
    explorer.controls["k"].value = explorer.controls["k"].value + 1
    assert all(type(f).__name__ == "FigureView" for f in explorer.figures.values())
    assert explorer.figures == before
    assert explorer.figures["ranking"].revision == revisions["ranking"] + 1


def test_selection_maps_points_to_ids_and_limits_the_export(explorer):
    # Trace 0 of the ranking holds the returned documents in insertion order.
    returned = set(_returned(explorer, explorer.scenario.filter_mode))
    first = next(d.id for d in explorer.scenario.documents if d.id in returned)
    ids = explorer.select_points("ranking", {0: [0]})
    assert ids == [first]
    code = explorer.export()
    assert explorer.export_area.value == code
    assert f'DOCUMENTS = [\n    ("{ids[0]}", ' in code  # exported corpus
    explorer.select([])


def test_output_mode_redraws_plain_figures():
    import plotly.graph_objects as go

    app = Explorer(mode="output")
    first = app.figures["ranking"]
    assert isinstance(first, go.Figure) and not isinstance(first, go.FigureWidget)
    app.controls["k"].value = 2
    assert app.figures["ranking"] is not first
    assert len(_trace(app.figures["ranking"], "returned").x) == 2


def test_css_classes_are_on_the_widgets(explorer):
    for name, control in explorer.controls.items():
        assert CSS_CLASSES[name] in control._dom_classes
    assert CSS_CLASSES["error"] in explorer.error_html._dom_classes
    assert CSS_CLASSES["results"] in explorer.results_html._dom_classes
    assert CSS_CLASSES["app"] in explorer.widget._dom_classes
    assert "placeborag-table" in explorer.results_html.value


def test_precomputed_vectors_disable_the_embedder_controls():
    import numpy as np

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(12, 8))
    texts = [f"doc {i}" for i in range(12)]
    store = store_from_vectors(
        vectors,
        [f"d{i}" for i in range(12)],
        texts,
        [{"lang": "en" if i % 2 else "hu"} for i in range(12)],
    )
    app = Explorer(store=store, query="doc 3")
    assert app.error == ""
    assert app.controls["dimensions"].disabled
    assert _returned(app, "pre")[0] == "d3"
    app.controls["query"].value = "not in the table"
    assert "no precomputed vector" in app.error
    assert json.loads(app.controls["where"].value or "null") is None


def test_embedder_changes_draw_what_a_fresh_app_draws():
    """Re-embedding (and reusing the hashed vectors across spreads) changes nothing drawn."""
    app = Explorer()
    for control, value in [
        ("cluster_spread", 0.9),
        ("model_name", "other"),
        ("cluster_spread", 0.2),
        ("dimensions", 64),
        ("cluster_spread", 0.9),
    ]:
        app.controls[control].value = value
        assert app.error == ""
        fresh = Explorer(app.scenario)
        for mode in ("pre", "post"):
            assert app.tables[mode].equals(fresh.tables[mode])
        for name in ("projection", "ranking"):
            for ours, theirs in zip(app.figures[name].data, fresh.figures[name].data):
                assert list(ours.x) == list(theirs.x)
                assert list(ours.y) == list(theirs.y)


def _plain_figure(value):
    """A figure's JSON with what may differ between equal figures taken out: trace uids,
    the dtype plotly picked for an integer array, and an emptied layout container."""
    import base64

    import numpy as np

    if isinstance(value, dict):
        if set(value) == {"dtype", "bdata"} or set(value) == {"dtype", "bdata", "shape"}:
            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
            return [float(v) for v in array.tolist()]
        return {
            k: _plain_figure(v)
            for k, v in value.items()
            if k != "uid" and not (v is None or (isinstance(v, dict) and not v))
        }
    if isinstance(value, (list, tuple, np.ndarray)):
        items = value.tolist() if isinstance(value, np.ndarray) else value
        return [_plain_figure(v) for v in items]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


def test_figures_updated_in_place_equal_figures_drawn_fresh():
    """Whatever the order of changes, each figure must end up as a freshly built app draws
    it, or the Python side (selection, exports, tests) would read stale values."""
    app = Explorer()
    for control, value in [
        ("k", 7),  # a new number of rank labels: validated
        ("model_name", "other"),  # same shapes: one unvalidated update per figure
        ("query", "parcel"),
        ("k", 3),
        ("cluster_spread", 0.9),
        ("profile", "qdrant"),
        ("projection", "3-D"),
        ("dimensions", 64),
        ("projection", "2-D"),
        ("where", '{"lang": "en"}'),
        ("filter_mode", "post"),
        ("recall", 0.4),
        ("color_by", "lang"),
        ("where", ""),
        ("k", 12),
        ("query", "refund"),
    ]:
        app.controls[control].value = value
        assert app.error == ""
        fresh = Explorer(app.scenario)
        for name in ("color_by", "projection"):
            fresh.controls[name].value = app.controls[name].value
        for name, figure in app.figures.items():
            ours = _plain_figure(figure.to_plotly_json())
            theirs = _plain_figure(fresh.figures[name].to_plotly_json())
            assert ours == theirs, (control, name)


def test_every_message_to_the_front_end_can_be_sent_by_the_kernel():
    """What a kernel does with a widget update: split out the binary buffers, each of which
    must be contiguous (jupyter_client refuses a strided one: a column of a matrix)."""
    from ipywidgets.widgets.widget import _remove_buffers

    app = Explorer()
    sent = []

    def check(change):
        if change["new"] is None:
            return
        figure = change["owner"]
        state = figure.get_state(key=change["name"])
        rest, _, buffers = _remove_buffers(state)
        json.dumps(rest)  # plain JSON apart from the buffers
        sent.append(change["name"])
        for buffer in buffers:
            assert memoryview(buffer).contiguous, (change["name"], buffer)

    for figure in app.figures.values():
        figure.observe(check, names=["figure", "selected"])
    for control, value in [
        ("profile", "qdrant"),
        ("recall", 0.4),
        ("where", '{"lang": "en"}'),
        ("filter_mode", "post"),
        ("k", 7),
        ("query", "parcel"),
        ("color_by", "lang"),
        ("projection", "3-D"),
        ("dimensions", 64),
        ("cluster_spread", 0.9),
        ("model_name", "other"),
    ]:
        app.controls[control].value = value
        assert app.error == "", (control, app.error)
    app.select(list(app.shown.trace.ids[:2]))
    assert "figure" in sent and "selected" in sent


def test_the_state_computes_every_view_without_a_widget(demo):
    from placeborag.explore._state import ExplorerState

    state = ExplorerState()
    views = state.views(demo, n_components=3, color_by="lang")
    assert views.trace.ids == views.rows.ids
    assert views.projection.coords.shape == (len(demo.documents), 3)
    assert [m.id for m in views.trace.matches] == [
        m.id for m in demo.store().query(demo.query, demo.k, demo.where)
    ]
    assert views.anchors is not None  # the demo declares clusters
    assert state.views(demo, 3, "lang").trace is views.trace  # cached per configuration


@pytest.mark.parametrize("mode", ["widget", "output"])
def test_a_json_filter_in_the_select_box_selects_every_record_it_matches(mode):
    from placeborag.explore import demo_scenario

    scenario = demo_scenario()
    explorer = Explorer(scenario, mode=mode)
    where = {"lang": "hu", "tier": "internal"}
    explorer.select_box.value = json.dumps(where)
    expected = [
        d.id for d in scenario.documents if all(d.metadata.get(k) == v for k, v in where.items())
    ]
    assert expected == ["hu-refund-5", "hu-ship-5", "hu-ship-7"]
    assert explorer.selection == expected
    assert "3 selected:" in explorer.selection_html.value
    assert "Error" not in explorer.selection_html.value
    # ids select too, and an empty box clears the selection
    explorer.select_box.value = "en-refund-1, hu-ship-2"
    assert explorer.selection == ["en-refund-1", "hu-ship-2"]
    explorer.select_box.value = ""
    assert explorer.selection == []
    # a filter the store refuses is shown, not raised, and keeps the selection
    explorer.select_box.value = '{"lang": {"$bogus": 1}}'
    assert explorer.selection == []
    assert "$bogus" in explorer.selection_html.value
