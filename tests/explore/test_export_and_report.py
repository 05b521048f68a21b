import json
import os
import pathlib
import re
import subprocess
import sys
import warnings

import pytest

pytest.importorskip("pandas")
pytest.importorskip("sklearn")
pytest.importorskip("plotly")

from _exported import parse

import placeborag
from placeborag._cli import main
from placeborag.explore import FIGURE_IDS, Document, Scenario, export_pytest, render_report

pytest_plugins = ["pytester"]


def _run_pytest(tmp_path, source):
    (tmp_path / "test_exported.py").write_text(source, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    # The exported module imports the placeborag under test, not an installed one.
    root = str(pathlib.Path(placeborag.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"filter_mode": "post", "profile": "qdrant"},
        {"recall": 0.5, "where": {"year": {"$gte": 2024}}, "k": 7},
    ],
)
def test_exported_module_runs_green(tmp_path, demo, changes):
    source = export_pytest(demo.replace(**changes))
    result = _run_pytest(tmp_path, source)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout and "failed" not in result.stdout
    # Nothing but pytest's own folders appears beside the module.
    made = [p.name for p in tmp_path.iterdir() if p.name not in (".benchmarks", "__pycache__")]
    assert made == ["test_exported.py"]


def test_exported_module_asserts_the_ranking_the_store_gives(demo):
    module = parse(export_pytest(demo))
    matches = demo.store().query(demo.query, demo.k, demo.where)
    assert list(module["expected"].values()) == [[m.id for m in matches]]


def test_export_of_a_selection_keeps_only_those_documents(demo):
    chosen = ["hu-refund-2", "en-refund-1", "hu-refund-1"]
    documents = parse(export_pytest(demo, selection=chosen))["DOCUMENTS"]
    order = [d.id for d in demo.documents]
    assert [d[0] for d in documents] == sorted(chosen, key=order.index)
    assert [d[1] for d in documents] == [demo.documents[order.index(d[0])].text for d in documents]


def test_report_cli_writes_a_self_contained_page(tmp_path, capsys):
    out = tmp_path / "report.html"
    assert main(["report", "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]+src=[\"']https?://", page)
    for div_id in FIGURE_IDS:
        assert f'id="{div_id}"' in page
    assert page.count("plotly.js v") >= 1
    assert "placeborag-table" in page


def test_report_cli_reads_a_scenario_file(tmp_path, demo):
    path = tmp_path / "s.json"
    demo.replace(query="delivery times", name="shipping check").save(path)
    out = tmp_path / "r.html"
    assert main(["report", "--out", str(out), "--scenario", str(path)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "shipping check" in page and "delivery times" in page


def test_report_cli_reports_a_bad_scenario_file(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text('{"documents": [], "query": "q", "bogus": 1}', encoding="utf-8")
    assert main(["report", "--out", str(tmp_path / "r.html"), "--scenario", str(path)]) == 1
    assert "unknown scenario field(s) 'bogus'" in capsys.readouterr().err


# -- issue 13: a failed report or save never damages the file it would replace --------------


def test_a_failed_report_leaves_the_old_page_whole(tmp_path, demo, capsys):
    # issue 13 item 6: the page was opened (truncated) before the report was rendered.
    out = tmp_path / "keep.html"
    out.write_text("<p>the old report</p>", encoding="utf-8")
    bad = tmp_path / "bad.json"
    demo.replace(where={"lang": {"$regex": "h.*"}}).save(bad)
    assert main(["report", "--out", str(out), "--scenario", str(bad)]) == 1
    assert "unknown operator '$regex'" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "<p>the old report</p>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "keep.html"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("clusters", None, None),
        ("name", 5, "name=5 must be a str"),
        ("k", "5", "k='5' must be an int, not str"),
        ("documents", [{"id": "a"}], "documents[0]={'id': 'a'} has no text"),
        ("clusters", {"refund": "refund policy"}, "clusters['refund']='refund policy' must be"),
    ],
    ids=["clusters-null", "name-int", "k-str", "document-without-text", "cluster-str"],
)
def test_the_report_cli_reports_a_scenario_field_of_the_wrong_type(
    tmp_path, demo, capsys, field, value, message
):
    # issue 13 item 10: `clusters: null` and `name: 5` ended in tracebacks.
    data = demo.to_dict()
    data[field] = value
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    code = main(["report", "--out", str(tmp_path / "r.html"), "--scenario", str(path)])
    if message is None:  # null clusters mean no clusters: a correct report
        assert code == 0
        assert "No clusters are declared." in (tmp_path / "r.html").read_text(encoding="utf-8")
    else:
        assert code == 1
        assert message in capsys.readouterr().err
        assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(
    "texts", [["refund policy"], ["refund policy", "refund policy"]], ids=["one", "two-same"]
)
def test_a_one_point_report_has_no_numpy_warnings_and_no_empty_axes(texts):
    # issue 13 item 10: RuntimeWarnings from the PCA of one point, "0.0% of variance" axes.
    docs = [Document(f"d{i}", text, {"lang": "en"}) for i, text in enumerate(texts)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        page = render_report(Scenario(documents=docs, query="refund"))
    assert "of variance" not in page
    assert page.count("A projection needs at least two documents with different vectors.") == 2


@pytest.mark.parametrize(
    ("out", "reason"),
    [
        ("adir", "it is a directory"),
        ("missingdir/x.html", "the folder 'missingdir' does not exist"),
    ],
)
def test_the_report_cli_names_the_path_it_cannot_write(tmp_path, monkeypatch, capsys, out, reason):
    (tmp_path / "adir").mkdir()
    monkeypatch.chdir(tmp_path)

    assert main(["report", "--out", out]) == 1

    assert (
        capsys.readouterr().err == f"placeborag report: cannot write report to {out!r}: {reason}\n"
    )
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["adir"]


def test_python_dash_m_placeborag_runs_the_console_script():
    done = subprocess.run(
        [sys.executable, "-m", "placeborag", "--help"], capture_output=True, text=True, check=False
    )

    assert done.returncode == 0
    assert done.stdout.startswith("usage: placeborag ")
    assert "report" in done.stdout
    assert "``" not in done.stdout  # help text, not the module's reST docstring
