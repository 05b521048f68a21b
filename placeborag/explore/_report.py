"""The static report: every view of one scenario on a single self-contained HTML page."""

from __future__ import annotations

import html
import os
from typing import Any

from placeborag import PlaceboragTypeError, PlaceboragValueError
from placeborag.explore._access import store_rows
from placeborag.explore._export import export_pytest
from placeborag.explore._figures import (
    AnchorsDisplay,
    FilterModesDisplay,
    ProjectionDisplay,
    RankingDisplay,
)
from placeborag.explore._scenario import Scenario, demo_scenario
from placeborag.explore._umap import check_projection
from placeborag.toolkit import check_path, shown, write_text

__all__ = ["FIGURE_IDS", "render_report", "write_report"]

FIGURE_IDS = (
    "placeborag-projection",
    "placeborag-ranking",
    "placeborag-anchors",
    "placeborag-funnel",
)


def render_report(scenario: Scenario | None = None, *, projection: str = "pca") -> str:
    """The report's HTML: plotly.js inlined once, so the page needs no network.

    ``projection``: ``"pca"`` (the default) or ``"umap"`` (the ``umap`` extra) for the
    projection figure.
    """
    check_projection(projection)
    if scenario is None:
        scenario = demo_scenario()
    elif not isinstance(scenario, Scenario):
        raise PlaceboragTypeError(f"scenario={shown(scenario)} must be a Scenario or None")
    store = scenario.store()
    args = (store, scenario.query, scenario.k, scenario.where)
    filters = FilterModesDisplay.from_scenario(scenario)
    # A projection of one point (or of copies of one point) has no axes: no variance to
    # explain, nothing to draw. Both the projection and the query-centred ranking project.
    drawable = _distinct_rows(store_rows(store).vectors) >= 2
    figures: list[tuple[str, str, Any]] = [
        (
            "Projection",
            FIGURE_IDS[0],
            ProjectionDisplay.from_store(*args, projection=projection).plot().figure_
            if drawable
            else _NOT_DRAWN,
        ),
        (
            "Query-centred ranking",
            FIGURE_IDS[1],
            RankingDisplay.from_store(*args).plot().figure_ if drawable else _NOT_DRAWN,
        ),
        (
            "Anchors against jitter",
            FIGURE_IDS[2],
            AnchorsDisplay.from_scenario(scenario).plot().figure_
            if scenario.clusters
            else _NO_CLUSTERS,
        ),
        ("Pre- versus post-filter", FIGURE_IDS[3], filters.plot().figure_),
    ]
    parts = []
    first = True
    for title, div_id, fig in figures:
        parts.append(f"<h2>{html.escape(title)}</h2>")
        if isinstance(fig, str):
            parts.append(f'<div id="{div_id}"><p>{html.escape(fig)}</p></div>')
            continue
        parts.append(
            fig.to_html(
                full_html=False,
                include_plotlyjs=first,
                div_id=div_id,
                config={"displaylogo": False},
            )
        )
        first = False
        if div_id == FIGURE_IDS[3]:
            parts.append(filters.to_html())
    parts.append("<h2>As a pytest module</h2>")
    try:
        module = export_pytest(scenario)
    except (PlaceboragTypeError, PlaceboragValueError) as refusal:  # a value with no literal
        module = f"# not exported: {refusal}"
    parts.append(f'<pre class="placeborag-export">{html.escape(module)}</pre>')
    options = ", ".join(
        f"{k}={v!r}"
        for k, v in {**scenario.embedder_options, **scenario.store_options}.items()
        if k != "clusters"
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>placeborag report: {html.escape(scenario.name)}</title>
<style>body{{font:14px/1.45 Inter,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1300px;
padding:0 16px;color:#222}} pre{{background:#f6f6f6;padding:12px;overflow:auto}}</style>
</head><body>
<h1>placeborag report: {html.escape(scenario.name)}</h1>
<p>{len(scenario.documents)} documents; query <b>{html.escape(scenario.query)}</b>,
k={scenario.k}, where=<code>{html.escape(repr(scenario.where))}</code>.</p>
<p><small>{html.escape(options)}</small></p>
{"".join(parts)}
</body></html>
"""


_NOT_DRAWN = "A projection needs at least two documents with different vectors."


def _distinct_rows(vectors: Any) -> int:
    # At most two are needed; stop there rather than sort a large matrix.
    first = None
    for row in vectors:
        if first is None:
            first = row
        elif (row != first).any():
            return 2
    return 0 if first is None else 1


_NO_CLUSTERS = "No clusters are declared."


def write_report(
    path: str | os.PathLike[str], scenario: Scenario | None = None, *, projection: str = "pca"
) -> None:
    """Render the report, then write it atomically: a failure leaves ``path`` as it was."""
    target = check_path(path, "path", named=True)
    write_text(target, render_report(scenario, projection=projection))
