"""The ranking's score axis as pure arithmetic on arrays (no plotly): long empty stretches
broken, the far side of a large store squeezed, ticks at round scores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


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
