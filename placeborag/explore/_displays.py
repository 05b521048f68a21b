"""Displays: ``from_*`` computes and stores arrays, ``plot()`` turns them into a plotly figure.

``plot(figure=...)`` draws into an existing figure (a long-lived ``go.FigureWidget`` in the
app): when the traces keep their kinds and names, only their arrays are replaced inside one
``batch_update``, so the front end redraws in place.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeborag import FakeVectorStore
from placeborag.explore._access import (
    BELOW,
    DROPPED,
    FILTERED,
    LOST,
    RETURNED,
    STATUSES,
    QueryTrace,
    StoreRows,
    store_rows,
    trace_query,
)
from placeborag.explore._compute import (
    AnchorGeometry,
    Projection,
    anchor_geometry,
    filter_mode_table,
    funnel_counts,
    project,
    spread_offsets,
)
from placeborag.explore._deps import optional
from placeborag.explore._scenario import Scenario

__all__ = [
    "AnchorsDisplay",
    "FilterModesDisplay",
    "ProjectionDisplay",
    "RankingDisplay",
    "draw",
    "frame_to_html",
]

# Okabe-Ito, then a few more: distinguishable for the common colour-vision deficiencies.
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#7F7F7F",
    "#8C564B", "#17BECF", "#BCBD22", "#9467BD",
)
STATUS_COLOURS = {
    RETURNED: "#009E73",
    DROPPED: "#D55E00",
    LOST: "#CC79A7",
    FILTERED: "#BBBBBB",
    BELOW: "#56B4E9",
}
WEBGL_FROM = 3000  # Scattergl past a few thousand points: SVG slows down well before 10k
LOW_VARIANCE = 0.20
_META = "placeborag"
_FONT = {"family": "Inter, Helvetica, Arial, sans-serif", "size": 13}


def draw(figure: Any, traces: list[dict[str, Any]], layout: dict[str, Any]) -> Any:
    """A new ``go.Figure``, or ``figure`` updated in place to show ``traces`` and ``layout``."""
    go = optional("plotly.graph_objects")
    layout = {"font": _FONT, **layout}
    if figure is None:
        return go.Figure(data=traces, layout={"template": "plotly_white", **layout})
    if figure.layout.meta != _META:
        # Validating a template costs ~40 ms: apply it once per long-lived figure.
        figure.update_layout(template="plotly_white", meta=_META)
    same = len(figure.data) == len(traces) and all(
        t.type == s["type"] and t.name == s.get("name") for t, s in zip(figure.data, traces)
    )
    if not same:
        figure.data = ()
    with figure.batch_update():
        if same:
            for old, new in zip(figure.data, traces):
                changed = {
                    k: v for k, v in new.items()
                    if k != "type" and not (k in _ARRAYS and _same_array(old[k], v))
                }
                old.update(changed, overwrite=True)
        else:
            figure.add_traces(traces)
        figure.update_layout(layout, overwrite=True)
    return figure


_ARRAYS = ("x", "y", "z", "text", "hovertext", "customdata")


def _same_array(old: Any, new: Any) -> bool:
    """Whether an array property is unchanged: re-sending it would cost a validation pass."""
    if old is None or new is None:
        return old is new
    a, b = np.asarray(old), np.asarray(new)
    return a.shape == b.shape and a.dtype.kind == b.dtype.kind and bool(np.array_equal(a, b))


def _check_figure(figure: Any) -> None:
    if figure is not None and not hasattr(figure, "batch_update"):
        raise TypeError(f"figure={figure!r} must be a plotly Figure or FigureWidget, or None")


class _Display:
    figure_: Any = None

    def _show(self, figure: Any, traces: list[dict[str, Any]], layout: dict[str, Any]) -> Any:
        _check_figure(figure)
        self.figure_ = draw(figure, traces, layout)
        return self


# -- projection -------------------------------------------------------------------------------


class _ProjectionBased(_Display):
    def __init__(self, projection: Projection) -> None:
        self.projection = projection

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
    ) -> Any:
        return cls(project(store, query, k, where, n_components=n_components, color_by=color_by))

    @classmethod
    def from_scenario(cls, scenario: Scenario, **kwargs: Any) -> Any:
        s = scenario
        return cls.from_store(s.store(), s.query, s.k, s.where, **kwargs)



class ProjectionDisplay(_ProjectionBased):
    """PCA of a store's vectors with the query, the cluster anchors and the ranked top-k."""

    def plot(self, figure: Any = None) -> ProjectionDisplay:
        p = self.projection
        three = p.coords.shape[1] >= 3
        n = p.coords.shape[0]
        kind = "scatter3d" if three else ("scattergl" if n >= WEBGL_FROM else "scatter")
        size = 3 if n >= 20_000 else (5 if n >= WEBGL_FROM else 9)

        def xyz(points: np.ndarray) -> dict[str, Any]:
            points = np.atleast_2d(points)
            out = {"x": points[:, 0], "y": points[:, 1]}
            if three:
                out["z"] = points[:, 2]
            return out

        score = p.trace.score
        template = "%{text}<br>score %{customdata:.6f}<extra>%{fullData.name}</extra>"
        traces: list[dict[str, Any]] = []
        for i, label in enumerate(p.label_order):
            mask = p.labels == label
            traces.append(
                {
                    "type": kind,
                    "name": label,
                    "mode": "markers",
                    **xyz(p.coords[mask]),
                    "text": p.hover[mask],
                    "customdata": score[mask],
                    "hovertemplate": template,
                    "marker": {"size": size, "color": PALETTE[i % len(PALETTE)],
                               "opacity": 0.75, "line": {"width": 0}},
                    "legendgroup": "docs",
                    "legendgrouptitle": {"text": p.color_by},
                }
            )
        top = np.flatnonzero(p.trace.rank)
        top = top[np.argsort(p.trace.rank[top])]
        traces.append(
            {
                "type": "scatter3d" if three else "scatter",
                "name": "top-k (rank)",
                "mode": "markers+text",
                **xyz(p.coords[top] if top.size else np.zeros((0, p.coords.shape[1]))),
                "text": [str(r) for r in p.trace.rank[top]],
                "textposition": "top center",
                "textfont": {"size": 13, "color": "#111111"},
                "customdata": score[top],
                "hovertext": p.hover[top],
                "hovertemplate": "rank %{text}<br>%{hovertext}<br>score %{customdata:.6f}"
                "<extra></extra>",
                "marker": {"size": 16, "color": "rgba(0,0,0,0)",
                           "line": {"width": 2, "color": "#111111"}},
            }
        )
        traces.append(
            {
                "type": "scatter3d" if three else "scatter",
                "name": "cluster anchors",
                "mode": "markers+text",
                **xyz(p.anchors if len(p.anchor_names) else np.zeros((0, p.coords.shape[1]))),
                "text": p.anchor_names,
                "textposition": "bottom center",
                "hovertemplate": "anchor of %{text}<extra></extra>",
                "marker": {"size": 13 if not three else 6,
                           "symbol": "diamond" if not three else "diamond-open", "color": "#ffffff",
                           "line": {"width": 2, "color": "#333333"}},
            }
        )
        traces.append(
            {
                "type": "scatter3d" if three else "scatter",
                "name": "query",
                "mode": "markers",
                **xyz(p.query[None, :]),
                "hovertext": [p.trace.text],
                "hovertemplate": "query: %{hovertext}<extra></extra>",
                "marker": {"size": 20 if not three else 8, "color": "#111111",
                           "symbol": "star" if not three else "x",
                           "line": {"width": 1, "color": "#ffffff"}},
            }
        )
        axes = [f"PC{i + 1} ({100 * v:.1f}% of variance)" for i, v in enumerate(p.explained)]
        kept = float(p.explained[:2].sum())
        annotations = []
        if kept < LOW_VARIANCE:
            annotations.append(
                {
                    "text": f"PCA keeps only {100 * kept:.1f}% of the variance in two axes; "
                    "distances in this picture can lie. The query-centred view cannot.",
                    "xref": "paper", "yref": "paper", "x": 0, "y": 1.0,
                    "xanchor": "left", "yanchor": "bottom", "showarrow": False,
                    "font": {"color": "#B00020", "size": 12},
                }
            )
        layout: dict[str, Any] = {
            "title": {"text": f"Projection (PCA) of {n} documents for query "
                      f"{_short(p.trace.text)!r}, k={p.trace.k}", "x": 0.01},
            "annotations": annotations,
            "legend": {"itemsizing": "constant"},
            "margin": {"t": 80, "l": 60, "r": 20, "b": 60},
            "dragmode": "lasso",
            "uirevision": "projection",
        }
        if three:
            layout["scene"] = {
                "xaxis": {"title": {"text": axes[0]}},
                "yaxis": {"title": {"text": axes[1]}},
                "zaxis": {"title": {"text": axes[2]}},
            }
        else:
            layout["xaxis"] = {"title": {"text": axes[0]}, "zeroline": False}
            layout["yaxis"] = {"title": {"text": axes[1]}, "zeroline": False}
        return self._show(figure, traces, layout)


def _short(text: str, n: int = 48) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


# -- query-centred ranking view -----------------------------------------------------------------


class RankingDisplay(_ProjectionBased):
    """x is each document's score to the query, so left-to-right order is the ranking.

    Rows (y) are the documents' categories; the top-k cut is a vertical line. The x axis runs
    from worst to best whatever the profile's direction, so "better" is always to the right.
    """

    @property
    def cut(self) -> float | None:
        """The score of the last document inside the top-k cut (None when nothing ranks)."""
        t = self.projection.trace
        inside = np.flatnonzero(t.cut_rank)
        if not inside.size:
            return None
        return float(t.score[inside[np.argmax(t.cut_rank[inside])]])

    def plot(self, figure: Any = None) -> RankingDisplay:
        p = self.projection
        t = p.trace
        row = {label: i for i, label in enumerate(p.label_order)}
        y = np.array([row[v] for v in p.labels], dtype=np.float64) + spread_offsets(t.ids)
        n = len(t.ids)
        kind = "scattergl" if n >= WEBGL_FROM else "scatter"
        traces = []
        for status in STATUSES:
            mask = t.status == status
            ranked = status in (RETURNED, DROPPED)
            traces.append(
                {
                    "type": kind,
                    "name": status,
                    "mode": "markers+text" if ranked else "markers",
                    "x": t.score[mask],
                    "y": y[mask],
                    "text": [str(r) for r in t.cut_rank[mask]] if ranked else None,
                    "textposition": "top center",
                    "hovertext": p.hover[mask],
                    "customdata": t.score[mask],
                    "hovertemplate": "%{hovertext}<br>score %{customdata:.6f}"
                    "<extra>%{fullData.name}</extra>",
                    "marker": {
                        "size": 11 if ranked else (4 if n >= WEBGL_FROM else 7),
                        "color": STATUS_COLOURS[status],
                        "opacity": 1.0 if ranked else 0.7,
                        "symbol": "x" if status in (DROPPED, LOST) else "circle",
                    },
                }
            )
        cut = self.cut
        shapes, annotations = [], []
        if cut is not None:
            shapes.append(
                {"type": "line", "xref": "x", "yref": "paper", "x0": cut, "x1": cut,
                 "y0": 0, "y1": 1, "line": {"color": "#111111", "dash": "dash", "width": 1.5}}
            )
            annotations.append(
                {"text": f"top-{t.k} cut", "x": cut, "xref": "x", "y": 1.0, "yref": "paper",
                 "yanchor": "bottom", "showarrow": False, "font": {"size": 12}}
            )
        layout = {
            "title": {"text": f"Query-centred ranking for {_short(t.text)!r} "
                      f"({t.filter_mode}-filter, recall {t.recall:g}): better is to the right",
                      "x": 0.01},
            "xaxis": {
                "title": {"text": p.score_label},
                "autorange": True if p.higher_is_better else "reversed",
                "zeroline": False,
            },
            "yaxis": {
                "title": {"text": p.color_by},
                "tickmode": "array",
                "tickvals": list(range(len(p.label_order))),
                "ticktext": p.label_order,
                "range": [-0.6, len(p.label_order) - 0.4],
                "zeroline": False,
            },
            "shapes": shapes,
            "annotations": annotations,
            "legend": {"itemsizing": "constant"},
            "margin": {"t": 80, "l": 110, "r": 20, "b": 60},
            "dragmode": "select",
            "uirevision": "ranking",
        }
        return self._show(figure, traces, layout)


# -- anchors against jitter -------------------------------------------------------------------


class AnchorsDisplay(_Display):
    """Member-to-anchor cosine against jitter m (with the curve 1/sqrt(1+m**2)), per dimension,
    beside member-to-member cosines per dimension."""

    def __init__(self, geometry: AnchorGeometry) -> None:
        self.geometry = geometry

    @classmethod
    def from_scenario(
        cls, scenario: Scenario, *, dimensions: Sequence[int] = (64, 256, 1024)
    ) -> AnchorsDisplay:
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
        dimensions: Sequence[int] = (64, 256, 1024),
    ) -> AnchorsDisplay:
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
        orders = m.pivot_table(index=["cluster", "text"], columns="dimensions", values="order")
        return bool((orders.nunique(axis=1) <= 1).all())

    def plot(self, figure: Any = None) -> AnchorsDisplay:
        g = self.geometry
        members, pairs = g.members, g.pairs
        symbols = ("circle", "square", "diamond", "triangle-up", "cross")
        clusters = list(dict.fromkeys(members["cluster"]))
        colour = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(clusters)}
        traces: list[dict[str, Any]] = []
        top = float(members["jitter"].max()) if len(members) else 1.0
        m = np.linspace(0.0, max(top * 1.1, 0.1), 200)
        traces.append(
            {"type": "scatter", "name": "1/√(1+m²)", "mode": "lines", "x": m,
             "y": 1.0 / np.sqrt(1.0 + m * m), "line": {"color": "#111111", "width": 1.5},
             "xaxis": "x", "yaxis": "y", "hoverinfo": "skip"}
        )
        for j, d in enumerate(g.dimensions):
            for c in clusters:
                sel = members[(members["dimensions"] == d) & (members["cluster"] == c)]
                traces.append(
                    {
                        "type": "scatter",
                        "name": f"{c} · d={d}",
                        "legendgroup": c,
                        "mode": "markers",
                        "x": sel["jitter"].to_numpy(),
                        "y": sel["cosine"].to_numpy(),
                        "hovertext": sel["text"].to_numpy(),
                        "hovertemplate": "%{hovertext}<br>m=%{x:.4f}<br>cos=%{y:.6f}"
                        f"<extra>{html.escape(c)}, d={d}</extra>",
                        "marker": {"color": colour[c], "symbol": symbols[j % len(symbols)],
                                   "size": 10 - 2 * j, "opacity": 0.8,
                                   "line": {"width": 1, "color": "#ffffff"}},
                        "xaxis": "x",
                        "yaxis": "y",
                    }
                )
        for pair, sel in pairs.groupby("pair", sort=False):
            c = sel["cluster"].iloc[0]
            traces.append(
                {
                    "type": "scatter",
                    "name": pair,
                    "legendgroup": c,
                    "showlegend": False,
                    "mode": "lines+markers",
                    "x": [str(d) for d in sel["dimensions"]],
                    "y": sel["cosine"].to_numpy(),
                    "hovertemplate": f"{html.escape(pair)}<br>d=%{{x}}<br>cos=%{{y:.6f}}"
                    "<extra></extra>",
                    "line": {"color": colour.get(c, "#777777"), "width": 1.5},
                    "marker": {"size": 7},
                    "xaxis": "x2",
                    "yaxis": "y2",
                }
            )
        same = "the same" if self.order_is_dimension_free else "NOT the same"
        notes = [
            {"text": f"member order against the anchor is {same} at every dimension",
             "xref": "x domain", "yref": "y domain", "x": 0.02, "y": 0.02,
             "xanchor": "left", "yanchor": "bottom", "showarrow": False,
             "font": {"size": 12}},
            {"text": "member-to-member cosines move with the dimension",
             "xref": "x2 domain", "yref": "y2 domain", "x": 0.02, "y": 0.02,
             "xanchor": "left", "yanchor": "bottom", "showarrow": False,
             "font": {"size": 12}},
        ]
        notes += [
            {"text": f"d={d}: {html.escape(err)[:90]}…", "xref": "paper", "yref": "paper",
             "x": 0, "y": -0.18 - 0.05 * i, "showarrow": False, "xanchor": "left",
             "font": {"color": "#B00020", "size": 11}}
            for i, (d, err) in enumerate(g.errors.items())
        ]
        layout = {
            "title": {"text": "Cluster members against their anchors: cos = 1/√(1+m²) at every "
                      "dimension", "x": 0.01},
            "xaxis": {"domain": [0.0, 0.55], "title": {"text": "jitter magnitude m"}},
            "yaxis": {"title": {"text": "cosine(member, anchor)"}},
            "xaxis2": {"domain": [0.68, 1.0], "title": {"text": "dimensions"},
                       "type": "category", "anchor": "y2"},
            "yaxis2": {"title": {"text": "cosine(member, member)"}, "anchor": "x2"},
            "annotations": notes,
            "legend": {"groupclick": "togglegroup"},
            "margin": {"t": 70, "l": 70, "r": 20, "b": 60 + 30 * len(g.errors)},
        }
        return self._show(figure, traces, layout)


# -- pre- versus post-filter ------------------------------------------------------------------


class FilterModesDisplay(_Display):
    """The same query, k and where under pre- and post-filtering: two tables and a funnel."""

    def __init__(self, tables: dict[str, Any], funnels: dict[str, Any], score_label: str) -> None:
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
        scenario = Scenario.from_store(store, query)
        other = "post" if store.filter_mode == "pre" else "pre"
        twin = scenario.store(embedder=store.embedder, filter_mode=other)
        return cls.from_stores({store.filter_mode: store, other: twin}, query, k, where)

    @classmethod
    def from_scenario(cls, scenario: Scenario) -> FilterModesDisplay:
        embedder = scenario.embedder()
        stores = {m: scenario.store(embedder=embedder, filter_mode=m) for m in ("pre", "post")}
        return cls.from_stores(stores, scenario.query, scenario.k, scenario.where)

    def plot(self, figure: Any = None) -> FilterModesDisplay:
        traces = []
        for i, mode in enumerate(("pre", "post")):
            f = self.funnels[mode]
            traces.append(
                {
                    "type": "funnel",
                    "name": f"{mode}-filter",
                    "y": f["stage"].to_numpy(),
                    "x": f["documents"].to_numpy(),
                    "textinfo": "value",
                    "marker": {"color": PALETTE[i]},
                    "xaxis": "x" if i == 0 else "x2",
                    "yaxis": "y" if i == 0 else "y2",
                }
            )
        returned = {m: int((t["status"] == RETURNED).sum()) for m, t in self.tables.items()}
        layout = {
            "title": {"text": f"Where the documents go: pre-filter returns {returned['pre']}, "
                      f"post-filter returns {returned['post']}", "x": 0.01},
            "xaxis": {"domain": [0.0, 0.45], "showticklabels": False},
            "xaxis2": {"domain": [0.55, 1.0], "showticklabels": False, "anchor": "y2"},
            "yaxis": {"automargin": True},
            "yaxis2": {"anchor": "x2", "automargin": True},
            "annotations": [
                {"text": f"<b>{m}-filter</b>", "xref": f"x{'' if i == 0 else '2'} domain",
                 "yref": "paper", "x": 0.5, "y": 1.0, "yanchor": "bottom", "showarrow": False}
                for i, m in enumerate(("pre", "post"))
            ],
            "showlegend": False,
            "margin": {"t": 80, "l": 120, "r": 20, "b": 30},
            "height": 360,
        }
        return self._show(figure, traces, layout)

    def to_html(self) -> str:
        """Both tables side by side, as HTML (CSS classes for styling and browser tests)."""
        cells = "".join(
            f'<div class="placeborag-mode placeborag-mode-{m}"><h4>{m}-filter</h4>'
            f"{frame_to_html(self.tables[m], css_class=f'placeborag-table placeborag-table-{m}')}"
            "</div>"
            for m in ("pre", "post")
        )
        return f'<div class="placeborag-results">{_TABLE_CSS}{cells}</div>'


_TABLE_CSS = """<style>
.placeborag-results{display:flex;gap:16px;flex-wrap:wrap;font:13px/1.35 sans-serif}
.placeborag-mode{flex:1 1 420px;min-width:0}
.placeborag-table{border-collapse:collapse;width:100%}
.placeborag-table th,.placeborag-table td{border-bottom:1px solid #ddd;padding:3px 6px;
text-align:left;vertical-align:top}
.placeborag-table td:nth-child(2){white-space:nowrap}
.placeborag-table td.num{text-align:right;font-variant-numeric:tabular-nums}
.placeborag-table tr[data-status="dropped by post-filter"]{background:#fde8dc}
.placeborag-table tr[data-status="lost to recall"]{background:#f6e3ef}
.placeborag-table tr[data-status="returned"] td:last-child{color:#00704f}
</style>"""


def frame_to_html(frame: Any, *, css_class: str = "placeborag-table") -> str:
    """A small, escaped HTML table; each row carries ``data-status`` and ``data-id``."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for rec in frame.to_dict("records"):
        cells = []
        for value in rec.values():
            if isinstance(value, float):
                cells.append(f'<td class="num">{value:.6f}</td>')
            elif value is None or (not isinstance(value, str) and _isna(value)):
                cells.append("<td></td>")
            else:
                cells.append(f"<td>{html.escape(str(value))}</td>")
        attrs = "".join(
            f' data-{k}="{html.escape(str(rec[k]), quote=True)}"'
            for k in ("status", "id") if k in rec
        )
        body.append(f"<tr{attrs}>{''.join(cells)}</tr>")
    empty = (
        f'<tr><td colspan="{len(frame.columns)}"><i>no documents</i></td></tr>' if not body else ""
    )
    return (
        f'<table class="{css_class}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}{empty}</tbody></table>"
    )


def _isna(value: Any) -> bool:
    return bool(optional("pandas").isna(value))

