"""The projection view: the documents (PCA, UMAP or your own coordinates), the query, the
cluster anchors and the ranked top-k."""

from __future__ import annotations

from typing import Any

import numpy as np

from placeborag.explore._compute import (
    Projection,
    kept_for,
    label_rows,
    plotly_text,
    rows_by_label,
)
from placeborag.explore._figures.base import (
    DENSITY_FROM,
    HOVER_TEXT_UP_TO,
    LOW_VARIANCE,
    PALETTE,
    STAGE_COLOURS,
    WEBGL_FROM,
    _ProjectionBased,
    _read_only,
    _read_only_values,
    _short,
    drawn_rows,
    point_opacity,
    state_line,
)
from placeborag.explore._figures.density import density_trace
from placeborag.explore._figures.labels import (
    anchor_labels,
    fan_offsets,
    rank_label_mask,
    rank_labels,
)


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
