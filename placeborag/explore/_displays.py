"""Displays: ``from_*`` computes and stores arrays, ``plot()`` turns them into a plotly figure.

``plot(figure=...)`` draws into an existing figure (a long-lived ``go.FigureWidget`` in the
app): when the traces keep their kinds and names, only their arrays are replaced inside one
``batch_update``, so the front end redraws in place.
"""

from __future__ import annotations

import html
import math
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeborag import FakeEmbedder, FakeVectorStore, PlaceboragTypeError
from placeborag._validation import json_text
from placeborag.explore._access import (
    BELOW,
    DROPPED,
    FILTERED,
    LOST,
    RETURNED,
    STAGES,
    TIED,
    UNREACHABLE,
    QueryTrace,
    StoreRows,
    check_instance,
    store_rows,
    trace_query,
)
from placeborag.explore._compute import (
    AnchorGeometry,
    Projection,
    anchor_geometry,
    filter_mode_table,
    funnel_counts,
    kept_for,
    label_codes,
    label_rows,
    plotly_text,
    project,
    rows_by_label,
    spread_offsets,
)
from placeborag.explore._deps import optional
from placeborag.explore._scenario import Scenario
from placeborag.toolkit import check_mapping, check_str, shown

__all__ = [
    "AnchorsDisplay",
    "FilterModesDisplay",
    "ProjectionDisplay",
    "RankingDisplay",
    "ScoreAxis",
    "draw",
    "frame_to_html",
]

# Okabe-Ito, then a few more: distinguishable for the common colour-vision deficiencies.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#7F7F7F",
    "#8C564B",
    "#17BECF",
    "#BCBD22",
    "#9467BD",
)
STAGE_COLOURS = {
    RETURNED: "#009E73",
    DROPPED: "#D55E00",
    TIED: "#E69F00",
    BELOW: "#56B4E9",
    LOST: "#CC79A7",
    FILTERED: "#BBBBBB",
    UNREACHABLE: "#8C564B",
}
WEBGL_FROM = 3000  # Scattergl past a few thousand points: SVG slows down well before 10k
# Past this many documents a density layer (a numpy 2-D histogram) goes under the points and
# the points fade with the count; the top-k, the query and the anchors stay on top.
DENSITY_FROM = 20_000
# Points drawn per view: past this, every m-th document (a fixed stride) plus every document
# that ranks, is cut or ties; the density layer still counts them all.
MAX_POINTS = 200_000
# Per-point hover strings up to this many documents; past it a point's hover names its row
# and a click shows the document (strings for 100k points would dwarf the arrays).
HOVER_TEXT_UP_TO = 5000
LOW_VARIANCE = 0.20
_META = "placeborag"
_FONT_SIZE = 13
_FONT = {"family": "Inter, Helvetica, Arial, sans-serif", "size": _FONT_SIZE}


def draw(figure: Any, traces: list[dict[str, Any]], layout: dict[str, Any]) -> Any:
    """A new ``go.Figure``, or ``figure`` updated in place to show ``traces`` and ``layout``.

    In place, only what differs from the previous ``draw`` into the same figure is sent:
    plotly validates every property it is given, and re-validating unchanged markers, hover
    templates and axes costs more than the new arrays do. A FigureWidget whose traces and
    layout keep their shape gets the changes in one unvalidated update (see :func:`_update`).
    """
    go = optional("plotly.graph_objects")
    layout = {"font": _FONT, **layout}
    if figure is None:
        figure = go.Figure(
            data=traces, layout={"template": "plotly_white", "meta": _META, **layout}
        )
        remember_sent(figure, traces, layout)
        return figure
    if figure.layout.meta != _META:
        # Validating a template costs ~40 ms: apply it once per long-lived figure.
        figure.update_layout(template="plotly_white", meta=_META)
    sent_traces, sent_layout = sent_to(figure)
    # The traces on screen that new ones of the same type take over in place, in order: a
    # change of their number (another category to colour by) then deletes or adds only the
    # difference. Deleting every trace would also drop the WebGL scene, which the browser
    # builds again at the cost of several redraws.
    kept: list[int] = []
    if len(figure.data) == len(sent_traces):
        for i, t in enumerate(figure.data):
            if len(kept) < len(traces) and t.type == traces[len(kept)]["type"]:
                kept.append(i)
    keep = len(kept)
    same = keep == len(figure.data) == len(traces) and all(
        t.name == s.get("name") for t, s in zip(figure.data, traces)
    )
    raw = same and isinstance(figure, go.FigureWidget)
    changed = _changes(sent_layout, layout)
    if raw and _same_shape(sent_layout, changed):
        _update(figure, sent_traces, traces, changed)
        remember_sent(figure, traces, layout)
        return figure
    if keep < len(figure.data):
        figure.data = [figure.data[i] for i in kept]
        sent_traces = [sent_traces[i] for i in kept]
    # A layout that changes shape goes through plotly's validation; the trace changes go in
    # the same batch, so the front end redraws once (a second message is a second full redraw
    # of every point in the browser).
    with figure.batch_update():
        for old, before, new in zip(figure.data, sent_traces, traces[:keep]):
            trace_changes = _changes(before, new)
            trace_changes.pop("type", None)
            if trace_changes:
                old.update({k: _sendable(v) for k, v in trace_changes.items()}, overwrite=True)
        if changed:
            figure.update_layout(changed, overwrite=True)
    if keep < len(traces):
        figure.add_traces(traces[keep:])
    remember_sent(figure, traces, layout)
    return figure


# What was last sent to each figure, kept here (not on the figure): the next draw sends only
# what differs. Entries go with their figures.
_SENT: dict[int, tuple[Sequence[dict[str, Any]], dict[str, Any]]] = {}


def remember_sent(figure: Any, traces: Sequence[dict[str, Any]], layout: dict[str, Any]) -> None:
    key = id(figure)
    if key not in _SENT:
        weakref.finalize(figure, _SENT.pop, key, None)
    _SENT[key] = (traces, layout)


def sent_to(figure: Any) -> tuple[Sequence[dict[str, Any]], dict[str, Any]]:
    """The traces and layout last drawn into ``figure`` (nothing for a new figure)."""
    return _SENT.get(id(figure), ((), {}))


def _same_shape(before: dict[str, Any], changed: dict[str, Any]) -> bool:
    """Whether the ``changed`` layout keys keep their shape: present before and after, and
    arrays of objects (annotations, shapes) of the same length.

    plotly keeps one Python object per element of such an array, made when the array was
    validated; an unvalidated update that changes the length would leave them stale. Only
    then may the layout go out unvalidated, as the traces do.
    """
    for key, value in changed.items():
        old = before.get(key)
        if value is None or old is None:
            return False
        if isinstance(value, (list, tuple)) or isinstance(old, (list, tuple)):
            if not isinstance(value, (list, tuple)) or not isinstance(old, (list, tuple)):
                return False
            if len(value) != len(old):
                return False
    return True


def _update(
    figure: Any,
    before: Sequence[dict[str, Any]],
    after: Sequence[dict[str, Any]],
    layout: dict[str, Any],
) -> None:
    """Send the changed trace properties and ``layout`` keys of a FigureWidget in one
    update message, unvalidated.

    plotly validates a property on every assignment (~0.2 ms an array, several ms for a
    list of annotations); an update message is what the front end sends back itself and is
    applied as given. Safe here because every trace and every layout key was validated
    whole when first drawn (``add_traces``, ``update_layout``) and is built by the same code
    every time: only values change, never kinds (:func:`_same_shape` holds the layout to
    that). A property gone from a trace is restyled to None.
    """
    undefined = optional("plotly.basedatatypes").Undefined
    changes = []
    for old, new in zip(before, after):
        changed = _changes(old, new)
        changed.pop("type", None)
        changes.append(changed)
    indexes = [i for i, c in enumerate(changes) if c]
    if not indexes and not layout:
        return
    keys = list(dict.fromkeys(k for i in indexes for k in changes[i]))
    restyle = {
        key: [_sendable(changes[i][key]) if key in changes[i] else undefined for i in indexes]
        for key in keys
    }
    relayout = {key: _plain(value) for key, value in layout.items()}
    if not relayout:
        figure.plotly_restyle(restyle, indexes)
    elif not restyle:
        figure.plotly_relayout(relayout)
    else:
        figure.plotly_update(restyle, relayout, indexes)


def _plain(value: Any) -> Any:
    """A layout value as JSON holds it: numpy scalars and arrays become Python values."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    return value


def _sendable(value: Any) -> Any:
    """A value as plotly's validators would have stored it: arrays contiguous (the kernel
    sends an array as one binary buffer, and refuses a strided view such as a column of a
    matrix), int64 arrays as int32 (the widget sends 64-bit integers as lists), and nested
    containers likewise."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "iu" and value.dtype.itemsize == 8:
            small = value.astype(np.int32)
            value = small if np.array_equal(small, value) else value
        return np.ascontiguousarray(value)
    if isinstance(value, dict):
        return {k: _sendable(v) for k, v in value.items()}
    return value


def _changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The keys of ``after`` whose values differ from ``before``; keys gone are set to None."""
    out = {k: v for k, v in after.items() if k not in before or not _equal(before[k], v)}
    out.update({k: None for k in before if k not in after})
    return out


def _equal(a: Any, b: Any) -> bool:
    """Deep equality over the plain values a figure spec holds (dicts, lists, arrays)."""
    if a is b:
        return True
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_equal(a[k], b[k]) for k in a)
        )
    if isinstance(a, (np.ndarray, list, tuple)) or isinstance(b, (np.ndarray, list, tuple)):
        if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)) or a is None or b is None:
            return False
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape or x.dtype.kind != y.dtype.kind:
            return False
        if x.dtype == object:
            xs: list[Any] = x.ravel().tolist()
            ys: list[Any] = y.ravel().tolist()
            try:
                return bool(xs == ys)  # C-level for the strings and numbers a figure mostly holds
            except ValueError:  # an array inside: compare element by element
                return all(_equal(i, j) for i, j in zip(xs, ys))
        return bool(np.array_equal(x, y))
    try:
        return bool(a == b) and type(a) is type(b)
    except (TypeError, ValueError):
        return False


def drawn_rows(n: int, keep: np.ndarray) -> np.ndarray:
    """The row indexes drawn as points out of ``n``: all up to :data:`MAX_POINTS`; past it a
    fixed stride plus the rows where ``keep`` is true (they are never left out)."""
    if n <= MAX_POINTS:
        return np.arange(n)
    step = -(-n // MAX_POINTS)
    mask = np.zeros(n, dtype=bool)
    mask[::step] = True
    mask |= keep
    return np.flatnonzero(mask)


def _read_only(arrays: list[np.ndarray]) -> list[np.ndarray]:
    for a in arrays:
        a.flags.writeable = False
    return arrays


def _read_only_values(trace: dict[str, Any]) -> dict[str, Any]:
    for v in trace.values():
        if isinstance(v, np.ndarray):
            v.flags.writeable = False
    return trace


def point_opacity(n: int) -> float:
    """Marker opacity for ``n`` documents: 0.75 up to :data:`DENSITY_FROM`, then fading with
    the square root of the count (no colour group paints over another), never below 0.12."""
    return float(np.clip(0.75 * np.sqrt(DENSITY_FROM / max(n, 1)), 0.12, 0.75))


def density_trace(
    x: np.ndarray, y: np.ndarray, bins: tuple[int, int], y_range: tuple[float, float] | None = None
) -> dict[str, Any]:
    """A heatmap of how many documents fall in each cell (a numpy 2-D histogram), drawn under
    the points: empty cells transparent, fuller ones darker (log of the count).

    x, y and z (the grid, float32, NaN for an empty cell, rounded to 3 decimals) are numpy
    arrays: binary buffers for the app's widget, and a typed array or a list as the plotly
    in use writes a ``go.Figure``. Not x, y and z as three columns: the front end then
    answers every redraw with its own gridded x and y (over 1 MB at 160 x 120 cells).
    """
    finite = np.isfinite(x) & np.isfinite(y)
    x, y = x[finite], y[finite]
    if not x.size:
        x = y = np.zeros(1)
    x_range = [float(x.min()), float(x.max()) + (0.0 if x.max() > x.min() else 1.0)]
    if y_range is None:
        y_range = (float(y.min()), float(y.max()) + (0.0 if y.max() > y.min() else 1.0))
    counts, xe, ye = histogram2d(x, y, bins, (x_range[0], x_range[1]), y_range)
    cx, cy = (xe[:-1] + xe[1:]) / 2, (ye[:-1] + ye[1:]) / 2
    z = np.round(np.log1p(counts.T), 3).astype("<f4")  # rows are y
    z[counts.T == 0] = np.nan
    return {
        "type": "heatmap",
        "name": "density",
        "x": np.ascontiguousarray(cx, dtype=np.float32),
        "y": np.ascontiguousarray(cy, dtype=np.float32),
        "z": z,
        "zmin": 0.0,
        "colorscale": [[0.0, "rgba(60,60,110,0.06)"], [1.0, "rgba(40,40,90,0.4)"]],
        "showscale": False,
        "hoverinfo": "skip",
        "showlegend": True,
    }


def histogram2d(
    x: np.ndarray,
    y: np.ndarray,
    bins: tuple[int, int],
    x_range: tuple[float, float],
    y_range: tuple[float, float],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.histogram2d(x, y, bins, range=[x_range, y_range])``, the same counts and edges,
    with each bin index computed from the uniform edges (then corrected at the edges by one
    comparison) instead of numpy's binary search over them: 1,000,000 points in ~30 ms."""
    ix, x_in, xe = _uniform_bins(x, bins[0], x_range)
    iy, y_in, ye = _uniform_bins(y, bins[1], y_range)
    inside = x_in & y_in
    flat = ix[inside] * bins[1] + iy[inside]
    counts = np.bincount(flat, minlength=bins[0] * bins[1]).reshape(bins).astype(np.float64)
    return counts, xe, ye


def _uniform_bins(
    v: np.ndarray, n: int, bounds: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each value's bin among ``n`` equal bins over ``bounds`` (numpy's rule: a bin holds
    its left edge, the last one its right edge too), whether it is inside, and the edges."""
    lo, hi = bounds
    edges = np.linspace(lo, hi, n + 1)
    v = np.asarray(v, dtype=np.float64)
    inside = (v >= lo) & (v <= hi)
    clipped = np.clip(v, lo, hi)
    index = np.clip(((clipped - lo) * (n / (hi - lo))).astype(np.intp), 0, n - 1)
    # The product may round across an edge: one comparison each way puts it right.
    index -= clipped < edges[index]
    index += (clipped >= edges[index + 1]) & (index < n - 1)
    return index, inside, edges


def _check_figure(figure: Any) -> None:
    if figure is not None and not hasattr(figure, "batch_update"):
        raise PlaceboragTypeError(
            f"figure={shown(figure)} must be a plotly Figure or FigureWidget, or None"
        )


class _Display:
    figure_: Any = None

    def _show(self, figure: Any, traces: list[dict[str, Any]], layout: dict[str, Any]) -> Any:
        """Draw into ``figure`` (or a new one); returns this display (typed per subclass by
        each ``plot``)."""
        _check_figure(figure)
        self.figure_ = draw(figure, traces, layout)
        return self


# -- projection -------------------------------------------------------------------------------


class _ProjectionBased(_Display):
    def __init__(self, projection: Projection) -> None:
        check_instance(projection, "projection", Projection, "a Projection (project())")
        self.projection = projection
        # groups() of the projection they were made from: spec() and the app's selection
        # both ask for them
        self._groups: tuple[Projection, list[np.ndarray]] | None = None

    @classmethod
    def from_store(
        cls,
        store: FakeVectorStore,
        query: str,
        k: int = 5,
        where: Mapping[str, Any] | None = None,
        *,
        n_components: int = 2,
        color_by: str = "cluster",
        projection: str = "pca",
    ) -> Any:
        return cls(
            project(
                store,
                query,
                k,
                where,
                n_components=n_components,
                color_by=color_by,
                projection=projection,
            )
        )

    @classmethod
    def from_scenario(cls, scenario: Scenario, **kwargs: Any) -> Any:
        check_instance(scenario, "scenario", Scenario, "a Scenario")
        s = scenario
        return cls.from_store(s.store(), s.query, s.k, s.where, **kwargs)


class ProjectionDisplay(_ProjectionBased):
    """PCA of a store's vectors with the query, the cluster anchors and the ranked top-k.

    Past :data:`DENSITY_FROM` documents a density layer goes under the points; the top-k,
    the anchors and the query are drawn last, in the points' own renderer, so nothing covers
    them.
    """

    def groups(self) -> list[np.ndarray]:
        """The row indexes each trace draws, in point order: one trace per category, then
        the top-k rings (what a selection's (trace, point) pairs map back through)."""
        p = self.projection
        cached = self._groups
        if cached is None or cached[0] is not p:
            shown = drawn_rows(len(p.labels), (p.trace.rank > 0) | (p.trace.cut_rank > 0))
            if len(shown) == len(p.labels):  # every row: the labelling's own grouping
                out = label_rows(p.labels, p.label_order)
            else:
                out = rows_by_label(shown, p.labels, p.label_order)
            top = np.flatnonzero(p.trace.rank)
            out.append(top[np.argsort(p.trace.rank[top])])
            cached = self._groups = (p, _read_only(out))
        return list(cached[1])

    def plot(self, figure: Any = None) -> ProjectionDisplay:
        """Draw :meth:`spec` into ``figure`` (or a new ``go.Figure``): ``figure_``."""
        self._show(figure, *self.spec())
        return self

    def spec(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The figure as plain data: its traces and layout (numpy arrays inside)."""
        p = self.projection
        look = _Look(p)
        groups = self.groups()
        traces = self._category_traces(look, groups) + self._mark_traces(look, groups[-1])
        if look.n >= DENSITY_FROM and not look.three:
            # Last in the list (the selection's trace numbers stay), drawn first: plotly puts
            # heatmaps under scatter traces, and WebGL above SVG.
            # The same for every query, k and colour over one layout (read-only coords).
            density = kept_for(
                p.coords,
                "density",
                lambda: _read_only_values(
                    density_trace(p.coords[:, 0], p.coords[:, 1], (160, 120))
                ),
            )
            traces.append(dict(density))
        return traces, self._layout(look, groups[-1])

    def _category_traces(self, look: _Look, groups: list[np.ndarray]) -> list[dict[str, Any]]:
        """One trace of documents per category (colour), in the projection's label order."""
        p = self.projection
        kind, size, strings, xyz, n = look.kind, look.size, look.strings, look.xyz, look.n
        score = p.trace.score
        if strings:
            template = "%{text}<br>score %{customdata:.6f}<extra>%{fullData.name}</extra>"
        else:
            template = "row %{customdata} (click for the document)<extra>%{fullData.name}</extra>"
        traces: list[dict[str, Any]] = []
        for i, (label, rows) in enumerate(zip(p.label_order, groups)):
            traces.append(
                {
                    "type": kind,
                    # User text (a category, a metadata key) goes through the one escaper:
                    # the name is the legend entry and the hover's %{fullData.name}.
                    "name": plotly_text(str(label)),
                    "mode": "markers",
                    **xyz(p.coords[rows]),
                    **(
                        {"text": p.hover[rows], "customdata": score[rows]}
                        if strings
                        else {"customdata": rows.astype(np.int32)}
                    ),
                    "hovertemplate": template,
                    "marker": {
                        "size": size,
                        "color": STAGE_COLOURS[label]
                        if p.color_by == "stage" and label in STAGE_COLOURS
                        else PALETTE[i % len(PALETTE)],
                        "opacity": point_opacity(n),
                        "line": {"width": 0},
                    },
                    "legendgroup": "docs",
                    "legendgrouptitle": {"text": plotly_text(p.color_by)},
                }
            )
        return traces

    def _mark_traces(self, look: _Look, top: np.ndarray) -> list[dict[str, Any]]:
        """The marks drawn over the documents: the top-k rings, the anchors, the query."""
        p = self.projection
        three, over, xyz = look.three, look.over, look.xyz
        score = p.trace.score
        traces: list[dict[str, Any]] = []
        traces.append(
            {
                "type": over,
                "name": "top-k (rank)",
                # The rank numbers are fanned-out labels (annotations; in 3-D the scene's),
                # not text that piles up where the top-k sit together next to the query and
                # an anchor. The text stays for the hover.
                "mode": "markers",
                **xyz(p.coords[top] if top.size else np.zeros((0, p.coords.shape[1]))),
                "text": [str(r) for r in p.trace.rank[top]],
                "textposition": "top center",
                "textfont": {"size": 13, "color": "#111111"},
                "customdata": score[top],
                "hovertext": p.hover[top],
                "hovertemplate": "rank %{text}<br>%{hovertext}<br>score %{customdata:.6f}"
                "<extra></extra>",
                "marker": {
                    "size": 16 if not three else 7,
                    "color": "rgba(0,0,0,0)",
                    "line": {"width": 2, "color": "#111111"},
                },
            }
        )
        traces.append(
            {
                "type": over,
                "name": "cluster anchors",
                # The names are annotations placed clear of each other, the rank labels and
                # the plot's edge (text beside a marker is clipped at the axes; in 3-D the
                # WebGL text was clipped too): in 3-D the scene's, under the anchor.
                "mode": "markers",
                **xyz(p.anchors if len(p.anchor_names) else np.zeros((0, p.coords.shape[1]))),
                "text": [plotly_text(str(name)) for name in p.anchor_names],
                "textposition": "middle right" if not three else "bottom center",
                "textfont": {"size": 12, "color": "#333333"},
                "hovertemplate": "anchor of %{text}<extra></extra>",
                "marker": {
                    "size": 13 if not three else 6,
                    # 3-D has no open symbols with a fill: a grey diamond shows in the legend.
                    "symbol": "diamond",
                    "color": "#ffffff" if not three else "#999999",
                    "line": {"width": 2, "color": "#333333"},
                },
            }
        )
        traces.append(
            {
                "type": over,
                "name": "query",
                "mode": "markers",
                **xyz(p.query[None, :]),
                "hovertext": [plotly_text(p.trace.text)],
                "hovertemplate": "query: %{hovertext}<extra></extra>",
                # An open star: the rings and labels under the query stay visible.
                "marker": {
                    "size": 18 if not three else 8,
                    "color": "#111111",
                    "symbol": "star-open" if not three else "x",
                    "line": {"width": 2.5, "color": "#111111"},
                },
            }
        )
        return traces

    def _layout(self, look: _Look, top: np.ndarray) -> dict[str, Any]:
        """Title (with the state shown), axes, the variance warning and the rank labels."""
        p = self.projection
        three, n = look.three, look.n
        axes = [
            f"PC{i + 1} ({100 * v:.1f}%)" if three else f"PC{i + 1} ({100 * v:.1f}% of variance)"
            for i, v in enumerate(p.explained)
        ]
        if p.method != "PCA":
            axes = [f"{axis} ({p.method})" for axis in "xyz"]
        n_axes = 3 if three else 2
        kept = float(p.explained[:n_axes].sum())
        annotations = []
        if kept < LOW_VARIANCE and p.method == "PCA":
            annotations.append(
                {
                    "text": f"PCA keeps only {100 * kept:.1f}% of the variance in {n_axes} axes; "
                    "distances in this picture can lie. The query-centred view cannot.",
                    "xref": "paper",
                    "yref": "paper",
                    "x": 0,
                    "y": 1.0,
                    "xanchor": "left",
                    "yanchor": "bottom",
                    "showarrow": False,
                    "font": {"color": "#B00020", "size": 12},
                }
            )
        if not three:
            keep = rank_label_mask(p.trace.rank[top], p.trace.rank[top], p.trace.k)
            ranks = rank_labels(p.coords[top][keep], p.trace.rank[top][keep])
            annotations += ranks
            if len(p.anchor_names):
                annotations += anchor_labels(p.anchors, p.anchor_names, p.coords, p.query, ranks)
        layout: dict[str, Any] = {
            "title": {
                "text": f"Projection ({p.method}) of {n} documents for query "
                f"{plotly_text(repr(_short(p.trace.text)))}, k={p.trace.k}"
                f"<br><sup>{plotly_text(state_line(p.trace))}</sup>",
                "x": 0.01,
            },
            "annotations": annotations,
            "legend": {"itemsizing": "constant"},
            "margin": {"t": 90, "l": 60, "r": 20, "b": 60},
            "dragmode": "lasso",
            "uirevision": "projection",
            "autosize": True,
            "height": 520,
        }
        if three:
            layout["scene"] = {
                "xaxis": {"title": {"text": axes[0]}},
                "yaxis": {"title": {"text": axes[1]}},
                "zaxis": {"title": {"text": axes[2]}},
                "aspectmode": "cube",
                # Far enough back that the axis titles stay inside the figure.
                "camera": {"eye": {"x": 1.9, "y": 1.9, "z": 1.3}},
                "domain": {"x": [0.0, 1.0], "y": [0.0, 1.0]},
            }
            layout["scene"]["annotations"] = scene_labels(p, top)
            layout["height"] = 620
            layout["margin"] = {"t": 90, "l": 10, "r": 10, "b": 10}
        else:
            layout["xaxis"] = {"title": {"text": axes[0]}, "zeroline": False, "range": _x_range(p)}
            # Equal aspect: a distance reads the same up as across.
            layout["yaxis"] = {
                "title": {"text": axes[1]},
                "zeroline": False,
                "scaleanchor": "x",
                "scaleratio": 1,
            }
        return layout


def _x_range(p: Projection) -> list[float]:
    """The 2-D projection's x range: every point, the query and the anchors, with a margin
    (the anchors' names are annotations placed inside it, clear of the edge)."""
    parts = [p.coords[:, 0], p.query[:1]]
    if len(p.anchor_names) > 0:
        parts.append(p.anchors[:, 0])
    xs = np.concatenate([np.asarray(x, dtype=np.float64) for x in parts])
    lo, hi = float(xs.min()), float(xs.max())
    span = (hi - lo) or 1.0
    return [lo - 0.05 * span, hi + 0.05 * span]


class _Look:
    """How a projection is drawn: 2-D or 3-D, the renderer, marker size, hover strings."""

    def __init__(self, p: Projection) -> None:
        self.three = p.coords.shape[1] >= 3
        self.n = n = p.coords.shape[0]
        self.kind = "scatter3d" if self.three else ("scattergl" if n >= WEBGL_FROM else "scatter")
        # The marks on top share the points' renderer: WebGL draws above every SVG trace.
        self.over = "scatter3d" if self.three else self.kind
        self.size = 3 if n >= 20_000 else (5 if n >= WEBGL_FROM else 9)
        self.strings = n <= HOVER_TEXT_UP_TO

    def xyz(self, points: np.ndarray) -> dict[str, Any]:
        points = np.atleast_2d(points)
        out = {"x": points[:, 0], "y": points[:, 1]}
        if self.three:
            out["z"] = points[:, 2]
        return out


def rank_labels(points: np.ndarray, ranks: np.ndarray) -> list[dict[str, Any]]:
    """One arrowed label per top-k point, fanned out over the upper half-circle.

    Rank 1 points up and to the right, rank k up and to the left, and every other label sits
    further out, so the labels of points that (nearly) coincide do not cover each other, nor
    the anchor names written below the anchors.
    """
    k = len(ranks)
    if not k:
        return []
    angles = np.radians(np.linspace(20.0, 160.0, k) if k > 1 else np.array([70.0]))
    out = []
    for slot, angle in enumerate(angles):
        i = slot
        radius = 38.0 + (14.0 if slot % 2 else 0.0) + 2.0 * k
        out.append(
            {
                "x": float(points[i, 0]),
                "y": float(points[i, 1]),
                "xref": "x",
                "yref": "y",
                "text": f"<b>{int(ranks[i])}</b>",
                "showarrow": True,
                "arrowhead": 0,
                "arrowwidth": 1,
                "arrowcolor": "#555555",
                "standoff": 8,
                "ax": float(radius * np.cos(angle)),
                "ay": float(-radius * np.sin(angle)),
                "font": {"size": 12, "color": "#111111"},
                "bgcolor": "rgba(255,255,255,0.85)",
                "bordercolor": "#111111",
                "borderwidth": 1,
                "borderpad": 1,
            }
        )
    return out


def scene_labels(p: Projection, top: np.ndarray) -> list[dict[str, Any]]:
    """The 3-D projection's rank numbers and anchor names as scene annotations (drawn over
    the WebGL scene, never clipped): the ranks fanned out above their points on leader lines
    (:func:`fan_offsets`: boxes apart by a margin, so the labels of points that coincide or
    nearly coincide on screen do not cover each other), and each anchor's name below its
    diamond on a leader line, clear of the ranks above."""
    keep = rank_label_mask(p.trace.rank[top], p.trace.rank[top], p.trace.k)
    points = p.coords[top][keep]
    ranks = p.trace.rank[top][keep]
    out = []
    for label, point, (ax, ay) in zip(
        rank_labels(points, ranks), points, fan_offsets([str(int(r)) for r in ranks])
    ):
        out.append(label | {"z": float(point[2]), "ax": ax, "ay": ay})
    for slot, (anchor, name) in enumerate(zip(p.anchors, p.anchor_names)):
        if not np.isfinite(anchor).all():
            continue
        out.append(
            {
                "x": float(anchor[0]),
                "y": float(anchor[1]),
                "z": float(anchor[2]),
                "text": plotly_text(str(name)),
                "showarrow": True,
                "arrowhead": 0,
                "arrowwidth": 1,
                "arrowcolor": "#777777",
                "standoff": 6,
                "ax": 0,
                "ay": 30.0 + 14.0 * (slot % 2),
                "font": {"size": 12, "color": "#333333"},
                "bgcolor": "rgba(255,255,255,0.8)",
                "borderpad": 1,
            }
        )
    for label in out:
        label.pop("xref", None)
        label.pop("yref", None)
    return out


# Where a 3-D rank label's box may go, nearest first: rings of these radii in pixels around
# its point, each from up-right round to up-left. Boxes are kept this many pixels apart, so
# the labels of points up to that far apart on screen do not touch either.
_FAN_RINGS = (44.0, 68.0, 92.0, 116.0, 140.0)
_FAN_ANGLES = tuple(np.radians(np.arange(15.0, 166.0, 7.5)).tolist())
_FAN_SLACK = 12.0


def fan_offsets(texts: Sequence[str]) -> list[tuple[float, float]]:
    """Leader-line offsets (ax, ay: pixels, y down) for labels of ``texts`` in order, laid out
    as if their points coincided: each label's box (bold 12 px text with its border) goes at
    the first place on :data:`_FAN_RINGS`, above its point, at least :data:`_FAN_SLACK`
    pixels clear of every box placed before it (the last ring takes what is left)."""
    placed: list[tuple[float, float, float, float]] = []
    out: list[tuple[float, float]] = []
    for text in texts:
        w = _CHAR_PX * len(text) + 8.0
        spot = None
        for radius in _FAN_RINGS:
            for angle in _FAN_ANGLES:
                x, y = radius * float(np.cos(angle)), -radius * float(np.sin(angle))
                box = (x - w / 2, y - _RANK_BOX_H / 2, x + w / 2, y + _RANK_BOX_H / 2)
                if all(_apart_by(box, other, _FAN_SLACK) for other in placed):
                    spot = (x, y, box)
                    break
            if spot is not None:
                break
        if spot is None:  # more labels than the rings hold: the outermost ring, in turn
            angle = _FAN_ANGLES[len(out) % len(_FAN_ANGLES)]
            x, y = _FAN_RINGS[-1] * float(np.cos(angle)), -_FAN_RINGS[-1] * float(np.sin(angle))
            spot = (x, y, (x - w / 2, y - _RANK_BOX_H / 2, x + w / 2, y + _RANK_BOX_H / 2))
        placed.append(spot[2])
        out.append((spot[0], spot[1]))
    return out


_RANK_BOX_H = 20.0  # a 3-D rank label's box: 12 px bold text, its border and padding


def _apart_by(a: tuple[float, ...], b: tuple[float, ...], gap: float) -> bool:
    return a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1] or b[3] + gap <= a[1]


# The smallest plot area a 2-D projection is drawn in (a notebook-width figure beside its
# legend), in pixels: label boxes are laid out at this scale, where they are largest against
# the data (a wider figure only spaces them further apart).
_LABEL_PLOT = (400.0, 360.0)
_CHAR_PX, _LABEL_H, _LABEL_GAP = 7.5, 18.0, 4.0


def anchor_labels(
    anchors: np.ndarray,
    names: Sequence[str],
    coords: np.ndarray,
    query: np.ndarray,
    ranks: Sequence[dict[str, Any]] = (),
) -> list[dict[str, Any]]:
    """One label per cluster anchor, beside it and never over another label or past the plot.

    Each label goes towards the middle of the picture first (an anchor at the right edge is
    labelled on its left): below the anchor, above it, level with it, then further out; then
    on the other side. The boxes are laid out at the smallest plot the figure is drawn in,
    against the rank labels and their rings, the query star and the anchors' own markers, and
    must stay inside the points' range with plotly's 5% padding. A label placed more than
    :data:`_LABEL_NEAR` pixels from its diamond gets a leader line to it. A name with no free
    place is left out (its anchor's hover still names it).
    """
    anchors = np.asarray(anchors, dtype=np.float64)[:, :2]
    every = np.vstack([coords[:, :2], anchors, np.atleast_2d(query)[:, :2]])
    # Column by column: numpy reduces an (n, 2) array along its long axis ten times slower.
    xs, ys = every[:, 0], every[:, 1]
    finite = np.isfinite(xs) & np.isfinite(ys)
    if not finite.any():
        return []
    if not finite.all():
        xs, ys = xs[finite], ys[finite]
    low = np.array([xs.min(), ys.min()])
    high = np.array([xs.max(), ys.max()])
    span = np.maximum(high - low, 1e-12)
    scale = min(_LABEL_PLOT[0] / span[0], _LABEL_PLOT[1] / span[1])
    pad = 0.04 * span * scale  # a little less than the 5% plotly adds to each side

    def px(point: Any) -> tuple[float, float]:
        return float((point[0] - low[0]) * scale), float((point[1] - low[1]) * scale)

    # Boxes (x0, y0, x1, y1) in pixels, y up: the star, the anchor markers, the rank labels
    # and the rings of the points they label.
    taken = [_box_around(*px(q), 18.0, 18.0) for q in np.atleast_2d(query)[:, :2]]
    taken += [_box_around(*px(a), 14.0, 14.0) for a in anchors]
    for r in ranks:
        x, y = px((r["x"], r["y"]))
        taken += [_box_around(x, y, 16.0, 16.0), _box_around(x + r["ax"], y - r["ay"], 22.0, 18.0)]
    bounds = (-pad[0], -pad[1], span[0] * scale + pad[0], span[1] * scale + pad[1])
    centre = (low[0] + high[0]) / 2
    out = []
    for anchor, name in zip(anchors, names):
        if not np.isfinite(anchor).all():
            continue
        w = _CHAR_PX * len(str(name)) + 8.0
        x, y = px(anchor)
        inward = -1.0 if anchor[0] > centre else 1.0
        for side in (inward, -inward):
            for dx, dy, level in _LABEL_SPOTS:
                x0 = x + side * dx - (w if side < 0 else 0.0)
                y0 = y + dy - {"top": _LABEL_H, "middle": _LABEL_H / 2, "bottom": 0.0}[level]
                box = (x0, y0, x0 + w, y0 + _LABEL_H)
                inside = (
                    box[0] >= bounds[0]
                    and box[1] >= bounds[1]
                    and box[2] <= bounds[2]
                    and box[3] <= bounds[3]
                )
                if inside and not any(_overlap(box, other) for other in taken):
                    break
            else:
                continue
            break
        else:
            continue  # no free place: left out
        taken.append(box)
        label = {
            "x": float(anchor[0]),
            "y": float(anchor[1]),
            "xref": "x",
            "yref": "y",
            "text": plotly_text(str(name)),
            "showarrow": False,
            "xanchor": "left" if side > 0 else "right",
            "yanchor": level,
            "xshift": side * dx,
            "yshift": dy,
            "font": {"size": 12, "color": "#333333"},
            "bgcolor": "rgba(255,255,255,0.8)",
            "borderpad": 1,
        }
        if _gap_to(box, x, y) > _LABEL_NEAR:
            # Moved away from its diamond: a leader line from the label to it (plotly puts
            # the label's anchor point at the line's tail, ax/ay pixels from the diamond).
            del label["xshift"], label["yshift"]
            label |= {
                "showarrow": True,
                "ax": side * dx,
                "ay": -dy,
                "arrowhead": 0,
                "arrowwidth": 1,
                "arrowcolor": "#777777",
                "standoff": 6,
            }
        out.append(label)
    return out


_LABEL_NEAR = 16.0  # pixels between a label and its diamond read as beside it, no line


def _gap_to(box: tuple[float, float, float, float], x: float, y: float) -> float:
    """The distance in pixels from the point (x, y) to the nearest edge of ``box``."""
    dx = max(box[0] - x, 0.0, x - box[2])
    dy = max(box[1] - y, 0.0, y - box[3])
    return float(np.hypot(dx, dy))


# Where an anchor's label may go, nearest first: pixels towards the label's side, pixels up,
# and the edge of the label at that height (top: the label hangs below).
_LABEL_SPOTS = (
    (10.0, -9.0, "top"),
    (10.0, 9.0, "bottom"),
    (14.0, 0.0, "middle"),
    (10.0, -26.0, "top"),
    (10.0, 26.0, "bottom"),
    (32.0, 0.0, "middle"),
    (30.0, -12.0, "top"),
    (30.0, 12.0, "bottom"),
    (52.0, 0.0, "middle"),
    (10.0, -44.0, "top"),
    (10.0, 44.0, "bottom"),
    (52.0, -20.0, "top"),
    (52.0, 20.0, "bottom"),
    (76.0, 0.0, "middle"),
    (76.0, -20.0, "top"),
    (76.0, 20.0, "bottom"),
    (100.0, 0.0, "middle"),
)


def _box_around(x: float, y: float, w: float, h: float) -> tuple[float, float, float, float]:
    return (x - w / 2, y - h / 2, x + w / 2, y + h / 2)


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    g = _LABEL_GAP
    return a[0] < b[2] + g and b[0] < a[2] + g and a[1] < b[3] + g and b[1] < a[3] + g


def _short(text: str, n: int = 48) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


# -- query-centred ranking view -----------------------------------------------------------------


def _always_drawn(t: QueryTrace) -> np.ndarray:
    """The records the ranking always draws and may label: returned, cut, or tied at the cut."""
    tied: np.ndarray = label_codes(t.stage, STAGES) == STAGES.index(TIED)
    drawn: np.ndarray = (t.rank > 0) | (t.cut_rank > 0) | tied
    return drawn


class RankingDisplay(_ProjectionBased):
    """x is each document's score to the query, so left-to-right order is the ranking.

    Rows (y) are the documents' categories; the top-k cut is a vertical line. The x axis runs
    from worst to best whatever the profile's direction, so "better" is always to the right.
    An empty stretch wider than a sixth of the score range (a far-away cluster) is drawn as
    a shaded axis break, so the documents around the cut keep their room; the ticks and the
    hover text give the true scores.
    """

    @property
    def cut(self) -> float | None:
        """The score of the last document inside the top-k cut (None when nothing ranks)."""
        t = self.projection.trace
        inside = np.flatnonzero(t.cut_rank)
        if not inside.size:
            return None
        return float(t.score[inside[np.argmax(t.cut_rank[inside])]])

    @property
    def axis(self) -> ScoreAxis:
        """The x axis: scores to positions, with the breaks it puts in long empty stretches
        and, in a large store, the documents far below the cut squeezed to one side."""
        p = self.projection
        return ScoreAxis.fit(p.trace.score, higher_is_better=p.higher_is_better, k=p.trace.k)

    def groups(self) -> list[np.ndarray]:
        """The row indexes each trace draws, in point order: one trace per stage."""
        p = self.projection
        cached = self._groups
        if cached is None or cached[0] is not p:
            t = p.trace
            shown = drawn_rows(len(t.ids), _always_drawn(t))
            cached = self._groups = (p, _read_only(rows_by_label(shown, t.stage, STAGES)))
        return list(cached[1])

    def plot(self, figure: Any = None) -> RankingDisplay:
        """Draw :meth:`spec` into ``figure`` (or a new ``go.Figure``): ``figure_``."""
        self._show(figure, *self.spec())
        return self

    def spec(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The figure as plain data: its traces and layout (numpy arrays inside)."""
        p = self.projection
        axis = self.axis
        position = axis.position(p.trace.score)
        codes = label_codes(p.labels, p.label_order)
        if len(set(p.label_order)) != len(p.label_order) or (codes < 0).any():
            row = {label: i for i, label in enumerate(p.label_order)}
            y = np.array([row[v] for v in p.labels], dtype=np.float64)  # as it says why not
        else:
            y = codes.astype(np.float64)  # each document's row: its label's place in the order
        y += spread_offsets(p.trace.ids)
        traces = self._stage_traces(position, y)
        if len(p.trace.ids) >= DENSITY_FROM:
            rows_y = (-0.5, len(p.label_order) - 0.5)
            traces.append(density_trace(position, y, (200, 4 * len(p.label_order)), rows_y))
        shapes, annotations = self._marks(axis)
        x_range = ranking_x_range(position, p.higher_is_better)
        rows = len(p.label_order)
        t = p.trace
        ranks, left_out = ranking_labels(
            position,
            y,
            np.where(t.rank > 0, t.rank, 0) * rank_label_mask(t.rank, t.cut_rank, t.k),
            _always_drawn(t),
            x_range,
            (-0.6, rows - 0.4),
            [(s["x0"], s["x1"]) for s in shapes if s["type"] == "rect"]
            + [(s["x0"], s["x0"]) for s in shapes if s["type"] == "line"],
            [a for a in annotations if a.get("xanchor") == "right"],
        )
        layout = self._layout(axis, shapes, annotations + ranks, left_out)
        layout["xaxis"]["range"] = x_range  # better to the right: reversed when lower is better
        return traces, layout

    def _stage_traces(self, position: np.ndarray, y: np.ndarray) -> list[dict[str, Any]]:
        """One trace per stage; ranked points carry their (thinned) rank labels."""
        p = self.projection
        t = p.trace
        n = len(t.ids)
        kind = "scattergl" if n >= WEBGL_FROM else "scatter"
        strings = n <= HOVER_TEXT_UP_TO
        traces = []
        for stage, rows in zip(STAGES, self.groups()):
            ranked = stage in (RETURNED, DROPPED, TIED)
            hover = (
                {
                    # A ranked point's hover starts with its rank, or its place at the cut:
                    # past 15 ranks not every rank is written on the plot.
                    "hovertext": _placed(t, rows, p.hover[rows]) if ranked else p.hover[rows],
                    "customdata": t.score[rows],
                    "hovertemplate": "%{hovertext}<br>score %{customdata:.6f}"
                    "<extra>%{fullData.name}</extra>",
                }
                if strings or ranked
                else {
                    "customdata": rows.astype(np.int32),
                    "hovertemplate": "row %{customdata} (click for the document)"
                    "<extra>%{fullData.name}</extra>",
                }
            )
            traces.append(
                {
                    "type": kind,
                    "name": stage,
                    # The rank numbers are annotations laid out clear of each other, the
                    # markers, the cut line and the axis breaks (see ranking_labels).
                    "mode": "markers",
                    "x": position[rows],
                    "y": y[rows],
                    **hover,
                    "marker": {
                        "size": 11 if ranked else (4 if n >= WEBGL_FROM else 7),
                        "color": STAGE_COLOURS[stage],
                        "opacity": 1.0 if ranked else 0.6 * point_opacity(n) / 0.75,
                        "symbol": _STAGE_SYMBOLS.get(stage, "circle"),
                    },
                }
            )
        return traces

    def _marks(self, axis: ScoreAxis) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The axis breaks, the top-k cut line and the tie notes (shapes, annotations)."""
        t = self.projection.trace
        cut = self.cut
        shapes, annotations = axis.break_marks()
        if cut is not None:
            x = float(axis.position(np.array([cut]))[0])
            shapes.append(
                {
                    "type": "line",
                    "xref": "x",
                    "yref": "paper",
                    "x0": x,
                    "x1": x,
                    "y0": 0,
                    "y1": 1,
                    "line": {"color": "#111111", "dash": "dash", "width": 1.5},
                }
            )
            annotations.append(
                {
                    "text": f"top-{t.k} cut",
                    "x": x,
                    "xref": "x",
                    "y": 1.0,
                    "yref": "paper",
                    "yanchor": "bottom",
                    "showarrow": False,
                    "font": {"size": 12},
                }
            )
        annotations += tie_marks(t, axis)
        return shapes, annotations

    def _layout(
        self,
        axis: ScoreAxis,
        shapes: list[dict[str, Any]],
        annotations: list[dict[str, Any]],
        left_out: int = 0,
    ) -> dict[str, Any]:
        """Title (the state shown; the ranks thinned for room, ``left_out``, counted as "+n
        more"), axes with their breaks, the cut line and the labels. The title is broken into
        lines that fit a notebook's narrowest figure, and the top margin grows with them, so
        the plot keeps its height (the rank labels are laid out for it)."""
        p = self.projection
        t = p.trace
        tickvals, ticktext = axis.ticks()
        state = state_line(t).split(" · ")
        if left_out:  # thinned for room, best ranks kept: the rest are in the hover text
            state.append(f"+{left_out} more rank{'s' * (left_out > 1)} in the hover")
        text, lines = title_text(
            [f"Query-centred ranking for {_short(t.text)!r}:", "better is to the right"], state
        )
        top = _TITLE_TOP + _TITLE_LINE * lines + 24  # the title, then the cut's label
        layout = {
            "title": {
                "text": text,
                "x": 0.01,
                # plotly puts the first line's baseline at y, whatever the anchor.
                "y": 1 - (_TITLE_TOP + 16) / (_RANK_PLOT_H + top + 60),
                "yref": "container",
                "yanchor": "top",
            },
            "xaxis": {
                "title": {"text": p.score_label},
                "tickmode": "array",
                "tickvals": tickvals,
                "ticktext": ticktext,
                "zeroline": False,
            },
            "yaxis": {
                "title": {"text": plotly_text(p.color_by)},
                "tickmode": "array",
                "tickvals": list(range(len(p.label_order))),
                "ticktext": [plotly_text(str(label)) for label in p.label_order],
                "range": [-0.6, len(p.label_order) - 0.4],
                "zeroline": False,
            },
            "shapes": shapes,
            "annotations": annotations,
            "legend": {"itemsizing": "constant"},
            "margin": {"t": top, "l": 110, "r": 20, "b": 60},
            "dragmode": "select",
            "uirevision": "ranking",
            "autosize": True,
            "height": _RANK_PLOT_H + top + 60,
        }
        return layout


# A title is written in lines that fit the narrowest figure it is drawn in (a notebook beside
# its sidebar, 520 px, less the title's 1% inset and some spare), at a width per character
# (in em) that holds for the fonts plotly is given (Inter, Helvetica, Arial): the title's
# font is 1.4 times the figure's, the state line under it 0.7 times that. Each line takes
# 1.3 em of the title's font, plus a gap above the first.
_TITLE_PX, _TITLE_EM = 500.0, 0.5
_TITLE_LINE, _TITLE_TOP = 24, 10


def title_text(head: Sequence[str], state: Sequence[str]) -> tuple[str, int]:
    """A view's title for plotly: the phrases of ``head`` at the title's size, then those of
    ``state`` smaller (joined by " · "), each part broken into lines of whole phrases (and,
    for a phrase too long alone, whole words) that fit :data:`_TITLE_PX`. User text in the
    phrases is escaped here. Returns the text and its number of lines."""
    size = 1.4 * _FONT_SIZE
    heads = _fit(list(head), " ", _TITLE_PX / (_TITLE_EM * size))
    states = _fit(list(state), " · ", _TITLE_PX / (_TITLE_EM * 0.7 * size))
    text = "<br>".join(plotly_text(line) for line in heads)
    if states:
        text += "<br>" + "<br>".join(f"<sup>{plotly_text(line)}</sup>" for line in states)
    return text, len(heads) + len(states)


def _fit(phrases: list[str], joiner: str, chars: float) -> list[str]:
    """``phrases`` joined by ``joiner`` into lines of at most ``chars`` characters, greedily;
    a phrase longer than a line alone is broken between words (a word longer than a line
    keeps a line of its own)."""
    lines: list[str] = []
    for phrase in phrases:
        if lines and len(lines[-1]) + len(joiner) + len(phrase) <= chars:
            lines[-1] += joiner + phrase
            continue
        if len(phrase) <= chars:
            lines.append(phrase)
            continue
        line = ""
        for word in phrase.split(" "):
            if line and len(line) + 1 + len(word) > chars:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return lines


_STAGE_SYMBOLS = {DROPPED: "x", LOST: "x", TIED: "diamond", UNREACHABLE: "circle-open"}
_LABEL_ALL_UP_TO = 15  # past this many ranks, only some are written on the plot


def state_line(trace: Any) -> str:
    """The state a view shows, in one line: profile, metric, filter mode, where, recall."""
    where = "none" if trace.where is None else json_text(trace.where)
    return (
        f"profile {trace.profile} ({trace.metric}, ties by {trace.tie_rule}) · "
        f"{trace.filter_mode}-filter · where {_short(where, 60)} · recall {trace.recall:g}"
    )


def rank_label_mask(rank: np.ndarray, cut_rank: np.ndarray, k: int) -> np.ndarray:
    """Which ranked points get a written label: all of them up to 15 ranks; past that the
    first five, every fifth and the last (the others keep their rank in the hover text)."""
    r = np.where(rank > 0, rank, cut_rank)
    if k <= _LABEL_ALL_UP_TO:
        return r > 0
    last = int(r.max()) if r.size else 0
    out: np.ndarray = (r > 0) & ((r <= 5) | (r % 5 == 0) | (r == last))
    return out


# The plot areas the ranking is drawn in, in pixels (its height is fixed): from JupyterLab at
# 1,000 px beside its legend to a wide screen. Rank labels are laid out to be clear at each.
_RANK_PLOT_H = 290
_RANK_PLOTS = tuple((w, float(_RANK_PLOT_H)) for w in (300.0, 520.0, 900.0, 1400.0))
_MARKER_BOX, _RANK_H = 14.0, 16.0


def ranking_x_range(position: np.ndarray, higher_is_better: bool) -> list[float]:
    """The ranking's x range, set rather than left to plotly's autorange (which pads by the
    markers' size) so the rank labels can be laid out in pixels: every point with 5% to
    spare on the worse side and 12% on the better (right) one, room for the labels of the
    best documents (or of ties on the cut line), better to the right."""
    xs = np.asarray(position, dtype=np.float64)
    xs = xs[np.isfinite(xs)]
    lo, hi = (float(xs.min()), float(xs.max())) if xs.size else (0.0, 1.0)
    span = (hi - lo) or 1.0
    if higher_is_better:
        return [lo - 0.05 * span, hi + 0.12 * span]
    return [hi + 0.05 * span, lo - 0.12 * span]


def rank_box(label: dict[str, Any], to_px: Any) -> tuple[float, float, float, float]:
    """The pixel box (x0, y0, x1, y1; y up) a rank label annotation covers, at the tail of its
    leader line or shifted off its point."""
    x, y = to_px(label["x"], label["y"])
    if label.get("showarrow"):
        x, y = x + label["ax"], y - label["ay"]
    else:
        x, y = x + label["xshift"], y + label["yshift"]
    w = _CHAR_PX * len(label["text"]) + 6.0
    return _box_around(x, y, w, _RANK_H)


def ranking_labels(
    x: np.ndarray,
    y: np.ndarray,
    rank: np.ndarray,
    marked: np.ndarray,
    x_range: Sequence[float],
    y_range: Sequence[float],
    bands: Sequence[tuple[float, float]],
    notes: Sequence[dict[str, Any]] = (),
    plots: Sequence[tuple[float, float]] = _RANK_PLOTS,
) -> tuple[list[dict[str, Any]], int]:
    """The written rank numbers (``rank`` > 0 asks for one) as annotations, best rank first,
    each where its box, at every plot size the ranking is drawn in, overlaps no other rank
    label, no ranked marker (``marked``), no cut line or axis break band (``bands``, x
    ranges), no tie note, and stays inside the plot: beside its point, or further out with a
    leader line. A label beside its point (no leader line) is clearly nearer that point than
    any other ranked marker, so it cannot be read as another's; no label covers a leader
    line, and a leader line crosses no other line, label or ranked marker (checked at each
    plot size in ``plots``). A label stays on its point's side of the cut line and of every
    break, so no leader line crosses them and no label reads as the other side's (a point on
    the line itself may be labelled on either side). A rank with no free place is left out; the count
    left out is returned (every rank stays in the hover text)."""
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    # A label's offset from its point is in pixels, the points' spacing grows with the plot:
    # a place is taken only if it is free at every plot size in ``plots``.
    layouts = [_RankRoom(plot, x_range, y_range, xs, ys, marked, bands, notes) for plot in plots]
    out: list[dict[str, Any]] = []
    left = 0
    chosen = np.flatnonzero(rank > 0)
    for i in chosen[np.argsort(rank[chosen], kind="stable")].tolist():
        text = str(int(rank[i]))
        w = _CHAR_PX * len(text) + 6.0
        for ring, ux, uy in _RANK_SPOTS:
            dx = ux * ring * (_MARKER_BOX / 2 + w / 2 + _LABEL_GAP + 1)
            dy = uy * ring * (_MARKER_BOX / 2 + _RANK_H / 2 + _LABEL_GAP + 1)
            boxes = [room.box(xs[i], ys[i], dx, dy, w) for room in layouts]
            if (
                _free_between(layouts, boxes)
                and all(room.same_side(xs[i], box) for room, box in zip(layouts, boxes))
                and (ring > 1 or all(room.nearest_is(i, box) for room, box in zip(layouts, boxes)))
                and all(room.clear_of_lines(i, box, ring > 1) for room, box in zip(layouts, boxes))
            ):
                break
        else:
            left += 1
            continue
        for room, box in zip(layouts, boxes):
            room.taken.append(box)
            room.labels.append(box)
            if ring > 1:
                room.lines.append((room.point(i), _centre(box)))
        label: dict[str, Any] = {
            "x": float(xs[i]),
            "y": float(ys[i]),
            "xref": "x",
            "yref": "y",
            "text": text,
            "showarrow": False,
            "xanchor": "center",
            "yanchor": "middle",
            "xshift": dx,
            "yshift": dy,
            "font": {"size": 12, "color": "#111111"},
            "bgcolor": "rgba(255,255,255,0.8)",
            "borderpad": 1,
        }
        if ring > 1:  # away from its point: a leader line to it
            del label["xshift"], label["yshift"]
            label |= {
                "showarrow": True,
                "ax": dx,
                "ay": -dy,
                "arrowhead": 0,
                "arrowwidth": 1,
                "arrowcolor": "#777777",
                "standoff": 7,
            }
        out.append(label)
    return out, left


class _RankRoom:
    """The ranking's plot at one size in pixels (y up) and the boxes taken in it: ranked
    markers, the cut line and breaks (full height), tie notes, and the labels placed."""

    def __init__(
        self,
        plot: tuple[float, float],
        x_range: Sequence[float],
        y_range: Sequence[float],
        xs: np.ndarray,
        ys: np.ndarray,
        marked: np.ndarray,
        bands: Sequence[tuple[float, float]],
        notes: Sequence[dict[str, Any]],
    ) -> None:
        self.width, self.height = plot
        (self.x0, self.x1), (self.y0, self.y1) = x_range, y_range
        self.xs, self.ys = xs, ys
        self.marks = {i: self.px(xs[i], ys[i]) for i in np.flatnonzero(marked).tolist()}
        self.labels: list[tuple[float, float, float, float]] = []  # the labels placed
        self.lines: list[tuple[tuple[float, float], tuple[float, float]]] = []  # their leaders
        self.taken = [_box_around(x, y, _MARKER_BOX, _MARKER_BOX) for x, y in self.marks.values()]
        self.bands = [sorted((self.px(a, 0)[0], self.px(b, 0)[0])) for a, b in bands]
        for pa, pb in self.bands:
            self.taken.append((pa - 1.5, -1e9, pb + 1.5, 1e9))
        for note in notes:
            nx = self.px(note["x"], 0)[0] + note.get("xshift", 0)
            top = note["y"] * self.height
            self.taken.append((nx - 6.5 * len(note["text"]), top - 15, nx, top))

    def px(self, vx: float, vy: float) -> tuple[float, float]:
        return (
            (vx - self.x0) / (self.x1 - self.x0) * self.width,
            (vy - self.y0) / (self.y1 - self.y0) * self.height,
        )

    def box(
        self, vx: float, vy: float, dx: float, dy: float, w: float
    ) -> tuple[float, float, float, float]:
        px, py = self.px(vx, vy)
        return _box_around(px + dx, py + dy, w, _RANK_H)

    def same_side(self, vx: float, box: tuple[float, ...]) -> bool:
        """Whether a label ``box`` for the point at data x ``vx`` is on the point's side of
        every band (cut line, axis break): its leader line, from the point to the box, crosses
        none. A point within a marker's half-width of a band (the last document inside the
        cut sits on the cut line) may be labelled on either side: the line starts past the
        band, ``standoff`` pixels from the point."""
        x = self.px(vx, 0)[0]
        for pa, pb in self.bands:
            if pa - _MARKER_BOX / 2 <= x <= pb + _MARKER_BOX / 2:
                continue
            if (x < pa) != (box[2] < pa):
                return False
        return True

    def point(self, i: int) -> tuple[float, float]:
        """Point ``i`` in pixels."""
        return self.px(self.xs[i], self.ys[i])

    def clear_of_lines(self, i: int, box: tuple[float, ...], leader: bool) -> bool:
        """Whether a label ``box`` for ranked point ``i`` covers no leader line placed, and
        (``leader``: it has one, from the point to the box) its line crosses no other line
        and runs through no label placed and no other ranked marker."""
        if any(_segment_hits_box(p, q, box) for p, q in self.lines):
            return False
        if not leader:
            return True
        start, end = self.point(i), _centre(box)
        if any(_segments_cross(start, end, p, q) for p, q in self.lines):
            return False
        if any(_segment_hits_box(start, end, other) for other in self.labels):
            return False
        h = _MARKER_BOX / 2 - 1  # the marker itself, not the room kept around it
        return not any(
            _segment_hits_box(start, end, (x - h, y - h, x + h, y + h))
            for j, (x, y) in self.marks.items()
            if j != i and math.hypot(x - start[0], y - start[1]) >= _MARKER_BOX
        )

    def nearest_is(self, i: int, box: tuple[float, ...]) -> bool:
        """Whether a label ``box`` beside ranked point ``i`` (no leader line) reads as that
        point's: every other ranked marker is at least 1.3 times as far from the box's centre
        as point ``i`` is (a label halfway between two markers reads as either's). Markers
        drawn over point ``i``'s (tied documents on one spot) are not told apart by any
        label; the hover lists them."""
        (cx, cy), (ox, oy) = _centre(box), self.point(i)
        own = 1.3 * math.hypot(cx - ox, cy - oy)
        return all(
            math.hypot(cx - x, cy - y) >= own
            for j, (x, y) in self.marks.items()
            if j != i and math.hypot(x - ox, y - oy) >= _MARKER_BOX
        )

    def inside(self, box: tuple[float, ...]) -> bool:
        return box[0] >= 0 and box[1] >= 0 and box[2] <= self.width and box[3] <= self.height

    def free(self, box: tuple[float, ...]) -> bool:
        return self.inside(box) and not any(_overlap(box, other) for other in self.taken)


def _centre(box: tuple[float, ...]) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def _turn(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> float:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _segments_cross(
    a: tuple[float, float], b: tuple[float, float], c: tuple[float, float], d: tuple[float, float]
) -> bool:
    """Whether segments ab and cd cross (touching at an end counts)."""
    d1, d2, d3, d4 = _turn(c, d, a), _turn(c, d, b), _turn(a, b, c), _turn(a, b, d)
    if ((d1 > 0) != (d2 > 0) and d1 != 0 and d2 != 0) and (
        (d3 > 0) != (d4 > 0) and d3 != 0 and d4 != 0
    ):
        return True

    def on(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> bool:
        return min(p[0], q[0]) <= r[0] <= max(p[0], q[0]) and min(p[1], q[1]) <= r[1] <= max(
            p[1], q[1]
        )

    return (
        (d1 == 0 and on(c, d, a))
        or (d2 == 0 and on(c, d, b))
        or (d3 == 0 and on(a, b, c))
        or (d4 == 0 and on(a, b, d))
    )


def _segment_hits_box(
    a: tuple[float, float], b: tuple[float, float], box: tuple[float, ...]
) -> bool:
    """Whether segment ab passes through (or ends in) ``box`` (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = box
    if any(x0 <= p[0] <= x1 and y0 <= p[1] <= y1 for p in (a, b)):
        return True
    corners = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    return any(_segments_cross(a, b, corners[k], corners[(k + 1) % 4]) for k in range(4))


def _free_between(rooms: Sequence[_RankRoom], boxes: Sequence[tuple[float, ...]]) -> bool:
    """Whether a label's boxes (one per room, narrowest plot first, widest last) are free at
    every plot width in between too. The height is fixed, so a box and another one are apart
    at every width if they are apart up and down, or on the same side of each other at the
    narrowest and the widest plot (their horizontal distance changes linearly with the
    width, the label's offset in pixels does not)."""
    if not all(room.inside(box) for room, box in zip(rooms, boxes)):
        return False
    (narrow, wide), (a, b) = (rooms[0], rooms[-1]), (boxes[0], boxes[-1])
    g = _LABEL_GAP
    for p, q in zip(narrow.taken, wide.taken):
        if a[3] + g <= p[1] or p[3] + g <= a[1]:
            continue  # apart up and down, at any width
        if (a[2] + g <= p[0] and b[2] + g <= q[0]) or (p[2] + g <= a[0] and q[2] + g <= b[0]):
            continue  # on one side of it at both ends, so at every width between
        return False
    return all(room.free(box) for room, box in zip(rooms, boxes))


# Where a rank label may go, nearest first: a ring (1: beside the point, further: with a
# leader line) and a direction (right, up).
_RANK_SPOTS = tuple(
    (ring, ux, uy)
    for ring in (1, 2, 3, 4)
    for ux, uy in ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, 1), (1, -1), (-1, -1))
)


def _placed(trace: Any, rows: np.ndarray, hover: np.ndarray) -> np.ndarray:
    """The hover texts of ranked points with where the ranking put them under the document's
    bold id (which stays the first line: the id is what a hover names first): ``rank 6`` for
    a returned document, ``place 2 at the top-5 cut, dropped by the post-filter`` for one the
    filter dropped after the cut, ``tied at the top-5 cut`` for a tie the rule left out."""
    out = np.empty(len(rows), dtype=object)
    for n, (i, text) in enumerate(zip(rows.tolist(), hover.tolist())):
        rank, cut, stage = int(trace.rank[i]), int(trace.cut_rank[i]), trace.stage[i]
        if rank > 0:
            place = f"rank {rank}"
        elif stage == DROPPED:
            place = f"place {cut} at the top-{trace.k} cut, dropped by the post-filter"
        else:
            place = f"tied at the top-{trace.k} cut, left out by {trace.tie_rule} order"
        head, sep, rest = text.partition("<br>")
        out[n] = f"{head}<br>{place}{sep}{rest}"
    return out


def tie_marks(trace: Any, axis: ScoreAxis) -> list[dict[str, Any]]:
    """One note per exact tie group the ranking met: how many tie, and the rule that chose."""
    out: list[dict[str, Any]] = []
    for tie in trace.ties:
        kept = len(tie.kept)
        x = float(axis.position(np.array([tie.score]))[0])
        note = (
            f"{len(tie.ids)} tied, {kept} kept by {tie.rule} order"
            if tie.at_cut
            else f"{len(tie.ids)} tied ({tie.rule} order)"
        )
        out.append(
            {
                "text": note,
                "x": x,
                "xref": "x",
                "y": 0.97 - 0.07 * len(out),
                "yref": "paper",
                "xanchor": "right",
                "yanchor": "top",
                "xshift": -6,
                "showarrow": False,
                "bgcolor": "rgba(255,255,255,0.85)",
                "font": {"size": 11, "color": "#8A5A00"},
            }
        )
    return out


class ScoreAxis:
    """A score axis that shrinks long empty stretches (axis breaks) to a sliver each.

    ``position(score)`` is monotone, so left-to-right order stays the ranking; between breaks
    it is the score plus a constant, so distances there are true distances.
    """

    BREAK_FROM = 1 / 6  # an empty stretch wider than this share of the range is broken
    BREAK_WIDTH = 0.03  # what a break keeps, as a share of the range
    MAX_BREAKS = 3
    SQUEEZE_FROM = 1000  # documents from which the far side of the cut may be squeezed
    FAR_SHARE = 0.3  # what the squeezed far side keeps of the axis

    def __init__(
        self,
        low: float,
        high: float,
        breaks: Sequence[tuple[float, float]],
        squeeze: tuple[float, float] | None = None,
    ) -> None:
        self.low, self.high = low, high
        self.breaks = [(float(a), float(b)) for a, b in breaks]
        # (a, b): the scores far from the cut, drawn in FAR_SHARE of the axis (no ticks inside)
        self.squeeze = None if squeeze is None else (float(squeeze[0]), float(squeeze[1]))

    @classmethod
    def fit(cls, scores: np.ndarray, *, higher_is_better: bool = True, k: int = 0) -> ScoreAxis:
        """The axis for ``scores``. With at least :data:`SQUEEZE_FROM` of them, the best
        ``max(3k, k + 30)`` keep the near side of the axis: when the rest would take more
        than :data:`FAR_SHARE` of it, they are squeezed into that share (order kept)."""
        values = np.unique(np.asarray(scores, dtype=np.float64)[np.isfinite(scores)])
        if values.size < 2:
            v = float(values[0]) if values.size else 0.0
            return cls(v, v, [])
        squeeze = None
        near = values
        if values.size >= cls.SQUEEZE_FROM and k > 0:
            m = min(values.size - 1, max(3 * k, k + 30))
            edge = values[-1 - m] if higher_is_better else values[m]
            near = values[values >= edge] if higher_is_better else values[values <= edge]
            far = float(values[-1] - values[0]) - float(near[-1] - near[0])
            near_span = float(near[-1] - near[0])
            if near_span > 0 and far > near_span * cls.FAR_SHARE / (1 - cls.FAR_SHARE):
                squeeze = (
                    (float(values[0]), float(edge))
                    if higher_is_better
                    else (float(edge), float(values[-1]))
                )
            else:
                near = values
        span = float(near[-1] - near[0])
        gaps = np.diff(near)
        wide = np.flatnonzero(gaps > cls.BREAK_FROM * span)
        wide = wide[np.argsort(-gaps[wide], kind="stable")][: cls.MAX_BREAKS]
        return cls(
            float(values[0]),
            float(values[-1]),
            sorted((near[i], near[i + 1]) for i in wide),
            squeeze,
        )

    TICK_ROOM = 0.06  # of the axis: no tick closer than this to an axis break's band

    @property
    def _span(self) -> float:
        """The score range the axis keeps at full scale (the squeezed side aside)."""
        if self.squeeze is None:
            return self.high - self.low
        return (self.high - self.low) - (self.squeeze[1] - self.squeeze[0])

    @property
    def _keep(self) -> float:
        return self.BREAK_WIDTH * self._span

    def _squeezed_width(self) -> float:
        return self._span * self.FAR_SHARE / (1 - self.FAR_SHARE)

    def position(self, scores: np.ndarray) -> np.ndarray:
        x = np.asarray(scores, dtype=np.float64)
        out: np.ndarray = x.copy()
        for a, b in self.breaks:
            gap = b - a
            # A break keeps a fixed sliver of margin on each side of its shaded band.
            out -= np.clip(x - a, 0.0, gap) * (1.0 - 3 * self._keep / gap)
        if self.squeeze is not None:
            a, b = self.squeeze
            gap = b - a
            out -= np.clip(x - a, 0.0, gap) * (1.0 - self._squeezed_width() / gap)
        return out

    def break_marks(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """A shaded band and a note per break, as plotly shapes and annotations."""
        shapes: list[dict[str, Any]] = []
        notes: list[dict[str, Any]] = []
        ends = self.position(np.array([self.low, self.high]))
        room = 0.08 * float(abs(ends[1] - ends[0]) or 1.0)  # notes closer than this would overlap
        for a, b in self.breaks:
            x0, x1 = self.position(np.array([a, b]))
            lo, hi = x0 + self._keep, x1 - self._keep
            shapes.append(
                {
                    "type": "rect",
                    "xref": "x",
                    "yref": "paper",
                    "x0": lo,
                    "x1": hi,
                    "y0": 0,
                    "y1": 1,
                    "fillcolor": "rgba(0,0,0,0.07)",
                    "line": {"width": 0},
                    "layer": "below",
                }
            )
            if any(abs(n["x"] - (lo + hi) / 2) < room for n in notes):
                continue  # the band is drawn; one note says what the bands are
            # Written up the band itself, which holds no documents by definition: a note
            # across the plot's foot sat over the bottom row's points and rank labels.
            notes.append(
                {
                    "text": f"axis break: {b - a:.3g} with no documents",
                    "x": (lo + hi) / 2,
                    "xref": "x",
                    "y": 0.5,
                    "yref": "paper",
                    "xanchor": "center",
                    "yanchor": "middle",
                    "textangle": -90,
                    "showarrow": False,
                    "font": {"size": 10, "color": "#666666"},
                }
            )
        if self.squeeze is not None:
            a, b = self.squeeze
            x0, x1 = self.position(np.array([a, b]))
            shapes.append(
                {
                    "type": "rect",
                    "xref": "x",
                    "yref": "paper",
                    "x0": x0,
                    "x1": x1,
                    "y0": 0,
                    "y1": 1,
                    "fillcolor": "rgba(0,0,0,0.04)",
                    "line": {"width": 0},
                    "layer": "below",
                }
            )
            notes.append(
                {
                    "text": f"squeezed ×{(b - a) / self._squeezed_width():.0f}:<br>"
                    "far from the cut",
                    "x": (x0 + x1) / 2,
                    "xref": "x",
                    "y": 1.0,
                    "yref": "paper",
                    "yanchor": "top",
                    "showarrow": False,
                    "font": {"size": 10, "color": "#666666"},
                }
            )
        return shapes, notes

    def ticks(self) -> tuple[list[float], list[str]]:
        """Ticks at round scores, placed where ``position`` puts those scores."""
        kept = self._span - sum(b - a for a, b in self.breaks)
        if kept <= 0:
            return [self.low], [f"{self.low:.3g}"]
        raw = kept / 6
        step = 10 ** np.floor(np.log10(raw))
        step *= next(m for m in (1, 2, 5, 10) if m * step >= raw)
        decimals = max(0, int(-np.floor(np.log10(step))))
        cuts = sorted([*self.breaks, *([self.squeeze] if self.squeeze else [])])
        edges = [self.low, *(v for ab in cuts for v in ab), self.high]
        values: list[float] = []
        for a, b in zip(edges[::2], edges[1::2]):
            first, last = np.ceil(a / step - 1e-9), np.floor(b / step + 1e-9)
            values += [round(i * step, decimals) for i in np.arange(first, last + 1)]
            if first > last:  # a segment narrower than a step still gets a tick
                values.append(round((a + b) / 2, decimals + 1))
        positions = self.position(np.array(values))
        # No tick beside an axis break: its label would read as the break's own (at 1,000,000
        # documents a "0.00" sat just after one). The hover text gives every true score.
        ends = self.position(np.array([self.low, self.high]))
        room = self.TICK_ROOM * float(abs(ends[1] - ends[0]) or 1.0)
        bands = [self.position(np.array([a, b])) for a, b in self.breaks]
        clear = [
            all(x < lo + self._keep - room or x > hi - self._keep + room for lo, hi in bands)
            for x in positions
        ]
        if any(clear):
            values = [v for v, ok in zip(values, clear) if ok]
            positions = positions[np.array(clear)]
        places = decimals + any(v != round(v, decimals) for v in values)
        labels = [f"{v + 0.0:.{places}f}".replace("-", "−") for v in values]  # no −0
        return [float(x) for x in positions], labels


# -- anchors against jitter -------------------------------------------------------------------


class AnchorsDisplay(_Display):
    """Member-to-anchor cosine against jitter m (with the curve 1/sqrt(1+m**2)), per dimension,
    beside member-to-member cosines per dimension."""

    def __init__(self, geometry: AnchorGeometry) -> None:
        check_instance(
            geometry, "geometry", AnchorGeometry, "an AnchorGeometry (anchor_geometry())"
        )
        self.geometry = geometry

    @classmethod
    def from_scenario(
        cls, scenario: Scenario, *, dimensions: int | Sequence[int] = (64, 256, 1024)
    ) -> AnchorsDisplay:
        check_instance(scenario, "scenario", Scenario, "a Scenario")
        return cls(
            anchor_geometry(
                scenario.clusters,
                texts=[d.text for d in scenario.documents],
                dimensions=dimensions,
                model_name=scenario.model_name,
                cluster_spread=scenario.cluster_spread,
                cluster_match=scenario.cluster_match,
            )
        )

    @classmethod
    def from_embedder(
        cls,
        embedder: Any,
        *,
        texts: Sequence[str] = (),
        dimensions: int | Sequence[int] = (64, 256, 1024),
    ) -> AnchorsDisplay:
        check_instance(embedder, "embedder", FakeEmbedder, "a FakeEmbedder")
        return cls(
            anchor_geometry(
                embedder.clusters,
                texts=texts,
                dimensions=dimensions,
                model_name=embedder.model_name,
                cluster_spread=embedder.cluster_spread,
                cluster_match=embedder.cluster_match,
            )
        )

    @property
    def order_is_dimension_free(self) -> bool:
        """True when every cluster ranks its members against the anchor alike at every dimension."""
        m = self.geometry.members
        if m.empty:
            return True
        orders: dict[tuple[str, str], int] = {}
        for key, order in zip(zip(m["cluster"].tolist(), m["text"].tolist()), m["order"].tolist()):
            if orders.setdefault(key, order) != order:
                return False
        return True

    def plot(self, figure: Any = None) -> AnchorsDisplay:
        """Draw :meth:`spec` into ``figure`` (or a new ``go.Figure``): ``figure_``."""
        self._show(figure, *self.spec())
        return self

    def spec(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The figure as plain data: its traces and layout (numpy arrays inside)."""
        look = _AnchorLook(self.geometry)
        traces = [
            _curve_trace(look.jitter),
            *self._member_traces(look),
            *_dimension_keys(look),
            *self._pair_traces(look),
        ]
        return traces, self._layout()

    def _member_traces(self, look: _AnchorLook) -> list[dict[str, Any]]:
        """Left panel: one trace per cluster, its members' cosine to the anchor against their
        jitter, one symbol (and size) per dimension."""
        traces = []
        for c in look.clusters:
            sel = np.flatnonzero(look.cluster_col == c)
            j = look.dim_col[sel]
            colour = look.colour[c]
            traces.append(
                {
                    "type": "scatter",
                    # A cluster's name and its members' texts are user text: escaped, and
                    # never put into a template (plotly would read a "%{x}" in it).
                    "name": plotly_text(str(c)),
                    "legendgroup": plotly_text(str(c)),
                    "mode": "markers",
                    "x": look.jitter[sel],
                    "y": look.cosine[sel],
                    "hovertext": [plotly_text(str(text)) for text in look.texts[sel].tolist()],
                    "customdata": look.member_dims[sel],
                    "hovertemplate": "%{hovertext}<br>d=%{customdata}<br>m=%{x:.4f}"
                    "<br>cos=%{y:.6f}<extra>%{fullData.name}</extra>",
                    "marker": {
                        "color": colour,
                        "symbol": look.symbols[j],
                        "size": look.sizes[j],
                        "opacity": 0.85,
                        "line": {"width": 1.5, "color": colour},
                    },
                    "xaxis": "x",
                    "yaxis": "y",
                }
            )
        return traces

    def _pair_traces(self, look: _AnchorLook) -> list[dict[str, Any]]:
        """Right panel: per cluster, one line per member pair across the dimensions (pairs
        apart by a None, a gap in the line)."""
        pairs = self.geometry.pairs
        lines: dict[str, dict[str, list[Any]]] = {}
        for c, pair, d, cos in zip(
            pairs["cluster"].tolist(),
            pairs["pair"].tolist(),
            pairs["dimensions"].tolist(),
            pairs["cosine"].tolist(),
        ):
            lines.setdefault(c, {}).setdefault(pair, []).append((str(d), cos))
        traces = []
        for c in look.clusters:
            xs: list[Any] = []
            ys: list[Any] = []
            names: list[Any] = []
            for pair, points in lines.get(c, {}).items():
                xs += [x for x, _ in points] + [None]
                ys += [y for _, y in points] + [None]
                names += [plotly_text(str(pair))] * len(points) + [None]
            traces.append(
                {
                    "type": "scatter",
                    "name": f"{plotly_text(str(c))} pairs",
                    "legendgroup": plotly_text(str(c)),
                    "showlegend": False,
                    "mode": "lines+markers",
                    "x": xs,
                    "y": ys,
                    "hovertext": names,
                    "hovertemplate": "%{hovertext}<br>d=%{x}<br>cos=%{y:.6f}<extra></extra>",
                    "line": {"color": look.colour[c], "width": 1.5},
                    "marker": {"size": 6, "color": look.colour[c]},
                    "xaxis": "x2",
                    "yaxis": "y2",
                }
            )
        return traces

    def _layout(self) -> dict[str, Any]:
        """The two panels' axes and headings, and one note per dimension that failed.

        Laid out for any width from a notebook's 600 px up: the legend goes under the panels
        (beside them it takes a fifth of a narrow figure), the title and each panel's heading
        are written on two short lines, each heading over its own panel, and the panels keep
        a gap wide enough for the right one's tick labels and axis title."""
        errors = self.geometry.errors
        same = "the same" if self.order_is_dimension_free else "NOT the same"
        heading = {
            "xref": "paper",
            "yref": "paper",
            "y": 1.0,
            "yanchor": "bottom",
            "xanchor": "left",
            "showarrow": False,
            "align": "left",
            "font": {"size": 12, "color": "#444"},
        }
        notes = [
            {
                **heading,
                "x": 0.0,
                "text": f"<b>member to anchor</b><br>{same} order at every dimension",
            },
            {
                **heading,
                "x": _ANCHOR_PANELS[1][0],
                "text": "<b>member to member</b><br>moves with the dimension",
            },
        ]
        notes += [
            {
                "text": f"d={d}: {plotly_text(err[:110])}…",
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": -0.22 - 0.07 * i,
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "top",
                "font": {"color": "#B00020", "size": 11},
            }
            for i, (d, err) in enumerate(errors.items())
        ]
        return {
            "title": {
                "text": "Cluster members against their anchors:<br>"
                "cos = 1/√(1+m²) at every dimension",
                "x": 0.01,
            },
            "xaxis": {"domain": list(_ANCHOR_PANELS[0]), "title": {"text": "jitter magnitude m"}},
            "yaxis": {"title": {"text": "cosine(member, anchor)"}},
            "xaxis2": {
                "domain": list(_ANCHOR_PANELS[1]),
                "title": {"text": "dimensions"},
                "type": "category",
                "anchor": "y2",
            },
            "yaxis2": {"title": {"text": "cosine(member, member)"}, "anchor": "x2"},
            "annotations": notes,
            # One row (or two) under the panels, in trace order: the curve, the clusters by
            # colour, then the dimensions by symbol ("d=64").
            "legend": {
                "groupclick": "togglegroup",
                "orientation": "h",
                "traceorder": "normal",
                "x": 0.0,
                "xanchor": "left",
                "y": -0.24 - 0.07 * len(errors),
                "yanchor": "top",
            },
            "margin": {"t": 140, "l": 70, "r": 20, "b": 130 + 28 * len(errors)},
            "height": 580 + 28 * len(errors),
        }


# The two panels' shares of the plot's width: the gap holds the right panel's tick labels and
# axis title at a notebook's narrowest figure.
_ANCHOR_PANELS = ((0.0, 0.44), (0.6, 1.0))


class _AnchorLook:
    """The anchors view's columns as plain arrays (pandas indexing per trace costs more than
    the drawing), its clusters in order with their colours, and a symbol and size per
    dimension."""

    def __init__(self, g: AnchorGeometry) -> None:
        members = g.members
        self.cluster_col = members["cluster"].to_numpy(dtype=object)
        self.jitter = members["jitter"].to_numpy(dtype=np.float64)
        self.cosine = members["cosine"].to_numpy(dtype=np.float64)
        self.texts = members["text"].to_numpy(dtype=object)
        self.member_dims = members["dimensions"].to_numpy(dtype=np.int64)
        self.clusters = list(dict.fromkeys(self.cluster_col.tolist()))
        self.colour = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(self.clusters)}
        self.dims = {d: j for j, d in enumerate(g.dimensions)}
        # Numeric symbol codes and sizes: plotly validates a number array in microseconds and
        # a list of symbol names point by point.
        self.symbols = np.array(
            [_DIMENSION_SYMBOLS[j % len(_DIMENSION_SYMBOLS)] for j in range(len(self.dims))],
            dtype=np.int64,
        )
        self.sizes = np.array([max(5, 13 - 3 * j) for j in range(len(self.dims))], dtype=np.int64)
        self.dim_col = np.array([self.dims[d] for d in self.member_dims.tolist()], dtype=np.int64)


def _curve_trace(jitter: np.ndarray) -> dict[str, Any]:
    """The curve every member sits on, cos = 1/sqrt(1+m**2), a little past the largest m."""
    top = float(jitter.max()) if jitter.size else 1.0
    m = np.linspace(0.0, max(top * 1.1, 0.1), 120)
    return {
        "type": "scatter",
        "name": "1/√(1+m²)",
        "mode": "lines",
        "x": m,
        "y": 1.0 / np.sqrt(1.0 + m * m),
        "line": {"color": "#111111", "width": 1.5},
        "xaxis": "x",
        "yaxis": "y",
        "hoverinfo": "skip",
        "legendgroup": "curve",
    }


def _dimension_keys(look: _AnchorLook) -> list[dict[str, Any]]:
    """A legend key per dimension for its symbol; they draw nothing."""
    return [
        {
            "type": "scatter",
            "name": f"d={d}",
            "mode": "markers",
            "x": [None],
            "y": [None],
            "legendgroup": "dimensions",
            "marker": {
                "color": "#666666",
                "symbol": int(look.symbols[jd]),
                "size": 10,
                "line": {"width": 1.5, "color": "#666666"},
            },
            "hoverinfo": "skip",
            "xaxis": "x",
            "yaxis": "y",
        }
        for d, jd in look.dims.items()
    ]


# plotly's codes for circle-open, square, diamond-open, cross and triangle-up-open
_DIMENSION_SYMBOLS = (100, 1, 102, 3, 105)


# -- pre- versus post-filter ------------------------------------------------------------------


class FilterModesDisplay(_Display):
    """The same query, k and where under pre- and post-filtering: two tables and a funnel."""

    def __init__(self, tables: dict[str, Any], funnels: dict[str, Any], score_label: str) -> None:
        for given, name in ((tables, "tables"), (funnels, "funnels")):
            if set(check_mapping(given, name)) != {"pre", "post"}:
                raise PlaceboragTypeError(
                    f"{name}={shown(given)} must map 'pre' and 'post' to frames"
                    " (filter_mode_table(), funnel_counts())"
                )
        check_str(score_label, "score_label")
        self.tables = tables
        self.funnels = funnels
        self.score_label = score_label

    @classmethod
    def from_stores(
        cls,
        stores: Mapping[str, FakeVectorStore],
        query: str,
        k: int = 5,
        where: Mapping[str, Any] | None = None,
        *,
        rows: StoreRows | None = None,
        traces: Mapping[str, QueryTrace] | None = None,
    ) -> FilterModesDisplay:
        """``stores`` maps "pre" and "post" to stores holding the same records (``traces``:
        any of their traces already computed, by mode)."""
        check_mapping(stores, "stores")
        for mode in ("pre", "post"):
            check_instance(
                stores.get(mode), f"stores[{mode!r}]", FakeVectorStore, "a FakeVectorStore"
            )
        if traces is not None:
            check_mapping(traces, "traces")
        traces = dict(traces or {})
        tables, funnels = {}, {}
        for mode in ("pre", "post"):
            store = stores[mode]
            r = rows if rows is not None else store_rows(store)
            t = traces.get(mode) or trace_query(store, query, k, where, rows=r)
            tables[mode] = filter_mode_table(t, r)
            funnels[mode] = funnel_counts(t)
        return cls(tables, funnels, stores["pre"].profile.score_label)

    @classmethod
    def from_store(
        cls,
        store: FakeVectorStore,
        query: str,
        k: int = 5,
        where: Mapping[str, Any] | None = None,
    ) -> FilterModesDisplay:
        """Rebuild ``store``'s records under the other filter mode and compare the two."""
        check_instance(store, "store", FakeVectorStore, "a FakeVectorStore")
        scenario = Scenario.from_store(store, query)
        other = "post" if store.filter_mode == "pre" else "pre"
        twin = scenario.store(embedder=store.embedder, filter_mode=other)
        return cls.from_stores({store.filter_mode: store, other: twin}, query, k, where)

    @classmethod
    def from_scenario(cls, scenario: Scenario) -> FilterModesDisplay:
        check_instance(scenario, "scenario", Scenario, "a Scenario")
        embedder = scenario.embedder()
        stores = {m: scenario.store(embedder=embedder, filter_mode=m) for m in ("pre", "post")}
        return cls.from_stores(stores, scenario.query, scenario.k, scenario.where)

    def plot(self, figure: Any = None) -> FilterModesDisplay:
        """Draw :meth:`spec` into ``figure`` (or a new ``go.Figure``): ``figure_``."""
        self._show(figure, *self.spec())
        return self

    def spec(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The figure as plain data: its traces and layout (numpy arrays inside)."""
        traces = []
        for i, mode in enumerate(("pre", "post")):
            f = self.funnels[mode]
            counts = f["documents"].to_numpy()
            top = max(int(counts.max()), 1) if len(counts) else 1
            traces.append(
                {
                    "type": "funnel",
                    "name": f"{mode}-filter",
                    "y": f["stage"].to_numpy(),
                    "x": counts,
                    "textinfo": "value",
                    # A bar too narrow for its count has it written beside it (plotly drops
                    # the text of a bar a fraction of a pixel wide: 5 of 100,000).
                    "textposition": [
                        "inside" if int(c) * 6 >= top else "outside" for c in counts.tolist()
                    ],
                    "marker": {"color": PALETTE[i]},
                    "xaxis": "x" if i == 0 else "x2",
                    "yaxis": "y" if i == 0 else "y2",
                }
            )
        returned = {m: int((t["stage"] == RETURNED).sum()) for m, t in self.tables.items()}
        layout = {
            "title": {
                "text": f"Where the documents go: pre-filter returns {returned['pre']}, "
                f"post-filter returns {returned['post']}",
                "x": 0.01,
            },
            # The post-filter funnel's stage names sit in the gap, clear of the widest pre bar.
            "xaxis": {"domain": [0.0, 0.4], "showticklabels": False},
            "xaxis2": {"domain": [0.6, 1.0], "showticklabels": False, "anchor": "y2"},
            # Top-down, widest first, wherever it is drawn (plotly.js reverses a funnel's
            # axis only by default, which an in-place update could lose).
            "yaxis": {"automargin": True, "autorange": "reversed"},
            "yaxis2": {"anchor": "x2", "automargin": True, "autorange": "reversed"},
            "annotations": [
                {
                    "text": f"<b>{m}-filter</b>",
                    "xref": f"x{'' if i == 0 else '2'} domain",
                    "yref": "paper",
                    "x": 0.5,
                    "y": 1.0,
                    "yanchor": "bottom",
                    "showarrow": False,
                }
                for i, m in enumerate(("pre", "post"))
            ],
            "showlegend": False,
            "margin": {"t": 80, "l": 120, "r": 20, "b": 30},
            "height": 360,
        }
        return traces, layout

    def to_html(self, selected: Sequence[str] = ()) -> str:
        """Both tables side by side, as HTML (CSS classes for styling and browser tests); the
        rows of ``selected`` ids carry ``data-selected``."""
        # The occurrence column tells the records of an id stored twice apart; where no id is,
        # it is all zeros and only the rows' data-occurrence keeps it.
        repeats = any(bool((t["occurrence"] > 0).any()) for t in self.tables.values())
        cells = "".join(
            f'<div class="placeborag-mode placeborag-mode-{m}"><h4>{m}-filter</h4>'
            + frame_to_html(
                self.tables[m],
                css_class=f"placeborag-table placeborag-table-{m}",
                headers={"score": f"score ({self.score_label})", "occurrence": "record"},
                selected=selected,
                hide=() if repeats else ("occurrence",),
            )
            + "</div>"
            for m in ("pre", "post")
        )
        return f'<div class="placeborag-results">{_TABLE_CSS}{cells}</div>'


# Every rule starts with `.placeborag-results table.placeborag-table`: JupyterLab styles the
# tables of an HTML output with more specific selectors (right-aligned cells, a fixed layout that
# lets cell text overlap, striped rows over the stage colours), and these must win there.
_TABLE_CSS = """<style>
.placeborag-results{display:flex;gap:16px;flex-wrap:wrap;font:13px/1.35 sans-serif}
.placeborag-mode{flex:1 1 420px;min-width:0}
.placeborag-results table.placeborag-table{border-collapse:collapse;width:100%;
table-layout:auto;margin:0}
.placeborag-results table.placeborag-table th,.placeborag-results table.placeborag-table td{
border-bottom:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top;
white-space:normal;overflow-wrap:break-word}
.placeborag-results table.placeborag-table td:nth-child(2){white-space:nowrap;
overflow-wrap:normal}
.placeborag-results table.placeborag-table td.num{text-align:right;
font-variant-numeric:tabular-nums;white-space:nowrap}
.placeborag-results table.placeborag-table tbody tr{background:transparent}
.placeborag-results table.placeborag-table tr[data-stage="dropped by post-filter"]{
background:#fde8dc}
.placeborag-results table.placeborag-table tr[data-stage="lost to recall"]{background:#f6e3ef}
.placeborag-results table.placeborag-table tr[data-stage="tied at the cut"]{background:#fdf0d5}
.placeborag-results table.placeborag-table tr[data-stage="below the cut"]{color:#555}
.placeborag-results table.placeborag-table tr[data-stage="returned"] td:last-child{
color:#00704f}
</style>"""


def frame_to_html(
    frame: Any,
    *,
    css_class: str = "placeborag-table",
    headers: Mapping[str, str] | None = None,
    selected: Sequence[str] = (),
    hide: Sequence[str] = (),
) -> str:
    """A small, escaped HTML table; each row carries ``data-stage``, ``data-id`` and
    ``data-occurrence`` where the frame has them.

    ``headers`` renames columns in the header row (the frame keeps its names); the columns in
    ``hide`` get no cell (their values stay in the rows' data attributes)."""
    names = headers or {}
    chosen = set(selected)
    columns = [str(c) for c in frame.columns]
    cells_of = [c for c in columns if c not in hide]
    head = "".join(f"<th>{html.escape(names.get(c, c))}</th>" for c in cells_of)
    body = []
    values = [frame[c].tolist() for c in frame.columns]  # column by column: no row objects
    for rec in (dict(zip(columns, row)) for row in zip(*values)):
        cells = []
        for value in (rec[c] for c in cells_of):
            if isinstance(value, float):
                cells.append(f'<td class="num">{value:.6f}</td>')
            elif value is None or (not isinstance(value, str) and _isna(value)):
                cells.append("<td></td>")
            else:
                cells.append(f"<td>{html.escape(str(value))}</td>")
        attrs = "".join(
            f' data-{k}="{html.escape(str(rec[k]), quote=True)}"'
            for k in ("stage", "occurrence", "id")
            if k in rec
        )
        if chosen and rec.get("id") in chosen:
            attrs += " data-selected"
        body.append(f"<tr{attrs}>{''.join(cells)}</tr>")
    empty = f'<tr><td colspan="{len(cells_of)}"><i>no documents</i></td></tr>' if not body else ""
    return (
        f'<table class="{css_class}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}{empty}</tbody></table>"
    )


def _isna(value: Any) -> bool:
    return bool(optional("pandas").isna(value))
