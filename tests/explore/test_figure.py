"""The explorer's figure widgets carry plotly.js once per kernel, and its notebook stays small."""

from __future__ import annotations

import base64
import gzip
import json

import pytest

go = pytest.importorskip("plotly.graph_objects")
pytest.importorskip("anywidget")
pytest.importorskip("ipywidgets")

from placeborag.explore import app  # noqa: E402
from placeborag.explore._figure import bundle_loader, figure_widget, plotly_bundle  # noqa: E402

MB = 1_000_000
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def plain(value):
    """A figure's JSON without what equal figures may differ in: trace uids, and properties
    left None or as an empty container (plotly draws those as if absent)."""
    if isinstance(value, dict):
        return {
            k: plain(v)
            for k, v in value.items()
            if k != "uid" and v is not None and not (isinstance(v, dict) and not v)
        }
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def dumps(value) -> str:
    return json.dumps(plain(value), sort_keys=True, default=repr)


def plotly_source() -> str:
    from plotly.basewidget import BaseFigureWidget

    return str(BaseFigureWidget._esm)


def test_a_figure_widget_carries_a_stub_not_plotly_js():
    figure = figure_widget(go.Figure(go.Scatter(x=[1, 2], y=[3, 4])))
    assert isinstance(figure, go.FigureWidget)
    assert len(figure._esm) < 2_000
    assert len(plotly_source()) > 1 * MB  # what plotly's own FigureWidget carries
    assert figure.data[0].x == (1, 2)


def test_the_loader_carries_plotly_js_gzipped_under_its_digest():
    loader = bundle_loader()
    assert loader is bundle_loader()  # one per kernel
    assert gzip.decompress(loader.bundle).decode("utf-8") == plotly_source()
    _, digest = plotly_bundle()
    figure = figure_widget(go.Figure())
    assert f"placeborag.plotly-bundle.{digest}" in figure._esm
    assert f"placeborag.plotly-bundle.{digest}" in loader._esm
    assert len(loader.bundle) < len(plotly_source()) / 2


def test_a_closed_loader_is_replaced():
    first = bundle_loader()
    first.close()
    second = bundle_loader()
    assert second is not first and second.comm is not None


def test_every_app_shows_the_loader_and_draws_into_stub_figures(demo):
    explorer = app(demo)
    loader = bundle_loader()
    assert loader in explorer.widget.children
    for name, figure in explorer.figures.items():
        assert len(figure._esm) < 2_000, name
    assert explorer.figures["projection"].data  # drawn


def test_output_mode_needs_no_loader(demo):
    explorer = app(demo, mode="output")
    assert not any(type(w).__name__ == "PlotlyBundle" for w in explorer.widget.children)


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
    assert ids.count("placeborag.explore._figure.FigureWidget") == 4
    assert ids.count("placeborag.explore._figure.PlotlyBundle") == 1
    marker = plotly_source()[-2000:]  # the bundle's licence trailer, stored nowhere else
    assert sum(marker in json.dumps(model) for model in state.values()) == 0
    (loader,) = (
        m for m in state.values() if m["state"].get("_anywidget_id", "").endswith("Bundle")
    )
    (buffer,) = loader["buffers"]
    assert gzip.decompress(base64.b64decode(buffer["data"])).decode("utf-8") == plotly_source()

    outputs = [o for cell in nb.cells for o in cell.get("outputs", []) if "data" in o]
    (shown,) = [o["data"] for o in outputs if WIDGET_VIEW in o["data"]]
    static = shown["text/html"]
    assert "static snapshot" in static and "<script" not in static
    assert "returned:" in static and "<li>" in static
    assert "<svg" in static and "<circle" in static  # the projection, pictured


def test_a_new_colour_takes_over_the_traces_on_screen_and_draws_what_a_fresh_app_draws(demo):
    """Colouring by another category changes the number of traces: the ones on screen are
    reused in order (deleting them all would drop the browser's WebGL scene), and the figure
    still ends up as a fresh app draws it."""
    from placeborag.explore import Explorer

    explorer = app(demo)
    figure = explorer.figures["projection"]
    options = [o for o in explorer.controls["color_by"].options if o != "cluster"]
    for value in [*options, "cluster", options[-1], "cluster"]:
        first = figure.data[0].uid
        explorer.controls["color_by"].value = value
        assert explorer.error == ""
        assert figure.data[0].uid == first
        fresh = Explorer(demo)
        fresh.controls["color_by"].value = value
        ours = figure.to_plotly_json()["data"]
        theirs = fresh.figures["projection"].to_plotly_json()["data"]
        assert dumps(ours) == dumps(theirs), value


def test_a_redraw_sends_no_selection_clearing_unless_a_box_was_drawn(demo, monkeypatch):
    """An empty ``selections`` relayout is a full redraw of every point in the browser: sent
    only to clear a box or lasso drawn in the page."""
    explorer = app(demo)
    cleared: list[str] = []
    for name in ("projection", "ranking"):
        figure = explorer.figures[name]
        send = figure._send_relayout_msg

        def spy(data, *args, _name=name, _send=send, **kwargs):
            if "selections" in data:
                cleared.append(_name)
            return _send(data, *args, **kwargs)

        monkeypatch.setattr(figure, "_send_relayout_msg", spy)
    explorer.controls["k"].value = 7
    explorer.controls["query"].value = "parcel"
    assert cleared == []
    explorer._on_bridge("ranking", [(0, 0)])  # a box drawn over the ranking's first point
    assert explorer.selection
    explorer.select([])
    assert cleared == ["ranking"]
    explorer.controls["k"].value = 4
    assert cleared == ["ranking"]
