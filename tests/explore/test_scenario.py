import pytest

pytest.importorskip("pandas")

from placeborag import PlaceboragValueError
from placeborag.explore import Scenario, demo_scenario


def test_demo_scenario_is_a_bilingual_help_desk_with_tier_and_year(demo):
    langs = {d.metadata["lang"] for d in demo.documents}
    assert langs == {"en", "hu"}
    assert 30 <= len(demo.documents) <= 60
    assert all({"tier", "year"} <= set(d.metadata) for d in demo.documents)
    assert {d.metadata["tier"] for d in demo.documents} == {"public", "internal"}
    assert demo.clusters


def test_scenario_round_trips_through_json(tmp_path, demo):
    path = tmp_path / "scenario.json"
    demo.save(path)
    assert Scenario.load(path) == demo


def test_scaling_is_deterministic_and_keeps_the_originals_first(demo):
    big = demo_scenario(500)
    assert len(big.documents) == 500
    assert big.documents[: len(demo.documents)] == demo.documents
    assert big == demo_scenario(500)
    assert len({d.id for d in big.documents}) == 500


def test_an_unknown_scenario_field_is_named():
    with pytest.raises(PlaceboragValueError, match="unknown scenario field"):
        Scenario.from_dict({"documents": [], "query": "q", "colour": "red"})


def test_from_store_reads_back_records_and_options(demo):
    store = demo.store(profile="qdrant", recall=0.5)
    back = Scenario.from_store(store, demo.query, k=demo.k, where=demo.where, name=demo.name)
    assert back == demo.replace(profile="qdrant", recall=0.5)


def test_replace_changes_only_the_named_fields_and_rejects_unknown_ones():
    demo = demo_scenario()
    other = demo.replace(k=9, model_name="other")
    assert (other.k, other.model_name) == (9, "other")
    assert other.documents == demo.documents and other.clusters == demo.clusters
    assert (demo.k, demo.model_name) == (5, "placebo-embed-v1")  # the original is untouched
    assert demo.replace(documents=[{"id": "a", "text": "t"}]).documents[0].id == "a"
    assert demo.replace(clusters={"x": ("t",)}).clusters == {"x": ["t"]}
    with pytest.raises(TypeError, match="unknown scenario field"):
        demo.replace(modle_name="typo")
