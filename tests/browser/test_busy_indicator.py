"""The busy indicator in a real JupyterLab: work that lasts (here a UMAP fit made to take
about three seconds, a stand-in for umap-learn's first fit, which compiles for up to 15 s)
shows what the kernel is doing, the step it is at and the seconds elapsed, dims the views, and
goes away when the new picture is drawn; it shows only after half a second. Every animation frame
of the change is recorded in the page, so the test reads what a user could have seen: the
projection's title names the method the plot is drawn with, never the one the toggle asks for
while the fit is still running.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("playwright.sync_api")

from explorer_page import KERNEL_IDLE, kernel, run_explorer

pytestmark = pytest.mark.browser

# A UMAP stand-in in the kernel: three seconds of "fitting", then a layout from the vectors.
SLOW_UMAP = """
import time
from collections import OrderedDict
import numpy as np
from placeborag.explore import _umap

def _slow_fit(x, params):
    time.sleep(3.0)
    return np.asarray(x[:, :params["n_components"]], dtype=np.float64) * 10

_umap._CACHE = OrderedDict()
_umap._fit = _slow_fit
_umap.require_umap = lambda: None
print("ok")
"""
# Records, every animation frame, what the page shows: the status text, whether the app is
# marked busy, and the projection's title; stops once `window.__stopRecording` is set.
RECORD = """() => {
    window.__frames = [];
    window.__stopRecording = false;
    window.__clicked = null;
    document.addEventListener('click', () => { window.__clicked = performance.now(); },
                              {capture: true, once: true});
    const app = document.querySelector('.placeborag-app');
    const tick = () => {
        const status = app.querySelector('.placeborag-status');
        const title = app.querySelector('.placeborag-figure-projection .gtitle');
        window.__frames.push({
            status: status ? status.textContent : '',
            busy: app.classList.contains('placeborag-busy'),
            title: title ? title.textContent : '',
            t: performance.now(),
        });
        if (!window.__stopRecording) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
}"""
TITLE = "() => document.querySelector('.placeborag-figure-projection .gtitle').textContent"
METHOD_BUTTON = ".placeborag-projection-method button"


@pytest.fixture(scope="module")
def page(jupyterlab, browser):
    yield from run_explorer(browser, jupyterlab, "/lab/tree/explorer.ipynb")


def _frames(page):
    page.evaluate("() => { window.__stopRecording = true; }")
    return page.evaluate("() => window.__frames")


def test_a_slow_umap_fit_shows_the_busy_note_and_the_title_stays_true(page):
    assert "ok" in kernel(page, SLOW_UMAP)
    assert "(PCA)" in page.evaluate(TITLE)
    page.evaluate(RECORD)
    page.locator(METHOD_BUTTON, has_text="UMAP").click()
    # The page's own signals: the note appears while the kernel fits, then the UMAP picture
    # is drawn and the note goes away.
    page.wait_for_function(
        "() => document.querySelector('.placeborag-status').textContent.includes('fitting UMAP')"
    )
    page.wait_for_function(
        """() => document.querySelector('.placeborag-figure-projection .gtitle')
            .textContent.includes('(UMAP)')
            && document.querySelector('.placeborag-status').textContent === ''
            && !document.querySelector('.placeborag-app').classList.contains('placeborag-busy')"""
    )
    page.wait_for_function(KERNEL_IDLE)
    frames = _frames(page)
    shown = [f for f in frames if f["status"]]
    assert shown, "the busy note never showed"
    # Not at once: only work that lasts half a second shows it.
    clicked = page.evaluate("() => window.__clicked")
    assert clicked is not None and shown[0]["t"] - clicked >= 500
    # What it said: the work, the step it was at, and the seconds counted.
    assert any("fitting UMAP to 38 documents" in f["status"] for f in shown)
    assert any(": fitting UMAP" in f["status"] for f in shown)
    assert any(re.search(r"\(\d+ s\)", f["status"]) for f in shown)
    # While the note showed, the views were dimmed (the app marked busy).
    assert all(f["busy"] for f in shown)
    # The title never claimed UMAP while the fit was running, and said PCA meanwhile.
    fitting = [f for f in frames if ": fitting UMAP" in f["status"]]
    assert fitting and all("(PCA)" in f["title"] for f in fitting)
    first_umap = next(i for i, f in enumerate(frames) if "(UMAP)" in f["title"])
    assert all("(UMAP)" not in f["title"] for f in frames[:first_umap])
    assert all("(PCA)" not in f["title"] for f in frames[first_umap:])
    assert page.locator(".placeborag-error").inner_text() == ""
