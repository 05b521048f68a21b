"""The figure layer's pure modules, on arrays: the label geometry, the score axis and the wire
protocol import no plotly and no widget library, and keep their promises without either."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placeborag.explore._figures import wire as w
from placeborag.explore._figures.labels import (
    _FAN_SLACK,
    _RANK_PLOTS,
    _RankRoom,
    fan_offsets,
    rank_box,
    ranking_labels,
)
from placeborag.explore._figures.score_axis import ScoreAxis

PURE = (
    "placeborag.explore._figures.labels",
    "placeborag.explore._figures.score_axis",
    "placeborag.explore._figures.wire",
)
HEAVY = ("plotly", "anywidget", "ipywidgets", "traitlets", "pandas")


@pytest.mark.parametrize("module", PURE)
def test_a_pure_figure_module_imports_no_plotting_or_widget_library(module):
    code = f"import sys, {module}\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# -- label geometry -------------------------------------------------------------------------

points = st.integers(1, 14).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n),
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
    )
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(points)
def test_rank_labels_never_overlap_and_stay_inside_at_every_plot_size(drawn):
    xs, rows = drawn
    x = np.array(xs)
    y = np.array(rows, dtype=np.float64)
    rank = np.arange(1, len(x) + 1)
    marked = np.ones(len(x), dtype=bool)
    x_range, y_range = (-0.05, 1.12), (-0.6, 3.6)
    labels, left = ranking_labels(x, y, rank, marked, x_range, y_range, bands=[])
    assert len(labels) + left == len(x)
    assert [int(a["text"]) for a in labels] == sorted(int(a["text"]) for a in labels)
    for plot in _RANK_PLOTS:
        room = _RankRoom(plot, x_range, y_range, x, y, marked, [], [])
        boxes = [rank_box(a, room.px) for a in labels]
        for i, a in enumerate(boxes):
            assert room.inside(a)
            for b in boxes[i + 1 :]:
                assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def test_a_rank_label_goes_beside_its_point_when_there_is_room():
    labels, left = ranking_labels(
        np.array([0.5]), np.array([1.0]), np.array([1]), np.array([True]), (0, 1), (0, 2), []
    )
    assert left == 0 and labels[0]["text"] == "1" and not labels[0]["showarrow"]


@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_fanned_labels_of_coinciding_points_are_kept_apart(n):
    texts = [str(i + 1) for i in range(n)]
    offsets = fan_offsets(texts)
    assert len(offsets) == n
    boxes = [(x - 8.0, y - 10.0, x + 8.0, y + 10.0) for x, y in offsets]
    for i, a in enumerate(boxes):
        assert a[3] <= 0.0  # above the point (y down)
        for b in boxes[i + 1 :]:
            gap = _FAN_SLACK
            assert (
                a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1] or b[3] + gap <= a[1]
            )


# -- the score axis -------------------------------------------------------------------------

scores = st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=60).map(np.array)


@settings(max_examples=100, deadline=None)
@given(scores, st.booleans(), st.integers(0, 10))
def test_the_score_axis_keeps_the_ranking_s_order(values, higher_is_better, k):
    axis = ScoreAxis.fit(values, higher_is_better=higher_is_better, k=k)
    position = axis.position(np.sort(values))
    assert np.all(np.diff(position) >= 0)
    ticks, labels = axis.ticks()
    assert len(ticks) == len(labels) >= 1
    # Inside the plotted range (the scores' ends and 5% to spare): a segment narrower than a
    # tick step gets one at its middle, rounded, which may sit a hair past the last score.
    ends = axis.position(np.array([axis.low, axis.high]))
    spare = 0.05 * float(ends.max() - ends.min()) + 1e-9
    assert all(ends.min() - spare <= t <= ends.max() + spare for t in ticks)


def test_a_long_empty_stretch_of_scores_is_broken_to_a_sliver():
    values = np.array([0.0, 0.01, 0.02, 0.9, 0.91])
    axis = ScoreAxis.fit(values)
    assert len(axis.breaks) == 1
    a, b = axis.breaks[0]
    assert 0.02 <= a < b <= 0.9
    shapes, notes = axis.break_marks()
    assert shapes and notes
    gap = np.diff(axis.position(np.array([0.02, 0.9])))[0]
    assert gap < 0.25 * (0.9 - 0.02)  # the stretch keeps far less than its true width


# -- the wire protocol ----------------------------------------------------------------------

arrays = st.lists(st.integers(-5, 5), min_size=0, max_size=6).map(
    lambda v: np.array(v, dtype=np.float64)
)
traces = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["scatter", "scattergl"]), "x": arrays},
        optional={"name": st.sampled_from(["a", "b"]), "y": arrays},
    ),
    max_size=4,
)
layouts = st.fixed_dictionaries(
    {}, optional={"height": st.integers(100, 900), "title": st.sampled_from(["t", "u"])}
)


def _revision(number, data, layout, config=None):
    return w.Wire(number, w.wire(data), w.wire(layout), w.wire(config) if config else None)


def _applied(base, patch):
    """What the page draws: ``patch`` over the whole figure ``base`` (js/figure.js compose)."""
    data = []
    changed = {i: (props, gone) for i, props, gone in patch["traces"]}
    for i in range(patch["length"]):
        trace = dict(base.data[i]) if i < len(base.data) else {}
        if i in changed:
            trace.update(changed[i][0])
            for key in changed[i][1]:
                trace.pop(key, None)
        data.append(trace)
    layout = {**base.layout, **patch["layout"]}
    for key in patch["drop"]:
        layout.pop(key, None)
    return data, layout


@settings(max_examples=200, deadline=None)
@given(traces, layouts, traces, layouts)
def test_a_patch_over_the_figure_the_page_holds_makes_the_next_one(d0, l0, d1, l1):
    base, now = _revision(1, d0, l0), _revision(2, d1, l1)
    patch = w.patch(base, now)
    if patch is None:  # too large a change: sent whole
        return
    assert (patch["base"], patch["revision"]) == (1, 2)
    data, layout = _applied(base, patch)
    assert len(data) == len(now.data)
    for drawn, wanted in zip(data, now.data):
        assert _same(drawn, wanted)
    assert _same(layout, now.layout)


def _same(a, b):
    """Two wire objects with the same keys (in any order), each the same JSON and bytes."""
    return a.keys() == b.keys() and all(w.Print(a[k]) == w.Print(b[k]) for k in a)


def test_nothing_to_patch_on_sends_the_figure_whole():
    now = _revision(1, [{"type": "scatter", "x": np.arange(3.0)}], {})
    assert w.patch(None, now) is None
    assert w.whole(now)["revision"] == 1
    other = _revision(2, now.data, {}, config={"scrollZoom": True})
    assert w.patch(now, other) is None  # another config: whole


def test_a_changed_array_is_the_only_thing_a_patch_carries():
    x = np.arange(100.0)
    base = _revision(1, [{"type": "scatter", "name": "a", "x": x, "y": x}], {"height": 300})
    now = _revision(
        2, [{"type": "scatter", "name": "a", "x": x, "y": x[::-1].copy()}], {"height": 300}
    )
    patch = w.patch(base, now)
    assert patch is not None and patch["layout"] == {} and patch["drop"] == []
    ((index, props, gone),) = patch["traces"]
    assert (index, list(props), gone) == (0, ["y"], [])


@pytest.mark.parametrize(
    ("content", "read"),
    [
        (
            {"kind": "select", "revision": 3, "points": [[0, 1], [1, 2]]},
            ("select", 3, [(0, 1), (1, 2)]),
        ),
        ({"kind": "click", "revision": 1, "point": [2, 0]}, ("click", 1, (2, 0))),
        (
            {"kind": "view", "revision": 2, "ranges": {"xaxis": [0, 1.5]}},
            ("view", 2, {"xaxis": (0.0, 1.5)}),
        ),
        ({"kind": "resend", "revision": 4}, ("resend", 4, None)),
        ([1, 2], "not an object"),
        ({"kind": "select", "revision": 0, "points": []}, "no figure revision"),
        ({"kind": "select", "revision": True, "points": []}, "no figure revision"),
        ({"kind": "resend", "revision": "1"}, "no figure revision"),
        ({"kind": "zoom", "revision": 1}, "unknown kind or fields"),
        ({"kind": "click", "revision": 1, "point": [0, 1], "extra": 1}, "unknown kind or fields"),
        ({"kind": "click", "revision": 1, "point": [0, -1]}, w.NOT_A_POINT),
        ({"kind": "select", "revision": 1, "points": "all"}, "points is not a list"),
        ({"kind": "select", "revision": 1, "points": [[0, 1.5]]}, w.NOT_POINTS),
        (
            {"kind": "view", "revision": 1, "ranges": {"zaxis": [0, 1]}},
            "ranges are not [low, high] numbers by axis",
        ),
        (
            {"kind": "view", "revision": 1, "ranges": {"xaxis": [0, float("nan")]}},
            "ranges are not [low, high] numbers by axis",
        ),
    ],
)
def test_a_message_from_the_page_is_read_or_refused_with_its_reason(content, read):
    message = w.read_message(content)
    if isinstance(read, str):
        assert message == read
    else:
        assert (message.kind, message.revision, message.payload) == read


@pytest.mark.parametrize(
    ("content", "read"),
    [
        ({"kind": "row", "revision": 2, "id": "a"}, (2, "a", 0)),
        ({"kind": "row", "revision": 2, "id": "a", "occurrence": 1}, (2, "a", 1)),
        ({"kind": "row", "revision": 2, "id": 5}, None),
        ({"kind": "row", "revision": 2, "id": "a", "occurrence": -1}, None),
        ({"kind": "row", "revision": 2.0, "id": "a"}, None),
    ],
)
def test_a_row_click_is_read_or_refused(content, read):
    assert w.read_row_click(content) == read
