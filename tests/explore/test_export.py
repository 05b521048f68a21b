"""The explorer's export: a pytest module that is inert data and asserts what the screen shows."""

from __future__ import annotations

import ast
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import placeborag
from placeborag import (
    FakeEmbedder,
    FakeVectorStore,
    PlaceboragTypeError,
    PlaceboragValueError,
    get_profile,
)
from placeborag.explore import Document, export_pytest
from placeborag.explore._export import Export, _float32_rows, _plain, build_export
from placeborag.explore._vectors import store_from_vectors

HOSTILE = [
    '"""',
    "'''",
    '""" + __import__("os").system("x") + """',
    '""" + str(__import__("pathlib").Path("pwned.txt").write_text("x")) * 0 + """',
    "\\",
    "\\n",
    "\n",
    "\r\n",
    "# comment",
    "{name}",
    "%s",
    "'",
    '"',
    "\x00",
    "\u2028",
    "\ud800",
    "\udfff",
    "é",
    "日本",
    "🎉",
    "import os; os.remove('x')",
    "${x}",
    "</script>",
]


def _hostile_text(min_size: int = 0) -> st.SearchStrategy[str]:
    pieces = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=4))
    return (
        st.lists(pieces, min_size=1, max_size=4).map("".join).filter(lambda s: len(s) >= min_size)
    )


_KEY = _hostile_text(1).filter(lambda s: not s.startswith("$"))
_VALUE = st.one_of(
    _hostile_text(),
    st.integers(-(2**63), 2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.floats(-1e6, 1e6).map(np.float64),
    _hostile_text().map(np.str_),
)


@st.composite
def _exports(draw):
    ids = draw(st.lists(_hostile_text(1), min_size=1, max_size=6, unique=True))
    texts = [draw(_hostile_text()) for _ in ids]
    metas = [draw(st.none() | st.dictionaries(_KEY, _VALUE, max_size=3)) for _ in ids]
    query = draw(_hostile_text())
    options = {
        "profile": draw(st.sampled_from(["chroma", "qdrant", "faiss", "pgvector", "weaviate"])),
        "filter_mode": draw(st.sampled_from([None, "pre", "post"])),
        "recall": draw(st.sampled_from([1.0, 0.5])),
    }
    dimensions = draw(st.sampled_from([2, 8, 32]))
    if draw(st.booleans()):
        store = FakeVectorStore(embedder=FakeEmbedder(dimensions=dimensions), **options)
        store.upsert_many(ids, texts, metas)
    else:  # the user's own vectors (a seeded Generator: the same example, the same vectors)
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        vectors = rng.normal(size=(len(ids), dimensions))
        queries = {query: rng.normal(size=dimensions)}
        store = store_from_vectors(vectors, ids, texts, metas, queries=queries, **options)
    where = None
    keyed = [m for m in metas if m]
    if keyed and draw(st.booleans()):
        key, value = next(iter(keyed[0].items()))
        where = {key: value}
    subset = draw(st.none() | st.lists(st.sampled_from(ids), min_size=1, unique=True))
    return {
        "store": store,
        "query": query,
        "k": draw(st.integers(1, 4)),
        "where": where,
        "selection": subset,
        "name": draw(_hostile_text()),
    }


_SURROGATE = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def records_strings(store):
    records = store.records()
    out = [*records.ids, *records.texts]
    for meta in records.metadata:
        out += [str(x) for item in meta.items() for x in item]
    return out


def _data(source):
    call = next(
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "loads"
    )
    return json.loads(ast.literal_eval(call.args[0]))


def _skeleton(source):
    """The module with its DATA document and test name blanked: the same for every export."""
    source = re.sub(r"DATA = json\.loads\(\n.*?\n\)\n", "DATA = ...\n", source, flags=re.S)
    return re.sub(r"def test_ranking_for_[a-z0-9_]+\(\)", "def test_()", source)


_BENIGN = _skeleton(
    export_pytest(
        placeborag.explore.Scenario(documents=(Document("a", "alpha"),), query="alpha", k=1)
    )
)


def _run_in_process(source):
    """Compile and run the module's test function in an empty temporary folder."""
    code = compile(source, "<exported>", "exec")
    namespace: dict = {"__name__": "exported"}
    before = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            exec(code, namespace)
            tests = [v for k, v in namespace.items() if k.startswith("test_")]
            assert len(tests) == 1
            tests[0]()
        finally:
            os.chdir(before)
        assert os.listdir(folder) == []


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=_exports())
def test_an_export_of_hostile_data_is_inert_and_passes(case):
    store = case["store"]
    try:
        export = build_export(
            store,
            case["query"],
            case["k"],
            case["where"],
            selection=case["selection"],
            name=case["name"],
        )
    except placeborag.FilterError:
        return  # a where the store itself refuses (not the exporter's business)
    except PlaceboragValueError as error:
        # The one string JSON cannot carry: a surrogate pair written as two code points.
        assert "surrogate pair" in str(error)
        values = [case["name"], case["query"], *records_strings(store)]
        assert any(_SURROGATE.search(v) for v in values)
        return
    source = export.source
    assert source.isascii()
    # Every user value sits in DATA; the rest of the module is the same for every export.
    assert _skeleton(source) == _BENIGN
    data = _data(source)
    assert data["name"] == case["name"] and data["query"] == case["query"]
    assert tuple(data["ids"]) == export.ids
    records = store.records()
    for doc_id, text, meta in zip(data["ids"], data["texts"], data["metadatas"]):
        position = records.position(doc_id)
        assert text == records.texts[position]
        assert (meta or {}) == dict(records.metadata[position])
    assert data["expected_ids"] == [m.id for m in export.preview]
    assert data["expected_scores"] == [m.score for m in export.preview]
    _run_in_process(source)
    whole = case["selection"] is not None and set(case["selection"]) == set(records.ids)
    if whole:
        # The whole corpus: the preview is what the store on screen returns (a vector query
        # named by its text hashes what the text query hashes, recall included).
        matches = store.query(case["query"], case["k"], case["where"])
        assert list(export.preview) == matches


def test_the_issue_s_hostile_name_and_query_write_nothing(tmp_path, monkeypatch, demo):
    name = '""" + str(__import__("pathlib").Path("pwned.txt").write_text("x")) * 0 + """'
    scenario = demo.replace(name=name, query='what does """ mean')
    source = export_pytest(scenario)
    monkeypatch.chdir(tmp_path)
    _run_in_process(source)
    assert not (tmp_path / "pwned.txt").exists()
    assert "pwned" not in source.split("DATA = json.loads(")[0]
    assert re.search(r"^def test_ranking_for_what_does_mean\(\):$", source, flags=re.M)


def test_numpy_scalars_become_plain_values(demo):
    meta = {"price": np.float64(9.5), "tag": np.str_("x\x00")}  # numpy's repr shows 'x'
    doc = Document("np", "refund policy numbers", meta)
    scenario = demo.replace(documents=(*demo.documents, doc), where={"lang": "en"})
    source = export_pytest(scenario, selection=["np", "en-refund-1"])
    assert "np.float64" not in source and "np.str_" not in source
    data = _data(source)
    meta = data["metadatas"][data["ids"].index("np")]
    assert meta == {"price": 9.5, "tag": "x\x00"}
    assert type(meta["price"]) is float
    _run_in_process(source)


@settings(max_examples=200, deadline=None)
@given(bits=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=16))
def test_exported_float32_rows_read_back_bit_for_bit(bits):
    row = np.array(bits, dtype=np.uint32).view(np.float32)
    row = row[np.isfinite(row)][None, :]
    back = np.asarray(_float32_rows(row), dtype=np.float32).reshape(row.shape)
    assert back.view(np.uint32).tobytes() == row.view(np.uint32).tobytes()


def test_a_surrogate_pair_of_two_code_points_is_refused_not_merged(demo):
    # A store takes any str (a Scenario refuses lone surrogates, so the store is used here).
    store = demo.store()
    store.upsert("pair", "x", {"tag": "\ud83c\udf89"})
    store.refresh()
    with pytest.raises(PlaceboragValueError, match=r"metadata of id 'pair'\['tag'\].*surrogate"):
        build_export(store, demo.query, demo.k, selection=["pair"])
    with pytest.raises(PlaceboragValueError, match=r"query: .*surrogate pair"):
        build_export(store, "\ud800\udc00", 5)
    lone = build_export(store, "\udc00 then \ud800", 5).source  # lone ones are fine
    assert _data(lone)["query"] == "\udc00 then \ud800"
    with pytest.raises(PlaceboragValueError, match="lone surrogate"):
        demo.replace(query="\udc00 then \ud800")  # a scenario is UTF-8: refused when built


def test_a_value_json_cannot_hold_is_named_by_its_key():
    with pytest.raises(PlaceboragValueError, match=r"\['price'\].*not finite"):
        _plain({"price": np.float64("inf")}, "metadata of id 'a'")
    with pytest.raises(PlaceboragTypeError, match=r"\['when'\].*set"):
        _plain({"when": {2024}}, "metadata of id 'a'")
    import datetime

    # A date is exported tagged, as a scenario file holds it (issue 27).
    assert _plain({"when": datetime.date(2024, 1, 1)}, "x") == {"when": {"$date": "2024-01-01"}}
    assert _plain({"n": np.int64(3), "b": np.bool_(True), "v": np.arange(2)}, "x") == {
        "n": 3,
        "b": True,
        "v": [0, 1],
    }


# -- the corpus ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selection", "error", "message"),
    [
        ("hu-refund-1", PlaceboragTypeError, "must be a list of ids, not str"),
        (["hu-refund-1", "hu-refnd-2"], PlaceboragValueError, "did you mean 'hu-refund-2'"),
        ([], PlaceboragValueError, "at least one id"),
        (["hu-refund-1", 3], PlaceboragTypeError, r"selection\[1\]=3 must be a str"),
        ({"hu-refund-1": 1}, PlaceboragTypeError, "must be a list of ids"),
    ],
)
def test_a_bad_selection_raises(demo, selection, error, message):
    with pytest.raises(error, match=message):
        export_pytest(demo, selection=selection)


def test_a_profile_object_is_refused_with_a_clear_error(demo):
    store = FakeVectorStore(embedder=demo.embedder(), profile=get_profile("qdrant"))
    store.upsert("a", "refund policy")
    with pytest.raises(PlaceboragTypeError, match=r"Profile object.*profile=.<name>."):
        build_export(store, "refund", 1)


def test_no_selection_exports_the_window_its_ties_and_k_neighbours():
    texts = ["refund policy"] * 3 + [f"note {i} about shipping" for i in range(40)]
    store = FakeVectorStore(profile="chroma")
    store.upsert_many([f"d{i:02d}" for i in range(len(texts))], texts)
    export = build_export(store, "refund policy", 2)
    trace = store.trace("refund policy", 2)
    (tie,) = trace.ties
    assert tie.ids == ("d00", "d01", "d02") and tie.kept == ("d00", "d01")
    assert set(trace.top_k) | set(tie.ids) <= set(export.ids)
    # The rest: the next 2 by score, not the whole corpus.
    below = [i for i in export.ids if i not in tie.ids]
    best = sorted(
        (p for p, i in enumerate(trace.ids) if i not in tie.ids),
        key=lambda p: (trace.score[p], p),
    )
    assert below == sorted(trace.ids[p] for p in best[:2])
    assert len(export.ids) == 5
    assert [m.id for m in export.preview] == ["d00", "d01"]


def test_the_exported_ids_follow_the_store_s_insertion_order(demo):
    export = build_export(demo.store(), demo.query, demo.k, demo.where)
    order = [d.id for d in demo.documents]
    assert list(export.ids) == sorted(export.ids, key=order.index)
    assert isinstance(export, Export)


# -- what the screen shows -------------------------------------------------------------------


def test_post_mode_exports_what_post_mode_returns_not_the_cut(demo):
    scenario = demo.replace(filter_mode="post", where={"lang": "hu"}, k=3)
    store = scenario.store()
    screen = store.query(scenario.query, scenario.k, scenario.where)
    trace = store.trace(scenario.query, scenario.k, scenario.where)
    assert [m.id for m in screen] != list(trace.top_k)[: scenario.k]  # the case that matters
    export = build_export(store, scenario.query, scenario.k, scenario.where)
    assert list(export.preview) == screen
    assert _data(export.source)["expected_ids"] == [m.id for m in screen]


def test_a_selection_in_post_mode_asserts_the_preview_of_that_corpus(demo):
    scenario = demo.replace(filter_mode="post", where={"lang": "hu"}, k=2)
    chosen = ["hu-refund-1", "hu-refund-4", "hu-refund-2"]
    export = build_export(scenario.store(), scenario.query, 2, scenario.where, selection=chosen)
    alone = scenario.replace(documents=tuple(d for d in demo.documents if d.id in chosen))
    expected = alone.store().query(scenario.query, 2, scenario.where)
    assert list(export.preview) == expected
    assert _data(export.source)["expected_ids"] == [m.id for m in expected]
    _run_in_process(export.source)


@pytest.mark.parametrize(
    "options",
    [
        {"profile": "faiss", "pad_missing": True},
        {"profile": "qdrant", "metric": "l2"},
        {"profile": "chroma", "tie_order": "id", "recall": 0.7, "visibility": "manual"},
        {"profile": "weaviate", "filter_semantics": "engine", "orphans": 0.5, "churn": 0.25},
    ],
)
def test_every_store_option_reaches_the_module(demo, options):
    store = FakeVectorStore(embedder=demo.embedder(), **options)
    store.upsert_many([d.id for d in demo.documents], [d.text for d in demo.documents], None)
    store.refresh()
    export = build_export(store, demo.query, 4, selection=list(store.ids))
    assert _data(export.source)["store"] == store.options
    assert list(export.preview) == store.query(demo.query, 4)
    _run_in_process(export.source)


# -- the user's own vectors ------------------------------------------------------------------


def _user_vector_store(**options):
    rng = np.random.default_rng(20261130)
    vectors = rng.normal(size=(14, 24))
    query = rng.normal(size=24)
    ids = [f"v{i:02d}" for i in range(14)]
    texts = [f"text {i % 5}" for i in range(14)]  # repeated texts, distinct vectors
    store = store_from_vectors(vectors, ids, texts, queries={"the query": query}, **options)
    return store, vectors, query


@pytest.mark.parametrize("profile", ["qdrant", "chroma", "faiss"])
def test_an_export_over_user_vectors_asserts_those_vectors_ranking(profile):
    store, vectors, query = _user_vector_store(profile=profile)
    export = build_export(store, "the query", 4, selection=list(store.ids))
    # The ranking of the vectors themselves, computed here with numpy.
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = unit @ (query / np.linalg.norm(query))
    expected = [f"v{i:02d}" for i in np.argsort(-cosines, kind="stable")[:4]]
    assert [m.id for m in export.preview] == expected
    assert list(export.preview) == store.query("the query", 4)
    data = _data(export.source)
    assert data["embedder"] is None and "placebo-embed" not in export.source
    assert np.array_equal(np.asarray(data["vectors"], dtype=np.float32), store.records().vectors)
    _run_in_process(export.source)


def test_a_default_export_over_user_vectors_passes_under_pytest(tmp_path):
    store, _, _ = _user_vector_store(profile="qdrant")
    export = build_export(store, "the query", 3, name="user vectors")
    assert [m.id for m in export.preview] == [m.id for m in store.query("the query", 3)]
    result = _run_pytest(tmp_path, export.source)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_a_hostile_export_passes_under_pytest(tmp_path, demo):
    doc = Document('x"""y', '""" + __import__("os").system("x") + """', {"k\n": "\\"})
    scenario = demo.replace(
        documents=(*demo.documents, doc),
        name="'''\"\"\"",
        query='refund """ policy',
        where={"lang": {"$in": ["hu", "en"]}},
    )
    source = export_pytest(scenario, selection=['x"""y', "hu-refund-1", "en-refund-2"])
    result = _run_pytest(tmp_path, source)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
    made = [p.name for p in tmp_path.iterdir() if p.name not in (".benchmarks", "__pycache__")]
    assert made == ["test_exported.py"]


def _run_pytest(tmp_path, source):
    (tmp_path / "test_exported.py").write_text(source, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
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


# -- the shipped MiniLM recording --------------------------------------------------------------


def test_an_export_over_a_replay_recording_asserts_the_recorded_ranking():
    from placeborag import load_demo_recording

    recording = load_demo_recording()
    store = FakeVectorStore(embedder=recording.embedder(), profile="qdrant")
    store.upsert_many(
        list(recording.document_ids),
        list(recording.document_texts),
        list(recording.document_metadata),
    )
    query = recording.query_texts[0]
    export = build_export(store, query, 3)
    expected = recording.query_metadata[0]["expected_top3"]
    assert [m.id for m in export.preview] == list(expected)
    assert list(export.preview) == store.query(query, 3)
    assert "placebo-embed" not in export.source
    _run_in_process(export.source)


def test_a_post_filter_that_returns_nothing_exports_a_test_of_nothing(tmp_path):
    from placeborag import load_demo_recording

    recording = load_demo_recording()
    store = store_from_vectors(
        recording.document_vectors,
        list(recording.document_ids),
        list(recording.document_texts),
        list(recording.document_metadata),
        queries=dict(zip(recording.query_texts, recording.query_vectors)),
        profile="qdrant",
        filter_mode="post",
    )
    query = recording.query_texts[0]
    assert store.query(query, 2, {"lang": "de"}) == []  # what the screen shows: 0 returned
    export = build_export(store, query, 2, {"lang": "de"})
    assert export.preview == ()
    assert _data(export.source)["expected_ids"] == []
    assert _data(export.source)["embedder"] is None
    result = _run_pytest(tmp_path, export.source)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("mode", "where", "k"),
    [("post", {"tier": "internal", "lang": "hu"}, 3), ("pre", {"lang": "hu"}, 5)],
)
def test_a_default_export_fails_when_its_filter_mode_is_flipped(tmp_path, demo, mode, where, k):
    scenario = demo.replace(filter_mode=mode, where=where, k=k)
    store = scenario.store()
    flipped = "pre" if mode == "post" else "post"
    other = [m.id for m in scenario.store(filter_mode=flipped).query(scenario.query, k, where)]
    source = export_pytest(scenario)
    assert set(other) <= set(_data(source)["ids"])  # what the other mode would return
    assert _data(source)["expected_ids"] == [m.id for m in store.query(scenario.query, k, where)]
    passed = _run_pytest(tmp_path, source)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    # The same module with the filter mode flipped must fail: it asserts what decided it.
    flip = f'\nDATA["store"]["filter_mode"] = {flipped!r}\n'
    failed = _run_pytest(tmp_path, source + flip)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "1 failed" in failed.stdout
