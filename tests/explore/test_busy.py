"""The busy indicator, kernel side: slow work (a UMAP fit, re-embedding, an export) runs with
a note saying what it is and a step saying where it is, both cleared when it ends, and the
projection's title only ever names the state the plot is drawn in.

What the page does with these (shown after half a second, with the seconds counted, the views
dimmed) is tested in the browser: tests/browser/test_busy_indicator.py.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

pytest.importorskip("anywidget")
pytest.importorskip("ipywidgets")

from placeborag.explore import _app, _umap, app


def record(explorer) -> list[tuple[str, str]]:
    """Every change of the busy note, of its step and of the projection's title, in order
    (a title event per revision sent to the page, whole or as a patch)."""
    events: list[tuple[str, str]] = []
    explorer.status.observe(lambda c: events.append(("busy", c["new"])), names="busy")
    explorer.status.observe(lambda c: events.append(("step", c["new"])), names="step")
    figure = explorer.figures["projection"]
    sent = [figure.revision]

    def redrawn(_change) -> None:
        if figure.revision != sent[-1]:
            sent.append(figure.revision)
            events.append(("title", title(explorer)))

    figure.observe(redrawn, names=["figure", "patch"])
    return events


def title(explorer) -> str:
    """The projection's title as the page has it: the patch's, when the patch on the figure
    the page holds changes it, else the figure's."""
    figure = explorer.figures["projection"]
    whole, patch = figure.figure, figure.patch
    if patch.get("base") == whole["revision"] and "title" in patch["layout"]:
        return str(patch["layout"]["title"]["text"])
    return str(whole["layout"]["title"]["text"])


@pytest.fixture
def slow_umap(monkeypatch):
    """A stand-in for umap-learn (not installed here, and a real first fit compiles for
    seconds): each fit records what the app showed while it ran."""
    seen: list[dict[str, str]] = []
    explorer_box: list = []

    def fit(x, params):
        e = explorer_box[0]
        seen.append({"busy": e.status.busy, "step": e.status.step, "title": title(e)})
        return np.asarray(x[:, : params["n_components"]], dtype=np.float64) * 10

    monkeypatch.setattr(_umap, "_CACHE", OrderedDict())
    monkeypatch.setattr(_umap, "_fit", fit)
    monkeypatch.setattr(_umap, "require_umap", lambda: None)
    return seen, explorer_box


def test_a_umap_fit_runs_under_the_busy_note_and_the_title_follows_the_plot(demo, slow_umap):
    seen, box = slow_umap
    explorer = app(demo)
    box.append(explorer)
    events = record(explorer)
    assert "(PCA)" in title(explorer)
    explorer.controls["method"].value = "umap"
    # While the fit ran: the note and the step said so, and the plot (still PCA) said PCA.
    assert len(seen) == 1
    assert seen[0]["busy"].startswith("fitting UMAP to 38 documents")
    assert seen[0]["step"] == "fitting UMAP"
    assert "(PCA)" in seen[0]["title"] and "UMAP" not in seen[0]["title"]
    # Then the UMAP picture was sent once, under the note, and the note was cleared after it.
    titles = [i for i, (kind, _) in enumerate(events) if kind == "title"]
    assert len(titles) == 1 and "(UMAP)" in events[titles[0]][1]
    busy = [i for i, (kind, text) in enumerate(events) if kind == "busy"]
    assert [events[i][1] != "" for i in busy] == [True, False]
    assert busy[0] < titles[0] < busy[1]
    assert explorer.status.busy == explorer.status.step == ""
    assert explorer.error == ""


def test_a_failed_umap_fit_keeps_the_pca_title_and_says_what_is_shown(demo, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "umap", None)  # the extra is missing
    monkeypatch.setattr(_umap, "_CACHE", OrderedDict())
    explorer = app(demo)
    events = record(explorer)
    explorer.controls["method"].value = "umap"
    assert "umap" in explorer.error.lower()
    # No figure was sent: the title on screen still names the PCA it draws ...
    assert [kind for kind, _ in events if kind == "title"] == []
    assert "(PCA)" in title(explorer)
    # ... and the stale note names what is drawn, where the toggle now says UMAP.
    assert "showing the last valid state (PCA" in explorer.stale_html.value
    assert "placeborag-stale" in explorer.widget._dom_classes
    assert explorer.status.busy == explorer.status.step == ""


def test_re_embedding_shows_its_note_and_each_step_then_clears(demo):
    explorer = app(demo)
    events = record(explorer)
    explorer.controls["dimensions"].value = 64
    busy = [text for kind, text in events if kind == "busy"]
    assert busy == ["re-embedding 38 documents", ""]
    start = events.index(("busy", "re-embedding 38 documents"))
    end = events.index(("busy", ""))
    steps = [text for kind, text in events[start:end] if kind == "step"]
    # The embedding first, the projection's drawing later, all before the note is cleared.
    assert steps[0] == "embedding the documents"
    assert "drawing the projection" in steps
    assert all(kind != "step" or text == "" for kind, text in events[end:])
    assert start < events.index(next(e for e in events if e[0] == "title")) < end
    assert explorer.status.busy == explorer.status.step == ""


@pytest.mark.parametrize(
    ("control", "value", "note"),
    [
        ("k", 7, "updating the views of 38 documents"),
        ("query", "parcel", "updating the views of 38 documents"),
        ("recall", 0.5, "updating the views of 38 documents"),
    ],
)
def test_every_change_runs_under_a_note_the_page_shows_if_it_lasts(demo, control, value, note):
    explorer = app(demo)
    events = record(explorer)
    explorer.controls[control].value = value
    assert [text for kind, text in events if kind == "busy"] == [note, ""]


def test_an_export_runs_under_the_busy_note(demo, monkeypatch):
    explorer = app(demo)
    during = []
    build = _app.build_export

    def recording(*args, **kwargs):
        during.append(explorer.status.busy)
        return build(*args, **kwargs)

    monkeypatch.setattr(_app, "build_export", recording)
    explorer.select(list(explorer.shown.trace.ids[:3]))
    explorer.export_button.click()
    assert during == ["writing the pytest module for 3 documents"]
    assert explorer.status.busy == ""
    assert "DOCUMENTS" in explorer.export_area.value
    assert explorer.export_area.layout.display == ""  # shown once it holds a test


def test_a_failing_change_clears_the_note(demo):
    explorer = app(demo)
    events = record(explorer)
    explorer.controls["where"].value = "{not json"
    assert explorer.error
    assert [text for kind, text in events if kind == "busy"][-1] == ""
    assert explorer.status.busy == explorer.status.step == ""


def test_output_mode_has_no_busy_widget(demo):
    explorer = app(demo, mode="output")
    assert explorer.status is None
    explorer.controls["k"].value = 6  # still redraws
    assert explorer.error == ""
