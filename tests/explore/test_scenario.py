import pytest

pytest.importorskip("pandas")

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
