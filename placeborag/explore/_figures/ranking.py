"""The query-centred ranking view: each document at its score, better to the right, the
top-k cut, ties and axis breaks."""

from __future__ import annotations

from typing import Any

import numpy as np

from placeborag.explore._access import (
    DROPPED,
    LOST,
    RETURNED,
    STAGES,
    TIED,
    UNREACHABLE,
    QueryTrace,
)
from placeborag.explore._compute import (
    label_codes,
    plotly_text,
    rows_by_label,
    spread_offsets,
)
from placeborag.explore._figures.base import (
    _TITLE_LINE,
    _TITLE_TOP,
    DENSITY_FROM,
    HOVER_TEXT_UP_TO,
    STAGE_COLOURS,
    WEBGL_FROM,
    _ProjectionBased,
    _read_only,
    _short,
    drawn_rows,
    point_opacity,
    state_line,
    title_text,
)
from placeborag.explore._figures.density import density_trace
from placeborag.explore._figures.labels import (
    _RANK_PLOT_H,
    rank_label_mask,
    ranking_labels,
    ranking_x_range,
)
from placeborag.explore._figures.score_axis import ScoreAxis


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


_STAGE_SYMBOLS = {DROPPED: "x", LOST: "x", TIED: "diamond", UNREACHABLE: "circle-open"}


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
