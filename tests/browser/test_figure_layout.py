"""The explorer's figures drawn by plotly.js alone in a blank page at a notebook's widths, and
their texts' boxes as plotly laid them out: the anchors view's title, headings, axis titles
and legend never overlap (600 to 1000 px), and an anchor's name written away from its diamond
has a leader line to it, and every funnel stage shows its count."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright.sync_api")

from plot_page import TEXT_BOXES, draw, gap, overlaps, plot_page

from placeborag.explore import demo_scenario
from placeborag.explore._figures import AnchorsDisplay, FilterModesDisplay, ProjectionDisplay

pytestmark = pytest.mark.browser

WIDTHS = (600, 700, 800, 900, 1000)


@pytest.fixture(scope="module")
def page(browser):
    with plot_page(browser) as page:
        yield page


class _OrderMoves(AnchorsDisplay):
    """The longer heading: the members' order is not the same at every dimension."""

    order_is_dimension_free = False


def _overlapping(drawn) -> list:
    boxes = drawn["boxes"]
    return [
        (a["text"][:40], b["text"][:40])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if overlaps(a, b)
    ]


@pytest.mark.parametrize("display", [AnchorsDisplay, _OrderMoves], ids=["same", "not-same"])
def test_the_anchors_view_s_texts_never_overlap_at_notebook_widths(page, display):
    figure = display.from_scenario(demo_scenario()).plot().figure_
    for width in WIDTHS:
        drawn = draw(page, figure, width)
        kinds = [b["kind"] for b in drawn["boxes"]]
        assert kinds.count("annotation") >= 2 and "title" in kinds and "legend" in kinds
        assert _overlapping(drawn) == [], width
        frame = drawn["figure"]
        for b in drawn["boxes"]:  # every text inside the figure
            assert b["left"] >= frame["left"] - 1 and b["right"] <= frame["right"] + 1, (width, b)
            assert b["top"] >= frame["top"] - 1 and b["bottom"] <= frame["bottom"] + 1, (width, b)
        # Each heading over its own panel: it ends before the next panel starts.
        left_panel, right_panel = sorted(drawn["areas"], key=lambda a: a["left"])
        headings = sorted(
            (b for b in drawn["boxes"] if b["text"].startswith("member to")),
            key=lambda b: b["left"],
        )
        assert headings[0]["right"] < right_panel["left"], width
        assert headings[1]["left"] >= left_panel["right"], width
        # The right panel's axis title is left of its panel and right of the left panel.
        (title2,) = [b for b in drawn["boxes"] if b["text"] == "cosine(member, member)"]
        assert left_panel["right"] < title2["left"] and title2["right"] < right_panel["left"]


@pytest.mark.parametrize("n", [38, 100_000])
def test_an_anchor_name_away_from_its_diamond_has_a_leader_line(page, n):
    """Issue 25: at 100,000 documents and 600 px the "refund" name sat ~76 px from its
    diamond with nothing joining them."""
    display = ProjectionDisplay.from_scenario(demo_scenario(None if n == 38 else n))
    names = set(display.projection.anchor_names)
    figure = display.plot().figure_
    for width in (600, 1000):
        drawn = draw(page, figure, width)
        labels = [b for b in drawn["boxes"] if b["kind"] == "annotation" and b["text"] in names]
        assert labels, width
        for label in labels:
            away = gap(label, label["at"]["x"], label["at"]["y"])
            assert label["arrow"] or away <= 20, (width, label["text"], away)


@pytest.mark.parametrize("n", [38, 100_000])
def test_every_funnel_stage_shows_its_count(page, n):
    """At 100,000 documents the top-k bars (5 and 3 of 100,000) are a fraction of a pixel
    wide, and plotly drew no count on them: each is written beside its bar instead."""
    display = FilterModesDisplay.from_scenario(demo_scenario(None if n == 38 else n)).plot()
    figure = display.figure_
    for width in (600, 1000):
        draw(page, figure, width)
        texts = page.evaluate(
            """() => Array.from(document.querySelectorAll('#gd .trace'))
                .map(t => Array.from(t.querySelectorAll('text')).map(x => x.textContent))"""
        )
        for trace, shown in zip(figure.data, texts):
            assert len(shown) == len(trace.x), (width, trace.name, shown)


# The ranked markers and the cut line, in page pixels, as plotly laid them out.
RANKING_MARKS = """() => {
    const gd = document.getElementById('gd');
    const fl = gd._fullLayout, page = gd.getBoundingClientRect();
    const px = (x, y) => ({x: page.left + fl.xaxis._offset + fl.xaxis.l2p(x),
                           y: page.top + fl.yaxis._offset + fl.yaxis.l2p(y)});
    const ranked = ['returned', 'dropped by post-filter', 'tied at the cut'];
    const markers = [];
    gd._fullData.filter((t) => ranked.includes(t.name)).forEach((t) => {
        for (let i = 0; i < t.x.length; i++) markers.push(px(t.x[i], t.y[i]));
    });
    const lines = fl.shapes.filter((s) => s.type === 'line').map((s) => px(s.x0, 0).x);
    const bands = fl.shapes.filter((s) => s.type === 'rect')
        .map((s) => [px(s.x0, 0).x, px(s.x1, 0).x].sort((a, b) => a - b));
    return {markers, lines, bands, plot: {
        left: page.left + fl.xaxis._offset, right: page.left + fl.xaxis._offset + fl.xaxis._length,
        top: page.top + fl.yaxis._offset, bottom: page.top + fl.yaxis._offset + fl.yaxis._length}};
}"""


@pytest.mark.parametrize("n", [38, 20_000, 100_000])
def test_rank_labels_are_clear_of_each_other_the_markers_and_the_cut_line(page, n):
    """Issue 25: at 20,000 and 100,000 documents the ranking's "5" and "3" ran together and
    "4"/"2" touched the plot's foot. Each rank label plotly drew, at 600 and 1,000 px, is
    inside the plot and clear of every other rank label, every ranked marker (5.5 px around
    its centre), the cut line and the axis-break bands; no leader line crosses the cut line
    (at 20,000 documents "4" was written left of the cut, its line across it)."""
    from placeborag.explore import RankingDisplay

    figure = RankingDisplay.from_scenario(demo_scenario(None if n == 38 else n)).plot().figure_
    for width in (600, 1000):
        drawn = draw(page, figure, width)
        marks = page.evaluate(RANKING_MARKS)
        labels = [b for b in drawn["boxes"] if b["kind"] == "annotation" and b["text"].isdigit()]
        assert sorted(int(b["text"]) for b in labels)[:1] == [1], width
        plot = marks["plot"]
        for i, b in enumerate(labels):
            where = (width, b["text"])
            assert plot["left"] <= b["left"] and b["right"] <= plot["right"], where
            assert plot["top"] <= b["top"] and b["bottom"] <= plot["bottom"], where
            assert not any(overlaps(b, o) for o in labels[i + 1 :]), where
            for m in marks["markers"]:
                assert gap(b, m["x"], m["y"]) > 5.5, (where, m)
            for x in marks["lines"]:
                assert x < b["left"] or x > b["right"], (where, x)
                if b["line"]:  # the leader line, from the label to its point, crosses no cut
                    assert not b["line"]["left"] + 0.5 < x < b["line"]["right"] - 0.5, (where, x)
            for lo, hi in marks["bands"]:
                assert hi < b["left"] or lo > b["right"], (where, lo, hi)


def _ranking_titles():
    s = demo_scenario()
    return {
        "demo": s,
        # The longest query the title writes (48 characters, then cut with "…").
        "long query": s.replace(query="refund for a parcel that arrived damaged and late"),
        # Ranks thinned for room: the subtitle says "+n more ranks in the hover".
        "k20": s.replace(k=20),
        "long where": s.replace(where={"lang": {"$in": ["hu", "en", "de", "fr", "es", "it"]}}),
    }


@pytest.mark.parametrize("case", ["demo", "long query", "k20", "long where"])
def test_the_ranking_s_title_fits_a_narrow_figure_above_the_cut_s_label(page, case):
    """The ranking's title was one line and its state one more, at any width: at 520 px the
    end of a longer query's title, or of "+n more ranks in the hover", was cut off. At 520 px
    and wider the title is inside the figure, above the plot, and clear of every other text
    (the "top-k cut" label above the plot)."""
    from placeborag.explore import RankingDisplay

    figure = RankingDisplay.from_scenario(_ranking_titles()[case]).plot().figure_
    for width in (520, 600, 1000):
        drawn = draw(page, figure, width)
        marks = page.evaluate(RANKING_MARKS)
        (title,) = [b for b in drawn["boxes"] if b["kind"] == "title"]
        frame = drawn["figure"]
        assert frame["left"] <= title["left"] and title["right"] <= frame["right"], width
        assert frame["top"] <= title["top"] and title["bottom"] < marks["plot"]["top"], width
        others = [b for b in drawn["boxes"] if b["kind"] != "title"]
        assert not [o["text"] for o in others if overlaps(title, o)], width
        assert any(b["text"].startswith("top-") for b in others), width


# Each 3-D scene annotation plotly drew, once the WebGL scene has rendered them all.
SCENE_DRAWN = (
    """(n) => document.querySelectorAll('#gd g[class^="annotation-scene"]').length === n"""
)


@pytest.mark.parametrize("n", [38, 20_000, 100_000])
@pytest.mark.parametrize("k", [5, 10, 20])
def test_three_d_rank_and_anchor_labels_never_overlap(page, n, k):
    """The 3-D projection's rank numbers and anchor names are scene annotations whose only
    check was their offsets' angles: at 100,000 documents and k=10 "1" and "2" (near, not
    coincident, points) were drawn over each other. As plotly lays them out at the default
    camera, at 600 to 1,000 px, every label is inside the figure and clear of every other
    label, the title and the legend."""
    s = demo_scenario(None if n == 38 else n).replace(k=k)
    figure = ProjectionDisplay.from_scenario(s, n_components=3).plot().figure_
    want = len(figure.layout.scene.annotations)
    for width in (600, 800, 1000):
        draw(page, figure, width)
        page.wait_for_function(SCENE_DRAWN, arg=want)
        drawn = page.evaluate(TEXT_BOXES)
        boxes = drawn["boxes"]
        labels = [b for b in boxes if b["kind"] == "scene annotation"]
        assert len(labels) == want, width
        frame = drawn["figure"]
        others = [b for b in boxes if b["kind"] in ("title", "legend")]
        for i, b in enumerate(labels):
            where = (width, b["text"])
            assert frame["left"] <= b["left"] and b["right"] <= frame["right"], where
            assert frame["top"] <= b["top"] and b["bottom"] <= frame["bottom"], where
            assert not [o["text"] for o in labels[i + 1 :] if overlaps(b, o)], where
            assert not [o["kind"] for o in others if overlaps(b, o)], where
