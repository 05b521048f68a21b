"""What every display shares: the palette, the thresholds by document count, the rows drawn,
the title lines, and the display base classes (``from_*`` computes, ``plot()`` draws)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeborag import FakeVectorStore, PlaceboragTypeError
from placeborag.explore._access import (
    BELOW,
    DROPPED,
    FILTERED,
    LOST,
    RETURNED,
    TIED,
    UNREACHABLE,
    check_instance,
)
from placeborag.explore._compute import (
    Projection,
    plotly_text,
    project,
)
from placeborag.explore._figures.draw import _FONT_SIZE, draw
from placeborag.explore._scenario import Scenario
from placeborag._validation import json_text
from placeborag.toolkit import shown

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


def _short(text: str, n: int = 48) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


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


def state_line(trace: Any) -> str:
    """The state a view shows, in one line: profile, metric, filter mode, where, recall."""
    where = "none" if trace.where is None else json_text(trace.where)
    return (
        f"profile {trace.profile} ({trace.metric}, ties by {trace.tie_rule}) · "
        f"{trace.filter_mode}-filter · where {_short(where, 60)} · recall {trace.recall:g}"
    )
