"""What the browser tests share: the page's state as JavaScript snippets, opening and running
the explorer notebook in a Jupyter front end (JupyterLab or Notebook 7, both of which expose
``window.jupyterapp`` when asked to), and the waits, kernel calls and mouse drags the tests make.
"""

from __future__ import annotations

import json

import pytest

PlaywrightTimeout = pytest.importorskip("playwright.sync_api").TimeoutError

from jupyter_driver import KERNEL_IDLE  # noqa: E402  (the page's signals, shared)

TIMEOUT = 90_000
SETTLE = 30_000  # a redraw takes well under a second; this is for a loaded machine

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
STALE = """() => {
    const app = document.querySelector('.placeborag-app');
    const fig = app.querySelector('.placeborag-figure');
    return app.classList.contains('placeborag-stale')
        && parseFloat(getComputedStyle(fig).opacity) < 0.5;
}"""
# Runs Python in the notebook's kernel and returns what it printed.
KERNEL = """async (code) => {
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    const future = kernel.requestExecute({code, store_history: false});
    let out = '';
    future.onIOPub = (msg) => {
        const t = msg.header.msg_type;
        if (t === 'stream') out += msg.content.text;
        if (t === 'error') out += 'ERROR ' + msg.content.ename + ': ' + msg.content.evalue;
    };
    await future.done;
    return out;
}"""
# The ranking plot's geometry in page pixels, and every point's id and pixel position.
RANKING = r"""() => {
    const gd = document.querySelectorAll('.placeborag-app .js-plotly-plot')[1];
    const fl = gd._fullLayout, box = gd.getBoundingClientRect();
    const left = box.left + fl._size.l, top = box.top + fl._size.t;
    const points = [];
    gd.data.forEach((t) => (t.x || []).forEach((x, i) => points.push({
        id: /<b>(.*?)<\/b>/.exec(t.hovertext[i])[1],
        px: left + fl.xaxis.l2p(x), py: top + fl.yaxis.l2p(t.y[i]),
    })));
    return {left, top, width: fl._size.w, height: fl._size.h, rows: fl.yaxis.ticktext,
            rowY: fl.yaxis.ticktext.map((_, i) => top + fl.yaxis.l2p(i)),
            rowHeight: Math.abs(fl.yaxis.l2p(0) - fl.yaxis.l2p(1)), points};
}"""
RANKING_DRAWN = """() => {
    const gd = document.querySelectorAll('.placeborag-app .js-plotly-plot')[1];
    return !!gd && !!gd._fullLayout && (gd._fullLayout.yaxis.ticktext || []).length > 0
        && (gd.data || []).some(t => (t.x || []).length > 0) && !!gd.querySelector('g.trace');
}"""
ROWS = """(mode) => Array.from(document.querySelectorAll(
    '.placeborag-results table.placeborag-table-' + mode + ' tr[data-id]'))
    .map(r => [r.dataset.id, r.dataset.stage])"""

# Each plot: plotly's drawn width, its box's width, and how far its drawing runs past its
# container on the right (0: not at all).
FIT = """() => Array.from(document.querySelectorAll('[class*="placeborag-figure-"]')).map((box) => {
    const gd = box.querySelector('.js-plotly-plot'), svg = gd.querySelector('svg.main-svg');
    return {name: box.className.match(/placeborag-figure-[a-z]+/)[0],
            drawn: gd._fullLayout.width, width: gd.getBoundingClientRect().width,
            box: box.getBoundingClientRect().width,
            past: svg.getBoundingClientRect().right - box.getBoundingClientRect().right};
})"""
# From now until 30 s have passed or every one of the four plots has been drawn at its box's
# width for 30 frames in a row: each frame where some plot is drawn, [ms, figure, drawn width,
# box width] of every drawn plot. `window.__widthsDone` resolves when it stops.
RECORD_WIDTHS = """() => {
    const t0 = performance.now(), frames = [];
    let fitted = 0, stop;
    window.__widths = frames;
    window.__widthsDone = new Promise((resolve) => { stop = resolve; });
    const tick = () => {
        const rows = [];
        for (const box of document.querySelectorAll('[class*="placeborag-figure-"]')) {
            const gd = box.querySelector('.js-plotly-plot');
            if (!gd || !gd._fullLayout) continue;
            rows.push([Math.round(performance.now() - t0),
                       box.className.match(/placeborag-figure-[a-z]+/)[0],
                       gd._fullLayout.width, Math.round(box.getBoundingClientRect().width)]);
        }
        if (rows.length) frames.push(rows);
        const ok = rows.length === 4 && rows.every(r => Math.abs(r[2] - r[3]) <= 2);
        fitted = ok ? fitted + 1 : 0;
        if (fitted >= 30 || performance.now() - t0 > 30000) stop(frames.length);
        else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
}"""


def open_page(browser):
    """A new context and page whose console errors and page errors collect in ``problems``:
    (context, page, problems); the caller closes the context."""
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = context.new_page()
    problems: list[str] = []
    page.on(
        "console",
        lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e} {e.stack}"))
    page.set_default_timeout(TIMEOUT)
    return context, page, problems


def run_explorer(browser, server, path: str):
    """A page of ``server`` at ``path`` (the explorer notebook) with every cell run and the
    app drawn; the page's console errors collect in ``page.problems``. A generator: the
    fixture that yields from it closes the page's context afterwards."""
    context, page, problems = open_page(browser)
    page.goto(f"{server['base']}{path}?token={server['token']}&reset")
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
            f"server log: {server['log'].read_text()[-2000:]}"
        ) from None
    page.problems = problems
    try:
        yield page
    finally:
        context.close()


def wait_for_new_plots(page, before_plots: list[str]) -> None:
    """Wait until as many plots are drawn as before and at least one of them differs."""
    page.wait_for_function(
        f"""() => {{
            const now = ({PLOTS})();
            const before = {json.dumps(before_plots)};
            return now.length === before.length && now.some((p, i) => p !== before[i]);
        }}""",
        timeout=SETTLE,
    )


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
        wait_for_new_plots(page, before_plots)
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


def kernel(page, code: str) -> str:
    out = page.evaluate(KERNEL, code)
    assert "ERROR" not in out, out
    return out


def selection(page) -> list[str]:
    page.wait_for_function(KERNEL_IDLE)
    return json.loads(kernel(page, "import json; print(json.dumps(explorer.selection))"))


def ranking_geometry(page):
    """The ranking plot scrolled into view, and its geometry in viewport pixels then."""
    page.locator(".placeborag-app .js-plotly-plot").nth(1).scroll_into_view_if_needed()
    # A figure can be re-sent whole once its view opens: measure it once it holds its points.
    page.wait_for_function(RANKING_DRAWN)
    return page.evaluate(RANKING)


def clear(page) -> None:
    """The clear button empties the selection and removes the box from the plots (a drag that
    starts inside a box left on a plot moves that box instead of drawing a new one)."""
    page.locator(".placeborag-clear-selection").click()
    page.wait_for_function(
        "() => document.querySelector('.placeborag-selection').innerText.includes('no selection')"
    )
    page.wait_for_function(
        """() => Array.from(document.querySelectorAll('.placeborag-app .js-plotly-plot'))
            .every(gd => !(gd.layout.selections || []).length)"""
    )
    assert selection(page) == []


def drag(page, start: tuple[float, float], end: tuple[float, float]) -> None:
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, steps=6)
    page.mouse.move(*end, steps=6)
    page.mouse.up()


def inside(geometry, start, end) -> list[str]:
    """The ids of the points strictly inside the box from ``start`` to ``end`` (pixels)."""
    (x0, x1), (y0, y1) = sorted((start[0], end[0])), sorted((start[1], end[1]))
    return sorted(p["id"] for p in geometry["points"] if x0 < p["px"] < x1 and y0 < p["py"] < y1)


def row_box(geometry, first: int, last: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """A box across the whole score axis over ranking rows ``first`` to ``last``."""
    ys = [geometry["rowY"][first], geometry["rowY"][last]]
    half = geometry["rowHeight"] * 0.47
    left, right = geometry["left"] + 2, geometry["left"] + geometry["width"] - 2
    return (left, min(ys) - half), (right, max(ys) + half)
