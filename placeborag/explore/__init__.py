"""placeborag.explore: see, and export as tests, the geometry behind a fake store's rankings.

Needs the ``explore`` extra (``pip install 'placeborag[explore]'``): pandas, plotly,
scikit-learn, ipywidgets and anywidget, each imported only by the function that draws or
computes with it, so ``import placeborag.explore`` itself stays light.
"""

from __future__ import annotations

from placeborag.explore._access import StoreRows, store_rows, trace_query
from placeborag.explore._app import CSS_CLASSES, Explorer, app
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
from placeborag.explore._export import Export, build_export, export_pytest, smallest_corpus
from placeborag.explore._figures import (
    AnchorsDisplay,
    FilterModesDisplay,
    ProjectionDisplay,
    RankingDisplay,
)
from placeborag.explore._report import FIGURE_IDS, render_report, write_report
from placeborag.explore._scenario import Document, Scenario, demo_scenario
from placeborag.explore._vectors import VectorTable, store_from_vectors

__all__ = [
    "CSS_CLASSES",
    "FIGURE_IDS",
    "AnchorGeometry",
    "AnchorsDisplay",
    "Document",
    "Explorer",
    "Export",
    "FilterModesDisplay",
    "Projection",
    "ProjectionDisplay",
    "Projector",
    "RankingDisplay",
    "Scenario",
    "StoreRows",
    "VectorTable",
    "anchor_geometry",
    "app",
    "build_export",
    "demo_scenario",
    "export_pytest",
    "filter_mode_table",
    "fit_projector",
    "funnel_counts",
    "project",
    "render_report",
    "smallest_corpus",
    "store_from_vectors",
    "store_rows",
    "trace_query",
    "write_report",
]
