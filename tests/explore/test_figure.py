"""The explorer's own figure widget: plotly.js once per kernel from the plotly package's own
file, figures sent as JSON with binary arrays, and only valid, current messages obeyed."""

from __future__ import annotations

import base64
import gzip
import json
import logging
import subprocess
import sys
from importlib.resources import files

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("plotly")
pytest.importorskip("anywidget")
ipywidgets = pytest.importorskip("ipywidgets")

from placeborag.explore import app  # noqa: E402
from placeborag.explore._figures.widgets import FigureView, bundle_loader  # noqa: E402
from placeborag.explore._figures.wire import plotly_bundle, wire  # noqa: E402

MB = 1_000_000
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def plotly_source() -> bytes:
    return files("plotly").joinpath("package_data", "plotly.min.js").read_bytes()


def send(figure, content) -> None:
    """A message from the page, through the widget's own comm handler."""
    figure._handle(figure, content, [])


def test_a_figure_widget_carries_a_small_module_not_plotly_js():
    figure = FigureView()
    assert len(figure._esm) < 20_000  # its own files (js/slot.js, js/figure.js), comments and all
    assert len(plotly_source()) > 1 * MB
    figure.show([{"type": "scatter", "name": "a", "x": np.array([1.0, 2.0])}], {"height": 300})
    assert figure.data[0].name == "a" and list(figure.data[0].x) == [1.0, 2.0]
    assert figure.figure_layout.height == 300
    assert figure.figure["revision"] == figure.revision == 1


def test_the_loader_carries_plotlys_own_bundle_gzipped_under_its_digest():
    loader = bundle_loader()
    assert loader is bundle_loader()  # one per kernel
    assert gzip.decompress(loader.bundle) == plotly_source()
    _, digest = plotly_bundle()
    assert FigureView().bundle_key == loader.bundle_key == f"placeborag.plotly-bundle.{digest}"
    assert len(loader.bundle) < len(plotly_source()) / 2


def test_a_closed_loader_is_replaced():
    first = bundle_loader()
    first.close()
    second = bundle_loader()
    assert second is not first and second.comm is not None


def test_numeric_arrays_travel_as_binary_buffers_and_strings_as_json():
    from ipywidgets.widgets.widget import _remove_buffers

    x = np.linspace(0.0, 1.0, 100_000)
    rows = np.arange(100_000, dtype=np.int64)
    figure = FigureView()
    figure.show(
        [{"type": "scattergl", "x": x, "customdata": rows, "text": np.array(["a", "b"])}], {}
    )
    state, _paths, buffers = _remove_buffers(figure.get_state())
    assert len(json.dumps(state)) < 20_000  # the arrays are not in the JSON
    trace = state["figure"]["data"][0]
    assert trace["x"]["dtype"] == "f8" and trace["customdata"]["dtype"] == "i4"
    assert trace["text"] == ["a", "b"]
    sizes = sorted(len(memoryview(b).cast("B")) for b in buffers)
    assert sizes[-2:] == [400_000, 800_000]
    assert np.array_equal(np.frombuffer(wire(x)["bdata"], dtype="<f8"), x)


def test_a_two_dimensional_array_keeps_its_shape():
    spec = wire(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert spec["dtype"] == "f4" and spec["shape"] == "2, 3"


def test_building_the_app_imports_no_plotly_widget_or_renderer_module():
    code = (
        "import sys; from placeborag.explore import app; explorer = app(); "
        "explorer.controls['k'].value = 3; "
        "heavy = [m for m in sys.modules if m.startswith(('plotly.io._renderers', "
        "'plotly.basewidget', 'plotly.graph_objs._figurewidget', 'plotly.missing_anywidget', "
        "'nbformat', 'jsonschema'))]; print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    ).stdout
    assert out.strip() == "[]"


def test_every_app_shows_the_loader_and_draws_into_its_own_figures(demo):
    explorer = app(demo)
    assert bundle_loader() in explorer.widget.children
    for name, figure in explorer.figures.items():
        assert type(figure).__name__ == "FigureView", name
        assert figure.data, name
        assert explorer.views[name].children == (figure,)


def test_output_mode_needs_no_loader(demo):
    explorer = app(demo, mode="output")
    assert not any(type(w).__name__ == "PlotlyBundle" for w in explorer.widget.children)


# -- messages from the page -------------------------------------------------------------------


def test_a_selection_message_of_the_revision_on_screen_selects_its_documents(demo):
    explorer = app(demo)
    ranking = explorer.figures["ranking"]
    returned = ranking.data[0]
    send(ranking, {"kind": "select", "revision": ranking.revision, "points": [[0, 0], [0, 1]]})
    assert len(explorer.selection) == 2
    assert ranking.selected["revision"] == ranking.revision  # highlighted in the page
    assert returned.name == "returned"
    send(ranking, {"kind": "select", "revision": ranking.revision, "points": []})
    assert explorer.selection == []
    assert ranking.selected["clear"] is True  # the box drawn in the page is removed


def test_a_click_message_inspects_the_point(demo):
    explorer = app(demo)
    projection = explorer.figures["projection"]
    send(projection, {"kind": "click", "revision": projection.revision, "point": [0, 0]})
    assert explorer.inspected is not None


def test_a_view_message_records_the_ranges_on_screen(demo):
    explorer = app(demo)
    figure = explorer.figures["projection"]
    ranges = {"xaxis": [-1.0, 1.0], "yaxis": [-0.5, 0.5]}
    send(figure, {"kind": "view", "revision": figure.revision, "ranges": ranges})
    assert figure.view == {"xaxis": (-1.0, 1.0), "yaxis": (-0.5, 0.5)}


def test_a_message_about_an_earlier_drawing_is_ignored(demo):
    """A box drawn just before a redraw names the old revision: its point numbers mean other
    documents now, so it selects nothing."""
    explorer = app(demo)
    ranking = explorer.figures["ranking"]
    old = ranking.revision
    explorer.controls["k"].value = 3
    assert ranking.revision == old + 1
    send(ranking, {"kind": "select", "revision": old, "points": [[0, 0]]})
    assert explorer.selection == [] and ranking.stale == 1


def test_a_redraw_sends_no_selection_clearing_unless_something_was_highlighted(demo):
    explorer = app(demo)
    ranking = explorer.figures["ranking"]
    explorer.controls["k"].value = 7
    assert ranking.selected == {}
    explorer.select([explorer.shown.trace.ids[0]])
    assert ranking.selected["clear"] is False
    explorer.select([])
    assert ranking.selected["clear"] is True


_JUNK = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=5)
    | st.sampled_from(["1", "select", "click", "view", "points", True, 1.9, -1, 10**30]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


def _point_junk():
    bad_number = st.sampled_from([True, False, 1.0, 1.9, "1", None, -1, 10**20])
    return st.one_of(
        st.lists(bad_number, min_size=2, max_size=2),
        st.tuples(st.integers(0, 3), bad_number).map(list),
        st.lists(st.integers(0, 3), min_size=0, max_size=3).filter(lambda p: len(p) != 2),
        st.tuples(st.integers(0, 3), st.integers(10_000, 10**9)).map(list),  # no such point
        st.tuples(st.integers(50, 10**9), st.integers(0, 3)).map(list),  # no such trace
        _JUNK,
    )


def _messages(revision: int):
    """What a page might send that must select nothing: junk, or a well-formed-looking
    message that is malformed in one field, or one about another revision."""
    stale = st.integers().filter(lambda r: r != revision)
    bad_revision = st.one_of(stale, st.sampled_from([True, 1.0, "1", None, [1]]))
    good_points = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)).map(list), max_size=4)
    return st.one_of(
        _JUNK,
        st.fixed_dictionaries(
            {"kind": st.just("select"), "revision": bad_revision, "points": good_points}
        ),
        st.fixed_dictionaries(
            {
                "kind": st.just("select"),
                "revision": st.just(revision),
                "points": st.lists(_point_junk(), min_size=1, max_size=3) | _JUNK,
            }
        ),
        st.fixed_dictionaries(
            {"kind": st.just("click"), "revision": bad_revision, "point": st.just([0, 0])}
        ),
        st.fixed_dictionaries(
            {"kind": st.just("click"), "revision": st.just(revision), "point": _point_junk()}
        ),
        st.fixed_dictionaries(
            {"kind": st.sampled_from(["select", "click", "view"]), "revision": st.just(revision)},
            optional={"points": _JUNK, "point": _JUNK, "ranges": _JUNK, "extra": _JUNK},
        ),
        st.fixed_dictionaries(
            {"kind": st.sampled_from(["pick", "Select", "", None]), "revision": st.just(revision)},
            optional={"points": good_points},
        ),
        # a resend (the page asks for the whole figure again) changes what is drawn, never
        # what is selected, whether it is well formed or not
        st.fixed_dictionaries(
            {"kind": st.just("resend"), "revision": bad_revision | st.just(revision)},
            optional={"points": good_points, "extra": _JUNK},
        ),
    )


def _obeyed(figure, message) -> bool:
    """Whether ``message`` is one the widget must act on (the protocol, written out here
    independently of the widget's own checks): then the property below does not apply."""
    if type(message) is not dict or message.get("revision") != figure.revision:
        return False
    if type(message["revision"]) is not int:
        return False

    def on_screen(p) -> bool:
        return (
            type(p) is list
            and len(p) == 2
            and all(type(v) is int and v >= 0 for v in p)
            and p[0] < len(figure.data)
            and figure.data[p[0]].x is not None
            and p[1] < len(figure.data[p[0]].x)
        )

    if message.get("kind") == "select" and set(message) == {"kind", "revision", "points"}:
        points = message["points"]
        return type(points) is list and all(on_screen(p) for p in points)
    if message.get("kind") == "click" and set(message) == {"kind", "revision", "point"}:
        return on_screen(message["point"])
    return message.get("kind") == "view"  # changes no selection, but may change the view


@pytest.fixture(scope="module")
def selected_app():
    from placeborag.explore import demo_scenario

    explorer = app(demo_scenario())
    explorer.select(list(explorer.shown.trace.ids[:2]))
    return explorer


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_malformed_and_stale_messages_never_change_the_selection_nor_raise(selected_app, data):
    explorer = selected_app
    before = list(explorer.selection)
    inspected = explorer.inspected
    for name in ("projection", "ranking"):
        figure = explorer.figures[name]
        view = dict(figure.view)
        message = data.draw(_messages(figure.revision), label=name)
        if _obeyed(figure, message):
            continue
        send(figure, message)
        assert explorer.selection == before
        assert explorer.inspected == inspected
        assert figure.view == view


def test_a_malformed_message_is_logged_once_per_figure(demo, caplog):
    explorer = app(demo)
    figure = explorer.figures["ranking"]
    with caplog.at_level(logging.WARNING, logger="placeborag.explore"):
        for junk in ("1", True, 1.9, {"kind": "select", "revision": figure.revision}, [0, 1]):
            send(figure, junk)
    assert figure.refused == 5
    assert len([r for r in caplog.records if "malformed" in r.getMessage()]) == 1
    assert explorer.selection == []


def test_point_indexes_that_are_not_ints_are_refused_not_read_as_points(demo):
    explorer = app(demo)
    figure = explorer.figures["ranking"]
    for points in (["1", "2"], [True, 0], [[0, 1.9]], [[0, True]], [[0, "1"]], [[-1, 0]]):
        send(figure, {"kind": "select", "revision": figure.revision, "points": points})
    assert explorer.selection == [] and figure.refused == 6


def test_a_row_click_through_the_tables_widget_toggles_the_document(demo):
    explorer = app(demo)
    tables = explorer.results_html
    first = explorer.shown.trace.ids[0]
    tables._handle(tables, {"kind": "row", "revision": tables.revision, "id": first}, [])
    assert explorer.selection == [first]
    tables._handle(tables, {"kind": "row", "revision": tables.revision - 1, "id": first}, [])
    tables._handle(tables, {"kind": "row", "revision": tables.revision, "id": 5}, [])
    assert explorer.selection == [first] and tables.refused == 1


@pytest.mark.slow
def test_the_executed_explorer_notebook_is_small_and_has_a_static_fallback(tmp_path):
    """As nbclient and nbconvert --execute save it: with its widget state (the default)."""
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    from notebook_run import execute_explorer_notebook

    nb = execute_explorer_notebook()
    saved = tmp_path / "explorer.ipynb"
    nbformat.write(nb, saved)
    assert saved.stat().st_size < 8 * MB

    state = nb.metadata["widgets"][WIDGET_STATE]["state"]
    ids = [model["state"].get("_anywidget_id", "") for model in state.values()]
    assert ids.count("placeborag.explore._figures.widgets.FigureView") == 4
    assert ids.count("placeborag.explore._figures.widgets.PlotlyBundle") == 1
    marker = plotly_source()[-300:].decode("utf-8")  # the bundle's trailer, stored nowhere else
    assert sum(marker in json.dumps(model) for model in state.values()) == 0
    (loader,) = (
        m for m in state.values() if m["state"].get("_anywidget_id", "").endswith("Bundle")
    )
    (buffer,) = loader["buffers"]
    assert gzip.decompress(base64.b64decode(buffer["data"])) == plotly_source()

    outputs = [o for cell in nb.cells for o in cell.get("outputs", []) if "data" in o]
    (shown,) = [o["data"] for o in outputs if WIDGET_VIEW in o["data"]]
    static = shown["text/html"]
    assert "static snapshot" in static and "<script" not in static
    assert "returned:" in static and "<li>" in static
    assert "<svg" in static and "<circle" in static  # the projection, pictured


# -- a redraw sends what changed ----------------------------------------------------------------


def _sent(figure) -> list[tuple[dict, int]]:
    """Record what the widget sends to the page from now on: (message, bytes of its buffers)."""
    messages: list[tuple[dict, int]] = []

    def record(msg, buffers=None):
        messages.append((msg, sum(memoryview(b).nbytes for b in buffers or [])))

    figure._send = record
    return messages


def _plain(value):
    """A wire value with its binary buffers as bytes (what the page decodes), for comparing."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def _resolved(state: dict) -> dict:
    """A figure or patch as the page reads it: each array's bytes out of the ``buffers`` list
    it names, back in place (as :func:`wire` has them)."""
    buffers = state.get("buffers", [])

    def back(v):
        if isinstance(v, dict):
            if "buffer" in v and "dtype" in v:
                rest = {k: x for k, x in v.items() if k != "buffer"}
                return {**rest, "bdata": bytes(buffers[v["buffer"]])}
            return {k: back(x) for k, x in v.items()}
        if isinstance(v, list):
            return [back(x) for x in v]
        return v

    return _plain(back({k: v for k, v in state.items() if k != "buffers"}))


def _on_the_page(figure_state: dict, patch: dict) -> dict:
    """What the page draws from the widget's ``figure`` and ``patch`` (the protocol written out
    independently of the widget): the patch applied to the whole figure it names."""
    figure_state, patch = _resolved(figure_state), _resolved(patch)
    if "revision" not in patch:
        return figure_state
    assert patch["base"] == figure_state["revision"]
    data = [dict(t) for t in figure_state["data"]]
    data = data[: patch["length"]] + [{} for _ in range(patch["length"] - len(data))]
    for i, changed, gone in patch["traces"]:
        data[i] = {k: v for k, v in {**data[i], **changed}.items() if k not in gone}
    layout = {**figure_state["layout"], **patch["layout"]}
    for key in patch["drop"]:
        del layout[key]
    out = {**figure_state, "revision": patch["revision"], "data": data, "layout": layout}
    return out


def _whole(traces, layout) -> dict:
    fresh = FigureView()
    fresh.show(traces, layout)
    return _resolved(fresh.figure)


def _traces(n: int, changed: int | None = None) -> list[dict]:
    out = []
    for i in range(n):
        x = np.linspace(0.0, 1.0, 10_000) + i
        if i == changed:
            x = x + 0.5
        out.append(
            {"type": "scattergl", "name": f"t{i}", "x": x, "text": [f"p{j}" for j in range(500)]}
        )
    return out


def test_a_redraw_that_changes_one_trace_sends_that_trace_s_change_and_nothing_else():
    figure = FigureView()
    figure.show(_traces(4), {"height": 300})
    messages = _sent(figure)
    figure.show(_traces(4, changed=2), {"height": 300})
    ((msg, binary),) = messages
    assert list(msg["state"]) == ["patch"]
    patch = msg["state"]["patch"]
    assert patch["base"] == 1 and patch["revision"] == 2 == figure.revision
    assert [(i, sorted(changed), gone) for i, changed, gone in patch["traces"]] == [(2, ["x"], [])]
    assert patch["layout"] == {} and patch["drop"] == []
    assert binary == 10_000 * 8  # the one changed array, as binary
    assert len(json.dumps(msg)) < 1_000
    # The widget's state still draws the whole figure (a saved notebook shows it).
    assert _on_the_page(figure.figure, figure.patch) == {
        **_whole(_traces(4, changed=2), {"height": 300}),
        "revision": 2,
    }


def test_a_k_change_at_2000_documents_sends_the_projection_a_small_patch():
    """Issue 25: the widget sent each figure whole on every change (337 KB for the
    projection at 2,000 documents), where a k change moves only the top-k rings."""
    from placeborag.explore import demo_scenario

    explorer = app(demo_scenario(2000))
    projection = explorer.figures["projection"]
    whole = len(json.dumps(_resolved(projection.figure), default=len))
    messages = _sent(projection)
    explorer.controls["k"].value = 8
    ((msg, binary),) = messages
    assert list(msg["state"]) == ["patch"]
    assert len(json.dumps(msg)) + binary < whole / 10
    assert _on_the_page(projection.figure, projection.patch)["data"] == _plain(
        wire(projection.traces)
    )


def test_a_redraw_that_changes_most_of_the_figure_sends_it_whole():
    figure = FigureView()
    figure.show(_traces(2), {})
    messages = _sent(figure)
    figure.show([{**t, "x": t["x"] * 2} for t in _traces(2)], {"height": 200})
    ((msg, _),) = messages
    assert msg["state"]["figure"]["revision"] == 2 and "revision" not in figure.patch
    figure.show([{**t, "x": t["x"] * 2} for t in _traces(2)], {"height": 300})  # a patch
    assert figure.patch["base"] == 2
    figure.show(_traces(2), {})  # most of it again: whole, and the patch cleared with it
    assert sorted(messages[-1][0]["state"]) == ["figure", "patch"]
    assert "revision" not in messages[-1][0]["state"]["patch"]
    assert figure.figure["revision"] == 4


def test_a_page_holding_another_figure_gets_the_whole_figure_again():
    figure = FigureView()
    figure.show(_traces(3), {})
    figure.show(_traces(3, changed=0), {})
    assert figure.patch["base"] == 1
    messages = _sent(figure)
    send(figure, {"kind": "resend", "revision": 1})  # about a patch since replaced
    assert messages == [] and figure.stale == 1
    send(figure, {"kind": "resend", "revision": 2})
    ((msg, _),) = messages
    assert msg["state"]["figure"]["revision"] == 2 and "revision" not in msg["state"]["patch"]
    assert figure.resent == 1 and figure.refused == 0
    # Asked again with nothing changed: the same whole figure goes again.
    send(figure, {"kind": "resend", "revision": 2})
    assert len(messages) == 2 and sorted(messages[1][0]["state"]) == ["figure", "patch"]
    for junk in (
        {"kind": "resend"},
        {"kind": "resend", "revision": "2"},
        {"kind": "resend", "revision": 2, "x": 1},
    ):
        send(figure, junk)
    assert figure.refused == 3 and len(messages) == 2


_NAMES = st.sampled_from(["a", "b", "c"])
_ARRAYS = st.one_of(
    st.lists(st.floats(-5, 5, allow_nan=False), max_size=4).map(lambda v: np.array(v, dtype=float)),
    st.lists(st.integers(0, 9), max_size=4).map(lambda v: np.array(v, dtype=np.int32)),
    st.lists(st.text(max_size=3), max_size=3),
)
_TRACE = st.fixed_dictionaries(
    {"type": st.sampled_from(["scatter", "scattergl"]), "name": _NAMES},
    optional={
        "x": _ARRAYS,
        "y": _ARRAYS,
        "text": _ARRAYS,
        "marker": st.fixed_dictionaries({}, optional={"size": st.integers(1, 9), "color": _ARRAYS}),
        "visible": st.booleans(),
    },
)
_LAYOUT = st.fixed_dictionaries(
    {},
    optional={
        "height": st.integers(100, 900),
        "title": st.fixed_dictionaries({"text": st.text(max_size=5)}),
        "annotations": st.lists(st.fixed_dictionaries({"text": st.text(max_size=4)}), max_size=3),
        "showlegend": st.booleans(),
    },
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.lists(_TRACE, max_size=4), _LAYOUT), min_size=1, max_size=6))
def test_any_sequence_of_redraws_as_patches_draws_the_whole_figure(figures):
    widget = FigureView()
    page = None  # the whole figure the page holds
    for traces, layout in figures:
        widget.show(traces, layout)
        state = widget.get_state(["figure", "patch"])
        if "revision" not in state["patch"]:
            page = state["figure"]
        else:
            assert state["patch"]["base"] == page["revision"]  # a patch names what it applies to
        drawn = _on_the_page(page, state["patch"])
        assert drawn == {**_whole(traces, layout), "revision": widget.revision}
