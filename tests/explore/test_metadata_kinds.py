"""Every metadata kind the store allows (docs/vector-store.md, "Metadata values") works in every
view: the report, the app and its tables, a saved and loaded scenario, an exported test.

issue 27: datetime metadata, which the docs allow, crashed the report and the app with a bare
TypeError from json.dumps, and could be neither saved in a scenario nor exported.
"""

import datetime as dt
import json

import pytest

pytest.importorskip("pandas")
pytest.importorskip("plotly")

from placeborag.explore import Explorer, Scenario, demo_scenario, export_pytest, render_report

AWARE_START = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
KINDS = {
    "none": None,
    "str": "refund",
    "int": 2**70,
    "float": 0.25,
    "bool": True,
    "datetime": dt.datetime(2026, 1, 5, 12, 30),
    "aware": dt.datetime(2026, 1, 5, 12, 30, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    "date": dt.date(2026, 1, 5),
    "list": ["a", dt.date(2025, 12, 31), 3],
    "dict": {"at": dt.datetime(2025, 1, 1), "n": [1, {"deep": dt.date(2024, 2, 29)}]},
}


@pytest.fixture(scope="module")
def scenario():
    base = demo_scenario()
    documents = tuple(
        type(d)(d.id, d.text, {**d.metadata, **KINDS, "at": dt.datetime(2026, 1, 1 + i % 28)})
        for i, d in enumerate(base.documents)
    )
    return base.replace(documents=documents, where={"at": {"$gte": dt.datetime(2026, 1, 10)}})


def test_a_scenario_with_every_metadata_kind_saves_and_loads_back_equal(tmp_path, scenario):
    path = tmp_path / "s.json"
    scenario.save(path)
    loaded = Scenario.load(path)
    assert loaded == scenario
    assert loaded.documents[0].metadata["datetime"] == dt.datetime(2026, 1, 5, 12, 30)
    assert loaded.where == {"at": {"$gte": dt.datetime(2026, 1, 10)}}
    saved = json.loads(path.read_text("utf-8"))
    assert saved["documents"][0]["metadata"]["date"] == {"$date": "2026-01-05"}


def test_the_report_draws_every_metadata_kind(scenario):
    page = render_report(scenario)
    assert "placeborag-funnel" in page
    assert "{&quot;$datetime&quot;: &quot;2026-01-05T12:30:00&quot;}" in page


def test_the_app_and_its_tables_show_every_metadata_kind(scenario):
    app = Explorer(scenario, mode="output")
    assert app.error == ""
    shown = app.tables["pre"]["metadata"].iloc[0]
    assert '"datetime": {"$datetime": "2026-01-05T12:30:00"}' in shown
    assert '"aware": {"$datetime": "2026-01-05T12:30:00+02:00"}' in shown
    assert json.loads(app.controls["where"].value) == {
        "at": {"$gte": {"$datetime": "2026-01-10T00:00:00"}}
    }
    app.controls["k"].value = 3  # a redraw reads the where box back, datetime and all
    assert app.error == ""
    assert app.scenario.where == {"at": {"$gte": dt.datetime(2026, 1, 10)}}
    assert len(app.select(["en-refund-1"])) == 1


def test_an_exported_test_carries_every_metadata_kind_and_passes(scenario, tmp_path):
    # issue 27: the literal export refused a datetime or date the filter reads.
    from placeborag.explore import build_export
    from tests.explore._exported import parse

    store = scenario.store()
    export = build_export(store, scenario.query, scenario.k, scenario.where, keep_metadata=True)
    assert export.proof is not None and export.proof.ok, export.proof
    assert export.proof.outcomes["as exported"] == "passed"
    source = export.source
    assert source.count("\nimport datetime\n") == 1
    assert "tzinfo=datetime.timezone(datetime.timedelta(hours=2))" in source
    assert "datetime.date(2024, 2, 29)" in source
    module = parse(source)
    assert module["WHERE"] == {"at": {"$gte": dt.datetime(2026, 1, 10)}}
    records = store.records()
    for doc_id, _, meta in module["DOCUMENTS"]:
        assert meta == dict(records.metadata[records.position(doc_id)])
        assert {"datetime": KINDS["datetime"], "aware": KINDS["aware"]}.items() <= meta.items()
    # Run again here, as pytest would (the proof ran it under pytest); the same bytes again.
    from tests.explore._exported import run_in_process

    run_in_process(source, export.vectors, tmp_path)
    again = build_export(store, scenario.query, scenario.k, scenario.where, keep_metadata=True)
    assert again.source == source
    # Only the filter's key by default: still a datetime, still imported, still passing.
    narrow = build_export(store, scenario.query, scenario.k, scenario.where)
    assert narrow.proof is not None and narrow.proof.ok
    assert all(set(meta) == {"at"} for _, _, meta in parse(narrow.source)["DOCUMENTS"])
    plain_export = export_pytest(scenario.replace(where=None))
    assert "import datetime" not in plain_export  # imported only when the data holds one


def test_a_datetime_without_a_fixed_offset_is_refused_by_name():
    import zoneinfo

    from placeborag import FakeVectorStore, PlaceboragTypeError
    from placeborag.explore import build_export

    try:
        zone = zoneinfo.ZoneInfo("Europe/Budapest")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("no time zone data on this machine")
    store = FakeVectorStore()
    store.upsert("a", "refund policy", {"at": dt.datetime(2026, 1, 1, tzinfo=zone)})
    with pytest.raises(
        PlaceboragTypeError, match=r"the metadata of id 'a'\['at'\]=.*is not a fixed"
    ):
        build_export(store, "refund", 1, {"at": {"$gte": AWARE_START}}, prove=False)
