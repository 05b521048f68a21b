"""Render the explorer figures in docs/img/ as PNG screenshots.

Run from the repository root: ``.venv/bin/python docs/_figures.py [STEM ...]`` (every image,
or only the named ones, e.g. ``projection-umap``; that one needs the ``umap`` extra). Each view
of the built-in demo scenario is written to a self-contained HTML page (plotly.js inlined, so
no network) and photographed by headless Debian Chromium. The PNGs are committed; rerun this
script when a view changes, and look at every image before committing it.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from placeborag.explore import (
    AnchorsDisplay,
    Document,
    FilterModesDisplay,
    ProjectionDisplay,
    RankingDisplay,
    Scenario,
    demo_scenario,
)

OUT = Path(__file__).resolve().parent / "img"
WIDTH, HEIGHT = 1000, 760  # a notebook's width in JupyterLab on a laptop
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def figures():
    """(file stem, plotly figure, extra HTML under it) for every view of the demo scenario."""
    s = demo_scenario()
    store = s.store()
    projection = ProjectionDisplay.from_store(store, s.query, s.k, s.where)
    filters = FilterModesDisplay.from_scenario(s).plot()
    yield "projection", projection.plot().figure_, ""
    # The optional UMAP projection of the same store (seeded from the vectors' digest).
    umap = ProjectionDisplay.from_store(store, s.query, s.k, s.where, projection="umap")
    yield "projection-umap", umap.plot().figure_, ""
    yield "ranking", RankingDisplay(projection.projection).plot().figure_, ""
    yield "anchors", AnchorsDisplay.from_scenario(s).plot().figure_, ""
    yield "filter-modes", filters.figure_, filters.to_html()
    yield (
        "projection-3d",
        ProjectionDisplay.from_store(store, s.query, s.k, s.where, n_components=3).plot().figure_,
        "",
    )
    # Post-filtering: the returned documents are ranked 1..n, the dropped ones show their cut.
    post = s.store(filter_mode="post")
    yield "ranking-post", RankingDisplay.from_store(post, s.query, s.k, s.where).plot().figure_, ""
    # The same query under post-filtering with recall 0.6: lost and dropped documents appear.
    degraded = s.store(filter_mode="post", recall=0.6)
    yield (
        "ranking-post-recall",
        RankingDisplay.from_store(degraded, s.query, s.k, s.where).plot().figure_,
        "",
    )
    # Ties: three identical texts at k=2 under chroma (insertion order decides).
    docs = [
        Document("faq-3", "refund policy for damaged parcels", {"lang": "en"}),
        Document("faq-1", "refund policy for damaged parcels", {"lang": "en"}),
        Document("faq-2", "refund policy for damaged parcels", {"lang": "en"}),
        Document("ship-1", "delivery times to the islands", {"lang": "en"}),
        Document("ship-2", "track your parcel online", {"lang": "en"}),
        Document("acct-1", "reset your password", {"lang": "en"}),
    ]
    ties = Scenario(documents=tuple(docs), query="refund policy", k=2, name="ties")
    tie_store = ties.store()
    tie_filters = FilterModesDisplay.from_scenario(ties).plot()
    yield (
        "ranking-ties",
        RankingDisplay.from_store(tie_store, ties.query, ties.k, color_by="lang").plot().figure_,
        tie_filters.to_html(),
    )
    # docs/failures.md: the store of the failing test there, as its saved scenario opens it.
    failing = Scenario(
        documents=(
            Document("en-1", "refund policy", {"lang": "en"}),
            Document("en-2", "refund policy for gift cards", {"lang": "en"}),
            Document("hu-1", "visszatérítési szabályzat", {"lang": "hu"}),
        ),
        query="refund policy",
        k=2,
        where={"lang": "hu"},
        filter_mode="post",
        name="failing test",
    )
    yield (
        "ranking-failure",
        RankingDisplay.from_store(failing.store(), failing.query, failing.k, failing.where)
        .plot()
        .figure_,
        "",
    )


def page(figure, extra: str) -> str:
    figure.update_layout(width=WIDTH - 40, height=figure.layout.height or HEIGHT - 60)
    body = figure.to_html(full_html=False, include_plotlyjs=True, config={"displayModeBar": False})
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        "<style>body{margin:12px;background:#fff;font-family:sans-serif}</style></head>"
        f"<body>{body}{extra}</body></html>"
    )


def screenshot(html_file: Path, png: Path) -> None:
    """Photograph a page in Debian's Chromium through Playwright (software WebGL, so the 3-D
    view draws too), once plotly has drawn every plot."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--use-angle=swiftshader",
                "--enable-unsafe-swiftshader",
                "--ignore-gpu-blocklist",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--hide-scrollbars",
            ],
        )
        # A short viewport and a full-page shot: the picture is as tall as what the page
        # holds (a figure, and any table under it), with no blank band below.
        page = browser.new_page(viewport={"width": WIDTH, "height": 200})
        page.goto(html_file.as_uri())
        page.wait_for_function(
            """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
                .every(gd => gd._fullLayout && !gd._transitioning)"""
        )
        page.wait_for_timeout(1500)  # WebGL draws a frame or two after plotly returns
        page.screenshot(path=str(png), full_page=True)
        browser.close()


def main(stems: list[str]) -> int:
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for stem, figure, extra in figures():
            if stems and stem not in stems:
                continue
            html_file = Path(tmp) / f"{stem}.html"
            html_file.write_text(page(figure, extra), encoding="utf-8")
            screenshot(html_file, OUT / f"{stem}.png")
            print(f"wrote {OUT / f'{stem}.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
