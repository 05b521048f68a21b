"""The anchors view: each cluster member's cosine to its anchor against the jitter, per
dimension, beside the member-to-member cosines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from placeborag import FakeEmbedder
from placeborag.explore._access import (
    check_instance,
)
from placeborag.explore._compute import (
    AnchorGeometry,
    anchor_geometry,
    plotly_text,
)
from placeborag.explore._figures.base import (
    PALETTE,
    _Display,
)
from placeborag.explore._scenario import Scenario


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
