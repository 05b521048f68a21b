"""placeborag.explore: see, and export as tests, the geometry behind a fake store's rankings.

Needs the ``explore`` extra (``pip install 'placeborag[explore]'``): pandas, plotly,
scikit-learn, ipywidgets and anywidget, each imported only by the function that draws or
computes with it, so ``import placeborag.explore`` itself stays light.
"""

from __future__ import annotations

from placeborag.explore._access import STATUSES, QueryTrace, StoreRows, store_rows, trace_query
from placeborag.explore._compute import (
    AnchorGeometry,
    Projection,
    Projector,
    anchor_geometry,
    filter_mode_table,
    fit_projector,
    funnel_counts,
    project,
)
from placeborag.explore._displays import (
    AnchorsDisplay,
    FilterModesDisplay,
    ProjectionDisplay,
    RankingDisplay,
)
from placeborag.explore._scenario import Document, Scenario, demo_scenario

__all__ = [
    "STATUSES",
    "AnchorGeometry",
    "AnchorsDisplay",
    "Document",
    "FilterModesDisplay",
    "Projection",
    "ProjectionDisplay",
    "Projector",
    "QueryTrace",
    "RankingDisplay",
    "Scenario",
    "StoreRows",
    "anchor_geometry",
    "demo_scenario",
    "filter_mode_table",
    "fit_projector",
    "funnel_counts",
    "project",
    "store_rows",
    "trace_query",
]
