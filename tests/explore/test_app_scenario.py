"""The app shows the scenario it was given, exactly, or refuses it naming the field."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("ipywidgets")
traitlets = pytest.importorskip("traitlets")

from placeborag import PlaceboragError  # noqa: E402
from placeborag.explore import app, demo_scenario  # noqa: E402

DEMO = demo_scenario()


@pytest.mark.parametrize(
    ("field", "value"),
    [("cluster_spread", 2.5), ("cluster_spread", 0.123), ("recall", 0.333), ("recall", 0.0)],
)
def test_a_valid_value_off_the_sliders_usual_range_or_step_is_shown_exactly(field, value):
    explorer = app(DEMO.replace(**{field: value}))
    assert explorer.controls[field].value == value
    assert getattr(explorer.scenario, field) == value
    assert explorer.error == ""


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"recall": 1.5}, "recall=1.5"),
        ({"profile": "nope"}, "profile='nope'"),
        ({"filter_mode": "x"}, "filter_mode='x'"),
        ({"filter_semantics": "z"}, "filter_semantics='z'"),
        ({"metric": "l1"}, "metric='l1'"),
        ({"cluster_spread": -1}, "cluster_spread=-1"),
        ({"k": 10**9}, "k=1000000000"),
    ],
)
def test_a_scenario_the_app_cannot_show_is_refused_naming_the_field(changes, named):
    with pytest.raises(PlaceboragError) as excinfo:
        app(DEMO.replace(**changes))
    assert not isinstance(excinfo.value, traitlets.TraitError)
    assert named in str(excinfo.value)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    recall=st.floats(0.0, 1.0).map(lambda v: round(v, 3)),
    spread=st.floats(0.0, 50.0).map(lambda v: round(v, 2)),
)
def test_any_recall_and_spread_are_shown_as_given_or_refused_by_name(recall, spread):
    try:
        explorer = app(DEMO.replace(recall=recall, cluster_spread=spread))
    except PlaceboragError as exc:  # the embedder cannot keep the clusters apart at this spread
        assert "cluster_spread" in str(exc) and not isinstance(exc, traitlets.TraitError)
        return
    assert explorer.controls["recall"].value == recall
    assert explorer.controls["cluster_spread"].value == spread
