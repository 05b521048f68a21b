"""Arguments of placeborag.explore's public functions: each bad one raises a PlaceboragError
naming the argument and what is allowed, never a bare exception from inside."""

import pytest

from placeborag import FakeVectorStore, PlaceboragTypeError, PlaceboragValueError
from placeborag._cli import main
from placeborag.explore import (
    Document,
    Scenario,
    demo_scenario,
    render_report,
)

# -- lone surrogates: a scenario is UTF-8 (its JSON file, its HTML report) ------------------


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"query": "\ud800"}, "query="),
        ({"name": "a\udfffb"}, "name="),
        ({"where": {"lang": "\ud800"}}, "where['lang']="),
        ({"where": {"$and": [{"\ud800": 1}]}}, "where['$and'][0] key="),
        ({"clusters": {"c": ["ok", "x\ud800"]}}, "clusters['c'][1]="),
    ],
)
def test_a_lone_surrogate_in_a_field_is_refused_naming_it(demo, changes, named):
    with pytest.raises(PlaceboragValueError, match="lone surrogate") as info:
        demo.replace(**changes)
    assert str(info.value).startswith(named)
    assert "at index" in str(info.value)


def test_a_lone_surrogate_in_a_document_is_refused_naming_the_document(demo):
    docs = demo.documents[:4]
    with pytest.raises(PlaceboragValueError, match=r"^documents\[4\]\.text='a\\ud800b'"):
        demo.replace(documents=(*docs, Document("x", "a\ud800b", {})))
    with pytest.raises(PlaceboragValueError, match=r"^documents\[1\]\.id="):
        Scenario(documents=[{"id": "a", "text": "t"}, {"id": "\udc00", "text": "t"}], query="q")
    with pytest.raises(PlaceboragValueError, match=r"^documents\[0\]\.metadata\['k'\]\[1\]="):
        Scenario(documents=[Document("a", "t", {"k": ["ok", "\ud800"]})], query="q")


def test_a_store_holding_a_lone_surrogate_makes_no_scenario():
    store = FakeVectorStore()
    store.upsert_many(["a", "b"], ["fine", "bad \ud800"])  # a store hashes any str
    store.refresh()
    with pytest.raises(PlaceboragValueError, match=r"^documents\[1\]\.text="):
        Scenario.from_store(store, "q")


def test_render_report_never_meets_a_lone_surrogate(demo):
    with pytest.raises(PlaceboragValueError, match="lone surrogate"):
        render_report(demo.replace(query="\ud800"))


def test_report_cli_names_a_lone_surrogate_in_the_scenario_file(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(
        '{"documents": [{"id": "a", "text": "x"}], "query": "\\ud800"}', encoding="utf-8"
    )
    out = tmp_path / "r.html"
    assert main(["report", "--out", str(out), "--scenario", str(path)]) == 1
    err = capsys.readouterr().err
    assert "query='\\ud800' holds the lone surrogate" in err
    assert not out.exists()


# -- Scenario.scaled and replace ------------------------------------------------------------


def test_scaling_a_scenario_without_documents_is_refused():
    empty = Scenario(documents=[], query="q")
    with pytest.raises(PlaceboragValueError, match=r"n=3: a scenario without documents"):
        empty.scaled(3)


def test_scaling_is_bounded():
    from placeborag.explore._scenario import MAX_SCALED_DOCUMENTS

    assert MAX_SCALED_DOCUMENTS == 1_000_000
    with pytest.raises(PlaceboragValueError, match="must be between 1 and 1,000,000 documents"):
        demo_scenario().scaled(10**400)
    with pytest.raises(PlaceboragValueError, match=r"n=1000001 must be between 1 and 1,000,000"):
        demo_scenario(MAX_SCALED_DOCUMENTS + 1)


def test_replace_names_an_unknown_field_also_beside_documents(demo):
    with pytest.raises(PlaceboragTypeError, match=r"unknown scenario field.*'foo'"):
        demo.replace(documents=(), foo=1)
    with pytest.raises(PlaceboragTypeError, match=r"unknown scenario field.*'foo'"):
        demo.replace(clusters={}, foo=1)
