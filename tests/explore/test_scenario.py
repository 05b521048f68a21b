import json
import os

import pytest

pytest.importorskip("pandas")

from _exported import parse

from placeborag import PlaceboragTypeError, PlaceboragValueError, get_profile
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
        {"query_log": None},
        {"query_log": 0},
    ],
    ids=["id", "reverse", "shuffle", "pad", "orphans", "log-all", "log-none"],
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
    for name, value in options.items():  # every store the views build has the option
        assert loaded.store().options[name] == value
        assert explorer.scenario.store().options[name] == value
        # written out, unless it is the profile's own value (faiss pads on its own)
        written = module["store_kwargs"]
        profile = get_profile(written["profile"])
        assert written.get(name, getattr(profile, name, None)) == value


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


# -- an untrusted scenario file: kind and size before reading, memory bounded (issue 27) ----


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
def test_a_fifo_as_a_scenario_file_is_refused_without_blocking(tmp_path):
    from _guards import no_hang

    fifo = tmp_path / "s.json"
    os.mkfifo(fifo)
    with no_hang(), pytest.raises(PlaceboragValueError) as excinfo:
        Scenario.load(fifo)
    assert excinfo.value.args == (
        f"scenario file {str(fifo)!r} is a named pipe (FIFO); placeborag reads regular files only",
    )


def test_a_scenario_file_over_the_byte_limit_is_refused_before_reading(tmp_path, demo):
    path = tmp_path / "s.json"
    demo.save(path)
    size = path.stat().st_size
    assert Scenario.load(path, max_bytes=size) == demo
    with pytest.raises(PlaceboragValueError) as excinfo:
        Scenario.load(path, max_bytes=size - 1)
    assert excinfo.value.args == (
        f"scenario file {str(path)!r} holds {size:,} bytes, more than the limit of "
        f"{size - 1:,}; Scenario.load(path, max_bytes=) reads larger files (268,435,456 by "
        "default)",
    )


def _huge_scenario_file(tmp_path):
    """1.1 MB asking for 20,000 documents at 65,536 dimensions: 4.9 GiB of vectors."""
    docs = [{"id": f"d{i}", "text": f"t{i}", "metadata": {}} for i in range(20_000)]
    path = tmp_path / "huge.json"
    path.write_text(
        json.dumps({"documents": docs, "query": "t1", "dimensions": 65_536}), encoding="utf-8"
    )
    return path


def test_a_small_scenario_file_asking_for_a_huge_store_is_refused_before_it_is_built(tmp_path):
    # issue 27: a 1.1 MB scenario file made the report allocate 4.9 GiB.
    path = _huge_scenario_file(tmp_path)
    with pytest.raises(PlaceboragValueError) as excinfo:
        Scenario.load(path)
    assert excinfo.value.args == (
        f"scenario file {str(path)!r} asks for 20,000 documents x 65,536 dimensions = "
        "1,310,720,000 vector values, more than the limit of 134,217,728; "
        "Scenario.load(path, max_values=) loads larger stores (134,217,728 by default)",
    )
    assert len(Scenario.load(path, max_values=20_000 * 65_536).documents) == 20_000


def test_the_cli_refuses_a_huge_scenario_and_prints_no_traceback(tmp_path, capsys, monkeypatch):
    from placeborag._cli import main
    from placeborag.explore import _report

    def never(*args, **kwargs):  # fail, rather than allocate gigabytes, where it is not refused
        raise AssertionError("the report was built from a scenario over the limit")

    monkeypatch.setattr(_report, "render_report", never)
    out = tmp_path / "r.html"
    assert (
        main(["report", "--out", str(out), "--scenario", str(_huge_scenario_file(tmp_path))]) == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("placeborag report: scenario file ")
    assert "more than the limit" in err and "Traceback" not in err
    assert not out.exists()


def test_the_cli_says_so_when_memory_runs_out_and_prints_no_traceback(
    tmp_path, capsys, monkeypatch
):
    # issue 27: under a memory limit the CLI printed a traceback.
    from placeborag._cli import main
    from placeborag.explore import _report

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(_report, "render_report", exhausted)
    out = tmp_path / "r.html"
    assert main(["report", "--out", str(out)]) == 1
    assert capsys.readouterr().err == (
        "placeborag report: ran out of memory building the report from the demo scenario; "
        "nothing was written. A smaller scenario (fewer documents or dimensions) fits\n"
    )
    assert not out.exists()


def test_a_scaled_scenario_is_the_same_knowledge_base_as_before_it_was_made_faster():
    """Scenario.scaled builds its variants from checked parts without checking each again:
    the documents must stay exactly those the per-document construction made (the digest of
    demo_scenario(30000) before that change)."""
    import hashlib

    scaled = demo_scenario(30_000)
    body = repr([(d.id, d.text, sorted(d.metadata.items())) for d in scaled.documents])
    digest = hashlib.sha256(body.encode()).hexdigest()
    assert digest == "e7e69a3e460a118f35b78a412188c0034ca5d5b08c1eba93320ed09a0401cffe"
    assert scaled.documents[-1] == Document(
        scaled.documents[-1].id, scaled.documents[-1].text, scaled.documents[-1].metadata
    )
    assert scaled.replace(k=3).documents is scaled.documents  # checked once, kept
