"""The explorer notebook as nbclient saves it (with its widget state), reopened in JupyterLab.

Nothing is run: once trusted, the page restores the widgets from the notebook's saved state
alone, where plotly.js is stored once (the app's hidden bundle loader) and each figure carries
a stub that imports it. Every plot must draw, with its traces, and the console stay free of errors.
"""

from __future__ import annotations

import contextlib
import json

import pytest

PlaywrightTimeout = pytest.importorskip("playwright.sync_api").TimeoutError
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

from explorer_page import open_page  # noqa: E402 (after the skips: it needs playwright)
from notebook_run import execute_explorer_notebook  # noqa: E402

pytestmark = pytest.mark.browser

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


@contextlib.contextmanager
def reopened(jupyterlab, browser, name: str):
    """Saved notebook ``name`` opened in JupyterLab with no cell run, trusted, every plot of
    the restored app drawn: the page, whose console errors collect in ``page.problems``."""
    context, page, problems = open_page(browser)
    try:
        page.goto(f"{jupyterlab['base']}/lab/tree/{name}?token={jupyterlab['token']}&reset")
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
        page.problems = problems
        yield page
    finally:
        context.close()


def test_a_saved_notebook_reopens_with_every_plot_drawn(jupyterlab, browser):
    nbformat.write(execute_explorer_notebook(), jupyterlab["root"] / SAVED)
    with reopened(jupyterlab, browser, SAVED) as page:
        # The restored page has the static snapshot's data too: the app's own top-k list.
        assert page.locator(".placeborag-results table").count() >= 1
        assert page.problems == []


AFTER = (
    "explorer.controls['k'].value = 7",
    "explorer.controls['query'].value = 'where is my parcel'",
)


def test_after_changes_sent_as_patches_the_saved_notebook_reopens_with_the_final_figures(
    jupyterlab, browser
):
    """Changes made after the first picture go to the page as patches on the whole figure; the
    saved widget state (the whole figure and the patch on it) draws the final figures."""
    from figure_data import PAGE_FIGURE, differences, plain

    from placeborag.explore import app

    nb = execute_explorer_notebook(*AFTER)
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    patches = [m["state"]["patch"] for m in state.values() if "patch" in m["state"]]
    assert any("revision" in p for p in patches)  # patches saved, not only whole figures
    nbformat.write(nb, jupyterlab["root"] / "explorer-patched.ipynb")
    explorer = app()  # the same app and changes here: the library is deterministic
    for code in AFTER:
        exec(code, {"explorer": explorer})
    with reopened(jupyterlab, browser, "explorer-patched.ipynb") as page:
        for name in ("projection", "ranking", "funnel", "anchors"):
            figure = explorer.figures[name]
            plot = f".placeborag-figure-{name} .js-plotly-plot"
            page.wait_for_function(
                f"""() => Number(document.querySelector('{plot}').dataset.revision)
                    === {figure.revision}"""
            )
            drawn = json.loads(page.evaluate(PAGE_FIGURE, name))
            assert differences(plain(figure.traces), drawn["data"]) == [], name
        assert page.problems == []
