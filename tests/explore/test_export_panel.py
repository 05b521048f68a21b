"""The app's export panel and app()'s settings: export, prove, save, go stale, stay small."""

from __future__ import annotations

import pytest

pytest.importorskip("pandas")
pytest.importorskip("sklearn")
pytest.importorskip("plotly")
pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

from _exported import parse, run_pytest

from placeborag import PlaceboragTypeError, PlaceboragValueError
from placeborag.explore import app, demo_scenario

NOTEBOOK_06 = [
    "hu-refund-1",
    "hu-refund-2",
    "hu-refund-4",
    "en-refund-1",
    "en-refund-4",
    "en-refund-5",
    "en-refund-10",
]


@pytest.fixture
def explorer():
    explorer = app(filter_mode="post", k=5, where={"lang": "hu"}, mode="output")
    explorer.select(NOTEBOOK_06)
    return explorer


def test_app_takes_the_scenario_s_settings_as_keyword_arguments():
    explorer = app(
        k=3,
        where=None,
        profile="faiss",
        metric="l2",
        filter_mode="post",
        filter_semantics="engine",
        recall=0.6,
        cluster_spread=0.25,
        mode="output",
    )
    s = explorer.scenario
    assert (s.k, s.where, s.profile, s.metric, s.filter_mode) == (3, None, "faiss", "l2", "post")
    assert (s.filter_semantics, s.recall, s.cluster_spread) == ("engine", 0.6, 0.25)
    c = explorer.controls
    assert (c["k"].value, c["where"].value, c["metric"].value, c["recall"].value) == (
        3,
        "",
        "l2",
        0.6,
    )
    assert explorer.error == ""
    assert app(mode="output").scenario.where == {"lang": "hu"}  # left out: the scenario's


@pytest.mark.parametrize(
    ("settings", "error", "message"),
    [
        (
            {"filter_mode": "sideways"},
            PlaceboragValueError,
            "filter_mode='sideways' must be one of",
        ),
        ({"k": 0}, PlaceboragValueError, "k=0 must be >= 1"),
        ({"profile": "chroma", "metric": "hamming"}, PlaceboragValueError, "metric='hamming'"),
        ({"recall": 1.5}, PlaceboragValueError, "recall=1.5 must be between 0 and 1.0"),
        ({"where": "lang=hu"}, PlaceboragTypeError, "where='lang=hu' must be a mapping or None"),
    ],
)
def test_a_bad_setting_raises_before_the_app_is_built(settings, error, message):
    with pytest.raises(error, match=message):
        app(mode="output", **settings)


def test_the_panel_shows_the_verdict_read_from_the_mutant_and_saves(explorer, tmp_path):
    source = explorer.export()
    panel = explorer.export_panel
    assert "This test fails if filter_mode is &#x27;pre&#x27;" in panel.verdict_html.value
    assert panel.area.value == source == explorer.last_export.source
    assert 'data-id="hu-refund-1"' in panel.preview_html.value
    assert "pre-filtering would also return: <code>hu-refund-2</code>" in panel.preview_html.value
    panel.path.value = str(tmp_path / "test_saved.py")
    panel.save_button.click()
    assert "wrote" in panel.saved_html.value
    assert (tmp_path / "test_saved.py").read_text(encoding="utf-8") == source
    panel.save_button.click()  # a second save without "overwrite": refused, file kept
    assert "already exists" in panel.saved_html.value
    panel.overwrite.value = True
    panel.save_button.click()
    assert "wrote" in panel.saved_html.value
    panel.path.value = str(tmp_path / "conftest.py")
    panel.conftest_button.click()
    assert parse((tmp_path / "conftest.py").read_text(encoding="utf-8"))["tests"] == []
    (tmp_path / "test_saved.py").unlink()
    (tmp_path / "test_mine.py").write_text(
        "def test_mine(demo_help_desk_store):\n    assert len(demo_help_desk_store.ids) == 7\n",
        encoding="utf-8",
    )
    assert run_pytest(tmp_path).returncode == 0


@pytest.mark.parametrize("change", ["control", "selection"])
def test_a_change_marks_the_shown_export_stale(explorer, tmp_path, change):
    explorer.export(prove=False)
    panel = explorer.export_panel
    assert not panel.stale and not panel.save_button.disabled
    if change == "control":
        explorer.controls["k"].value = 4
    else:
        explorer.select(NOTEBOOK_06[:3])
    assert panel.stale and panel.save_button.disabled
    assert panel.verdict_html.value.count("stale") == 1
    assert "placeborag-export-stale" in panel.widget._dom_classes
    with pytest.raises(PlaceboragValueError, match="stale"):
        explorer.save_export(tmp_path / "test_x.py")
    explorer.export(prove=False)
    assert not panel.stale
    assert explorer.save_export(tmp_path / "test_x.py") == [tmp_path / "test_x.py"]


def test_a_large_selection_warns_and_offers_the_smallest_corpus():
    explorer = app(demo_scenario(400), filter_mode="post", mode="output")
    explorer.select(list(explorer.shown.trace.ids))
    panel = explorer.export_panel
    panel.button.click()
    assert "the selection holds 400 documents" in panel.warning_html.value
    assert panel.choice.layout.display == "flex"
    assert panel.export is None
    panel.smallest_button.click()
    assert panel.export is not None and len(panel.export.ids) < 40
    assert panel.warning_html.value == "" and panel.choice.layout.display == "none"
    assert panel.export.proof.outcomes["as exported"] == "passed"
