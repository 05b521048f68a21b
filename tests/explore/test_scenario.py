import json

import pytest

pytest.importorskip("pandas")

from _exported import parse

from placeborag import PlaceboragTypeError, PlaceboragValueError
from placeborag.explore import Document, Scenario, demo_scenario


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


def test_save_writes_numpy_numbers_as_json_numbers(tmp_path, demo):
    # issue 13 item 6: json.dump streamed the file and stopped at the np.int64, leaving
    # invalid JSON in place of the old scenario.
    np = pytest.importorskip("numpy")
    path = tmp_path / "s.json"
    demo.save(path)
    docs = list(demo.documents)
    docs[-1] = Document(docs[-1].id, docs[-1].text, {"year": np.int64(2024), "w": np.float32(2)})
    demo.replace(documents=tuple(docs)).save(path)
    assert Scenario.load(path).documents[-1].metadata == {"year": 2024, "w": 2.0}


def test_a_failed_save_leaves_the_old_file_whole(tmp_path, demo):
    path = tmp_path / "s.json"
    demo.save(path)
    before = path.read_bytes()
    docs = (*demo.documents, Document("x", "t", {"when": object()}))
    with pytest.raises(PlaceboragTypeError, match="Object of type object is not JSON"):
        demo.replace(documents=docs).save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[1, 2]", "must hold a JSON object, not list"),
        (b"{nope", "is not UTF-8 JSON"),
        (b"\xff\xfe", "is not UTF-8 JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"k": ' + b"7" * 5000 + b"}", "is not UTF-8 JSON: Exceeds the limit"),
    ],
    ids=["list", "invalid", "not-utf8", "deep", "5000-digit-int"],
)
def test_a_broken_scenario_file_is_a_placeborag_error_naming_the_file(tmp_path, content, message):
    path = tmp_path / "s.json"
    path.write_bytes(content)
    with pytest.raises(PlaceboragValueError, match=message) as excinfo:
        Scenario.load(path)
    assert str(path) in str(excinfo.value)


def test_replace_checks_the_type_of_what_it_changes(demo):
    # issue 13 item 12: the explorer raised bare builtins.
    with pytest.raises(PlaceboragTypeError) as excinfo:
        demo.replace(name=5)
    assert excinfo.value.args == ("name=5 must be a str",)


def _tied_store(**options):
    from placeborag import FakeVectorStore

    store = FakeVectorStore(**options)
    store.upsert_many(["b", "a", "c", "d"], ["same text"] * 3 + ["other words"])
    return store


@pytest.mark.parametrize(
    "options",
    [
        {"tie_order": "id"},
        {"tie_order": "reverse"},
        {"tie_order": "shuffle", "seed": 7},
        {"profile": "faiss", "pad_missing": True, "on_existing_id": "duplicate"},
        {"orphans": 0.5, "churn": 0.25},
    ],
    ids=["id", "reverse", "shuffle", "pad", "orphans"],
)
def test_a_scenario_carries_every_store_option_to_the_app_file_and_export(tmp_path, options):
    pytest.importorskip("plotly")
    pytest.importorskip("ipywidgets")
    pytest.importorskip("anywidget")
    from placeborag.explore import app, build_export, export_pytest

    store = _tied_store(**options)
    expected = [m.id for m in store.query("same text", k=5)]
    scenario = Scenario.from_store(store, "same text", k=5)
    assert {k: v for k, v in scenario.store_options.items() if k in options} == options
    path = tmp_path / "scenario.json"
    scenario.save(path)
    loaded = Scenario.load(path)
    assert loaded == scenario
    assert [m.id for m in loaded.store().query("same text", k=5)] == expected

    explorer = app(store=store, query="same text")
    explorer.controls["k"].value = 5
    assert explorer.error == ""
    assert [m.id for m in explorer.scenario.store().query("same text", k=5)] == expected
    explorer.export()
    assert [m.id for m in explorer.last_export.preview] == expected

    export = build_export(loaded.store(), "same text", 5)
    assert [m.id for m in export.preview] == expected
    module = parse(export_pytest(loaded))
    assert next(iter(module["expected"].values())) == expected


def test_a_version_1_scenario_file_loads_with_the_profiles_own_options(tmp_path, demo):
    data = demo.to_dict()
    for key in ("tie_order", "seed", "on_existing_id", "pad_missing", "orphans", "churn"):
        del data[key]
    data["format"] = "placeborag.scenario/v1"
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert Scenario.load(path) == demo
    assert demo.to_dict()["format"] == "placeborag.scenario/v2"


def test_a_store_over_a_profile_no_name_makes_is_refused_by_name():
    import dataclasses

    from placeborag import get_profile

    named = _tied_store(profile=get_profile("qdrant").with_options(tie_order="reverse"))
    scenario = Scenario.from_store(named, "same text")
    assert scenario.profile == "qdrant" and scenario.tie_order == "reverse"
    assert [m.id for m in scenario.store().query("same text")] == [
        m.id for m in named.query("same text")
    ]
    own = _tied_store(profile=dataclasses.replace(get_profile("qdrant"), name="mine"))
    with pytest.raises(PlaceboragValueError, match=r"profile=Profile\(name='mine'.* must be a"):
        Scenario.from_store(own, "same text")


def test_scenario_fields_are_every_store_option():
    from placeborag import FakeVectorStore

    store = FakeVectorStore()
    assert set(Scenario.from_store(store, "q").store_options) == set(store.options)
