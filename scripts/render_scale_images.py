"""Render the explorer's projection and ranking at scale to PNG (docs/img/), in headless
Chromium: the demo grown to 20,000 documents and 1,000,000 precomputed random vectors.

Run ``python scripts/render_scale_images.py`` (needs playwright and /usr/bin/chromium, or
PLACEBORAG_CHROMIUM). Each figure is written to a temporary HTML page with plotly.js inline,
drawn at notebook width, and screenshotted once plotly reports it has drawn.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_explore import vector_store  # noqa: E402

from placeborag.explore import ProjectionDisplay, RankingDisplay, demo_scenario  # noqa: E402

CHROMIUM = os.environ.get("PLACEBORAG_CHROMIUM", "/usr/bin/chromium")
WIDTH = 1000  # about a JupyterLab notebook's output width


def figures(n: int) -> dict[str, object]:
    if n >= 1_000_000:
        store, query = vector_store(n)
        where = None
    else:
        s = demo_scenario(n)
        store, query, where = s.store(), s.query, s.where
    projection = ProjectionDisplay.from_store(store, query, 5, where)
    ranking = RankingDisplay(projection.projection)
    return {"projection": projection.plot().figure_, "ranking": ranking.plot().figure_}


def main() -> None:
    from playwright.sync_api import sync_playwright

    out = ROOT / "docs" / "img"
    sizes = [int(a) for a in sys.argv[1:]] or [20_000, 1_000_000]
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"],
        )
        page = browser.new_page(viewport={"width": WIDTH + 40, "height": 700})
        for n in sizes:
            t0 = time.perf_counter()
            figs = figures(n)
            print(f"{n}: figures in {time.perf_counter() - t0:.1f} s")
            for name, fig in figs.items():
                fig.update_layout(width=WIDTH)  # type: ignore[attr-defined]
                page_path = Path(tmp) / f"{name}-{n}.html"
                fig.write_html(page_path, include_plotlyjs=True, div_id="fig")  # type: ignore[attr-defined]
                page.goto(page_path.as_uri())
                page.wait_for_function(
                    "() => { const d = document.getElementById('fig');"
                    " return d && d._fullLayout && d.querySelector('.main-svg'); }",
                    timeout=120_000,
                )
                page.wait_for_timeout(1500)  # WebGL traces draw after the SVG
                label = "1m" if n >= 1_000_000 else f"{n // 1000}k"
                target = out / f"{name}-{label}.png"
                tmp_png = target.with_suffix(".png.tmp")
                page.locator("#fig").screenshot(path=str(tmp_png), type="png")
                os.replace(tmp_png, target)
                print(f"  wrote {target.relative_to(ROOT)}")
        browser.close()


if __name__ == "__main__":
    main()
