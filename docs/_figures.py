"""Render the explorer figures in docs/img/ as PNG screenshots.

Run from the repository root: ``.venv/bin/python docs/_figures.py``. Each view of the built-in
demo scenario is written to a self-contained HTML page (plotly.js inlined, so no network) and
photographed by headless Debian Chromium. The PNGs are committed; rerun this script when a
view changes, and look at every image before committing it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from placeborag.explore import (
    AnchorsDisplay,
    FilterModesDisplay,
    ProjectionDisplay,
    RankingDisplay,
    demo_scenario,
)

OUT = Path(__file__).resolve().parent / "img"
WIDTH, HEIGHT = 1200, 800
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def figures():
    """(file stem, plotly figure, extra HTML under it) for every view of the demo scenario."""
    s = demo_scenario()
    store = s.store()
    projection = ProjectionDisplay.from_store(store, s.query, s.k, s.where)
    filters = FilterModesDisplay.from_scenario(s).plot()
    yield "projection", projection.plot().figure_, ""
    yield "ranking", RankingDisplay(projection.projection).plot().figure_, ""
    yield "anchors", AnchorsDisplay.from_scenario(s).plot().figure_, ""
    yield "filter-modes", filters.figure_, filters.to_html()
    # The same query under post-filtering with recall 0.6: lost and dropped documents appear.
    degraded = s.store(filter_mode="post", recall=0.6)
    yield (
        "ranking-post-recall",
        RankingDisplay.from_store(degraded, s.query, s.k, s.where).plot().figure_,
        "",
    )


def page(figure, extra: str) -> str:
    figure.update_layout(width=WIDTH - 40, height=figure.layout.height or HEIGHT - 60)
    body = figure.to_html(full_html=False, include_plotlyjs=True, config={"staticPlot": True})
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        "<style>body{margin:12px;background:#fff;font-family:sans-serif}</style></head>"
        f"<body>{body}{extra}</body></html>"
    )


def screenshot(html_file: Path, png: Path, height: int = HEIGHT) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                "--virtual-time-budget=5000",
                f"--screenshot={png}",
                f"--window-size={WIDTH},{height}",
                html_file.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )


def main() -> int:
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for stem, figure, extra in figures():
            html_file = Path(tmp) / f"{stem}.html"
            html_file.write_text(page(figure, extra), encoding="utf-8")
            screenshot(html_file, OUT / f"{stem}.png", HEIGHT)
            print(f"wrote {OUT / f'{stem}.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
