"""The explorer notebook as nbclient saves it (with its widget state), reopened in JupyterLab.

Nothing is run: once trusted, the page restores the widgets from the notebook's saved state
alone, where plotly.js is stored once (the app's hidden bundle loader) and each figure carries
a stub that imports it. Every plot must draw, with its traces, and the console stay free of errors.
"""

from __future__ import annotations

from pathlib import Path

import pytest

PlaywrightTimeout = pytest.importorskip("playwright.sync_api").TimeoutError
nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent.parent
TIMEOUT = 120_000
SAVED = "explorer-saved.ipynb"
# Every plot of the restored app holds traces and has drawn them.
DRAWN = """() => {
    const plots = Array.from(document.querySelectorAll('.placeborag-app .js-plotly-plot'));
    return plots.length >= 4 && plots.every(gd => (gd.data || []).length > 0
        && gd.getBoundingClientRect().height > 0 && gd.querySelector('g.trace') !== null);
}"""
STATE = """() => Array.from(document.querySelectorAll('.placeborag-app .js-plotly-plot'))
    .map(gd => [(gd.data || []).length, gd.querySelector('g.trace') !== null])"""


def test_a_saved_notebook_reopens_with_every_plot_drawn(jupyterlab, browser):
    nb = nbformat.read(ROOT / "notebooks" / "explorer.ipynb", as_version=4)
    nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=300,
        startup_timeout=120,
        store_widget_state=True,
        resources={"metadata": {"path": str(ROOT)}},
    ).execute()
    nbformat.write(nb, jupyterlab["root"] / SAVED)

    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = context.new_page()
    problems: list[str] = []
    page.on(
        "console",
        lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.set_default_timeout(TIMEOUT)
    try:
        page.goto(f"{jupyterlab['base']}/lab/tree/{SAVED}?token={jupyterlab['token']}&reset")
        # A notebook run outside JupyterLab is not trusted there, and JupyterLab shows only
        # the static snapshot of an untrusted one (checked first): trust it, as a user would.
        page.wait_for_selector(".placeborag-static")
        assert page.locator(".placeborag-app").count() == 0
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:trust'); }")
        page.locator(".jp-Dialog .jp-mod-accept").click()
        try:
            page.wait_for_function(DRAWN)
        except PlaywrightTimeout:
            raise AssertionError(
                f"the saved explorer did not draw: {page.evaluate(STATE)}; console: {problems}"
            ) from None
        # The restored page has the static snapshot's data too: the app's own top-k list.
        assert page.locator(".placeborag-results table").count() >= 1
        assert problems == []
    finally:
        context.close()
