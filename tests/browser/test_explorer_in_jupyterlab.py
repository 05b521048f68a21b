"""The explorer served by a real JupyterLab on 127.0.0.1, driven in Debian's Chromium.

Opens notebooks/explorer.ipynb, runs it, then changes the profile, the recall, the filter and
the model name the way a person would (clicks, typing) and checks that the results table and
the plots (traces, axis titles, rank labels) change in the page, that an invalid filter shows the library's error inline, and that the browser console
stays free of errors. A screenshot of the app is saved to artifacts/.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("playwright.sync_api")

from explorer_page import (
    DRAWN,
    KERNEL_IDLE,
    PLOTS,
    ROWS,
    SETTLE,
    STALE,
    TABLE,
    assert_no_app_error,
    clear,
    drag,
    inside,
    kernel,
    ranking_geometry,
    row_box,
    run_explorer,
    selection,
    settle,
    wait_for_new_plots,
)

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "artifacts"


@pytest.fixture(scope="module")
def page(jupyterlab, browser):
    yield from run_explorer(browser, jupyterlab, "/lab/tree/explorer.ipynb")


def test_the_demo_scenario_renders_every_view(page):
    assert len(page.evaluate(PLOTS)) >= 4
    pre = page.evaluate(ROWS, "pre")
    post = page.evaluate(ROWS, "post")
    assert pre and post
    # the demo filters on Hungarian: pre-filtering returns more than post-filtering keeps
    assert sum(s == "returned" for _, s in pre) > sum(s == "returned" for _, s in post)


def test_right_after_run_all_a_box_over_one_colour_group_selects_exactly_it(page):
    geometry = ranking_geometry(page)
    row = geometry["rows"].index("refund")
    start, end = row_box(geometry, row, row)
    expected = inside(geometry, start, end)
    assert expected  # the refund row has documents
    drag(page, start, end)
    page.wait_for_function(
        "(n) => document.querySelector('.placeborag-selection').innerText.includes(n + ' selected')",
        arg=str(len(expected)),
    )
    assert sorted(selection(page)) == expected


def test_a_box_over_two_colour_groups_selects_both(page):
    clear(page)
    geometry = ranking_geometry(page)
    rows = geometry["rows"]
    start, end = row_box(geometry, rows.index("refund"), rows.index("shipping"))
    expected = inside(geometry, start, end)
    assert {p["id"].split("-")[1] for p in geometry["points"] if p["id"] in expected} >= {
        "refund",
        "ship",
    }
    drag(page, start, end)
    page.wait_for_function(
        "(n) => document.querySelector('.placeborag-selection').innerText.includes(n + ' selected')",
        arg=str(len(expected)),
    )
    assert sorted(selection(page)) == expected


def test_a_box_whose_drag_ends_on_a_marker_still_arrives(page):
    clear(page)
    geometry = ranking_geometry(page)
    row = geometry["rows"].index("shipping")
    start, _ = row_box(geometry, row, row)
    # End 3 px past a marker of the row: well within plotly's hover distance of it, so a hover
    # event follows the selection at once.
    target = max(
        (p for p in geometry["points"] if abs(p["py"] - geometry["rowY"][row]) < 20),
        key=lambda p: p["px"],
    )
    end = (target["px"] + 3, target["py"] + 3)
    expected = inside(geometry, start, end)
    assert target["id"] in expected
    drag(page, start, end)
    page.wait_for_function(
        "(n) => document.querySelector('.placeborag-selection').innerText.includes(n + ' selected')",
        arg=str(len(expected)),
    )
    assert sorted(selection(page)) == expected


NOTEBOOK_06 = [
    "hu-refund-1",
    "hu-refund-2",
    "hu-refund-4",
    "en-refund-1",
    "en-refund-4",
    "en-refund-5",
    "en-refund-10",
]
VERDICT = "() => document.querySelector('.placeborag-export-verdict').innerText"


def _pytest(folder, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=120,
    )


def test_select_export_save_from_the_page_and_the_saved_test_passes(page, tmp_path):
    # issue 24: select, export, save from the app, run pytest on the saved file.
    page.locator(".placeborag-filter-mode button", has_text="post").click()
    page.wait_for_function(KERNEL_IDLE)
    box = page.locator(".placeborag-select-box input")
    box.fill(", ".join(NOTEBOOK_06))
    box.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('.placeborag-selection').innerText.includes('7 selected')"
    )
    page.locator(".placeborag-export-button").click()
    page.wait_for_function(
        "() => document.querySelector('.placeborag-export textarea').value.includes('DOCUMENTS')",
        timeout=SETTLE * 4,
    )
    page.wait_for_function(KERNEL_IDLE)
    verdict = page.evaluate(VERDICT)
    assert verdict == "This test fails if filter_mode is 'pre' (post-filter starvation)."
    shown = page.evaluate(
        """() => Array.from(document.querySelectorAll('.placeborag-export-preview li[data-id]'))
            .map(li => li.dataset.id)"""
    )
    assert shown == ["hu-refund-1", "hu-refund-4"]
    source = page.locator(".placeborag-export textarea").input_value()
    path = tmp_path / "test_designed.py"
    page.locator(".placeborag-export-path input").fill(str(path))
    page.locator(".placeborag-export-path input").press("Enter")
    page.locator(".placeborag-export-save").click()
    page.wait_for_function(
        "() => document.querySelector('.placeborag-export-saved').innerText.includes('wrote')"
    )
    assert path.read_text(encoding="utf-8") == source
    result = _pytest(tmp_path, str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
    # Saving again without "overwrite" refuses, naming the file; the file is left as it was.
    page.locator(".placeborag-export-save").click()
    page.wait_for_function(
        "() => document.querySelector('.placeborag-export-saved').innerText.includes('already')"
    )
    panel = page.locator(".placeborag-export-panel")
    panel.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    panel.screenshot(path=str(ARTIFACTS / "export-panel.png"))
    # A control change marks the export stale, and saving is off until it is exported again.
    page.locator(".placeborag-filter-mode button", has_text="pre").click()
    page.wait_for_function(KERNEL_IDLE)
    page.wait_for_function(f"() => ({VERDICT})().startsWith('stale')")
    assert page.locator(".placeborag-export-save").is_disabled()
    clear(page)


def test_every_profile_can_be_picked(page):
    profiles = page.evaluate(
        """() => Array.from(document.querySelectorAll('.placeborag-profile select option'))
            .map(o => o.value)"""
    )
    assert len(profiles) == 7
    for label in profiles:  # "faiss (L2 distance, lower is better, ties by insertion)"
        name = label.split(" (")[0]
        page.locator(".placeborag-profile select").select_option(label=label)
        page.wait_for_function(KERNEL_IDLE)
        page.wait_for_function(
            f"() => document.querySelector('.placeborag-app .js-plotly-plot .gtitle')"
            f".textContent.includes('profile {name}')"
        )
        assert_no_app_error(page)
        assert page.evaluate(ROWS, "pre")
    page.locator(".placeborag-profile select").select_option(
        index=profiles.index(next(p for p in profiles if p.startswith("chroma (")))
    )
    page.wait_for_function(KERNEL_IDLE)


def qdrant_index(page) -> int:
    labels = page.evaluate(
        """() => Array.from(document.querySelectorAll('.placeborag-profile select option'))
            .map(o => o.value)"""
    )
    return next(i for i, label in enumerate(labels) if label.startswith("qdrant ("))


def test_changing_the_profile_changes_the_table_and_the_plots(page):
    table, plots = page.evaluate(TABLE), page.evaluate(PLOTS)
    page.locator(".placeborag-profile select").select_option(index=qdrant_index(page))
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
    stages = {s for _, s in page.evaluate(ROWS, "pre") + page.evaluate(ROWS, "post")}
    assert "lost to recall" in stages


def test_typing_a_filter_changes_the_results(page):
    table, plots = page.evaluate(TABLE), page.evaluate(PLOTS)
    where = page.locator(".placeborag-where input")
    where.fill('{"tier": "public"}')
    where.press("Enter")
    settle(page, table, plots)
    assert '"tier": "public"' not in page.locator(".placeborag-error").inner_text()
    assert page.evaluate(ROWS, "pre")


def test_a_json_filter_typed_in_the_select_box_selects_every_record_it_matches(page):
    # Once an AttributeError shown in the box: the filter selected nothing.
    clear(page)
    box = page.locator(".placeborag-select-box input")
    box.fill('{"lang": "hu", "tier": "internal"}')
    box.press("Enter")
    page.wait_for_function(
        "() => !document.querySelector('.placeborag-selection').innerText.includes('no selection')",
        timeout=60_000,
    )
    expected = json.loads(
        kernel(
            page,
            "import json; print(json.dumps(sorted(d.id for d in explorer.scenario.documents "
            "if d.metadata.get('lang') == 'hu' and d.metadata.get('tier') == 'internal')))",
        )
    )
    assert expected  # the demo has such records
    assert sorted(selection(page)) == expected
    assert_no_app_error(page)
    clear(page)


def test_an_invalid_filter_shows_the_error_inline_dims_the_views_and_the_app_survives(page):
    where = page.locator(".placeborag-where input")
    where.fill('{"lang": {"$regex": "h"}}')
    where.press("Enter")
    error = page.locator(".placeborag-error")
    error.get_by_text("unknown operator '$regex'").wait_for()
    # The views still show the last valid state, dimmed and labelled as such.
    page.wait_for_function(STALE)
    # The note is its own widget: its text may arrive a message after the app's class.
    page.locator(".placeborag-stale-note").get_by_text("showing the last valid state").wait_for()
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(".placeborag-title").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "explorer-stale.png"))
    plots = page.evaluate(PLOTS)
    where.fill('{"lang": "en"}')
    page.locator(".placeborag-apply button, button.placeborag-apply").first.click()
    # Leaving the box sends its value and the button a click: two redraws, in either order.
    page.wait_for_function(
        "() => document.querySelector('.placeborag-error').innerText.trim() === ''",
        timeout=SETTLE,
    )
    page.wait_for_function(KERNEL_IDLE)
    wait_for_new_plots(page, plots)
    assert not page.evaluate(STALE)
    assert page.locator(".placeborag-stale-note").inner_text() == ""


def test_switching_to_post_filtering_changes_the_plots_not_the_tables(page):
    # Both tables are always on screen; the filter mode picks what the plots show.
    table, plots = page.evaluate(TABLE), page.evaluate(PLOTS)
    page.locator(".placeborag-filter-mode button", has_text="post").click()
    settle(page, table, plots, table_changes=False)
    assert page.evaluate(TABLE) == table
    title = page.locator(".placeborag-app .js-plotly-plot .gtitle").nth(1).text_content()
    assert "post-filter" in title


# The ranking's title as drawn: its state line names the tie order in effect.
RANKING_TITLE = """() => {
    const titles = document.querySelectorAll('.placeborag-app .js-plotly-plot .gtitle');
    return titles.length > 1 ? titles[1].textContent : '';
}"""


def _ties_drawn(page, rule: str) -> None:
    # The demo has no tie: the points stay, the state line in the titles changes.
    page.wait_for_function(f"() => ({RANKING_TITLE})().includes({json.dumps(f'ties by {rule}')})")
    page.wait_for_function(KERNEL_IDLE)
    assert_no_app_error(page)


def test_picking_a_tie_order_redraws_the_views_under_it(page):
    """The tie order is a control of its own (one row of the table of controls): picking
    one in the page redraws the views, whose state line names it."""
    ties = page.locator(".placeborag-tie-order select")
    # ipywidgets writes an option's spaces as no-break spaces.
    assert ties.locator("option").first.text_content().replace("\xa0", " ") == "the profile's own"
    own = re.search(r"ties by (\w+)", page.evaluate(RANKING_TITLE)).group(1)  # the profile's
    ties.select_option(label="reverse")
    _ties_drawn(page, "reverse")
    assert kernel(page, "print(explorer.scenario.tie_order)").strip() == "reverse"
    ties.select_option(index=0)  # the profile's own
    _ties_drawn(page, own)
    assert kernel(page, "print(explorer.scenario.tie_order)").strip() == "None"


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


DENSITY = """() => {
    const gd = document.querySelector('.placeborag-figure-projection .js-plotly-plot');
    const t = gd && gd._fullData.find(t => t.name === 'density');
    if (!t || !t.z || !t.z.length) return null;
    let cells = 0, documents = 0;
    for (const row of t.z) for (const v of row) if (Number.isFinite(v)) {
        cells += 1; documents += Math.expm1(v);
    }
    return {rows: t.z.length, columns: t.z[0].length, cells, documents};
}"""


def test_the_density_grid_sent_as_a_typed_array_is_decoded_in_the_page(page):
    """Past DENSITY_FROM documents the projection draws a density grid under the points, sent
    as a float32 typed-array spec with its shape: the page decodes it into 120 rows of 160
    cells whose counts add up to the documents (lowered here so the demo's 38 cross it)."""
    table, plots = page.evaluate(TABLE), page.evaluate(PLOTS)
    kernel(page, "from placeborag.explore._figures import base as _b, projection as _p")
    kernel(page, "_b.DENSITY_FROM = _p.DENSITY_FROM = 10")
    try:
        kernel(page, "explorer.controls['k'].value = 4")
        settle(page, table, plots)
        page.wait_for_function(f"() => ({DENSITY})() !== null")
        grid = page.evaluate(DENSITY)
        documents = int(kernel(page, "print(len(explorer.scenario.documents))"))
        assert (grid["rows"], grid["columns"]) == (120, 160)
        assert 0 < grid["cells"] <= documents
        assert abs(grid["documents"] - documents) <= 0.01 * documents + 1  # log1p to 3 places
    finally:
        table, plots = page.evaluate(TABLE), page.evaluate(PLOTS)
        kernel(page, "_b.DENSITY_FROM = _p.DENSITY_FROM = 20_000; explorer.controls['k'].value = 5")
        settle(page, table, plots)
    assert page.evaluate(DENSITY) is None  # under the threshold again: no grid


def test_a_screenshot_is_saved_and_the_console_stayed_clean(page):
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explorer-jupyterlab.png"))
    # A tall window, so that JupyterLab lays out the whole app and the shot is not clipped.
    page.set_viewport_size({"width": 1500, "height": 4200})
    page.wait_for_function(DRAWN)
    page.locator(".placeborag-app").screenshot(path=str(ARTIFACTS / "explorer-app.png"))
    assert page.problems == []
