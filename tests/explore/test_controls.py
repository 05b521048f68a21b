"""The table of controls: one row makes a widget in its group with its CSS class, a checked
keyword of app(), a scenario field read back, and a part of every cache key that draws it."""

from __future__ import annotations

import inspect

import pytest

pytest.importorskip("ipywidgets")

from placeborag import PlaceboragTypeError, PlaceboragValueError
from placeborag.explore import CSS_CLASSES, Document, Scenario, app, demo_scenario
from placeborag.explore._controls import CONTROLS, GROUPS, SETTINGS, grouped
from placeborag.explore._state import ExplorerState

# Four records with one text: they tie exactly, and the tie order alone says which two of
# them a top-2 returns (insertion: the first two written; reverse: the last two; id: by id).
TIES = Scenario(
    documents=(
        Document("c", "our refund policy", {"lang": "en"}),
        Document("a", "our refund policy", {"lang": "en"}),
        Document("d", "our refund policy", {"lang": "hu"}),
        Document("b", "our refund policy", {"lang": "hu"}),
        Document("ship", "parcels ship in two days", {"lang": "en"}),
        Document("acct", "reset your password", {"lang": "hu"}),
    ),
    query="refund policy",
    k=2,
    name="four tied records",
)

# For each control that shows a scenario field: a value other than TIES's own.
OTHER = {
    "query": "parcels",
    "where": {"lang": "hu"},
    "k": 3,
    "profile": "qdrant",
    "metric": "l2",
    "tie_order": "reverse",
    "seed": 3,
    "pad_missing": False,
    "filter_mode": "post",
    "filter_semantics": "engine",
    "recall": 0.5,
    "dimensions": 64,
    "cluster_spread": 0.25,
    "model_name": "another-model",
}


def returned(explorer_or_views):
    trace = explorer_or_views.shown.trace if hasattr(explorer_or_views, "shown") else None
    trace = trace or explorer_or_views.trace
    return [m.id for m in trace.matches]


def test_every_control_is_a_widget_in_its_group_with_its_css_class():
    explorer = app(TIES, mode="output")
    assert list(explorer.controls) == [c.name for c in CONTROLS]
    for c in CONTROLS:
        widget = explorer.controls[c.name]
        assert CSS_CLASSES[c.name] == c.css_class in widget._dom_classes
        assert c.group in GROUPS
    boxes = {
        cls.removeprefix("placeborag-group-"): box
        for box in _walk(explorer.widget)
        for cls in getattr(box, "_dom_classes", ())
        if cls.startswith("placeborag-group-")
    }
    for group in ("query", "store", "embedder"):
        inside = set(map(id, _walk(boxes[group])))
        assert all(id(explorer.controls[c.name]) in inside for c in grouped(group)), group
    toolbar = next(
        b for b in _walk(explorer.widget) if "placeborag-view-controls" in b._dom_classes
    )
    assert list(toolbar.children) == [explorer.controls[c.name] for c in grouped("view")]


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def test_app_takes_every_field_control_as_a_keyword_and_shows_it():
    assert set(OTHER) == {c.name for c in CONTROLS if c.field}  # a new control needs a value
    assert set(SETTINGS) == set(OTHER) - {"query"}  # the query is app()'s own argument
    parameters = inspect.signature(app).parameters
    assert all(parameters[name].kind is inspect.Parameter.KEYWORD_ONLY for name in SETTINGS)
    settings = {name: OTHER[name] for name in SETTINGS}
    explorer = app(TIES, mode="output", **settings)
    assert explorer.error == ""
    for name in SETTINGS:
        assert getattr(explorer.scenario, name) == OTHER[name], name


def test_tie_order_is_a_control_whose_value_decides_the_tie_at_the_cut():
    explorer = app(TIES, tie_order="reverse", mode="output")
    assert explorer.controls["tie_order"].value == "reverse"
    assert returned(explorer) == ["b", "d"]
    assert "ties by reverse" in explorer.static_html()
    explorer.controls["tie_order"].value = "id"
    assert explorer.scenario.tie_order == "id" and explorer.error == ""
    assert returned(explorer) == ["a", "b"]
    explorer.controls["tie_order"].value = "profile"  # the profile's own: chroma's insertion
    assert explorer.scenario.tie_order is None
    assert returned(explorer) == ["c", "a"]


def test_the_seed_is_a_control_that_says_which_way_a_shuffled_tie_falls():
    explorer = app(TIES, tie_order="shuffle", seed=1, mode="output")
    assert explorer.controls["seed"].value == "1"
    assert returned(explorer) == ["a", "d"]
    explorer.controls["seed"].value = "3"
    assert explorer.scenario.seed == 3 and returned(explorer) == ["c", "d"]
    explorer.controls["seed"].value = ""  # the profile's own
    assert explorer.scenario.seed is None and explorer.error == ""
    explorer.controls["seed"].value = "one"
    assert "seed='one' must be an int" in explorer.error


def test_padding_is_a_control_that_fills_a_short_answer_up_to_k():
    empty = {"profile": "faiss", "where": {"lang": "xx"}, "filter_mode": "post"}
    explorer = app(TIES, **empty, mode="output")  # faiss pads by its own rule
    assert explorer.controls["pad_missing"].value == "profile"
    assert returned(explorer) == ["-1", "-1"]
    explorer.controls["pad_missing"].value = False
    assert explorer.scenario.pad_missing is False and returned(explorer) == []
    with pytest.raises(PlaceboragTypeError, match="pad_missing='yes' must be True or False"):
        app(TIES, pad_missing="yes", mode="output")


def test_a_scenario_s_own_tie_order_is_shown_and_kept():
    explorer = app(TIES.replace(tie_order="id"), mode="output")
    assert explorer.controls["tie_order"].value == "id"
    assert returned(explorer) == ["a", "b"]
    assert app(TIES, mode="output").controls["tie_order"].value == "profile"


def test_a_bad_tie_order_is_refused_by_name_before_the_app_is_built():
    with pytest.raises(PlaceboragValueError, match="tie_order='random' must be one of"):
        app(TIES, tie_order="random", mode="output")


def test_a_misspelt_keyword_is_refused_naming_the_nearest_setting():
    with pytest.raises(PlaceboragTypeError, match="did you mean 'tie_order'"):
        app(TIES, tie_ordr="id", mode="output")


def test_a_new_profile_without_a_metric_brings_its_own_and_keeps_the_tie_order():
    explorer = app(TIES, profile="qdrant", tie_order="reverse", mode="output")
    assert (explorer.scenario.metric, explorer.scenario.tie_order) == ("cosine", "reverse")
    explorer.controls["metric"].value = "l2"
    explorer.controls["profile"].value = "faiss"
    assert explorer.controls["metric"].value == "cosine"  # faiss's own
    assert explorer.controls["tie_order"].value == "reverse"


# Where a store option changes the top-k of TIES: the seed under shuffled ties, the padding
# where the filter leaves nothing.
FROM = {
    "seed": TIES.replace(tie_order="shuffle"),
    "pad_missing": TIES.replace(profile="faiss", where={"lang": "xx"}, filter_mode="post"),
}


@pytest.mark.parametrize("name", sorted(OTHER))
def test_a_warm_state_draws_a_changed_control_as_a_cold_one_does(name):
    """Every cache of the state is keyed by what the table says a control changes: a state
    that drew a scenario and then the scenario with one control changed shows what a new
    state shows (a key that left the control out would show the first picture again)."""
    first = FROM.get(name, TIES)
    changed = first.replace(**{name: OTHER[name]})
    if name == "profile":
        changed = changed.replace(metric=None)
    warm = ExplorerState()
    before = warm.views(first, color_by="stage")
    after, cold = (
        warm.views(changed, color_by="stage"),
        ExplorerState().views(changed, color_by="stage"),
    )
    for mode in ("pre", "post"):
        a, b = after.traces[mode], cold.traces[mode]
        assert [m.id for m in a.matches] == [m.id for m in b.matches], mode
        assert [m.score for m in a.matches] == [m.score for m in b.matches], mode
        assert list(a.stage) == list(b.stage) and a.tie_rule == b.tie_rule, mode
    assert after.anchors_key == cold.anchors_key
    if name in ("tie_order", "seed", "pad_missing"):  # the option does change the picture
        assert returned(before) != returned(cold)


def test_the_tie_order_changes_the_trace_of_a_warm_state():
    state = ExplorerState()
    first = state.views(TIES, color_by="stage")
    second = state.views(TIES.replace(tie_order="reverse"), color_by="stage")
    assert returned(first) == ["c", "a"] and returned(second) == ["b", "d"]
    assert second.trace.tie_rule == "reverse"


def test_the_demo_draws_as_before_with_the_tie_order_its_profile_s():
    s = demo_scenario()
    explorer = app(s, mode="output")
    assert explorer.scenario.tie_order is None
    assert explorer.shown.trace.tie_rule == "insertion"


def test_a_view_choice_redraws_the_views_its_row_names_and_no_other():
    views = ExplorerState().views(TIES, color_by="stage")
    assert set(views.choices) == {c.name for c in grouped("view")}
    explorer = app(TIES, mode="output")
    drawn = {name: explorer.figures[name] for name in ("projection", "ranking")}
    explorer.controls["projection"].value = "3-D"  # redraws the projection only
    assert explorer.figures["projection"] is not drawn["projection"]
    assert explorer.figures["ranking"] is drawn["ranking"]
    explorer.controls["color_by"].value = "lang"  # both
    assert explorer.figures["ranking"] is not drawn["ranking"]


def test_the_tie_order_control_offers_every_order_a_store_takes():
    from placeborag._profiles import TIE_ORDERS

    explorer = app(TIES, mode="output")
    values = [value for _, value in explorer.controls["tie_order"].options]
    assert values[0] == "profile" and sorted(values[1:]) == sorted(TIE_ORDERS)
