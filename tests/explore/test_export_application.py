"""The export on an application's own data: the recording pinned whole, names that cannot
collide, adapter stores exported as texts with the document's own text and readable ids, and a
test that calls the application's code."""

from __future__ import annotations

import ast
import json
import keyword
import pathlib
import sys
import tempfile
import uuid

import numpy as np
import pytest
from _exported import parse, ruff_check, run_in_process, run_pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placeborag import FakeEmbedder, FakeVectorStore, PlaceboragTypeError, PlaceboragValueError
from placeborag.explore import app, build_export, demo_scenario, filter_mode_table, store_rows
from placeborag.explore._export_names import fixture_name
from placeborag.explore._vectors import store_from_vectors

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _own_vectors_store():
    rng = np.random.default_rng(38)
    vectors = rng.normal(size=(8, 12))
    ids = [f"chunk-{i}" for i in range(8)]
    metas = [{"lang": "hu" if i % 2 else "en"} for i in range(8)]
    queries = {"the query": rng.normal(size=12)}
    return store_from_vectors(
        vectors, ids, [f"text {i}" for i in range(8)], metas, queries=queries, filter_mode="post"
    )


def _top_level_names(source: str) -> list[str]:
    """Every name the module binds at its top level, once per binding."""
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in node.names]
    return names


# -- the side recording, pinned whole ---------------------------------------------------------


def _tamper_dtype(manifest: dict) -> None:
    # The reinterpretation: the same bytes read as float32 at twice the dimension.
    del manifest["recording_sha256"]
    manifest["dtype"] = "float32"
    manifest["dimension"] *= 2


def _tamper_model(manifest: dict) -> None:
    del manifest["recording_sha256"]
    manifest["model"] = "another-model"


def _tamper_ids(manifest: dict) -> None:
    del manifest["recording_sha256"]
    manifest["documents"][0]["id"] = "someone-else"


def _tamper_texts(manifest: dict) -> None:
    # A text edited and its texts hash recomputed, as a careful forger would.
    from placeborag._replay import _texts_sha256

    del manifest["recording_sha256"]
    manifest["documents"][0]["text"] = "DOCUMENTS[99]"
    manifest["texts_sha256"] = _texts_sha256(
        [e["text"] for e in manifest["documents"]], [e["text"] for e in manifest["queries"]]
    )


@pytest.mark.parametrize("tamper", [_tamper_dtype, _tamper_model, _tamper_ids, _tamper_texts])
def test_a_tampered_side_recording_fails_the_exported_test_naming_the_hash(tamper, tmp_path):
    store = _own_vectors_store()
    export = build_export(store, "the query", 3, {"lang": "hu"}, prove=False)
    export.save(tmp_path / "test_own.py")
    assert run_pytest(tmp_path, "-W", "error", "test_own.py").returncode == 0
    manifest_path = tmp_path / "test_own.vectors" / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    tamper(manifest)
    manifest_path.write_text(json.dumps(manifest, sort_keys=True), encoding="utf-8")
    result = run_pytest(tmp_path, "test_own.py")
    assert result.returncode == 1, result.stdout
    assert "sha256" in result.stdout and "expected_sha256=" in result.stdout, result.stdout


def test_the_own_vectors_export_pins_the_recordings_full_hash(tmp_path):
    from placeborag import Recording

    store = _own_vectors_store()
    export = build_export(store, "the query", 3, {"lang": "hu"}, prove=False)
    export.save(tmp_path / "test_own.py")
    recording = Recording.load(tmp_path / "test_own.vectors")
    module = parse(export.source)
    assert module["RECORDING_SHA256"] == recording.sha256 != recording.vectors_sha256
    assert "Recording.load(VECTORS, expected_sha256=RECORDING_SHA256)" in export.source


@pytest.mark.parametrize("kind", ["native", "own vectors", "llama_index"])
def test_the_exported_test_runs_clean_under_filterwarnings_error(kind, tmp_path):
    if kind == "native":
        scenario = demo_scenario().replace(filter_mode="post")
        store, query, k, where = scenario.store(), scenario.query, 5, scenario.where
    elif kind == "own vectors":
        store, query, k, where = _own_vectors_store(), "the query", 3, {"lang": "hu"}
    else:
        store, query, k, where = _llama_store().store, "when does my parcel ship", 3, None
    build_export(store, query, k, where, prove=False).save(tmp_path / "test_clean.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\nfilterwarnings = error\n", encoding="utf-8")
    result = run_pytest(tmp_path, "-c", str(tmp_path / "pytest.ini"), "test_clean.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning" not in result.stdout.lower(), result.stdout


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["build", "Build!", "test", "Test store", "store", "pytest"])
def test_a_scenario_named_like_the_modules_own_names_exports_a_test_that_passes(name):
    scenario = demo_scenario().replace(filter_mode="post", name=name)
    export = build_export(scenario.store(), scenario.query, 5, scenario.where, name=name)
    assert export.proof.ok, export.verdict
    fixture = parse(export.source)["fixtures"][0]
    assert fixture != "build_store" and not fixture.startswith("test")


def test_the_fixture_name_is_cut_between_words():
    assert fixture_name("hnsw post filtering starves the top k") == "hnsw_post_filtering_store"
    assert fixture_name("demo: help desk") == "demo_help_desk_store"
    assert fixture_name("build") == "designed_build_store"
    assert fixture_name("日本") == "designed_store"


_SMALL = FakeVectorStore(filter_mode="post")
_SMALL.upsert_many(
    ["a", "b", "c", "d"],
    ["refund policy", "refund rules", "shipping", "refund policy again"],
    [{"lang": "hu"}, {"lang": "en"}, {"lang": "hu"}, {"lang": "en"}],
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.text(max_size=40) | st.sampled_from(["build", "Build!", "test_x", "store", "K"]))
def test_no_scenario_name_makes_a_name_that_collides_with_the_modules_own(name):
    for under_test in (None, "ragdemo.search:sources"):
        sys.path.insert(0, str(EXAMPLES))
        try:
            export = build_export(
                _SMALL,
                "refund policy",
                2,
                {"lang": "hu"},
                name=name,
                under_test=under_test,
                prove=False,
            )
        finally:
            sys.path.remove(str(EXAMPLES))
        names = _top_level_names(export.source)
        assert len(names) == len(set(names)), names
        fixture = parse(export.source)["fixtures"][0]
        assert fixture.isidentifier() and not keyword.iskeyword(fixture)
        assert fixture.isascii() and not fixture.startswith("test") and fixture != "build_store"
        if under_test is None:
            with tempfile.TemporaryDirectory() as folder:  # the tests pass as written
                run_in_process(export.source, None, pathlib.Path(folder))


# -- what the module says ---------------------------------------------------------------------


def test_the_docstring_says_what_the_test_pins_in_the_verdicts_words():
    scenario = demo_scenario().replace(filter_mode="post")
    export = build_export(scenario.store(), scenario.query, 5, scenario.where, name="demo")
    docstring = ast.get_docstring(ast.parse(export.source))
    assert docstring.startswith("This test fails if filter_mode is 'pre' (post-filter starvation).")
    assert export.verdict == "this test fails if filter_mode is 'pre' (post-filter starvation)"
    assert "len(matches) < K" not in export.source  # the list literal before it says more


def test_the_explorers_export_writes_the_module_build_export_writes():
    scenario = demo_scenario().replace(filter_mode="post", name="hnsw post filtering demo")
    explorer = app(scenario)
    source = explorer.export(prove=False)
    shown = explorer.scenario
    assert shown.metric == "cosine"  # given to the store, as the profile's own
    again = build_export(
        shown.store(), shown.query, shown.k, shown.where, name=shown.name, prove=False
    )
    assert source == again.source
    assert "metric=" not in source
    assert "def hnsw_post_filtering_demo_store():" in source


# -- adapters ---------------------------------------------------------------------------------

_SHIPPING = {
    "shipping.txt": ("Parcels ship within two days of the order.", "logistics"),
    "tracking.txt": ("A tracking number arrives by email once the parcel ships.", "logistics"),
    "customs.txt": ("Parcels to Norway wait for customs for up to a week.", "logistics"),
    "refunds.txt": ("Refunds are paid back to the original card within ten days.", "billing"),
    "invoices.txt": ("Invoices are sent when the parcel is dispatched.", "billing"),
}


def _llama_store(**options):
    """A LlamaIndex application's store: real Documents (uuid4 node ids) ingested through
    ``VectorStoreIndex`` into ``PlaceboLlamaVectorStore`` over a ``FakeEmbedder``."""
    llama = pytest.importorskip("llama_index.core")
    from placeborag.integrations.llama_index import PlaceboEmbedding, PlaceboLlamaVectorStore

    vector_store = PlaceboLlamaVectorStore(
        embedder=FakeEmbedder(
            clusters={"parcel": ["parcel", "ships", "ship"]}, cluster_match="substring"
        ),
        **options,
    )
    documents = [
        llama.Document(text=text, metadata={"file_name": name, "team": team})
        for name, (text, team) in _SHIPPING.items()
    ]
    llama.VectorStoreIndex.from_documents(
        documents,
        storage_context=llama.StorageContext.from_defaults(vector_store=vector_store),
        embed_model=PlaceboEmbedding(vector_store.store.embedder),
    )
    return vector_store


def test_a_llamaindex_store_over_a_fake_embedder_exports_node_texts_and_named_ids(tmp_path):
    first, second = _llama_store(filter_mode="post"), _llama_store(filter_mode="post")
    assert set(first.store.ids).isdisjoint(second.store.ids)  # new uuids on every ingestion
    exports = [
        build_export(
            vs.store, "when does my parcel ship", 3, {"team": "logistics"}, ids="file_name"
        )
        for vs in (first, second)
    ]
    export = exports[0]
    assert exports[1].source == export.source  # the same bytes after a re-ingestion
    assert export.vectors is None and "Recording" not in export.source
    module = parse(export.source)
    texts = {doc_id: text for doc_id, text, _ in module["DOCUMENTS"]}
    assert texts == {name: text for name, (text, _) in _SHIPPING.items() if name in texts}
    # What LlamaIndex embedded is the node's metadata header and its text: the header is kept.
    assert module["HEADERS"]["shipping.txt"] == "file_name: shipping.txt\nteam: logistics\n\n"
    assert "EMBEDDED" not in module
    assert all(set(meta) == {"team"} for _, _, meta in module["DOCUMENTS"])
    assert all(set(ids) <= set(_SHIPPING) for ids in module["expected"].values())
    assert export.proof.ok, export.verdict
    (tmp_path / "test_llama.py").write_text(export.source, encoding="utf-8")
    assert ruff_check(tmp_path).returncode == 0


def test_what_was_embedded_is_kept_whole_where_it_is_not_a_header_and_the_text():
    llama = pytest.importorskip("llama_index.core")
    from placeborag.integrations.llama_index import PlaceboEmbedding, PlaceboLlamaVectorStore

    vector_store = PlaceboLlamaVectorStore(embedder=FakeEmbedder())
    documents = [
        llama.Document(
            text=text,
            metadata={"file_name": name},
            text_template="{content}\n\n{metadata_str}",  # the text first, then the metadata
        )
        for name, (text, _) in _SHIPPING.items()
    ]
    llama.VectorStoreIndex.from_documents(
        documents,
        storage_context=llama.StorageContext.from_defaults(vector_store=vector_store),
        embed_model=PlaceboEmbedding(vector_store.store.embedder),
    )
    export = build_export(vector_store.store, "parcel", 2, ids="file_name")
    module = parse(export.source)
    assert "HEADERS" not in module and export.vectors is None
    assert module["EMBEDDED"]["shipping.txt"] == (
        _SHIPPING["shipping.txt"][0] + "\n\nfile_name: shipping.txt"
    )
    assert "EMBEDDED.get(doc_id, text)" in export.source
    assert export.proof.outcomes["as exported"] == "passed", export.verdict


def test_the_explorers_tables_show_a_nodes_own_text_and_what_was_embedded():
    store = _llama_store().store
    rows = store_rows(store)
    table = filter_mode_table(store.trace("when does my parcel ship", 3), rows)
    assert list(table.columns[3:6]) == ["text", "embedded", "metadata"]
    first = table.iloc[0]
    assert first["text"] in {text for text, _ in _SHIPPING.values()}
    assert first["embedded"].endswith("\n\n" + first["text"])
    assert "_node_content" not in first["metadata"]


def test_a_store_whose_vectors_no_fake_embedder_makes_is_exported_as_a_recording():
    llama = pytest.importorskip("llama_index.core")
    from placeborag.integrations.llama_index import PlaceboLlamaVectorStore

    vector_store = PlaceboLlamaVectorStore(embedder=FakeEmbedder(dimensions=4))
    rng = np.random.default_rng(7)
    nodes = [
        llama.schema.TextNode(text=f"note {i}", id_=f"n{i}", embedding=rng.normal(size=4).tolist())
        for i in range(4)
    ]
    vector_store.add(nodes)
    export = build_export(vector_store.store, "note 1", 2, prove=False)
    assert export.vectors is not None and "RECORDING_SHA256" in export.source


def test_a_langchain_store_exports_page_content_under_names_from_its_metadata():
    lc = pytest.importorskip("langchain_core.documents")
    from placeborag.integrations.langchain import PlaceboVectorStore

    vector_store = PlaceboVectorStore(FakeEmbedder(), filter_mode="post")
    rows = [
        ("faq.md", "refund policy: thirty days", "en"),
        ("faq.md", "refund policy for gift cards", "en"),
        ("hu.md", "visszatérítés harminc nap", "hu"),
        ("hu.md", "refund policy, in Hungarian", "hu"),
    ]
    documents = [lc.Document(page_content=t, metadata={"source": s, "lang": g}) for s, t, g in rows]
    vector_store.add_documents(documents, ids=[str(uuid.uuid4()) for _ in documents])
    export = build_export(vector_store.store, "refund policy", 2, {"lang": "hu"}, ids="source")
    module = parse(export.source)
    assert [(i, t) for i, t, _ in module["DOCUMENTS"]] == [
        ("faq.md#1", "refund policy: thirty days"),
        ("faq.md#2", "refund policy for gift cards"),
        ("hu.md#1", "visszatérítés harminc nap"),
        ("hu.md#2", "refund policy, in Hungarian"),
    ]
    assert "EMBEDDED" not in module and "HEADERS" not in module
    assert export.proof.ok, export.verdict


# -- ids= ---------------------------------------------------------------------------------------


def test_named_ids_reach_documents_the_asserted_lists_and_the_behaviours():
    scenario = demo_scenario().replace(filter_mode="post")
    store = scenario.store()
    names = {doc_id: doc_id.replace("-", "_").upper() for doc_id in store.ids}
    export = build_export(store, scenario.query, 5, scenario.where, ids=names)
    module = parse(export.source)
    assert [d[0] for d in module["DOCUMENTS"]] == [names[i] for i in export.ids]
    assert list(export.names) == [names[i] for i in export.ids]
    assert module["expected"]["test_post_filtering_starves_the_top_k"] == [
        "HU_REFUND_1",
        "HU_REFUND_4",
    ]
    assert '"HU_REFUND_2"' in export.source and '"hu-refund-2"' not in export.source
    assert export.proof.ok, export.verdict


def test_ids_that_would_name_two_documents_alike_are_refused():
    scenario = demo_scenario()
    store = scenario.store()
    with pytest.raises(PlaceboragValueError) as info:
        build_export(
            store,
            scenario.query,
            5,
            selection=["en-refund-1", "en-refund-2"],
            ids={"en-refund-1": "en-refund-2"},
            prove=False,
        )
    assert info.value.args == (
        "ids={'en-refund-1': 'en-refund-2'} names both 'en-refund-1' and 'en-refund-2' "
        "'en-refund-2'; every exported document needs a name of its own",
    )
    with pytest.raises(PlaceboragValueError, match=r"has file_name=None"):
        build_export(store, scenario.query, 5, ids="file_name", prove=False)
    with pytest.raises(PlaceboragTypeError, match=r"ids=3 must be None"):
        build_export(store, scenario.query, 5, ids=3, prove=False)


# -- the application under test ---------------------------------------------------------------


@pytest.fixture
def ragdemo_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))


def test_an_export_calls_the_applications_function_and_its_mutant_fails(ragdemo_on_path):
    from ragdemo.search import sources

    scenario = demo_scenario().replace(filter_mode="post")
    for under_test in ("ragdemo.search:sources", sources):
        export = build_export(
            scenario.store(),
            scenario.query,
            5,
            scenario.where,
            name=scenario.name,
            under_test=under_test,
        )
        assert "from ragdemo.search import sources\n" in export.source
        assert parse(export.source)["tests"] == ["test_sources_on_the_designed_store"]
        assert (
            '    assert sources(demo_help_desk_store, QUERY) == ["hu-refund-1", "hu-refund-4"]'
            in export.source
        )
        assert export.answer == ["hu-refund-1", "hu-refund-4"]
        assert export.proof.outcomes == {"as exported": "passed", "filter_mode='pre'": "failed"}
        assert export.verdict == "this test fails if filter_mode is 'pre' (post-filter starvation)"


def test_an_application_function_named_like_the_modules_own_is_imported_under_an_alias(
    tmp_path, monkeypatch
):
    (tmp_path / "clashing_app.py").write_text(
        "def build_store(store, question):\n"
        "    return [m.id for m in store.query(question, k=2)]\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    store = _SMALL
    export = build_export(store, "refund policy", 2, under_test="clashing_app:build_store")
    assert "from clashing_app import build_store as app_build_store\n" in export.source
    assert export.proof.outcomes["as exported"] == "passed", export.verdict


@pytest.mark.parametrize(
    ("under_test", "error", "message"),
    [
        ("ragdemo.search", PlaceboragValueError, "must be 'package.module:function'"),
        ("ragdemo.nowhere:sources", PlaceboragValueError, "cannot be imported"),
        ("ragdemo.search:nothing", PlaceboragValueError, "has no function 'nothing'"),
        ("ragdemo.search:SOURCES.x", PlaceboragValueError, "is not a function at the top"),
        ("os; import x:y", PlaceboragValueError, "must be a dotted name"),
        (lambda store, query: [], PlaceboragValueError, "is not a function at the top"),
        (3, PlaceboragTypeError, "must be None, 'package.module:function' or a function"),
    ],
)
def test_a_bad_under_test_is_refused_naming_it(ragdemo_on_path, under_test, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(".", r"\.")):
        build_export(_SMALL, "refund policy", 2, under_test=under_test, prove=False)


def test_an_application_function_must_return_what_a_test_can_compare(tmp_path, monkeypatch):
    (tmp_path / "matches_app.py").write_text(
        "def search(store, question):\n    return store.query(question, k=2)\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PlaceboragTypeError, match="must return a plain value"):
        build_export(_SMALL, "refund policy", 2, under_test="matches_app:search", prove=False)


def test_the_explorer_over_a_llamaindex_store_shows_node_texts_and_exports_named_ids():
    vector_store = _llama_store(filter_mode="post")
    explorer = app(store=vector_store.store, query="when does my parcel ship", k=3)
    explorer.select(list(vector_store.store.ids[:2]))
    frame = explorer.selected_frame
    assert list(frame.columns) == ["id", "text", "embedded", "metadata", "stage", "rank", "score"]
    row = frame.iloc[0].to_dict()
    assert row["text"] == _SHIPPING["shipping.txt"][0]
    assert row["embedded"] == "file_name: shipping.txt\nteam: logistics\n\n" + row["text"]
    assert row["metadata"] == {"file_name": "shipping.txt", "team": "logistics"}
    source = explorer.export(ids="file_name", prove=False)
    assert '"shipping.txt"' in source and "HEADERS = {" in source
    assert not any(node_id in source for node_id in vector_store.store.ids)
