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


@pytest.mark.xfail(
    strict=True,
    reason="issue 27 open: the literal export (issue 24) refuses a datetime or date the filter "
    "reads, by name; writing it as a datetime literal the module imports is not done yet",
)
def test_an_exported_test_carries_every_metadata_kind_and_passes(scenario):
    source = export_pytest(scenario)
    namespace: dict = {}
    exec(compile(source, "<exported>", "exec"), namespace)
    tests = [f for name, f in namespace.items() if name.startswith("test_")]
    assert len(tests) == 1
    tests[0]()
    records = namespace["DATA"]["metadatas"]
    assert {"datetime": KINDS["datetime"], "date": KINDS["date"]}.items() <= records[0].items()
