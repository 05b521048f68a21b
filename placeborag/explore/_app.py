"""The explorer app: one ipywidgets application over every view, redrawn in place.

A control change re-runs compute and redraw only for what it invalidates. Embeddings are
cached per embedder configuration; store options (profile, filter mode, recall) reuse the
embedded rows through :func:`with_options`; the PCA fit is cached per configuration. With
``mode="widget"`` the figures are long-lived figure widgets of the explorer's own
(:mod:`placeborag.explore._figures.widgets`), each redrawn with the display's figure spec;
``mode="output"`` redraws plain ``go.Figure``s into ``ipywidgets.Output`` (for Voila, Colab
and other front ends without anywidget).
"""

from __future__ import annotations

import html
import inspect
import itertools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from placeborag import (
    FakeEmbedder,
    FakeVectorStore,
    PlaceboragTypeError,
    PlaceboragValueError,
)
from placeborag._documents import document_metadata, document_text
from placeborag._threads import gc_paused
from placeborag._validation import did_you_mean, json_text, load_json
from placeborag.explore._access import check_instance
from placeborag.explore._compute import checked_dimensions, one_blas_thread
from placeborag.explore._controls import (
    CONTROLS,
    CSS_CLASSES,
    SETTINGS,
    Room,
    checked_settings,
    control,
    grouped,
    make_widget,
    scenario_values,
)
from placeborag.explore._deps import optional
from placeborag.explore._export import MAX_DOCUMENTS, Export, build_export
from placeborag.explore._export_panel import ExportPanel
from placeborag.explore._figures import ProjectionDisplay, RankingDisplay, state_line
from placeborag.explore._figures.wire import prepare_bundle
from placeborag.explore._inspect import explain_row, inspect_html
from placeborag.explore._scenario import Scenario, demo_scenario, metadata_keys
from placeborag.explore._state import ExplorerState
from placeborag.explore._static import projection_svg
from placeborag.explore._umap import check_projection, require_umap
from placeborag.toolkit import check_choice, check_k, check_str, shown

if TYPE_CHECKING:
    from placeborag.explore._figures.widgets import BusyStatus

__all__ = ["CSS_CLASSES", "Explorer", "app"]

FIGURES = ("projection", "ranking", "funnel", "anchors")
_APPS = itertools.count(1)
_NOT_MATCHING = ("filtered out", "unreachable")
# The app's style (a failed redraw's views dimmed, the groups' layout by the app's width, ...).
_CSS = (files("placeborag.explore") / "app.css").read_text(encoding="utf-8")
# The busy indicator's words for the phases of a redraw (ExplorerState.timed's names).
_STEPS = {
    "embed": "embedding the documents",
    "trace": "tracing the query",
    "pca": "fitting the PCA",
    "umap": "fitting UMAP",
    "project": "projecting",
    "tables": "building the tables",
    "anchors": "measuring the anchors",
}
FOUND = 10  # matches listed by the find box


def _checked_coords(coords: Any, n: int) -> np.ndarray | None:
    """The user's own 2-D coordinates as an (n, 2) float64 array (one row per document, in
    the store's order), or None; anything else raises before the app is built."""
    if coords is None:
        return None
    try:
        array = np.array(coords, dtype=np.float64)
    except (TypeError, ValueError):
        raise PlaceboragValueError(
            f"coords={_shown(coords)} must be an (n, 2) array of numbers, one row per document"
        ) from None
    if array.shape != (n, 2):
        raise PlaceboragValueError(
            f"coords of shape {array.shape} must have shape ({n}, 2): one (x, y) row per "
            "document, in the store's order"
        )
    if not np.isfinite(array).all():
        raise PlaceboragValueError("coords holds a value that is not finite; every one must be")
    array.flags.writeable = False
    return array


def _shown(value: Any) -> str:
    return shown(value, 60)


def _check_scenario(s: Scenario) -> None:
    """Refuse a scenario the app could not show as given, with the store's or the embedder's
    own error naming the field: an empty store of its options is cheap to make."""
    FakeVectorStore(embedder=FakeEmbedder(**s.embedder_options), **s.store_options)
    check_k(s.k, "k")


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
    FakeVectorStore, including one over precomputed vectors) and a ``query``: the views then
    read the store's own records and vectors (its ``with_options`` twins under the controls'
    options; nothing is copied or embedded again). With a store whose embedder is not a
    FakeEmbedder the embedder controls are disabled. ``coords``: your own 2-D coordinates
    (an (n, 2) array, one row per document in the store's order, e.g. a UMAP you computed)
    drawn instead of the PCA in 2-D; the query sits at its top-k's centroid. ``projection``:
    ``"pca"`` (the default) or ``"umap"`` (needs the ``umap`` extra), the method control's
    first value.
    """

    def __init__(
        self,
        scenario: Scenario | None = None,
        *,
        store: FakeVectorStore | None = None,
        query: str | None = None,
        mode: str = "widget",
        dimension_choices: Sequence[int] = (32, 64, 128, 256, 512, 1024),
        max_k: int = 50,
        coords: Any = None,
        projection: str = "pca",
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        check_instance(scenario, "scenario", Scenario, "a Scenario or None", none=True)
        check_instance(store, "store", FakeVectorStore, "a FakeVectorStore or None", none=True)
        if query is not None:
            check_str(query, "query")
        check_choice(mode, "mode", ("widget", "output"))
        if mode == "widget":
            prepare_bundle()  # plotly.js gzipped on a second thread while the app is built
        dimension_choices = checked_dimensions(dimension_choices, "dimension_choices")
        check_k(max_k, "max_k")
        if check_projection(projection) == "umap":
            require_umap()  # asked for by name: a missing extra raises here, not in the app
        if store is not None and scenario is not None:
            raise PlaceboragTypeError("pass a scenario or a store, not both")
        fixed_embedder: Any = None
        if store is not None:
            scenario = Scenario.from_store(store, query or "")
            if not isinstance(store.embedder, FakeEmbedder):
                fixed_embedder = store.embedder
        scenario = scenario or demo_scenario()
        if query is not None:
            scenario = scenario.replace(query=query)
        if settings:
            scenario = scenario.replace(**checked_settings(settings, scenario))
        if store is None:
            _check_scenario(scenario)
        self.mode = mode
        self.scenario = scenario
        self.selection: list[str] = []
        self.error = ""
        self.timings: dict[str, float] = {}
        self.state = ExplorerState(
            fixed_embedder, _checked_coords(coords, len(scenario.documents)), store=store
        )
        self._app_class = f"placeborag-app-{next(_APPS)}"
        self._views: Any = None  # the last views drawn (a failed redraw keeps them)
        self._syncing = False
        self.phases: dict[str, float] = {}
        self._trace_rows: dict[str, dict[int, np.ndarray]] = {}
        self._ids: list[str] = []
        self._id_set: frozenset[str] = frozenset()
        self._id_array = np.zeros(0, dtype=object)
        self._drawn: dict[str, Any] = {}
        self._filters: Any = None  # the tables drawn last (re-rendered to mark a selection)
        self.inspected: str | None = None  # the document the inspect panel shows
        self._build_widgets(dimension_choices, max_k, projection)
        self.refresh()

    # -- widgets ---------------------------------------------------------------------------

    def _build_widgets(
        self, dimension_choices: Sequence[int], max_k: int, projection: str = "pca"
    ) -> None:
        w = optional("ipywidgets")
        self._make_controls(w, dimension_choices, max_k, projection)
        self._make_panels(w)
        self._make_views(w)
        self.widget = self._lay_out(w)
        self.widget.add_class(CSS_CLASSES["app"]).add_class(self._app_class)

    def _make_controls(
        self, w: Any, dimension_choices: Sequence[int], max_k: int, projection: str
    ) -> None:
        """The controls (:data:`CONTROLS`), each showing the scenario's own value, observed
        for changes; with a store of the user's own vectors the embedder's are disabled."""
        s = self.scenario
        room = Room(dimension_choices, max_k, projection, metadata_keys(s.documents))
        self._room = room
        self.controls: dict[str, Any] = {}
        for c in CONTROLS:
            control = self.controls[c.name] = make_widget(w, c, s, room)
            control.observe(self._on_change, names="value")
            if self.state.fixed_embedder is not None and c.group == "embedder":
                control.disabled = True
        self.apply_button = w.Button(
            description="apply", tooltip="apply the where filter", layout=w.Layout(width="60px")
        )
        self.apply_button.add_class(CSS_CLASSES["apply"])
        self.apply_button.on_click(lambda _: self.refresh(changed="apply"))
        # Says why a control changes nothing here (updated with every drawing).
        self.semantics_note = w.HTML("").add_class("placeborag-note")

    def _make_panels(self, w: Any) -> None:
        """The messages, the selection, find and inspect, and the export panel."""
        side = w.Layout(width="100%")
        self.status: BusyStatus | None = None
        if self.mode == "widget":
            # The widget classes import anywidget: only a widget-mode app needs it.
            from placeborag.explore._figures.widgets import BusyStatus, HtmlPanel

            self.status = BusyStatus()
        self.error_html = w.HTML().add_class(CSS_CLASSES["error"])
        self.stale_html = w.HTML("").add_class(CSS_CLASSES["stale"])
        # The tables answer row clicks through their own widget's messages (widget mode).
        self.results_html = (
            HtmlPanel(self._on_row) if self.mode == "widget" else w.HTML()
        ).add_class(CSS_CLASSES["results"])
        self.selection_html = w.HTML(self._selection_hint(), layout=side)
        self.selection_html.add_class(CSS_CLASSES["selection"])
        self.select_box = w.Text(
            description="select",
            placeholder="ids, comma-separated, or a JSON filter",
            continuous_update=False,
            layout=side,
            style={"description_width": "50px"},
        ).add_class(CSS_CLASSES["select_box"])
        self.select_box.observe(self._on_select_box, names="value")
        self.clear_button = w.Button(description="clear selection", icon="times")
        self.clear_button.add_class(CSS_CLASSES["clear"])
        self.clear_button.on_click(lambda _: self.select([]))
        self.find_box = w.Text(
            description="find",
            placeholder="an id or words of a text; Enter finds",
            continuous_update=False,
            layout=side,
            style={"description_width": "50px"},
        ).add_class(CSS_CLASSES["find"])
        self.find_box.observe(lambda c: self.find(str(c["new"])), names="value")
        self.inspect_html = w.HTML(
            "<i>click a point (or find a document) to see where the query left it and why</i>",
            layout=side,
        ).add_class(CSS_CLASSES["inspect"])
        self.export_panel = ExportPanel(
            lambda **options: self._busy_while(
                self._export_note(), lambda: self._export_from_screen(**options)
            )
        )
        # The panel's widgets under their old names (scripts and tests use them).
        self.export_button = self.export_panel.button
        self.export_area = self.export_panel.area
        self.preview_html = self.export_panel.preview_html

    def _make_views(self, w: Any) -> None:
        """A container per figure: the figure widget goes in at its first drawing."""
        self.figures: dict[str, Any] = dict.fromkeys(FIGURES)
        if self.mode == "widget":
            self.views = {name: w.Box(layout=w.Layout(width="100%")) for name in FIGURES}
        else:
            self.views = self.outputs = {
                name: w.Output(layout=w.Layout(width="100%")) for name in FIGURES
            }
        for name, view in self.views.items():
            view.add_class("placeborag-figure").add_class(f"placeborag-figure-{name}")
        self.results_html.add_class("placeborag-figure")

    def _group(self, w: Any, title: str, items: Sequence[Any], note: str = "") -> Any:
        head = w.HTML(f'<div class="placeborag-group-title">{html.escape(title)}</div>{note}')
        box = w.VBox([head, *items], layout=w.Layout(margin="0 12px 4px 0"))
        return box.add_class("placeborag-group").add_class(f"placeborag-group-{title}")

    def _laid_out(self, w: Any, group: str) -> list[Any]:
        """The widgets of a group of controls, each followed by the app widget it names."""
        beside = {"apply": self.apply_button, "semantics_note": self.semantics_note}
        out: list[Any] = []
        for c in grouped(group):
            control = self.controls[c.name]
            if c.after == "apply":  # the where filter's apply button on its own row
                out.append(w.HBox([control, beside[c.after]]))
            else:
                out += [control, beside[c.after]] if c.after else [control]
        return out

    def _embedder_group(self, w: Any) -> Any:
        fixed = self.state.fixed_embedder
        if fixed is None:
            return self._group(w, "embedder", self._laid_out(w, "embedder"))
        # A store of the user's own vectors: its controls would show values that are not the
        # store's, and change nothing; they stay (disabled) but hidden, and a note says why.
        for c in grouped("embedder"):
            self.controls[c.name].layout.display = "none"
        name = getattr(fixed, "model_name", type(fixed).__name__)
        note = (
            f'<div class="placeborag-note">the store\'s own vectors ({html.escape(str(name))}):'
            " nothing to re-embed</div>"
        )
        return self._group(w, "embedder", self._laid_out(w, "embedder"), note)

    def _lay_out(self, w: Any) -> Any:
        """Four groups of controls above the views; beside the views, a side panel (the
        selection, find and inspect, the export) that grows without moving the plots."""
        views = self.views
        groups = w.HBox(
            [
                self._group(w, "query", self._laid_out(w, "query")),
                self._group(w, "store", self._laid_out(w, "store")),
                self._embedder_group(w),
            ],
            layout=w.Layout(flex_flow="row wrap", align_items="flex-start"),
        ).add_class("placeborag-controls")
        # The view choices sit right above the views they change.
        toolbar = w.HBox(
            self._laid_out(w, "view"),
            layout=w.Layout(flex_flow="row wrap", align_items="center"),
        ).add_class("placeborag-view-controls")
        below = [
            w.HTML("<h4>Pre- versus post-filter</h4>"),
            self.results_html,
            views["funnel"],
            views["anchors"],
        ]
        for item in below:  # a narrow app puts the side panel between these and the plots
            item.add_class("placeborag-below-side")
        plots = w.VBox(
            [toolbar, views["projection"], views["ranking"], *below],
            layout=w.Layout(flex="1 1 560px", min_width="480px"),
        ).add_class("placeborag-plots")
        side = w.VBox(
            [
                w.HTML('<div class="placeborag-group-title">selection</div>'),
                self.select_box,
                self.clear_button,
                self.selection_html,
                w.HTML('<div class="placeborag-group-title">export</div>'),
                self.export_panel.widget,
                # Last: the inspect panel grows downwards, moving nothing but itself.
                w.HTML('<div class="placeborag-group-title">find and inspect</div>'),
                self.find_box,
                self.inspect_html,
            ],
            layout=w.Layout(flex="0 0 330px", width="330px", margin="0 0 0 12px"),
        ).add_class("placeborag-side")
        header = [
            w.HTML(f"<style>{_CSS}</style><b class='placeborag-title'>placeborag explorer</b>")
        ]
        if self.status is not None:
            header.append(self.status)
        parts = [
            w.HBox(header, layout=w.Layout(align_items="center")),
            groups,
            self.error_html,
            self.stale_html,
            w.HBox([plots, side], layout=w.Layout(flex_flow="row wrap", width="100%")).add_class(
                "placeborag-body"
            ),
        ]
        if self.mode == "widget":
            from placeborag.explore._figures.widgets import bundle_loader

            parts.append(bundle_loader())  # plotly.js, once for every figure of the kernel
        return w.VBox(parts, layout=w.Layout(width="100%"))

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The app's widget view, plus a static HTML snapshot (the state line, a picture of
        the projection, the top-k and the pre/post tables) that nbconvert, GitHub and front
        ends without widgets show."""
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self.static_html()
        return bundle

    def static_html(self) -> str:
        """The state on screen as plain HTML: no script, every user string escaped, with the
        projection as an inline SVG picture."""
        views = self._views
        if views is None:
            return f"<p>placeborag explorer: {html.escape(self.error or 'nothing drawn')}</p>"
        t = views.trace
        # What the store returns (after a post-filter), not the top-k cut before it.
        top = "".join(f"<li>{html.escape(m.id)}</li>" for m in t.matches)
        return (
            '<div class="placeborag-static"><h3>placeborag explorer (static snapshot)</h3>'
            f"<p>{len(t.ids)} documents · query {html.escape(repr(t.text))} · k={t.k}<br>"
            f"{html.escape(state_line(t))}</p>{projection_svg(views.projection)}"
            f"<p>returned:</p><ol>{top or '<i>nothing is returned</i>'}</ol>"
            f"{self.results_html.value}<p><i>Run the notebook with ipywidgets for the "
            "interactive views.</i></p></div>"
        )

    # -- state -----------------------------------------------------------------------------

    def _scenario_from_controls(self) -> Scenario:
        return self.scenario.replace(**scenario_values(self.controls))

    def _on_change(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        changed = next(c for c in CONTROLS if self.controls[c.name] is change["owner"])
        if changed.resets:
            # A new profile brings its own metrics: offer them, starting from its default.
            s = self.scenario.replace(
                **{changed.name: changed.read(change["new"])},
                **dict.fromkeys(changed.resets),
            )
            self._syncing = True
            try:
                for name in changed.resets:
                    c, widget = control(name), self.controls[name]
                    if c.options is not None:
                        widget.options = c.options(s, self._room)
                    widget.value = c.shown(s, self._room)
            finally:
                self._syncing = False
        self.refresh(changed=change["owner"].description)

    def _busy_while(self, note: str, work: Any) -> Any:
        """Run ``work()`` with ``note`` in the busy indicator, and each phase of the views'
        computation as its step (the page shows them, and dims the views, only past half a
        second, then counts the seconds)."""
        if self.status is None:
            return work()
        status = self.status

        def step(phase: str) -> None:
            words = _STEPS.get(phase) or (
                f"drawing the {phase[5:]}" if phase.startswith("draw ") else phase
            )
            if status.step != words:
                status.step = words

        self.state.on_phase = step
        status.busy = note
        try:
            return work()
        finally:
            self.state.on_phase = None
            status.step = ""
            status.busy = ""

    def _refresh_note(self, changed: str | None = None) -> str:
        """What a redraw from the controls is about to do, for the busy indicator."""
        try:
            scenario = self._scenario_from_controls()
        except Exception:
            return "updating the views"
        n = len(scenario.documents)
        anew = self.state.embeds(scenario)
        if self.controls["method"].value == "umap" and (anew or changed == "method"):
            return f"fitting UMAP to {n:,} documents (the first fit compiles: up to ~15 s)"
        if anew:
            return f"re-embedding {n:,} documents"
        return f"updating the views of {n:,} documents"

    def _export_note(self) -> str:
        count = len(self.selection) or "the top-k"
        return f"writing the pytest module for {count} documents"

    def _show_semantics_note(self) -> None:
        """The semantics toggle changes only $ne/$nin over records without the key: say so
        when the filter on screen has neither."""
        where = json_text(self.scenario.where) if self.scenario.where is not None else ""
        self.semantics_note.value = (
            ""
            if '"$ne"' in where or '"$nin"' in where
            else "semantics: no effect (no $ne/$nin in the filter)"
        )

    def refresh(self, changed: str | None = None) -> None:
        """Recompute and redraw every view from the controls; errors are shown, not raised."""
        if self.status is not None and changed is not None:
            self._busy_while(self._refresh_note(changed), lambda: self._refresh(changed))
        else:
            self._refresh(changed)
        self._show_semantics_note()

    def _refresh(self, changed: str | None = None) -> None:
        start = time.perf_counter()
        self.state.phases = self.phases = {}
        released = False
        try:
            scenario = self._scenario_from_controls()
            if self._views is not None and self.state.embeds_anew(scenario):
                # A large store embedded anew: the views on screen (and the store they hold)
                # are let go of first, not kept beside the new one (a failure rebuilds them).
                self._views = None
                released = True
            with one_blas_thread():  # small products: threads only add contention
                self._redraw(scenario)
        except Exception as exc:  # the app must survive any bad input; show it instead
            if released and self._views is None:
                self._restore_views()
            self.error = f"{type(exc).__name__}: {exc}"
            self.error_html.value = (
                f'<div style="color:#B00020;white-space:pre-wrap">{html.escape(self.error)}</div>'
            )
            if self._views is not None:
                self.widget.add_class("placeborag-stale")
                # What is drawn, not what the controls now say (a UMAP toggle that failed
                # leaves the PCA on screen, and says so).
                self.stale_html.value = (
                    "The views below are stale: showing the last valid state "
                    f"({html.escape(self._views.projection.method)}, "
                    f"where={html.escape(json_text(self.scenario.where))})."
                )
        else:
            self.scenario = scenario
            self.error = ""
            self.error_html.value = ""
            self.stale_html.value = ""
            self.widget.remove_class("placeborag-stale")
        self.export_panel.mark_stale()
        self.timings[changed or "initial"] = (time.perf_counter() - start) * 1000

    def _restore_views(self) -> None:
        """The views of the last valid state again, after a failed change let them go."""
        n_components = 3 if self.controls["projection"].value == "3-D" else 2
        try:
            with one_blas_thread():
                self._views = self.state.views(
                    self.scenario,
                    n_components,
                    self.controls["color_by"].value,
                    self.controls["method"].value,
                )
        except Exception:  # nothing valid to fall back on: the error is shown either way
            self._views = None

    def _redraw(self, s: Scenario) -> None:
        n_components = 3 if self.controls["projection"].value == "3-D" else 2
        views = self.state.views(
            s, n_components, self.controls["color_by"].value, self.controls["method"].value
        )
        self._views = views
        self.phases = self.state.phases
        self._index_ids(views.projection.ids)
        # The point clouds first: the browser starts on their redraw, the longest part of a
        # change at scale, while the kernel makes the tables.
        self._draw("projection", ProjectionDisplay(views.projection), views.projection_key)
        self._draw("ranking", RankingDisplay(views.projection), views.ranking_key)
        tables_key = views.tables_key
        if not _same_key(self._drawn.get("tables"), tables_key):
            filters = self.state.filter_modes(views)
            self.tables = filters.tables
            self._filters = filters
            self.results_html.value = self.state.timed(
                "tables", lambda: filters.to_html(selected=self.selection)
            )
            self._draw("funnel", filters, tables_key)
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
            figure = self.figures[name]
            if figure is None:
                from placeborag.explore._figures.widgets import FigureView

                figure = self.figures[name] = FigureView()
                figure.on_select = lambda points, name=name: self._on_select(name, points)
                figure.on_click = lambda point, name=name: self._on_click(name, point)
                self.views[name].children = (figure,)
            figure.show(*display.spec())
            if name in ("projection", "ranking"):
                self._watch_selection(name, display)
            return
        display.plot()
        if name in ("projection", "ranking"):
            # Nothing selects with the mouse here (the select box does): offer zoom, not boxes.
            display.figure_.update_layout(dragmode="zoom", modebar_remove=["select2d", "lasso2d"])
        self.figures[name] = display.figure_
        out = self.outputs[name]
        ipy = optional("IPython.display")
        with out:
            out.clear_output(wait=True)
            ipy.display(display.figure_)

    # -- selection and export --------------------------------------------------------------

    def _watch_selection(self, name: str, display: Any) -> None:
        """Remember which documents each trace of a figure draws, in point order, so a
        selection's (trace, point) pairs map back to ids; then show the selection on it."""
        p = display.projection
        # Projection: a trace per category, then the top-k rings; ranking: one per status.
        self._trace_rows[name] = dict(enumerate(display.groups()))
        self._index_ids(p.ids)
        self._show_selection(name)

    def _index_ids(self, ids: Any) -> None:
        """Index the ids on screen, which :meth:`select` accepts (in every mode)."""
        if ids is not self._ids:  # a new snapshot of ids: index it once, not per click
            self._ids = ids
            self._id_set = frozenset(ids)
            self._id_array = np.array(ids, dtype=object)

    def _show_selection(self, name: str) -> None:
        """Highlight the selected documents still present in figure ``name`` (plotly dims the
        others), or clear the highlight (and a box or lasso drawn) when nothing is selected."""
        figure = self.figures.get(name)
        rows = self._trace_rows.get(name)
        if figure is None or rows is None or self.mode != "widget":
            return
        chosen = list(self.selection)
        ids = self._id_array
        values: dict[int, list[int] | None] = {}
        for i, members in rows.items():
            if not chosen:
                values[i] = None
            else:
                values[i] = np.flatnonzero(np.isin(ids[members], chosen)).tolist()
        figure.show_selection(values)

    def _on_select(self, figure: str, points: list[tuple[int, int]]) -> None:
        """A box or lasso selection made in the page (every trace's points at once)."""
        grouped: dict[int, list[int]] = {}
        for trace, point in points:
            grouped.setdefault(trace, []).append(point)
        self.select_points(figure, grouped)

    def _on_click(self, figure: str, point: tuple[int, int]) -> None:
        """A click on a point in the front end: inspect that document."""
        rows = self._trace_rows.get(figure, {})
        trace, index = point
        if trace in rows and 0 <= index < len(rows[trace]):
            self._show_inspected(self._explain_at(int(rows[trace][index])))

    def _on_row(self, doc_id: str, occurrence: int = 0) -> None:
        """A click on a table row: that document in or out of the selection, and inspected
        (the row's own record, for an id stored more than once)."""
        if doc_id not in self._id_set:
            return
        chosen = [i for i in self.selection if i != doc_id]
        if len(chosen) == len(self.selection):
            chosen.append(doc_id)
        self.select(chosen)
        try:
            self.inspect(doc_id, occurrence)
        except PlaceboragValueError:  # a row of an earlier state: its newest record
            self.inspect(doc_id)

    def explain(self, doc_id: str, occurrence: int | None = None) -> dict[str, Any]:
        """Where the query on screen left document ``doc_id`` and why, from the store's trace:
        its stage, rank, place at the cut, score against the cut's, the trace's own sentence
        (:meth:`placeborag.QueryTrace.why`), its tie group and the rule that ordered it, and its
        nearest documents (cosine of the stored vectors). For an id stored more than once,
        ``occurrence`` picks its record (0 for the first); None explains the newest."""
        views = self._views
        if views is None:
            raise PlaceboragValueError("nothing to explain: the app has not drawn a valid state")
        i = views.rows.at(doc_id, occurrence)
        return self._explain_at(i)

    def _explain_at(self, i: int) -> dict[str, Any]:
        assert self._views is not None
        return explain_row(self._views, i)

    def inspect(self, doc_id: str, occurrence: int | None = None) -> dict[str, Any]:
        """Show :meth:`explain` of ``doc_id`` (its record ``occurrence``, for an id stored more
        than once) in the inspect panel; returns it."""
        return self._show_inspected(self.explain(doc_id, occurrence))

    def _show_inspected(self, info: dict[str, Any]) -> dict[str, Any]:
        self.inspect_html.value = inspect_html(info)
        self.inspected = info["id"]
        return info

    def find(self, text: str) -> list[str]:
        """Documents whose id equals ``text``, or whose id or text contains it (case-blind),
        in store order; the first is inspected. Shows up to 10; returns every match."""
        needle = text.strip()
        if not needle or self._views is None:
            return []
        rows = self._views.rows
        if needle in rows.position:
            found = [needle]
        else:
            low = needle.casefold()
            found = [
                i
                for i, t in zip(rows.ids, rows.texts)
                if low in i.casefold() or low in t.casefold()
            ]
        if not found:
            self.inspect_html.value = (
                f"<i>no document id or text contains {html.escape(needle)!r}</i>"
            )
            return []
        self.inspect(found[0])
        more = ", ".join(html.escape(i) for i in found[1:FOUND])
        if more:
            extra = f" and {len(found) - FOUND} more" if len(found) > FOUND else ""
            self.inspect_html.value += f"<small>also found: {more}{extra}</small>"
        return found

    def select_points(self, figure: str, points: Mapping[int, Sequence[int]]) -> list[str]:
        """Select documents by (trace index -> point indices) of a figure; returns their ids.

        What a box or lasso selection in the front end calls (with the points of every trace
        at once); public so a test or a script can do the same without a browser. Points of
        traces that draw no document (the query, the anchors) are ignored.
        """
        if figure not in self._trace_rows:
            raise PlaceboragValueError(
                f"figure={figure!r} must be one of {', '.join(map(repr, self._trace_rows))}"
            )
        rows = self._trace_rows[figure]
        chosen = [
            self._ids[int(rows[t][i])]
            for t, inds in points.items()
            if t in rows
            for i in inds
            if 0 <= i < len(rows[t])
        ]
        return self.select(chosen)

    def select(self, ids: Sequence[str]) -> list[str]:
        """Set the selection (ids of visible documents; unknown ids raise), which the exported
        pytest module is made of. ``select([])`` clears it."""
        if isinstance(ids, str):
            raise PlaceboragValueError(
                f"ids={ids!r} must be a list of ids, not a str (write [{ids!r}])"
            )
        known = self._id_set
        chosen = list(dict.fromkeys(ids))
        unknown = [i for i in chosen if i not in known]
        if unknown:
            hint = did_you_mean(unknown[0], known)
            raise PlaceboragValueError(f"unknown id {unknown[0]!r}{hint}")
        if chosen != self.selection:
            self.export_panel.mark_stale()
        self.selection = chosen
        shown = ", ".join(html.escape(i) for i in self.selection[:12])
        more = f" and {len(self.selection) - 12} more" if len(self.selection) > 12 else ""
        self.selection_html.value = (
            f"<b>{len(self.selection)} selected:</b> {shown}{more}"
            if self.selection
            else self._selection_hint()
        )
        for name in ("projection", "ranking"):
            self._show_selection(name)
        if self._filters is not None:
            self.results_html.value = self._filters.to_html(selected=self.selection)
        return self.selection

    def _selection_hint(self) -> str:
        if self.mode == "widget":
            return (
                "<i>no selection: drag a box or a lasso over points in the projection or the "
                "ranking, or type ids or a JSON filter in the select box</i>"
            )
        return (
            "<i>no selection: this front end cannot select points in the plots; type ids "
            '(comma-separated) or a JSON filter such as {"lang": "hu"} in the select box</i>'
        )

    def _on_select_box(self, change: dict[str, Any]) -> None:
        raw = str(change["new"]).strip()
        try:
            if not raw:
                ids: list[str] = []
            elif raw.startswith("{"):
                where = load_json(raw)
                s = self.scenario
                if self._views is None:
                    raise PlaceboragValueError(
                        "nothing to select from: the app has not drawn a valid state"
                    )
                # The pre-filtering store on screen scores only the records the filter
                # matches (with the screen's filter semantics): every other one is
                # "filtered out" of its trace, or "unreachable" (unlinked by churn).
                trace = self._views.stores["pre"].trace(s.query, 1, where)
                ids = [i for i, st in zip(trace.ids, trace.stage) if st not in _NOT_MATCHING]
            else:
                ids = [part.strip() for part in raw.split(",") if part.strip()]
            self.select(ids)
        except Exception as exc:  # shown, like every other bad input
            self.selection_html.value = (
                f'<span style="color:#B00020">{html.escape(f"{type(exc).__name__}: {exc}")}</span>'
            )

    @property
    def selected_frame(self) -> Any:
        """The selected documents as a pandas DataFrame: id, text, metadata, and where the
        current query left each (stage, rank, score). The text is the document's own (a
        LlamaIndex node's); where a framework embedded another (the node's metadata header
        with it), an ``embedded`` column holds that."""
        pd = optional("pandas")
        trace = self._views.trace
        position = {doc_id: i for i, doc_id in enumerate(trace.ids)}
        rows = []
        records = self._views.rows
        for doc_id in self.selection:
            i = position[doc_id]
            stored, metadata = records.texts[i], records.metadatas[i]
            text = document_text(stored, metadata)
            rows.append(
                {
                    "id": doc_id,
                    "text": text,
                    "embedded": stored if stored != text else "",
                    "metadata": document_metadata(metadata),
                    "stage": str(trace.stage[i]),
                    "rank": int(trace.rank[i]) or None,
                    "score": float(trace.score[i]),
                }
            )
        columns = ["id", "text", "metadata", "stage", "rank", "score"]
        if any(row["embedded"] for row in rows):  # a framework embedded another text
            columns.insert(2, "embedded")
        return pd.DataFrame(rows, columns=columns)

    def export(
        self,
        *,
        smallest: bool = False,
        keep_metadata: bool | Sequence[str] | None = None,
        max_documents: int | None = MAX_DOCUMENTS,
        ids: Mapping[str, str] | str | None = None,
        under_test: str | Callable[..., Any] | None = None,
        prove: bool = True,
    ) -> str:
        """Export the screen as a pytest module, prove it and show it in the export panel.

        The corpus is the selection (``smallest=True``, or no selection: the smallest corpus
        that shows the behaviour on screen; see :func:`build_export`, which takes the other
        arguments: ``ids=`` names the exported documents, ``under_test=`` makes the test call
        the application's function with the designed store). Returns the module's source;
        :attr:`last_export` is the whole :class:`Export` (preview, behaviours, proof,
        conftest, vectors) and :meth:`save_export` writes it.
        """
        result = self._export_from_screen(
            smallest=smallest,
            keep_metadata=keep_metadata,
            max_documents=max_documents,
            ids=ids,
            under_test=under_test,
            prove=prove,
        )
        self.export_panel.show(result)
        return result.source

    def _export_from_screen(
        self,
        *,
        smallest: bool = False,
        keep_metadata: bool | Sequence[str] | None = None,
        max_documents: int | None = MAX_DOCUMENTS,
        ids: Mapping[str, str] | str | None = None,
        under_test: str | Callable[..., Any] | None = None,
        prove: bool = True,
    ) -> Export:
        s = self.scenario
        if self._views is None:
            raise PlaceboragValueError("nothing to export: the app has not drawn a valid state")
        return build_export(
            self._views.stores[s.filter_mode],
            s.query,
            s.k,
            s.where,
            selection=None if smallest else (self.selection or None),
            name=s.name,
            keep_metadata=keep_metadata,
            max_documents=max_documents,
            ids=ids,
            under_test=under_test,
            prove=prove,
        )

    @property
    def last_export(self) -> Export | None:
        """The export the panel shows (None before the first; see ``export_panel.stale``)."""
        return self.export_panel.export

    @property
    def exported(self) -> str:
        """The source of :attr:`last_export` (``""`` before the first export)."""
        return "" if self.export_panel.export is None else self.export_panel.export.source

    def save_export(
        self, path: str | os.PathLike[str], *, overwrite: bool = False, conftest: bool = False
    ) -> list[Path]:
        """Write the export shown to ``path`` atomically (the fixture alone with
        ``conftest=True``), and its vectors beside it; an existing file is replaced only with
        ``overwrite=True``. What the panel's save buttons do."""
        return self.export_panel.save(path, overwrite=overwrite, conftest=conftest)

    @property
    def shown(self) -> Any:
        """The views on screen (:class:`placeborag.explore._state.Views`): the scenario, the
        stores for both filter modes, their traces and the projection; None before the first
        valid drawing."""
        return self._views


_EXPLORER_OPTIONS = tuple(
    name
    for name, p in inspect.signature(Explorer.__init__).parameters.items()
    if p.kind is p.KEYWORD_ONLY and name not in ("store", "query", "settings")
)


def app(
    scenario: Scenario | None = None,
    *,
    store: FakeVectorStore | None = None,
    query: str | None = None,
    **options: Any,
) -> Explorer:
    """Build an :class:`Explorer` over ``scenario`` (or ``store`` and ``query``), starting from
    the settings given: ``app(k=3, where={"lang": "hu"}, filter_mode="post")`` opens with its
    controls there. Every control that shows a scenario field is a keyword (:data:`SETTINGS`,
    from the table of controls); a setting left out is the scenario's (``where=None`` is no
    filter); a bad one raises before the app is built. The other ``options`` are
    :class:`Explorer`'s (``mode``, ``max_k``, ``coords``, ``projection``,
    ``dimension_choices``).
    """
    unknown = sorted(set(options) - {*SETTINGS, *_EXPLORER_OPTIONS})
    if unknown:
        known = (*SETTINGS, *_EXPLORER_OPTIONS)
        raise PlaceboragTypeError(
            f"app() got an unknown keyword argument {unknown[0]!r}; expected some of "
            f"{', '.join(known)}{did_you_mean(unknown[0], known)}"
        )
    settings = {name: options.pop(name) for name in SETTINGS if name in options}
    # The build (a store and its views: at 100,000 documents, millions of objects that all
    # live on) runs with the garbage collector off: see placeborag.toolkit.gc_paused.
    with gc_paused():
        return Explorer(scenario, store=store, query=query, settings=settings, **options)


def _signature() -> inspect.Signature:
    """app()'s signature as help() and an IDE show it: the settings of the table of
    controls as keywords (left out: the scenario's), then :class:`Explorer`'s options."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    explorer = inspect.signature(Explorer.__init__).parameters
    head = [
        inspect.Parameter("scenario", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
        inspect.Parameter("store", keyword, default=None),
        inspect.Parameter("query", keyword, default=None),
    ]
    settings = [
        inspect.Parameter(c.name, keyword, default=_SCENARIO, annotation=c.annotation)
        for c in CONTROLS
        if c.check is not None
    ]
    rest = [explorer[name] for name in _EXPLORER_OPTIONS]
    return inspect.Signature([*head, *settings, *rest], return_annotation="Explorer")


#: Marks a setting of :func:`app` left to the scenario (``where=None`` means "no filter").
_SCENARIO: Any = type("_ScenarioDefault", (), {"__repr__": lambda self: "<the scenario's>"})()
app.__signature__ = _signature()  # type: ignore[attr-defined]
