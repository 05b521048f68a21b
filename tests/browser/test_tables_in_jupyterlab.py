"""The pre/post tables as an HTML output in a real JupyterLab (notebook 02 shows them so).

JupyterLab styles the tables of an HTML output with selectors more specific than plain class
rules: right-aligned cells, a fixed layout in which long cell text overlaps the next column,
and striped rows painted over the stage colours. The tables' own CSS must win there.
"""

from __future__ import annotations

import nbformat
import pytest

pytest.importorskip("playwright.sync_api")

from explorer_page import KERNEL_IDLE, open_page

NOTEBOOK = "tables.ipynb"
CELL = """\
from IPython.display import HTML
from placeborag.explore import FilterModesDisplay, demo_scenario

HTML(FilterModesDisplay.from_scenario(demo_scenario()).to_html())
"""
LAYOUT = """() => {
    const table = document.querySelector('.jp-OutputArea-output .placeborag-table-post');
    const cells = Array.from(table.querySelectorAll('th, td'));
    const dropped = table.querySelector('tr[data-stage="dropped by post-filter"]');
    return {
        layout: getComputedStyle(table).tableLayout,
        aligns: [...new Set(cells.filter(c => !c.classList.contains('num'))
            .map(c => getComputedStyle(c).textAlign))],
        overflowing: cells.filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.innerText),
        dropped: getComputedStyle(dropped).backgroundColor,
    };
}"""


@pytest.fixture(scope="module")
def tables_page(jupyterlab, browser):
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(CELL)],
        # Without a kernelspec JupyterLab asks which kernel to start.
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    )
    nbformat.write(notebook, jupyterlab["root"] / NOTEBOOK)
    context, page, _problems = open_page(browser)
    page.goto(f"{jupyterlab['base']}/lab/tree/{NOTEBOOK}?token={jupyterlab['token']}&reset")
    page.wait_for_function(KERNEL_IDLE)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_selector(".jp-OutputArea-output .placeborag-table-post tr[data-id]")
    yield page
    context.close()


def test_the_tables_are_left_aligned_and_no_cell_overlaps_the_next(tables_page):
    layout = tables_page.evaluate(LAYOUT)
    assert layout["layout"] == "auto"
    assert layout["aligns"] == ["left"]
    assert layout["overflowing"] == []


def test_a_row_keeps_its_stage_colour_over_jupyterlabs_stripes(tables_page):
    assert tables_page.evaluate(LAYOUT)["dropped"] == "rgb(253, 232, 220)"
