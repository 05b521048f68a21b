"""The explorer's figure layer: one display per module, and what they share.

- :mod:`.base`: the palette, the thresholds by document count, the rows drawn, titles, and
  the display base classes; :mod:`.draw`: a spec drawn into a ``go.Figure``.
- :mod:`.projection`, :mod:`.ranking`, :mod:`.anchors`, :mod:`.filter_modes`: one display
  each (``from_*`` computes and stores arrays, ``spec()`` is the figure as plain data,
  ``plot()`` draws it).
- :mod:`.labels` and :mod:`.score_axis`: the label geometry and the ranking's score axis,
  pure functions of arrays that import no plotly.
- :mod:`.wire`: the figure JSON on the wire and the patch between two revisions, as data;
  :mod:`.widgets`: the anywidget classes (imported only by the app), their JavaScript in
  ``js/``.
"""

from __future__ import annotations

from placeborag.explore._figures.anchors import AnchorsDisplay
from placeborag.explore._figures.base import HOVER_TEXT_UP_TO, PALETTE, state_line
from placeborag.explore._figures.draw import draw
from placeborag.explore._figures.filter_modes import FilterModesDisplay, frame_to_html
from placeborag.explore._figures.projection import ProjectionDisplay
from placeborag.explore._figures.ranking import RankingDisplay
from placeborag.explore._figures.score_axis import ScoreAxis

__all__ = [
    "HOVER_TEXT_UP_TO",
    "PALETTE",
    "AnchorsDisplay",
    "FilterModesDisplay",
    "ProjectionDisplay",
    "RankingDisplay",
    "ScoreAxis",
    "draw",
    "frame_to_html",
    "state_line",
]
