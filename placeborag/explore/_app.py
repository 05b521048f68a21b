"""The explorer app: one ipywidgets application over every view, redrawn in place.

A control change re-runs compute and redraw only for what it invalidates. Embeddings are
cached per embedder configuration; store options (profile, filter mode, recall) reuse the
embedded rows through :func:`with_options`; the PCA fit is cached per configuration. With
``mode="widget"`` the figures are long-lived ``go.FigureWidget``s updated inside
``batch_update``; ``mode="output"`` redraws plain ``go.Figure``s into ``ipywidgets.Output``
(for Voila, Colab and other front ends without anywidget).
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from placeborag import FakeEmbedder, FakeVectorStore
from placeborag.explore._compute import (
    one_blas_thread,
)
from placeborag.explore._deps import optional
from placeborag.explore._displays import (
    ProjectionDisplay,
    RankingDisplay,
    draw,
    remember_sent,
    sent_to,
)
from placeborag.explore._export import export_pytest
from placeborag.explore._scenario import Scenario, demo_scenario
from placeborag.explore._state import ExplorerState

__all__ = ["CSS_CLASSES", "Explorer", "app"]

# Stable hooks for browser tests: control name -> CSS class (and the other key widgets).
CSS_CLASSES = {
    "query": "placeborag-query",
    "where": "placeborag-where",
    "k": "placeborag-k",
    "profile": "placeborag-profile",
    "filter_mode": "placeborag-filter-mode",
    "recall": "placeborag-recall",
    "dimensions": "placeborag-dimensions",
    "cluster_spread": "placeborag-cluster-spread",
    "model_name": "placeborag-model-name",
    "color_by": "placeborag-color-by",
    "projection": "placeborag-projection-mode",
    "error": "placeborag-error",
    "results": "placeborag-results",
    "selection": "placeborag-selection",
    "export_button": "placeborag-export-button",
    "export": "placeborag-export",
    "app": "placeborag-app",
}
FIGURES = ("projection", "ranking", "funnel", "anchors")
_EMBEDDER_CONTROLS = ("dimensions", "cluster_spread", "model_name")


def _same_key(a: Any, b: Any) -> bool:
    """Keys of drawn inputs: plain values compare by value, computed objects by identity."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same_key(x, y) for x, y in zip(a, b))
    if isinstance(a, (str, int, float, bool, type(None))):
        return type(a) is type(b) and a == b
    return a is b


class Explorer:
    """The explorer application. Display it (last expression of a cell) or use ``.widget``.

    Pass a :class:`Scenario` (default: :func:`demo_scenario`), or a ``store`` (any
    FakeVectorStore, including one over precomputed vectors) and a ``query``. With a store
    whose embedder is not a FakeEmbedder the embedder controls are disabled.
    """

    def __init__(
        self,
        scenario: Scenario | None = None,
        *,
        store: FakeVectorStore | None = None,
        query: str | None = None,
        mode: str = "widget",
        dimension_choices: Sequence[int] = (32, 64, 128, 256, 512, 1024),
        max_k: int = 20,
    ) -> None:
        if mode not in ("widget", "output"):
            raise ValueError(f"mode={mode!r} must be one of 'widget', 'output'")
        if store is not None and scenario is not None:
            raise TypeError("pass a scenario or a store, not both")
        fixed_embedder: Any = None
        if store is not None:
            scenario = Scenario.from_store(store, query or "")
            if not isinstance(store.embedder, FakeEmbedder):
                fixed_embedder = store.embedder
        scenario = scenario or demo_scenario()
        if query is not None:
            scenario = scenario.replace(query=query)
        self.mode = mode
        self.scenario = scenario
        self.selection: list[str] = []
        self.exported = ""
        self.error = ""
        self.timings: dict[str, float] = {}
        self.state = ExplorerState(fixed_embedder)
        self.phases: dict[str, float] = {}
        self._trace_rows: dict[str, dict[int, np.ndarray]] = {}
        self._drawn: dict[str, Any] = {}
        self._build_widgets(dimension_choices, max_k)
        self.refresh()

    # -- widgets ---------------------------------------------------------------------------

    def _build_widgets(self, dimension_choices: Sequence[int], max_k: int) -> None:
        w = optional("ipywidgets")
        s = self.scenario
        keys = sorted({k for d in s.documents for k in d.metadata})
        dims = sorted({*dimension_choices, s.dimensions})
        self.controls: dict[str, Any] = {
            "query": w.Text(value=s.query, description="query", continuous_update=False),
            "where": w.Textarea(
                value="" if s.where is None else json.dumps(s.where, ensure_ascii=False),
                description="where",
                placeholder='{"lang": "hu"}  (JSON; empty for no filter)',
                continuous_update=False,
            ),
            "k": w.IntSlider(
                value=s.k, min=1, max=max(max_k, s.k), description="k", continuous_update=False
            ),
            "profile": w.ToggleButtons(
                options=["chroma", "qdrant"], value=s.profile, description="profile"
            ),
            "filter_mode": w.ToggleButtons(
                options=["pre", "post"], value=s.filter_mode, description="filter mode"
            ),
            "recall": w.FloatSlider(
                value=s.recall,
                min=0.0,
                max=1.0,
                step=0.05,
                description="recall",
                continuous_update=False,
            ),
            "dimensions": w.Dropdown(options=dims, value=s.dimensions, description="dimensions"),
            "cluster_spread": w.FloatSlider(
                value=s.cluster_spread,
                min=0.0,
                max=2.0,
                step=0.05,
                description="cluster spread",
                continuous_update=False,
            ),
            "model_name": w.Text(
                value=s.model_name, description="model name", continuous_update=False
            ),
            "color_by": w.Dropdown(
                options=["cluster", *keys], value="cluster", description="colour by"
            ),
            "projection": w.ToggleButtons(
                options=["2-D", "3-D"], value="2-D", description="projection"
            ),
        }
        style = {"description_width": "100px"}
        for name, control in self.controls.items():
            control.style = (
                {**style}
                if not isinstance(control, w.ToggleButtons)
                else {**style, "button_width": "70px"}
            )
            control.add_class(CSS_CLASSES[name])
            control.observe(self._on_change, names="value")
            if self.state.fixed_embedder is not None and name in _EMBEDDER_CONTROLS:
                control.disabled = True
        self.controls["where"].layout = w.Layout(width="420px", height="56px")
        self.controls["query"].layout = w.Layout(width="420px")
        self.error_html = w.HTML().add_class(CSS_CLASSES["error"])
        self.results_html = w.HTML().add_class(CSS_CLASSES["results"])
        self.selection_html = w.HTML("<i>no selection: box or lasso select points</i>")
        self.selection_html.add_class(CSS_CLASSES["selection"])
        self.export_button = w.Button(
            description="export pytest",
            icon="download",
            tooltip="write a pytest module for this state",
        )
        self.export_button.add_class(CSS_CLASSES["export_button"])
        self.export_button.on_click(lambda _: self.export())
        self.export_area = w.Textarea(layout=w.Layout(width="100%", height="260px"))
        self.export_area.add_class(CSS_CLASSES["export"])
        self.figures: dict[str, Any] = dict.fromkeys(FIGURES)
        if self.mode == "widget":
            # Each FigureWidget is made from its first drawing (see _draw), so that it opens
            # in the front end with its traces in its initial state: updates sent while the
            # front end is still loading the widget's model can be lost.
            self.views = {name: w.Box(layout=w.Layout(width="100%")) for name in FIGURES}
        else:
            self.views = self.outputs = {name: w.Output() for name in FIGURES}
        views = self.views
        c = self.controls
        column = w.Layout(flex="1 1 0", min_width="430px")
        controls = w.HBox(
            [
                w.VBox(
                    [c["query"], c["where"], c["k"], c["color_by"], c["projection"]], layout=column
                ),
                w.VBox([c["profile"], c["filter_mode"], c["recall"]], layout=column),
                w.VBox([c["dimensions"], c["cluster_spread"], c["model_name"]], layout=column),
            ],
            layout=w.Layout(flex_flow="row wrap"),
        )
        self.widget = w.VBox(
            [
                w.HTML("<h3>placeborag explorer</h3>"),
                controls,
                self.error_html,
                views["projection"],
                views["ranking"],
                w.HTML("<h4>Pre- versus post-filter</h4>"),
                self.results_html,
                views["funnel"],
                views["anchors"],
                w.HBox([self.export_button, self.selection_html]),
                self.export_area,
            ]
        )
        self.widget.add_class(CSS_CLASSES["app"])

    def _ipython_display_(self) -> None:
        optional("IPython.display").display(self.widget)

    # -- state -----------------------------------------------------------------------------

    def _scenario_from_controls(self) -> Scenario:
        c = self.controls
        raw = c["where"].value.strip()
        try:
            where = json.loads(raw) if raw else None
        except json.JSONDecodeError as exc:
            raise ValueError(f"where is not valid JSON: {exc}") from None
        return self.scenario.replace(
            query=c["query"].value,
            where=where,
            k=c["k"].value,
            profile=c["profile"].value,
            filter_mode=c["filter_mode"].value,
            recall=float(c["recall"].value),
            dimensions=int(c["dimensions"].value),
            cluster_spread=float(c["cluster_spread"].value),
            model_name=c["model_name"].value,
        )

    def _on_change(self, change: dict[str, Any]) -> None:
        self.refresh(changed=change["owner"].description)

    def refresh(self, changed: str | None = None) -> None:
        """Recompute and redraw every view from the controls; errors are shown, not raised."""
        start = time.perf_counter()
        self.state.phases = self.phases = {}
        try:
            scenario = self._scenario_from_controls()
            with one_blas_thread():  # small products: threads only add contention
                self._redraw(scenario)
        except Exception as exc:  # the app must survive any bad input; show it instead
            self.error = f"{type(exc).__name__}: {exc}"
            self.error_html.value = (
                f'<div style="color:#B00020;white-space:pre-wrap">{html.escape(self.error)}</div>'
            )
        else:
            self.scenario = scenario
            self.error = ""
            self.error_html.value = ""
        self.timings[changed or "initial"] = (time.perf_counter() - start) * 1000

    def _redraw(self, s: Scenario) -> None:
        n_components = 3 if self.controls["projection"].value == "3-D" else 2
        views = self.state.views(s, n_components, self.controls["color_by"].value)
        self.phases = self.state.phases
        tables_key = views.tables_key
        if not _same_key(self._drawn.get("tables"), tables_key):
            filters = self.state.filter_modes(views)
            self.tables = filters.tables
            self.results_html.value = self.state.timed("tables", filters.to_html)
            self._draw("funnel", filters, tables_key)
        self._draw("projection", ProjectionDisplay(views.projection), views.projection_key)
        self._draw("ranking", RankingDisplay(views.projection), views.ranking_key)
        if views.anchors is not None:
            self._draw("anchors", views.anchors, views.anchors_key)

    def _draw(self, name: str, display: Any, key: Any) -> None:
        """Draw ``display`` unless what is on screen was drawn from the same inputs (``key``)."""
        if name in self._drawn and _same_key(self._drawn[name], key):
            return
        self.state.timed(f"draw {name}", lambda: self._draw_now(name, display, key))

    def _draw_now(self, name: str, display: Any, key: Any) -> None:
        self._drawn[name] = key
        if name == "funnel":
            self._drawn["tables"] = key
        if self.mode == "widget":
            if self.figures[name] is None:
                first = display.plot().figure_
                widget = optional("plotly.graph_objects").FigureWidget(first)
                remember_sent(widget, *sent_to(first))
                widget.observe(self._replay_on_new_view, names="_view_count")
                self.figures[name] = widget
                self.views[name].children = (widget,)
            else:
                display.plot(self.figures[name])
            if name in ("projection", "ranking"):
                self._watch_selection(name, display)
            return
        display.plot()
        self.figures[name] = display.figure_
        out = self.outputs[name]
        ipy = optional("IPython.display")
        with out:
            out.clear_output(wait=True)
            ipy.display(display.figure_)

    @staticmethod
    def _replay_on_new_view(change: dict[str, Any]) -> None:
        """Send a figure whole again once a front end has opened a view of it.

        plotly's front-end model can come up with an empty figure when the widget's first
        state arrives while its JavaScript is still loading (seen in JupyterLab, one page
        load in a few). A view reports itself through ``_view_count`` only once the model
        is ready, so the traces and the layout sent now are drawn.
        """
        if (change["new"] or 0) <= (change["old"] or 0):
            return
        figure = change["owner"]
        traces, layout = sent_to(figure)
        figure.data = ()
        figure.layout = {}
        remember_sent(figure, (), {})
        draw(figure, traces, layout)

    # -- selection and export --------------------------------------------------------------

    def _watch_selection(self, name: str, display: Any) -> None:
        p = display.projection
        if name == "projection":
            groups = [np.flatnonzero(p.labels == label) for label in p.label_order]
        else:
            from placeborag.explore._access import STATUSES

            groups = [np.flatnonzero(p.trace.status == status) for status in STATUSES]
        self._trace_rows[name] = dict(enumerate(groups))
        self._ids = p.ids
        fig = self.figures[name]
        for i in range(len(groups)):
            fig.data[i].on_selection(self._selection_handler(name, i))

    def _selection_handler(self, name: str, index: int) -> Callable[..., None]:
        def handler(trace: Any, points: Any, selector: Any) -> None:
            self.select_points(name, {index: list(points.point_inds)})

        return handler

    def select_points(self, figure: str, points: dict[int, Sequence[int]]) -> list[str]:
        """Select documents by (trace index -> point indices) of a figure; returns their ids.

        What a box or lasso selection in the front end calls; public so a test (or a script)
        can do the same without a browser.
        """
        rows = self._trace_rows[figure]
        chosen = [self._ids[int(rows[t][i])] for t, inds in points.items() for i in inds]
        return self.select(chosen)

    def select(self, ids: Sequence[str]) -> list[str]:
        """Set the selection (ids), which the exported pytest module is limited to."""
        self.selection = list(dict.fromkeys(ids))
        shown = ", ".join(html.escape(i) for i in self.selection[:12])
        more = f" and {len(self.selection) - 12} more" if len(self.selection) > 12 else ""
        self.selection_html.value = (
            f"<b>{len(self.selection)} selected:</b> {shown}{more}"
            if self.selection
            else "<i>no selection: box or lasso select points</i>"
        )
        return self.selection

    def export(self) -> str:
        """A pytest module for the current state (the selection, if any, else every document)."""
        self.exported = export_pytest(self.scenario, selection=self.selection or None)
        self.export_area.value = self.exported
        return self.exported


def app(scenario: Scenario | None = None, **kwargs: Any) -> Explorer:
    """Build an :class:`Explorer` (same arguments)."""
    return Explorer(scenario, **kwargs)
