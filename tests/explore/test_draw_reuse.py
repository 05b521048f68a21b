"""What a redraw reuses: label codes and groupings kept for read-only arrays, a layout's density
layer, patches compared by content. Each must draw exactly what working it out again draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placeborag import STAGES
from placeborag.explore import ProjectionDisplay, RankingDisplay, demo_scenario
from placeborag.explore._compute import (
    fit_projector,
    kept_for,
    label_codes,
    label_rows,
    rows_by_label,
    split_rows,
)
from placeborag.explore._figures.base import drawn_rows
from placeborag.explore._figures.density import density_trace
from placeborag.explore._state import ExplorerState


def by_comparison(rows: np.ndarray, labels: np.ndarray, order: list) -> list[np.ndarray]:
    """The old definition: one == per name."""
    picked = np.asarray(labels, dtype=object)[rows]
    return [rows[picked == name] for name in order]


def same_groups(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(
        x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a, b)
    )


_LABEL = st.one_of(
    st.sampled_from(["a", "b", "c", "", "(no cluster)"]),
    st.integers(0, 2),
    st.sampled_from([1.0, True, False, math.nan]),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_LABEL, max_size=40),
    st.lists(_LABEL, max_size=6),
    st.booleans(),
)
def test_label_codes_group_rows_as_one_comparison_per_name_does(labels, order, frozen):
    values = np.empty(len(labels), dtype=object)
    values[:] = labels
    values.flags.writeable = not frozen
    rows = np.arange(len(values))
    assert same_groups(rows_by_label(rows, values, order), by_comparison(rows, values, order))
    codes = label_codes(values, order)
    # Each label's code: the first place in the order that == finds it at, else -1.
    expected = np.full(len(values), -1)
    for j in reversed(range(len(order))):
        expected[values == order[j]] = j
    assert codes.tolist() == expected.tolist()
    assert not codes.flags.writeable


def test_an_unhashable_label_is_compared_not_looked_up():
    values = np.empty(3, dtype=object)
    values[:] = [["x"], "a", "b"]
    assert label_codes(values, ["b", "a"]).tolist() == [-1, 1, 0]


def test_split_rows_keeps_the_order_of_the_rows_and_leaves_out_unknown_codes():
    rows = np.array([9, 4, 7, 1, 3])
    parts = split_rows(rows, np.array([1, -1, 0, 1, 0]), 3)
    assert [p.tolist() for p in parts] == [[7, 3], [9, 1], []]


def test_a_writable_label_array_is_never_answered_from_what_was_kept():
    labels = np.array(["a", "b", "a"], dtype=object)
    assert label_codes(labels, ["a", "b"]).tolist() == [0, 1, 0]
    labels[0] = "b"  # changed in place: a kept answer would be stale
    assert label_codes(labels, ["a", "b"]).tolist() == [1, 1, 0]
    assert [g.tolist() for g in label_rows(labels, ["a", "b"])] == [[2], [0, 1]]
    calls = []
    for _ in range(2):
        kept_for(labels, "k", lambda: calls.append(1))
    assert len(calls) == 2


def test_a_read_only_label_array_is_worked_out_once_per_order():
    labels = np.array(["a", "b", "a"], dtype=object)
    labels.flags.writeable = False
    assert label_codes(labels, ["a", "b"]) is label_codes(labels, ["a", "b"])
    assert label_codes(labels, ["b", "a"]).tolist() == [1, 0, 1]  # another order: its own


@pytest.fixture(scope="module")
def state_views():
    s = demo_scenario(400)
    state = ExplorerState()
    return s, state, {c: state.views(s, 2, c) for c in ("cluster", "lang", "stage")}


@pytest.mark.parametrize("color_by", ["cluster", "lang", "stage"])
def test_the_displays_group_points_as_comparing_every_label_would(state_views, color_by):
    _, _, views = state_views
    p = views[color_by].projection
    t = p.trace
    projection = ProjectionDisplay(p)
    groups = projection.groups()
    shown = drawn_rows(len(p.labels), (t.rank > 0) | (t.cut_rank > 0))
    top = np.flatnonzero(t.rank)
    expected = [*by_comparison(shown, p.labels, p.label_order), top[np.argsort(t.rank[top])]]
    assert same_groups(groups, expected)
    assert same_groups(projection.groups(), groups)  # asked again (by the app): the same
    ranking = RankingDisplay(p)
    shown = drawn_rows(len(t.ids), (t.rank > 0) | (t.cut_rank > 0) | (t.stage == "tied"))
    assert same_groups(ranking.groups(), by_comparison(shown, t.stage, list(STAGES)))
    # Each document's row in the ranking: its label's place in the order.
    traces, _ = ranking.spec()
    row = {label: i for i, label in enumerate(p.label_order)}
    for rows, trace in zip(ranking.groups(), traces):
        base = np.array([row[v] for v in p.labels[rows]], dtype=np.float64)
        assert np.array_equal(np.floor(trace["y"] + 0.5), base)


def test_the_layout_projected_beside_the_traces_is_the_projectors_own(state_views):
    s, _, _ = state_views
    views = ExplorerState().views(s, 2)  # a first fit: projected on the second thread
    rows = views.rows
    expected = fit_projector(rows.vectors, 3).head(2).transform(rows.vectors)
    assert np.array_equal(views.projection.coords, expected)
    assert not views.projection.coords.flags.writeable


def test_the_kept_density_layer_is_the_one_binned_again():
    s = demo_scenario(20_000)  # the size from which the projection draws one
    views = ExplorerState().views(s, 2)
    p = views.projection
    assert not p.coords.flags.writeable
    first = [t for t in ProjectionDisplay(p).spec()[0] if t["type"] == "heatmap"]
    again = density_trace(p.coords[:, 0], p.coords[:, 1], (160, 120))
    (layer,) = first
    assert layer.keys() == again.keys()
    for key, value in again.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(layer[key], value, equal_nan=True), key
        else:
            assert layer[key] == value, key


def _figure():
    pytest.importorskip("anywidget")
    from placeborag.explore._figures.widgets import FigureView

    return FigureView()


def test_a_patch_carries_an_array_changed_in_one_value_and_not_an_equal_copy():
    figure = _figure()
    x = np.linspace(0.0, 1.0, 100_000, dtype=np.float32)
    y = np.linspace(0.0, 1.0, 100_000)
    z = np.where(np.arange(100_000) % 3 == 0, np.nan, 1.0)
    figure.show([{"type": "scattergl", "name": "a", "x": x, "y": y, "z": z}], {"height": 300})
    moved = x.copy()
    moved[50_000] += np.float32(1e-3)  # the same length and dtype, one value changed
    again = [{"type": "scattergl", "name": "a", "x": moved, "y": y.copy(), "z": z.copy()}]
    figure.show(again, {"height": 300})
    assert figure.patch["base"] == 1
    # Only x: equal copies (NaN in the same places is the same bytes) are not sent again.
    assert [(i, sorted(changed), gone) for i, changed, gone in figure.patch["traces"]] == [
        (0, ["x"], [])
    ]
    figure.show([{"type": "scattergl", "name": "a", "x": x, "y": y, "z": z}], {"height": 300})
    assert figure.patch["base"] == 1 and figure.patch["traces"] == []  # the whole one again


def test_a_redraw_with_the_same_config_is_a_patch():
    """The config test compared the last whole figure's config with the new one's digest:
    a figure drawn with a config was always sent whole."""
    figure = _figure()
    traces = [{"type": "scatter", "name": "a", "x": np.arange(1000.0)}]
    figure.show(traces, {"height": 300}, {"scrollZoom": True})
    figure.show(traces, {"height": 400}, {"scrollZoom": True})
    assert figure.patch.get("base") == 1 and figure.patch["layout"]["height"] == 400
    figure.show(traces, {"height": 400}, {"scrollZoom": False})  # another config: whole
    assert "revision" not in figure.patch and figure.figure["revision"] == 3


def test_labels_equal_to_a_name_but_not_the_same_object_get_its_code():
    order = ["alpha", "beta", "alpha"]  # a name twice: its first place
    built = ["".join(["al", "pha"]), "beta", "".join(["be", "ta"]), "gamma", order[2]]
    values = np.empty(len(built), dtype=object)
    values[:] = built
    assert built[0] is not order[0] and built[2] is not order[1]
    assert label_codes(values, order).tolist() == [0, 1, 1, -1, 0]
