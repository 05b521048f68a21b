"""What a newcomer sees at 1400x900 and at notebook width, at 38 and 20,000 documents (and
100,000 with PLACEBORAG_BROWSER_SCREENS_LARGE=1): screenshots in artifacts/screens/, and the
layout's promises checked in the page: the first figure starts above the fold, the funnels
read top-down, inspecting a point does not move the plots, the export panel sits beside
the views, the axis-break notes are not repeated over each other."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("playwright.sync_api")

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "artifacts" / "screens"
TIMEOUT = 900_000
SIZES = [38, 20_000] + ([100_000] if os.environ.get("PLACEBORAG_BROWSER_SCREENS_LARGE") else [])
KERNEL_IDLE = """() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return !!k && k.status === 'idle';
}"""
DRAWN = """() => {
    const plots = Array.from(document.querySelectorAll('.placeborag-app .js-plotly-plot'));
    return plots.length >= 4 && plots.every(gd => (gd.data || []).length > 0
        && gd.querySelector('g.trace, canvas') !== null);
}"""
SET_CELL = """(source) => {
    const nb = window.jupyterapp.shell.currentWidget.content;
    for (let i = 0; i < nb.model.cells.length; i++) {
        const cell = nb.model.cells.get(i);
        if (cell.type === 'code') { cell.sharedModel.setSource(source); return true; }
    }
    return false;
}"""
BOX = """(selector) => {
    const el = document.querySelector(selector);
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width};
}"""
# The pixel rows of the first and last bars of each funnel (top-down: first above last).
FUNNELS = """() => {
    const gd = document.querySelector('.placeborag-figure-funnel .js-plotly-plot');
    const fl = gd._fullLayout;
    return gd.data.map((t, i) => {
        const axis = i === 0 ? fl.yaxis : fl.yaxis2;
        return [axis.l2p(axis.d2l(t.y[0])), axis.l2p(axis.d2l(t.y[t.y.length - 1]))];
    });
}"""
BREAK_NOTES = """() => Array.from(document.querySelectorAll(
    '.placeborag-figure-ranking .annotation-text'))
    .map(a => a.textContent).filter(t => t.startsWith('axis break'))"""
KERNEL = """async (code) => {
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    const future = kernel.requestExecute({code, store_history: false});
    let out = '';
    future.onIOPub = (m) => { if (m.header.msg_type === 'stream') out += m.content.text;
                              if (m.header.msg_type === 'error') out += 'ERROR ' + m.content.evalue; };
    await future.done;
    return out;
}"""


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n}-documents")
def page(request, jupyterlab, browser):
    n = request.param
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    page.goto(f"{jupyterlab['base']}/lab/tree/explorer.ipynb?token={jupyterlab['token']}&reset")
    page.wait_for_function(KERNEL_IDLE)
    scenario = "" if n == 38 else str(n)
    source = (
        "from placeborag.explore import app, demo_scenario\n\n"
        f"explorer = app(demo_scenario({scenario}))\nexplorer"
    )
    assert page.evaluate(SET_CELL, source)
    # Single-document mode: the notebook's own cell is the app, scrolled to its top.
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_selector(".placeborag-results table.placeborag-table-pre")
    page.wait_for_function(DRAWN)
    page.wait_for_function(KERNEL_IDLE)
    page.n = n
    yield page
    context.close()


def _scroll_to_app(page) -> None:
    page.evaluate(
        "() => document.querySelector('.placeborag-app').scrollIntoView({block: 'start'})"
    )
    page.wait_for_timeout(300)


def test_screenshots_at_1400_and_at_notebook_width(page):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (1400, 1000):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_function(DRAWN)
        _scroll_to_app(page)
        page.screenshot(path=str(ARTIFACTS / f"explorer-{page.n}-{width}x900.png"))
    page.set_viewport_size({"width": 1400, "height": 900})


def test_the_first_figure_starts_above_the_fold_at_1400x900(page):
    page.set_viewport_size({"width": 1400, "height": 900})
    _scroll_to_app(page)
    plot = page.evaluate(BOX, ".placeborag-figure-projection .js-plotly-plot")
    # With the app scrolled to its top, the projection's title and most of its plot area
    # are on screen (the plot area starts ~90 px below the figure's top).
    assert plot["top"] + 300 <= 900, plot


def test_both_funnels_read_top_down_in_the_app(page):
    page.locator(".placeborag-figure-funnel").scroll_into_view_if_needed()
    for first, last in page.evaluate(FUNNELS):
        assert first < last  # candidates above the last stage


def test_inspecting_a_point_does_not_move_the_plots(page):
    _scroll_to_app(page)
    before = page.evaluate(BOX, ".placeborag-figure-projection")
    ranking = page.evaluate(BOX, ".placeborag-figure-ranking")
    out = page.evaluate(KERNEL, "explorer.find(explorer.shown.trace.ids[0]); print('ok')")
    assert "ok" in out, out
    page.wait_for_function(
        "() => document.querySelector('.placeborag-inspect').innerText.includes('nearest')"
    )
    assert page.evaluate(BOX, ".placeborag-figure-projection") == before
    assert page.evaluate(BOX, ".placeborag-figure-ranking") == ranking


def test_the_export_panel_sits_beside_the_views(page):
    _scroll_to_app(page)
    export = page.evaluate(BOX, ".placeborag-export-button")
    plot = page.evaluate(BOX, ".placeborag-figure-projection")
    assert export["left"] >= plot["right"] - 1, (export, plot)
    assert export["top"] < plot["bottom"], (export, plot)


def test_no_axis_break_note_is_written_twice(page):
    notes = page.evaluate(BREAK_NOTES)
    assert len(notes) == len(set(notes)), notes
