import numpy as np
import pytest

pytest.importorskip("pandas")
pytest.importorskip("sklearn")
go = pytest.importorskip("plotly.graph_objects")

from placeborag.explore import (  # noqa: E402
    AnchorsDisplay,
    FilterModesDisplay,
    ProjectionDisplay,
    RankingDisplay,
    demo_scenario,
)


def _by_name(figure, name):
    (trace,) = [t for t in figure.data if t.name == name]
    return trace


def test_projection_display_stores_arrays_and_draws_them(demo):
    display = ProjectionDisplay.from_scenario(demo)
    assert display.figure_ is None
    assert display.plot() is display
    fig = display.figure_
    p = display.projection
    drawn = sum(len(t.x) for t in fig.data if t.name in p.label_order)
    assert drawn == len(demo.documents)
    query = _by_name(fig, "query")
    assert (query.x[0], query.y[0]) == (p.query[0], p.query[1])
    top = _by_name(fig, "top-k (rank)")
    assert list(top.text) == [str(r) for r in range(1, demo.k + 1)]
    assert top.mode == "markers"  # in 2-D the ranks are fanned-out annotations
    assert list(_by_name(fig, "cluster anchors").text) == list(demo.clusters)
    assert "% of variance" in fig.layout.xaxis.title.text


def test_projection_is_the_same_picture_every_time(demo):
    a = ProjectionDisplay.from_scenario(demo).plot().figure_
    b = ProjectionDisplay.from_scenario(demo).plot().figure_
    assert a.to_json() == b.to_json()


def test_low_variance_note_appears_when_two_axes_keep_little(demo):
    big = demo_scenario(400)
    fig = ProjectionDisplay.from_scenario(big).plot().figure_
    kept = ProjectionDisplay.from_scenario(big).projection.explained[:2].sum()
    notes = [a.text for a in fig.layout.annotations]
    assert any("PCA keeps only" in t for t in notes) == (kept < 0.2)


def test_three_d_projection_uses_scatter3d(demo):
    fig = ProjectionDisplay.from_scenario(demo, n_components=3).plot().figure_
    assert {t.type for t in fig.data} == {"scatter3d"}


def test_many_points_use_webgl():
    fig = ProjectionDisplay.from_scenario(demo_scenario(3500)).plot().figure_
    assert "scattergl" in {t.type for t in fig.data}


def test_ranking_display_places_documents_by_score_and_draws_the_cut(demo):
    display = RankingDisplay.from_scenario(demo).plot()
    fig = display.figure_
    returned = _by_name(fig, "returned")
    matches = demo.store().query(demo.query, demo.k, demo.where)
    assert sorted(returned.customdata) == sorted(m.score for m in matches)
    np.testing.assert_array_equal(returned.x, display.axis.position(returned.customdata))
    line = fig.layout.shapes[-1]
    assert display.cut == matches[-1].score
    assert line.x0 == line.x1 == display.axis.position(np.array([display.cut]))[0]
    assert fig.layout.xaxis.range[0] > fig.layout.xaxis.range[1]  # chroma: lower is better


def test_score_axis_breaks_a_long_empty_stretch_and_keeps_the_order():
    from placeborag.explore._figures.score_axis import ScoreAxis

    scores = np.array([-0.2, -0.1, 0.0, 0.05, 0.65, 0.8])
    axis = ScoreAxis.fit(scores)
    assert axis.breaks == [(0.05, 0.65)]
    x = axis.position(scores)
    assert (np.diff(x) > 0).all()
    np.testing.assert_allclose(np.diff(x)[:3], np.diff(scores)[:3])  # true distances
    assert x[4] - x[3] < 0.2 * (scores[4] - scores[3])
    values, labels = axis.ticks()
    assert "0.8" in labels and "−0.2" in labels
    assert (np.diff(values) > 0).all()


def test_score_axis_without_a_wide_gap_is_the_identity():
    from placeborag.explore._figures.score_axis import ScoreAxis

    scores = np.linspace(0.1, 0.9, 30)
    axis = ScoreAxis.fit(scores)
    assert axis.breaks == []
    np.testing.assert_array_equal(axis.position(scores), scores)


def test_ranking_display_keeps_axis_direction_for_qdrant(demo):
    fig = RankingDisplay.from_scenario(demo.replace(profile="qdrant")).plot().figure_
    assert fig.layout.xaxis.range[0] < fig.layout.xaxis.range[1]


def test_anchors_display_draws_the_exact_curve_and_every_dimension(demo):
    display = AnchorsDisplay.from_scenario(demo).plot()
    fig = display.figure_
    curve = fig.data[0]
    np.testing.assert_allclose(curve.y, 1 / np.sqrt(1 + np.asarray(curve.x) ** 2))
    names = [t.name for t in fig.data if t.showlegend is not False]
    # a compact legend: the curve, one entry per cluster, one symbol key per dimension
    assert names == ["1/√(1+m²)", *demo.clusters, "d=64", "d=256", "d=1024"]
    refund = _by_name(fig, "refund")
    assert sorted(set(refund.customdata)) == [64, 256, 1024]
    np.testing.assert_allclose(refund.y, 1 / np.sqrt(1 + np.asarray(refund.x) ** 2))
    assert display.order_is_dimension_free
    assert any(t.xaxis == "x2" for t in fig.data)


def test_projection_labels_each_top_k_point_once(demo):
    fig = ProjectionDisplay.from_scenario(demo).plot().figure_
    labels = [a for a in fig.layout.annotations if a.showarrow and a.text.startswith("<b>")]
    assert [a.text for a in labels] == [f"<b>{r}</b>" for r in range(1, demo.k + 1)]
    offsets = {(round(a.ax), round(a.ay)) for a in labels}
    assert len(offsets) == demo.k  # fanned out: no two labels share a place


def test_filter_modes_display_tables_and_funnel(demo):
    display = FilterModesDisplay.from_scenario(demo).plot()
    pre, post = display.figure_.data
    assert list(pre.x) == list(display.funnels["pre"]["documents"])
    assert list(post.y)[-1] == "pass the filter"
    assert list(display.tables["pre"].columns) == [
        "rank",
        "id",
        "occurrence",
        "text",
        "metadata",
        "score",
        "stage",
        "tie",
    ]
    html = display.to_html()
    assert 'class="placeborag-table placeborag-table-pre"' in html
    assert 'data-stage="dropped by post-filter"' in html
    assert "<th>record</th>" not in html  # no id is stored twice: no column for it


def test_plot_draws_into_an_existing_figure_in_place(demo):
    fig = go.Figure()
    RankingDisplay.from_scenario(demo).plot(fig)
    before = [t.name for t in fig.data]
    RankingDisplay.from_scenario(demo.replace(k=2)).plot(fig)
    assert [t.name for t in fig.data] == before
    assert sorted(a.text for a in fig.layout.annotations if a.yref == "y") == ["1", "2"]


def test_plot_rejects_something_that_is_not_a_figure(demo):
    with pytest.raises(TypeError, match="must be a plotly Figure"):
        RankingDisplay.from_scenario(demo).plot(figure="nope")


_PAYLOAD = '<b>X</b>&amp;<br>"q"'


def _strings(value):
    """Every str in a figure's dict (keys too), however deep."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, np.ndarray)):
            stack.extend(list(item))


@pytest.mark.parametrize("color_by", ["cluster", _PAYLOAD, "lang"])
def test_user_strings_are_escaped_in_every_label_of_every_figure(demo, color_by):
    from placeborag.explore import Document

    hostile = [
        Document(f"p{i}", f"{_PAYLOAD} {i}" if i else _PAYLOAD, {_PAYLOAD: _PAYLOAD, "lang": "hu"})
        for i in range(4)
    ]
    scenario = demo.replace(
        documents=(*demo.documents, *hostile),
        clusters={**demo.clusters, _PAYLOAD: [_PAYLOAD]},
        query="refund policy",
        where=None,
    )
    figures = [
        ProjectionDisplay.from_scenario(scenario, color_by=color_by).plot().figure_,
        RankingDisplay.from_scenario(scenario, color_by=color_by).plot().figure_,
        AnchorsDisplay.from_scenario(scenario, dimensions=(64,)).plot().figure_,
        FilterModesDisplay.from_scenario(scenario).plot().figure_,
    ]
    for figure in figures:
        strings = list(_strings(figure.to_dict()))
        raw = [s for s in strings if "<b>X" in s or "</b>&amp;<br>" in s]
        assert raw == []
    # The payload is still there, escaped once: the legend, the axis and the hover show it.
    escaped = "&lt;b&gt;X&lt;/b&gt;&amp;amp;&lt;br&gt;"
    assert any(escaped in s for f in figures[:3] for s in _strings(f.to_dict()))


def test_every_ranked_point_has_its_rank_or_its_place_at_the_cut_in_its_hover():
    import re

    scenario = demo_scenario(300).replace(filter_mode="post", recall=0.5, k=20)
    store = scenario.store()
    trace = store.trace(scenario.query, scenario.k, scenario.where)
    returned = [m.id for m in store.query(scenario.query, scenario.k, scenario.where)]
    dropped = trace.ids_at("dropped by post-filter")
    assert len(returned) > 5 and dropped  # ranks past the written ones, and crosses
    figure = RankingDisplay.from_scenario(scenario).plot().figure_.to_dict()
    places = {}
    for data in figure["data"]:
        if data.get("name") in ("returned", "dropped by post-filter"):
            for hover in data["hovertext"]:
                doc, place = re.match(r"<b>(.*?)</b><br>(.*?)<br>", hover).groups()
                places[doc] = place
    assert {places[i] for i in returned} == {f"rank {r}" for r in range(1, len(returned) + 1)}
    assert all(places[i] == f"rank {r}" for r, i in enumerate(returned, 1))
    for doc in dropped:
        cut = int(trace.cut_rank[trace.ids.index(doc)])
        assert places[doc] == f"place {cut} at the top-20 cut, dropped by the post-filter"
    assert set(places) == set(returned) | set(dropped)


def test_both_funnels_read_top_down_widest_first_with_labels_clear_of_the_other(demo):
    """The first stage (every candidate) on top, in the app's widget as in a plain figure:
    the axes say so themselves rather than rely on plotly.js's default for funnels."""
    traces, layout = FilterModesDisplay.from_scenario(demo).spec()
    for trace, axis in zip(traces, ("yaxis", "yaxis2")):
        assert trace["y"][0] == "candidates"
        assert layout[axis]["autorange"] == "reversed"
    pre_end, post_start = layout["xaxis"]["domain"][1], layout["xaxis2"]["domain"][0]
    assert post_start - pre_end > 0.19  # room for the post funnel's stage names


def test_axis_break_notes_are_not_written_over_each_other_and_never_read_zero():
    from placeborag.explore._figures.score_axis import ScoreAxis

    axis = ScoreAxis(0.0, 1.0, [(0.100, 0.1004), (0.1005, 0.1009), (0.5, 0.9)])
    _, notes = axis.break_marks()
    xs = sorted(n["x"] for n in notes)
    assert all(b - a >= 0.08 * (axis.position(np.array([1.0]))[0]) for a, b in zip(xs, xs[1:]))
    assert not any("0.00 with" in n["text"] for n in notes)


def test_axis_break_notes_are_written_up_their_empty_band_not_over_the_bottom_row():
    # At 20,000 documents the note at the plot's foot sat over the bottom row's rank labels.
    from placeborag.explore._figures.score_axis import ScoreAxis

    axis = ScoreAxis(0.0, 1.0, [(0.5, 0.9)])
    bands, notes = axis.break_marks()
    (band,) = bands
    (note,) = notes
    assert band["x0"] < note["x"] < band["x1"]
    assert note["textangle"] == -90 and note["y"] == 0.5 and note["yanchor"] == "middle"
    assert "<br>" not in note["text"]


def _tie_scenario():
    from placeborag.explore import Document, Scenario

    docs = [
        Document(f"faq-{i}", "refund policy for damaged parcels", {"lang": "en"}) for i in (3, 1, 2)
    ]
    docs += [
        Document("ship-1", "delivery times to the islands", {"lang": "en"}),
        Document("ship-2", "track your parcel online", {"lang": "en"}),
        Document("acct-1", "reset your password", {"lang": "en"}),
    ]
    return Scenario(documents=tuple(docs), query="refund policy", k=2, name="ties")


RANKED = ("returned", "dropped by post-filter", "tied at the cut")


def ranking_boxes(traces, layout, plot):
    """Pixel boxes (y up) at a plot of ``plot`` pixels: the rank labels, the ranked markers,
    the cut line and the axis-break bands, computed from the figure's axes ranges."""
    from placeborag.explore._figures.labels import _MARKER_BOX, rank_box

    (x0, x1), (y0, y1) = layout["xaxis"]["range"], layout["yaxis"]["range"]

    def px(x, y):
        return (x - x0) / (x1 - x0) * plot[0], (y - y0) / (y1 - y0) * plot[1]

    labels = [a for a in layout["annotations"] if a.get("xref") == "x" and a.get("yref") == "y"]
    label_boxes = [(a["text"], rank_box(a, px)) for a in labels]
    h = _MARKER_BOX / 2 - 1  # the marker itself (size 11), not the room kept around it
    markers = [
        (cx - h, cy - h, cx + h, cy + h)
        for t in traces
        if t["name"] in RANKED
        for cx, cy in (px(x, y) for x, y in zip(t["x"], t["y"]))
    ]
    bands = []
    for shape in layout["shapes"]:
        a, b = sorted((px(shape["x0"], 0)[0], px(shape["x1"], 0)[0]))
        bands.append((a - 1, -1e9, b + 1, 1e9))
    return label_boxes, markers, bands


def _apart(a, b):
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def _ranking_cases():
    s = demo_scenario()
    return {
        "demo": s,
        "k10": s.replace(k=10),
        "k20": s.replace(k=20),
        "post": s.replace(filter_mode="post"),
        "post-recall": s.replace(filter_mode="post", recall=0.6),
        "20000": demo_scenario(20_000),
        "100000": demo_scenario(100_000),
    }


@pytest.mark.parametrize("case", ["demo", "k10", "k20", "post", "post-recall", "20000", "100000"])
@pytest.mark.parametrize("plot", [(300.0, 290.0), (520.0, 290.0), (900.0, 290.0)])
def test_rank_labels_never_overlap_each_other_a_marker_the_cut_or_a_break(case, plot):
    """Issue 25: at 20,000 and 100,000 documents "5" and "3" ran together and "4"/"2" touched
    the plot's foot; in the post-filter figure "1" sat over a dropped marker. Every written
    rank, at the narrowest plot the ranking is drawn in and at a wide one, is clear of every
    other label, every ranked marker, the cut line and the axis breaks, inside the plot; a rank
    left out for room is counted in the subtitle ("+n more"), never silently lost."""
    import re

    from placeborag.explore._figures.labels import rank_label_mask

    display = RankingDisplay.from_scenario(_ranking_cases()[case])
    traces, layout = display.spec()
    labels, markers, bands = ranking_boxes(traces, layout, plot)
    assert labels
    for i, (text, box) in enumerate(labels):
        assert box[0] >= 0 and box[1] >= 0 and box[2] <= plot[0] and box[3] <= plot[1], text
        assert all(_apart(box, other) for _, other in labels[i + 1 :]), text
        assert all(_apart(box, m) for m in markers), text
        assert all(_apart(box, b) for b in bands), text
    t = display.projection.trace
    asked = int((rank_label_mask(t.rank, t.cut_rank, t.k) & (t.rank > 0)).sum())
    more = re.search(r"\+(\d+) more ranks? in the hover", layout["title"]["text"])
    assert len(labels) + (int(more.group(1)) if more else 0) == asked
    written = sorted(int(text) for text, _ in labels)
    assert written[:1] == [1]  # the best rank is always written
    assert written == sorted(written)[: len(written)]


@pytest.mark.parametrize("case", ["demo", "k10", "k20", "post", "post-recall", "20000", "100000"])
@pytest.mark.parametrize("plot", [(300.0, 290.0), (520.0, 290.0), (900.0, 290.0), (1400.0, 290.0)])
def test_no_rank_label_sits_across_the_cut_line_or_a_break_from_its_point(case, plot):
    """At 20,000 documents "4" (just right of the top-5 cut) was written left of the cut line,
    its leader line crossing it. Each rank label is on its point's side of the cut line and
    of every axis break, so no leader line crosses one; a point on the line itself (within
    a marker's half-width: the last document inside the cut) may be labelled either side."""
    from placeborag.explore._figures.labels import _MARKER_BOX, rank_box

    traces, layout = RankingDisplay.from_scenario(_ranking_cases()[case]).spec()
    (x0, x1), (y0, y1) = layout["xaxis"]["range"], layout["yaxis"]["range"]

    def px(x, y):
        return (x - x0) / (x1 - x0) * plot[0], (y - y0) / (y1 - y0) * plot[1]

    bands = [sorted((px(shape["x0"], 0)[0], px(shape["x1"], 0)[0])) for shape in layout["shapes"]]
    assert any(shape["type"] == "line" for shape in layout["shapes"])  # the cut is there
    labels = [a for a in layout["annotations"] if a.get("xref") == "x" and a.get("yref") == "y"]
    assert labels
    for a in labels:
        point = px(a["x"], a["y"])[0]
        box = rank_box(a, px)
        for lo, hi in bands:
            if lo - _MARKER_BOX / 2 <= point <= hi + _MARKER_BOX / 2:
                continue  # on the line: either side
            assert (point < lo) == (box[2] < lo), (a["text"], point, box, lo, hi)


@pytest.mark.parametrize("case", ["demo", "k10", "k20", "post", "post-recall", "20000", "100000"])
@pytest.mark.parametrize("plot", [(300.0, 290.0), (520.0, 290.0), (900.0, 290.0), (1400.0, 290.0)])
def test_a_rank_label_without_a_leader_line_reads_as_its_own_point_s(case, plot):
    """At 100,000 documents "3" sat beside its point and about as near another ranked marker,
    so it could be read as either's. A label with no leader line is clearly nearer its own
    point than any other ranked marker (other markers at least 1.3 times as far from its
    centre); markers drawn over its own (tied documents on one spot) do not count."""
    from placeborag.explore._figures.labels import _MARKER_BOX, rank_box

    traces, layout = RankingDisplay.from_scenario(_ranking_cases()[case]).spec()
    (x0, x1), (y0, y1) = layout["xaxis"]["range"], layout["yaxis"]["range"]

    def px(x, y):
        return (x - x0) / (x1 - x0) * plot[0], (y - y0) / (y1 - y0) * plot[1]

    marks = [px(x, y) for t in traces if t["name"] in RANKED for x, y in zip(t["x"], t["y"])]
    labels = [a for a in layout["annotations"] if a.get("xref") == "x" and a.get("yref") == "y"]
    assert labels
    for a in (a for a in labels if not a["showarrow"]):
        box = rank_box(a, px)
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        ox, oy = px(a["x"], a["y"])
        own = np.hypot(cx - ox, cy - oy)
        for mx, my in marks:
            if np.hypot(mx - ox, my - oy) >= _MARKER_BOX:  # not drawn over its own point
                assert np.hypot(cx - mx, cy - my) >= 1.3 * own, (a["text"], (mx, my))


@pytest.mark.parametrize("case", ["demo", "k10", "k20", "post", "post-recall", "20000", "100000"])
@pytest.mark.parametrize("plot", [(300.0, 290.0), (520.0, 290.0), (900.0, 290.0), (1400.0, 290.0)])
def test_no_rank_label_sits_on_a_leader_line_and_no_two_leader_lines_cross(case, plot):
    """At 100,000 documents "1" sat on the leader line of "3", its own line starting where
    that one ran: which line led where could not be told. No label box covers another
    label's leader line (from its point to the label), no two leader lines cross, and no
    leader line runs through another label or another ranked marker."""
    from placeborag.explore._figures.labels import _MARKER_BOX, rank_box

    traces, layout = RankingDisplay.from_scenario(_ranking_cases()[case]).spec()
    (x0, x1), (y0, y1) = layout["xaxis"]["range"], layout["yaxis"]["range"]

    def px(x, y):
        return np.array([(x - x0) / (x1 - x0) * plot[0], (y - y0) / (y1 - y0) * plot[1]])

    labels = [a for a in layout["annotations"] if a.get("xref") == "x" and a.get("yref") == "y"]
    boxes = [rank_box(a, lambda x, y: tuple(px(x, y))) for a in labels]
    lines = {
        n: (px(a["x"], a["y"]), np.array([(b[0] + b[2]) / 2, (b[1] + b[3]) / 2]))
        for n, (a, b) in enumerate(zip(labels, boxes))
        if a["showarrow"]
    }
    h = _MARKER_BOX / 2 - 1
    marks = [px(x, y) for t in traces if t["name"] in RANKED for x, y in zip(t["x"], t["y"])]

    def through(start, end, box):  # a segment through a box, sampled every half pixel
        steps = max(2, int(np.hypot(*(end - start)) * 2))
        pts = start + np.linspace(0, 1, steps)[:, None] * (end - start)
        inside_x = (pts[:, 0] >= box[0]) & (pts[:, 0] <= box[2])
        inside_y = (pts[:, 1] >= box[1]) & (pts[:, 1] <= box[3])
        return bool((inside_x & inside_y).any())

    for n, (start, end) in lines.items():
        for m, box in enumerate(boxes):
            if m != n:
                assert not through(start, end, box), (labels[n]["text"], labels[m]["text"])
        for c in marks:
            if np.hypot(*(c - start)) >= _MARKER_BOX:
                assert not through(start, end, (c[0] - h, c[1] - h, c[0] + h, c[1] + h))
        for m, (p, q) in lines.items():
            if m <= n:
                continue
            # ab and pq cross where start + s (end - start) = p + t (q - p), 0 <= s, t <= 1.
            matrix = np.column_stack([end - start, p - q])
            if abs(np.linalg.det(matrix)) < 1e-9:
                continue  # parallel: the box checks above catch a line over a label
            s_, t_ = np.linalg.solve(matrix, p - start)
            assert not (0 <= s_ <= 1 and 0 <= t_ <= 1), (labels[n]["text"], labels[m]["text"])


def test_tied_documents_at_the_cut_keep_every_rank_label():
    # docs/img/ranking-ties.png: three tied documents on one spot showed only "2".
    traces, layout = RankingDisplay.from_store(
        _tie_scenario().store(), "refund policy", 2, color_by="lang"
    ).spec()
    labels, markers, bands = ranking_boxes(traces, layout, (300.0, 290.0))
    assert sorted(text for text, _ in labels) == ["1", "2"]
    assert "more rank" not in layout["title"]["text"]
    for i, (_, box) in enumerate(labels):
        assert all(_apart(box, o) for _, o in labels[i + 1 :])
        assert all(_apart(box, m) for m in markers) and all(_apart(box, b) for b in bands)


def test_a_rank_label_placed_away_from_its_point_gets_a_leader_line():
    _, layout = RankingDisplay.from_scenario(demo_scenario(100_000)).spec()
    labels = [a for a in layout["annotations"] if a.get("yref") == "y"]
    for a in labels:
        if a["showarrow"]:
            assert a["arrowwidth"] >= 1 and "xshift" not in a
        else:
            assert np.hypot(a["xshift"], a["yshift"]) <= 30, a["text"]


def test_no_tick_label_sits_beside_an_axis_break():
    # docs/img/ranking-1m.png: a "0.00" tick sat just after a break (the best document's
    # score, alone past the break).
    from placeborag.explore._figures.score_axis import ScoreAxis

    axis = ScoreAxis(0.0, 0.2, [(0.0, 0.09)])  # the best alone at 0.00, then a break
    ticks, texts = axis.ticks()
    ends = axis.position(np.array([axis.low, axis.high]))
    room = 0.05 * abs(ends[1] - ends[0])
    for a, b in axis.breaks:
        lo, hi = axis.position(np.array([a, b]))
        for x, text in zip(ticks, texts):
            assert x < lo - room or x > hi + room, (text, x, lo, hi)
    assert len(ticks) >= 3


@pytest.mark.parametrize("n", [None, 20_000])
def test_anchor_names_are_labels_placed_clear_of_every_other_label_and_the_edge(n):
    """Text beside a marker is clipped at the axes (at 20,000 documents the "shipping" name at
    the right edge was cut off) and sat under the top-k rings: in 2-D each anchor's name is
    an annotation put where, at the smallest plot the figure is drawn in, its box overlaps no
    rank label, no other name, and stays inside the points' range."""
    from placeborag.explore._figures.labels import _CHAR_PX, _LABEL_H, _LABEL_PLOT

    s = demo_scenario(n) if n else demo_scenario()
    p = ProjectionDisplay.from_scenario(s).projection
    traces, layout = ProjectionDisplay(p).spec()
    anchors = next(t for t in traces if t["name"] == "cluster anchors")
    assert anchors["mode"] == "markers"
    names = [a for a in layout["annotations"] if a["text"] in s.clusters]
    assert [a["text"] for a in names] == list(s.clusters)
    every = np.vstack([p.coords[:, :2], p.anchors[:, :2], p.query[None, :2]])
    low, span = every.min(axis=0), np.ptp(every, axis=0)
    scale = min(_LABEL_PLOT[0] / span[0], _LABEL_PLOT[1] / span[1])

    def box(a, w, h):
        # Beside its diamond (shifted), or at the tail of a leader line to it.
        x = (a["x"] - low[0]) * scale + (a["ax"] if a.get("showarrow") else a["xshift"])
        y = (a["y"] - low[1]) * scale + (-a["ay"] if a.get("showarrow") else a["yshift"])
        x0 = x - w if a["xanchor"] == "right" else x
        y0 = y - {"top": h, "middle": h / 2, "bottom": 0}[a["yanchor"]]
        return x0, y0, x0 + w, y0 + h

    boxes = [box(a, _CHAR_PX * len(a["text"]) + 8, _LABEL_H) for a in names]
    for a in layout["annotations"]:
        if a.get("showarrow") and a not in names:  # a rank label: its box where the arrow ends
            x = (a["x"] - low[0]) * scale + a["ax"]
            y = (a["y"] - low[1]) * scale - a["ay"]
            boxes.append((x - 11, y - 9, x + 11, y + 9))
    pad = 0.04 * span * scale
    for b in boxes[: len(names)]:
        assert b[0] >= -pad[0] and b[2] <= span[0] * scale + pad[0]
        assert b[1] >= -pad[1] and b[3] <= span[1] * scale + pad[1]
    for i, a in enumerate(boxes[: len(names)]):
        for j, b in enumerate(boxes):
            if i != j:
                assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (i, j)


@pytest.mark.parametrize("n", [None, 100_000])
def test_an_anchor_name_placed_away_from_its_diamond_gets_a_leader_line(n):
    """Issue 25: at 100,000 documents the "refund" name went 76 px right of its diamond with
    nothing joining them. A name beside its diamond stays within 16 px; one further out has
    a line from it to the diamond."""
    s = demo_scenario(n) if n else demo_scenario()
    _, layout = ProjectionDisplay.from_scenario(s).spec()
    names = [a for a in layout["annotations"] if a["text"] in s.clusters]
    assert names
    for a in names:
        if a["showarrow"]:
            assert a["arrowwidth"] >= 1 and "xshift" not in a
            assert np.hypot(a["ax"], a["ay"]) > 16
        else:
            assert np.hypot(a["xshift"], a["yshift"]) <= 16, a["text"]
    if n:
        assert any(a["showarrow"] for a in names)  # the case the issue saw


def test_three_d_ranks_and_anchor_names_are_scene_labels_not_clipped_webgl_text(demo):
    """docs/img/projection-3d.png: the "shipping" name (WebGL text) was clipped and ranks 1
    and 2 were written over each other. In 3-D the ranks and names are scene annotations
    (drawn over the scene): ranks fanned out over the upper half-circle at distinct angles,
    names below their diamonds on leader lines."""
    p = ProjectionDisplay.from_scenario(demo, n_components=3).projection
    traces, layout = ProjectionDisplay(p).spec()
    for name in ("top-k (rank)", "cluster anchors"):
        assert next(t for t in traces if t["name"] == name)["mode"] == "markers"
    labels = layout["scene"]["annotations"]
    ranks = [a for a in labels if a["text"].startswith("<b>")]
    names = [a for a in labels if a["text"] in demo.clusters]
    assert sorted(a["text"] for a in ranks) == [f"<b>{r}</b>" for r in range(1, demo.k + 1)]
    assert [a["text"] for a in names] == list(demo.clusters)
    angles = [np.arctan2(-a["ay"], a["ax"]) for a in ranks]
    assert len(set(np.round(angles, 6))) == len(ranks)  # coincident points: labels apart
    # Labels of one spot at distinct angles and radii >= 38 px: their 22x18 boxes are apart.
    tails = [(a["ax"], a["ay"]) for a in ranks]
    for i, (ax, ay) in enumerate(tails):
        for bx, by in tails[i + 1 :]:
            assert abs(ax - bx) >= 22 or abs(ay - by) >= 18
    assert all(a["ay"] > 0 and a["showarrow"] for a in names)  # below, joined to the diamond
    assert all(a["ay"] < 0 for a in ranks)  # above


def test_the_ranking_s_title_is_broken_into_lines_that_fit_and_escapes_the_query():
    """The title and its state line were one line each at any width (cut off at 520 px): each
    is broken between phrases (or words) into lines that fit a 520-px figure at 0.5 em a
    character, the top margin grows with the lines and the plot keeps its height, and the
    query's markup is shown as text, not read as plotly's."""
    import re

    from placeborag.explore._figures.base import _FONT_SIZE, _TITLE_EM, _TITLE_PX

    s = demo_scenario().replace(query="<b>refund</b> for a parcel that arrived damaged", k=20)
    _, layout = RankingDisplay.from_scenario(s).spec()
    text = layout["title"]["text"]
    assert "&lt;b&gt;refund&lt;/b&gt;" in text and "<b>" not in text
    lines = text.split("<br>")
    size = 1.4 * _FONT_SIZE
    for line in lines:
        small = line.startswith("<sup>")
        plain = re.sub(r"</?sup>", "", line).replace("&lt;", "<").replace("&gt;", ">")
        assert len(plain) * _TITLE_EM * size * (0.7 if small else 1) <= _TITLE_PX, line
    assert len(lines) == 4  # two of the title, two of the state
    plot = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    assert plot == 290 and layout["margin"]["t"] >= 24 * len(lines)


def test_three_d_rank_labels_are_laid_out_apart_by_a_margin_above_their_points():
    """At 100,000 documents and k=10 the 3-D "1" and "2" (points a few pixels apart, not one
    spot) were drawn over each other: their offsets were only apart for coincident points.
    Every pair of the (up to 15) rank label boxes is apart by the margin, all above."""
    from placeborag.explore._figures.labels import _CHAR_PX, _FAN_SLACK, _RANK_BOX_H, fan_offsets

    for k in (1, 5, 10, 15):
        texts = [str(r) for r in range(1, k + 1)]
        boxes = []
        for text, (ax, ay) in zip(texts, fan_offsets(texts)):
            w = _CHAR_PX * len(text) + 8
            box = (ax - w / 2, ay - _RANK_BOX_H / 2, ax + w / 2, ay + _RANK_BOX_H / 2)
            assert box[3] < 0, text  # above its point (y down)
            assert box[0] > 12 or box[2] < -12 or box[3] < -12, text  # clear of its marker
            boxes.append(box)
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                g = _FAN_SLACK
                assert a[2] + g <= b[0] or b[2] + g <= a[0] or a[3] + g <= b[1] or b[3] + g <= a[1]
