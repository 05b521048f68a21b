"""Fuzzing the explorer's file and command-line surfaces: scenario files, exports, the CLI."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from _fuzz import (
    FUZZ,
    FUZZ_SLOW,
    anything,
    huge_ints,
    json_values,
    result_or_error,
    texts,
    tricky_json,
)
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("pandas")
pytest.importorskip("sklearn")
pytest.importorskip("plotly")

from placeborag import PlaceboragError
from placeborag._cli import main
from placeborag.explore import (
    AnchorsDisplay,
    FilterModesDisplay,
    ProjectionDisplay,
    RankingDisplay,
    Scenario,
    anchor_geometry,
    app,
    build_export,
    demo_scenario,
    export_pytest,
    filter_mode_table,
    fit_projector,
    funnel_counts,
    project,
    render_report,
    store_from_vectors,
    store_rows,
    trace_query,
)

DEMO = demo_scenario()
SMALL = DEMO.replace(documents=DEMO.documents[:6], clusters={"refund": ["refund policy"]})
FIELDS = list(SMALL.to_dict())

field_values = st.one_of(
    json_values,
    st.integers(-(10**30), 10**30),
    st.sampled_from(
        [
            None,
            [],
            {},
            [{"id": "a"}],
            [{"id": "a", "text": "t", "metadata": None}],
            [{"id": "a", "text": "t", "colour": 1}],
            {"refund": "refund policy"},
            {"refund": [1]},
            {"lang": {"$regex": "h"}},
            "post",
            "faiss",
            0.3,
        ]
    ),
)


@FUZZ
@given(field=st.sampled_from(FIELDS), value=field_values)
def test_a_scenario_with_any_field_value_builds_a_store_or_is_refused(field, value):
    data = SMALL.to_dict()
    data[field] = value
    scenario = result_or_error(lambda: Scenario.from_dict(data))
    if isinstance(scenario, PlaceboragError):
        return
    store = result_or_error(scenario.store)
    if isinstance(store, PlaceboragError):
        return
    result_or_error(lambda: store.query(scenario.query, k=scenario.k, where=scenario.where))


@FUZZ
@given(
    raw=st.one_of(
        st.binary(max_size=80), st.builds(json.dumps, json_values).map(str.encode), tricky_json
    )
)
def test_a_scenario_file_of_any_content_loads_or_is_refused(raw):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.json"
        path.write_bytes(raw)
        result_or_error(lambda: Scenario.load(path))


@FUZZ
@given(
    metadata=st.dictionaries(texts, st.one_of(json_values, anything), max_size=3),
)
def test_saving_any_metadata_writes_a_loadable_file_or_keeps_the_old_one(metadata):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.json"
        SMALL.save(path)
        before = path.read_bytes()
        docs = (*SMALL.documents[:-1], SMALL.documents[-1].__class__("x", "t", metadata))
        scenario = result_or_error(lambda: SMALL.replace(documents=docs))
        if isinstance(scenario, PlaceboragError):  # a lone surrogate: no scenario at all
            assert "lone surrogate" in str(scenario)
            return
        outcome = result_or_error(lambda: scenario.save(path))
        if isinstance(outcome, PlaceboragError):
            assert path.read_bytes() == before
        else:
            result_or_error(lambda: Scenario.load(path))
        assert [p.name for p in Path(folder).iterdir()] == ["s.json"]


@FUZZ_SLOW
@given(
    selection=st.one_of(
        st.none(),
        st.lists(st.sampled_from([d.id for d in SMALL.documents] + ["nope", ""]), max_size=4),
        st.lists(texts, max_size=2),
    ),
    changes=st.fixed_dictionaries(
        {},
        optional={
            "k": st.one_of(st.integers(-2, 12), anything),
            "where": st.one_of(st.none(), json_values),
            "query": st.one_of(texts, anything),
        },
    ),
)
def test_export_of_any_selection_and_changes_is_source_or_an_error(selection, changes):
    scenario = result_or_error(lambda: SMALL.replace(**changes))
    if isinstance(scenario, PlaceboragError):
        return
    source = result_or_error(lambda: export_pytest(scenario, selection=selection))
    if not isinstance(source, PlaceboragError):
        compile(source, "exported.py", "exec")


cli_words = st.sampled_from(
    ["report", "--out", "--scenario", "-h", "--help", "bogus", "", "r.html", "s.json", "dir/"]
    + ["--projection", "pca", "PCA", "tsne"]  # (not "umap": its first fit compiles for seconds)
)


@FUZZ_SLOW
@given(argv=st.lists(st.one_of(cli_words, texts), max_size=5))
def test_the_cli_exits_cleanly_on_any_arguments(argv, capsys):
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "s.json").write_text(json.dumps({"documents": [], "query": 1}))
        (Path(folder) / "dir").mkdir()
        args = [str(Path(folder) / a) if a in ("r.html", "s.json", "dir/") else a for a in argv]
        # The demo report is slow to render: a CLI call that would write one writes the small
        # scenario's instead (the flags are what is under test).
        if "--scenario" not in args:
            args += ["--scenario", str(Path(folder) / "small.json")]
            SMALL.save(Path(folder) / "small.json")
        try:
            code = main(args)
        except SystemExit as exit_:  # argparse: --help exits 0, a usage error exits 2
            assert exit_.code in (0, 2)
        else:
            assert code in (0, 1)
    capsys.readouterr()


@FUZZ
@given(selection=st.sampled_from([object(), 5, np.array([1.0, 2.0]), [[]], [None]]))
def test_export_refuses_a_selection_that_is_not_a_list_of_ids(selection):
    result_or_error(lambda: export_pytest(SMALL, selection=selection))


@FUZZ
@given(path=st.one_of(texts.map(lambda t: t.replace("/", "")), anything))
def test_a_scenario_path_of_any_kind_is_used_or_refused(path):
    with tempfile.TemporaryDirectory() as folder:
        previous = Path.cwd()
        os.chdir(folder)
        try:
            if not isinstance(result_or_error(lambda: SMALL.save(path)), PlaceboragError):
                assert Scenario.load(path) == SMALL
            else:
                assert list(Path(folder).iterdir()) == []
        finally:
            os.chdir(previous)


SMALL_STORE = SMALL.store()
# Any name but the one that starts a UMAP fit (tested in tests/explore/test_umap.py).
projection_names = st.one_of(
    texts, anything, st.sampled_from(["pca", "PCA", " pca", "umap ", "UMAP", "t-sne", ""])
).filter(lambda value: not (isinstance(value, str) and value == "umap"))  # not an array's ==


@FUZZ
@given(name=projection_names, n_components=st.one_of(st.sampled_from([2, 3]), anything))
def test_any_projection_name_projects_or_is_refused(name, n_components):
    out = result_or_error(
        lambda: project(
            SMALL_STORE, SMALL.query, SMALL.k, projection=name, n_components=n_components
        )
    )
    if not isinstance(out, PlaceboragError):
        assert name == "pca" and n_components in (2, 3)
        assert out.coords.shape == (len(SMALL.documents), n_components)


# -- every public function, any one argument replaced by a hostile value ---------------------

_VECTORS = np.random.default_rng(0).normal(size=(4, 3))
_IDS = ["a", "b", "c", "d"]
_CLUSTERS = {"refund": ["refund policy", "money back"]}


def _trace():
    return trace_query(SMALL_STORE, SMALL.query, 2)


# name -> (call with keyword arguments, its valid keyword arguments). One of them is replaced.
PUBLIC_CALLS = {
    "store_rows": (store_rows, lambda: {"store": SMALL_STORE}),
    "trace_query": (
        trace_query,
        lambda: {"store": SMALL_STORE, "text": SMALL.query, "k": 2, "where": None, "rows": None},
    ),
    "funnel_counts": (funnel_counts, lambda: {"trace": _trace()}),
    "filter_mode_table": (
        filter_mode_table,
        lambda: {"trace": _trace(), "rows": store_rows(SMALL_STORE)},
    ),
    "project": (
        project,
        lambda: {
            "store": SMALL_STORE,
            "query": SMALL.query,
            "k": 2,
            "where": None,
            "color_by": "cluster",
            "rows": None,
            "projector": None,
            "trace": None,
            "hover": None,
            "labels": None,
            "coords": None,
        },
    ),
    "fit_projector": (fit_projector, lambda: {"vectors": _VECTORS, "n_components": 2}),
    "anchor_geometry": (
        anchor_geometry,
        lambda: {
            "clusters": _CLUSTERS,
            "texts": ["refund policy today"],
            "dimensions": (16,),
            "model_name": "m",
            "cluster_spread": 0.5,
            "cluster_match": "substring",
            "max_pairs": 2,
            "max_members": 3,
        },
    ),
    "store_from_vectors": (
        store_from_vectors,
        lambda: {
            "vectors": _VECTORS,
            "ids": _IDS,
            "texts": ["t"] * 4,
            "metadatas": None,
            "queries": {"q": [1.0, 2.0, 3.0]},
        },
    ),
    "build_export": (
        build_export,
        lambda: {
            "store": SMALL_STORE,
            "query": SMALL.query,
            "k": 2,
            "where": None,
            "selection": None,
            "name": "n",
            "prove": False,
        },
    ),
    "export_pytest": (export_pytest, lambda: {"scenario": SMALL, "selection": None}),
    "ProjectionDisplay.from_store": (
        ProjectionDisplay.from_store,
        lambda: {"store": SMALL_STORE, "query": SMALL.query, "k": 2, "color_by": "cluster"},
    ),
    "RankingDisplay": (RankingDisplay, lambda: {"projection": project(SMALL_STORE, "refund")}),
    "AnchorsDisplay.from_scenario": (
        AnchorsDisplay.from_scenario,
        lambda: {"scenario": SMALL, "dimensions": (16,)},
    ),
    "FilterModesDisplay.from_stores": (
        FilterModesDisplay.from_stores,
        lambda: {
            "stores": {"pre": SMALL_STORE, "post": SMALL_STORE},
            "query": SMALL.query,
            "k": 2,
            "traces": None,
        },
    ),
    "Scenario.scaled": (SMALL.scaled, lambda: {"n": 8}),
    "Scenario.replace": (SMALL.replace, lambda: {"query": "q", "k": 2}),
    "app": (app, lambda: {"scenario": SMALL, "mode": "output", "max_k": 10}),
    "render_report": (render_report, lambda: {"scenario": SMALL, "projection": "pca"}),
}
CALL_ARGUMENTS = [(name, key) for name, (_, valid) in PUBLIC_CALLS.items() for key in valid()]

hostile = st.one_of(
    anything,
    huge_ints,
    texts,
    st.sampled_from([True, -1, 0, 10**400, [], {}, (), [[]], [1, "a"], np.array([[np.nan]])]),
)


@FUZZ_SLOW
@given(where=st.sampled_from(CALL_ARGUMENTS), value=hostile)
def test_every_public_function_takes_any_argument_or_refuses_it_by_name(where, value):
    name, key = where
    call, valid = PUBLIC_CALLS[name]
    arguments = {**valid(), key: value}
    out = result_or_error(lambda: call(**arguments))
    if isinstance(out, PlaceboragError):
        assert len(str(out)) < 2_000  # values are shown short, however long they are
