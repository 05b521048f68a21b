"""A redraw sends the page only what changed (a patch on the whole figure it holds): after any
run of changes the plots drawn in JupyterLab hold exactly the kernel's figures, and a page
holding another figure than a patch names gets the whole figure again."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("playwright.sync_api")

from explorer_page import KERNEL_IDLE, SETTLE, kernel, run_explorer
from figure_data import KERNEL_FIGURE, PAGE_FIGURE, differences

pytestmark = pytest.mark.browser

CHANGES = [
    "explorer.controls['k'].value = 7",
    "explorer.controls['query'].value = 'where is my parcel'",
    "explorer.controls['k'].value = 3",
    "explorer.controls['color_by'].value = 'lang'",
    "explorer.controls['recall'].value = 0.6",
    "explorer.controls['color_by'].value = 'cluster'",
    "explorer.controls['query'].value = 'money back please'",
]
FIGURES = ("projection", "ranking", "funnel", "anchors")


@pytest.fixture(scope="module")
def page(jupyterlab, browser):
    yield from run_explorer(browser, jupyterlab, "/lab/tree/explorer.ipynb")


def kernel_figure(page, name: str) -> dict:
    return json.loads(kernel(page, KERNEL_FIGURE.replace("NAME", repr(name))))


def drawn_as_kernel(page, name: str) -> dict:
    """Wait until the page has drawn the kernel's revision of figure ``name``; both figures."""
    mine = kernel_figure(page, name)
    page.wait_for_function(
        f"""() => {{
            const gd = document.querySelector('.placeborag-figure-{name} .js-plotly-plot');
            return !!gd && Number(gd.dataset.revision) === {mine["revision"]};
        }}""",
        timeout=SETTLE,
    )
    return mine


def test_after_every_change_the_plots_hold_the_kernels_figures(page):
    patched = set()
    for code in CHANGES:
        page.wait_for_function(KERNEL_IDLE)
        kernel(page, code)
        for name in FIGURES:
            mine = drawn_as_kernel(page, name)
            if mine["patched"]:
                patched.add(name)
            drawn = json.loads(page.evaluate(PAGE_FIGURE, name))
            assert drawn["revision"] == mine["revision"]
            assert differences(mine["data"], drawn["data"]) == [], (code, name)
    # The changes went as patches (not only whole figures) to the two point clouds.
    assert {"projection", "ranking"} <= patched
    assert page.problems == []


def test_a_patch_on_another_figure_than_the_page_holds_brings_the_whole_figure(page):
    """The kernel is made to believe the page holds another revision: the page refuses to
    apply the patch to the figure it does hold, asks, and draws the whole figure sent back."""
    page.wait_for_function(KERNEL_IDLE)
    kernel(page, "explorer.figures['ranking']._base.revision = 10**6")
    kernel(page, "explorer.controls['k'].value = 6")
    mine = drawn_as_kernel(page, "ranking")
    page.wait_for_function(KERNEL_IDLE)
    assert kernel(page, "print(explorer.figures['ranking'].resent)").strip() == "1"
    drawn = json.loads(page.evaluate(PAGE_FIGURE, "ranking"))
    assert differences(mine["data"], drawn["data"]) == []
    assert page.problems == []
