"""The explorer served by a real JupyterLab on 127.0.0.1, driven in Debian's Chromium.

Opens notebooks/explorer.ipynb, runs it, then changes the profile, the recall, the filter and
the model name the way a person would (clicks, typing) and checks that the results table and
the plots (traces, axis titles, rank labels) change in the page, that an invalid filter shows the library's error inline, and that the browser console
stays free of errors. A screenshot of the app is saved to artifacts/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

PlaywrightTimeout = pytest.importorskip("playwright.sync_api").TimeoutError

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "artifacts"
TIMEOUT = 90_000
SETTLE = 30_000  # a redraw takes well under a second; this is for a loaded machine

KERNEL_IDLE = """() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return !!k && k.status === 'idle';
}"""
PLOTS = """() => Array.from(document.querySelectorAll('.placeborag-app .js-plotly-plot'))
    .map(gd => JSON.stringify((gd.data || []).map(t => [t.name, t.x, t.y, t.text])))"""
# Every plot holds traces and has drawn them (plotly renders each trace as a g.trace).
DRAWN = """() => {
    const plots = Array.from(document.querySelectorAll('.placeborag-app .js-plotly-plot'));
    return plots.length >= 4 && plots.every(gd => (gd.data || []).length > 0
        && gd.getBoundingClientRect().height > 0 && gd.querySelector('g.trace') !== null);
}"""
STATE = """() => ({
    kernel: (() => { try { return window.jupyterapp.shell.currentWidget.sessionContext
        .session.kernel.status; } catch (e) { return String(e); } })(),
    outputs: Array.from(document.querySelectorAll('.jp-OutputArea-output'))
        .map(o => o.innerText.slice(0, 300)),
    plots: Array.from(document.querySelectorAll('.placeborag-app .js-plotly-plot'))
        .map(gd => [(gd.data || []).length, gd.getBoundingClientRect().height,
                    gd.querySelector('g.trace') !== null]),
    tables: document.querySelectorAll('.placeborag-results table').length,
})"""
TABLE = "() => document.querySelector('.placeborag-results').innerText"
ROWS = """(mode) => Array.from(document.querySelectorAll(
    '.placeborag-results table.placeborag-table-' + mode + ' tr[data-id]'))
    .map(r => [r.dataset.id, r.dataset.status])"""


@pytest.fixture(scope="module")
def page(jupyterlab, browser):
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = context.new_page()
    problems: list[str] = []
    page.on(
        "console",
        lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.set_default_timeout(TIMEOUT)
    page.goto(f"{jupyterlab['base']}/lab/tree/explorer.ipynb?token={jupyterlab['token']}&reset")
    page.wait_for_function(KERNEL_IDLE)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    try:
        page.wait_for_selector(".placeborag-results table.placeborag-table-pre")
        page.wait_for_function(DRAWN)
        page.wait_for_function(KERNEL_IDLE)
    except PlaywrightTimeout:
        state = page.evaluate(STATE)
        raise AssertionError(
            f"the explorer did not render: {state}; console: {problems}; "
            f"server log: {jupyterlab['log'].read_text()[-2000:]}"
        ) from None
    page.problems = problems
    yield page
    context.close()


def settle(
    page, before_table: str, before_plots: list[str], *, table_changes: bool = True
) -> tuple[str, list[str]]:
    """Wait until at least one plot, and the table unless told otherwise, differ from what
    they were, the kernel is idle and the app shows no error."""
    try:
        if table_changes:
            page.wait_for_function(
                f"""() => document.querySelector('.placeborag-results').innerText
                    !== {json.dumps(before_table)}""",
                timeout=SETTLE,
            )
        page.wait_for_function(
            f"""() => {{
                const now = ({PLOTS})();
                const before = {json.dumps(before_plots)};
                return now.length === before.length && now.some((p, i) => p !== before[i]);
            }}""",
            timeout=SETTLE,
        )
    except PlaywrightTimeout:
        now = page.evaluate(PLOTS)
        raise AssertionError(
            f"the page did not settle: table changed={page.evaluate(TABLE) != before_table}, "
            f"plots before={len(before_plots)} now={len(now)}, "
            f"changed={[a != b for a, b in zip(before_plots, now)]}, "
            f"error={page.locator('.placeborag-error').inner_text()!r}, "
            f"console={page.problems}"
        ) from None
    page.wait_for_function(KERNEL_IDLE)
    assert_no_app_error(page)
    return page.evaluate(TABLE), page.evaluate(PLOTS)


def assert_no_app_error(page) -> None:
    """The app shows any exception of a redraw inline: a change must not raise one."""
    error = page.locator(".placeborag-error").inner_text()
    assert error == "", f"the app reported an error: {error}"


def test_the_demo_scenario_renders_every_view(page):
    assert len(page.evaluate(PLOTS)) >= 4
    pre = page.evaluate(ROWS, "pre")
    post = page.evaluate(ROWS, "post")
    assert pre and post
    # the demo filters on Hungarian: pre-filtering returns more than post-filtering keeps
    assert sum(s == "returned" for _, s in pre) > sum(s == "returned" for _, s in post)


def test_changing_the_profile_changes_the_table_and_the_plots(page):
    table, plots = page.evaluate(TABLE), page.evaluate(PLOTS)
    page.locator(".placeborag-profile button", has_text="qdrant").click()
    new_table, _ = settle(page, table, plots)
    assert new_table != table


def test_lowering_the_recall_marks_lost_documents(page):
    table, plots = page.evaluate(TABLE), page.evaluate(PLOTS)
    readout = page.locator(".placeborag-recall .widget-readout")
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("0.4")
    page.keyboard.press("Enter")
    settle(page, table, plots)
    statuses = {s for _, s in page.evaluate(ROWS, "pre") + page.evaluate(ROWS, "post")}
    assert "lost to recall" in statuses


def test_typing_a_filter_changes_the_results(page):
    table, plots = page.evaluate(TABLE), page.evaluate(PLOTS)
    where = page.locator(".placeborag-where textarea")
    where.fill('{"tier": "public"}')
    where.press("Tab")
    settle(page, table, plots)
    assert '"tier": "public"' not in page.locator(".placeborag-error").inner_text()
    assert page.evaluate(ROWS, "pre")


def test_an_invalid_filter_shows_the_error_inline_and_the_app_survives(page):
    where = page.locator(".placeborag-where textarea")
    where.fill('{"lang": {"$regex": "h"}}')
    where.press("Tab")
    error = page.locator(".placeborag-error")
    error.get_by_text("unknown operator '$regex'").wait_for()
    table, plots = page.evaluate(TABLE), page.evaluate(PLOTS)
    where.fill('{"lang": "en"}')
    where.press("Tab")
    settle(page, table, plots)
    page.wait_for_function(
        "() => !document.querySelector('.placeborag-error').innerText.includes('$regex')"
    )


def test_switching_to_post_filtering_changes_the_plots_not_the_tables(page):
    # Both tables are always on screen; the filter mode picks what the plots show.
    table, plots = page.evaluate(TABLE), page.evaluate(PLOTS)
    page.locator(".placeborag-filter-mode button", has_text="post").click()
    settle(page, table, plots, table_changes=False)
    assert page.evaluate(TABLE) == table
    title = page.locator(".placeborag-app .js-plotly-plot .gtitle").nth(1).text_content()
    assert "post-filter" in title


# The projection as drawn: its x-axis title and rank labels in the page's SVG, and the
# positions plotly holds for the labels (layout updates go out unvalidated: check them).
PROJECTION_LAYOUT = """() => {
    const gd = document.querySelector('.placeborag-app .js-plotly-plot');
    return {
        title: gd.querySelector('.xtitle').textContent,
        labels: Array.from(gd.querySelectorAll('.annotation-text-g')).map(a => a.textContent),
        at: (gd.layout.annotations || []).map(a => [a.text, a.x, a.y]),
    };
}"""


def test_a_new_model_name_redraws_the_axes_and_the_rank_labels(page):
    table, plots = page.evaluate(TABLE), page.evaluate(PLOTS)
    before = page.evaluate(PROJECTION_LAYOUT)
    model = page.locator(".placeborag-model-name input")
    model.fill("another-model")
    model.press("Enter")
    settle(page, table, plots)
    after = page.evaluate(PROJECTION_LAYOUT)
    assert after["title"] != before["title"]  # the share of variance is the new fit's
    assert after["at"] != before["at"]  # the labels moved with their points
    assert sorted(after["labels"]) == sorted(before["labels"])  # one per rank, as before
    assert [a[0] for a in after["at"]] == [a[0] for a in before["at"]]


def test_a_screenshot_is_saved_and_the_console_stayed_clean(page):
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explorer-jupyterlab.png"))
    # A tall window, so that JupyterLab lays out the whole app and the shot is not clipped.
    page.set_viewport_size({"width": 1500, "height": 4200})
    page.wait_for_function(DRAWN)
    page.locator(".placeborag-app").screenshot(path=str(ARTIFACTS / "explorer-app.png"))
    assert page.problems == []
