"""``pytest --placeborag-audit``: the retrieval mutation audit, driven through pytester.

Each case is one a real application's suite showed: a verdict only from evidence (what the
test received changed under a mutation), ingestion judged by write-side mutations, the request
a test asserts on, strength, what a decorative test missed, repeatability (a control rerun,
random ids, leaked threads), and every path to the doubles agreeing (text, vector, adapters).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# pytester unloads the modules an inner run imported first; numpy cannot load twice in one
# process, so numpy, the core and the adapters are loaded here, before any inner run.
import numpy  # noqa: F401
import pytest

import placeborag
from placeborag import _audit, _mutations, _recorder, _seams  # noqa: F401  (loaded once)

for _name in placeborag.__all__:
    getattr(placeborag, _name)
for _adapter in ("langchain", "llama_index", "haystack"):
    with contextlib.suppress(ImportError):
        __import__(f"placeborag.integrations.{_adapter}")

STORE_MUTATIONS = [m.name for m in _mutations.store_mutations()]

KNOWLEDGE_BASE = """
DOCS = [
    ("refund", "our refund policy allows returns within 30 days", "en"),
    ("shipping", "delivery times to remote islands", "en"),
    ("warranty", "the warranty covers water damage", "en"),
    ("hu-refund", "pénzvisszatérítési szabályzat harminc napon belül", "hu"),
]

def fill(store):
    for doc_id, text, lang in DOCS:
        store.upsert(doc_id, text, metadata={"lang": lang})
    return store
"""

DECORATIVE_AND_REAL = (
    KNOWLEDGE_BASE
    + """
def test_the_pipeline_ran(fake_vector_store):
    matches = fill(fake_vector_store).query("refund policy", k=2)
    assert all(isinstance(m.id, str) for m in matches)

def test_the_refund_document_leads(fake_vector_store):
    matches = fill(fake_vector_store).query("refund policy", k=2)
    assert matches[0].id == "refund"
    assert len(matches) == 2

def test_nothing_retrieval():
    assert sorted([2, 1]) == [1, 2]
"""
)


@pytest.fixture
def pytester(pytester):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    return pytester


def audit(pytester, *args):
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--placeborag-audit-json", "audit.json", *args
    )
    return result, json.loads((pytester.path / "audit.json").read_text(encoding="utf-8"))


def by_test(document):
    return {test["nodeid"].split("::")[-1]: test for test in document["tests"]}


def ran(test):
    return test["caught"] + test["weak"] + test["survived"]


def test_the_audit_names_the_decorative_test_and_credits_the_real_one(pytester):
    pytester.makepyfile(test_rag=DECORATIVE_AND_REAL)

    result, document = audit(pytester, "--placeborag-audit")

    result.assert_outcomes(passed=3)  # the session's outcome is the usual one
    tests = by_test(document)
    assert set(tests) == {"test_the_pipeline_ran", "test_the_refund_document_leads"}
    decorative = tests["test_the_pipeline_ran"]
    assert decorative["verdict"] == "decorative"
    assert decorative["caught"] == decorative["weak"] == []
    assert decorative["survived"] == [
        "shape-only",
        "reversed",
        "query-changed",
        "k-dropped",
        "stale-reads",
        "metadata-key-lost",
    ]
    real = tests["test_the_refund_document_leads"]
    assert real["verdict"] == "real"
    assert real["caught"] == ["shape-only", "reversed", "k-dropped"]
    assert real["weak"] == ["stale-reads"]  # an empty answer fails it too, but weakly
    assert real["score"] == [4, 6]
    assert document["summary"] == {
        "tests": 2,
        "real": 1,
        "weak": 0,
        "decorative": 1,
        "blind": 0,
        "no_mutation_applies": 0,
        "not_repeatable": 0,
        "not_audited": 0,
        "untouched": 1,
    }
    result.stdout.fnmatch_lines(
        [
            "*placeborag audit: retrieval mutations*",
            "SH RV QC FD FC KD TF RL SR WL DI MK  score  verdict *test",
            " .  .  .  -  -  .  -  -  .  -  -  .  0/6    DECORATIVE *test_rag.py::test_the_pipeline_ran",
            " x  x  .  -  -  x  -  -  w  -  -  .  4/6    real *test_rag.py::test_the_refund_document_leads",
            "2 test(s) audited: 1 real, 0 weak, 1 decorative, 0 blind, *; 1 touched no double "
            "and no retrieval seam.",
            "DECORATIVE: test_rag.py::test_the_pipeline_ran",
            "  missed shape-only (*)",
            "    query 'refund policy', k=2 at test_rag.py:14",
            "    usual: [[]'refund', 'warranty']   under it: *",
            "    try: assert *m.id for m in store.query('refund policy', k=2)* == *'refund', 'warranty'*",
        ]
    )


def test_a_mutation_that_changes_nothing_the_test_received_is_no_evidence(pytester):
    # A filter that leaves one document: no ranking mutation can change which one comes back,
    # and only the scores move under shape-only; the test is not decorative for it.
    pytester.makepyfile(
        test_one=KNOWLEDGE_BASE
        + """
def test_the_hungarian_document(fake_vector_store):
    matches = fill(fake_vector_store).query("refund policy", k=1, where={"lang": "hu"})
    assert [m.id for m in matches] == ["hu-refund"]
"""
    )

    _, document = audit(pytester)

    test = by_test(document)["test_the_hungarian_document"]
    assert test["skipped"]["shape-only"] == "no query's answer changes under it"
    assert test["skipped"]["reversed"] == "no query's answer changes under it"
    assert test["verdict"] == "real"
    assert "filter-dropped" in test["caught"]


@pytest.mark.parametrize(
    "how",
    [
        "store.query('refund policy', k=2)",
        "store.query_by_vector(embedder.embed('refund policy'), k=2)",
        "store.query_by_vector(embedder.embed_array(['refund policy'])[0], k=2)",
    ],
)
def test_by_text_and_by_vector_agree(pytester, how):
    pytester.makepyfile(
        test_path=KNOWLEDGE_BASE
        + f"""
from placeborag import FakeEmbedder, FakeVectorStore

def test_only_types():
    embedder = FakeEmbedder()
    store = fill(FakeVectorStore(embedder=embedder))
    assert all(isinstance(m.id, str) for m in {how})

def test_the_refund_leads():
    embedder = FakeEmbedder()
    store = fill(FakeVectorStore(embedder=embedder))
    assert [m.id for m in {how}][:1] == ["refund"]
"""
    )

    _, document = audit(pytester)

    tests = by_test(document)
    assert tests["test_only_types"]["verdict"] == "decorative"
    assert tests["test_only_types"]["survived"] == [
        "shape-only",
        "reversed",
        "query-changed",
        "k-dropped",
        "stale-reads",
        "metadata-key-lost",
    ]
    assert tests["test_the_refund_leads"]["verdict"] == "real"
    assert tests["test_the_refund_leads"]["caught"] == ["shape-only", "reversed"]


def test_an_ingestion_test_asserting_its_chunk_count_is_caught(pytester):
    pytester.makepyfile(
        test_ingest=KNOWLEDGE_BASE
        + """
def ingest(store, docs):
    store.upsert_many([d for d, _, _ in docs], [t for _, t, _ in docs],
                      [{"lang": lang} for _, _, lang in docs])

def test_every_chunk_is_stored(fake_vector_store):
    ingest(fake_vector_store, DOCS)
    assert len(fake_vector_store) == 4

def test_ingestion_runs(fake_vector_store):
    ingest(fake_vector_store, DOCS)

def test_a_removed_document_is_gone(fake_vector_store):
    ingest(fake_vector_store, DOCS)
    fake_vector_store.delete("shipping")
    assert "shipping" not in fake_vector_store

def test_the_language_is_kept(fake_vector_store):
    ingest(fake_vector_store, DOCS)
    assert fake_vector_store.get("hu-refund").metadata == {"lang": "hu"}
"""
    )

    _, document = audit(pytester)

    tests = by_test(document)
    count = tests["test_every_chunk_is_stored"]
    assert (count["verdict"], count["caught"]) == ("real", ["write-lost"])
    assert count["skipped"]["delete-ignored"] == "never deleted a record"
    # Written and never read: no mutation reaches it.
    runs = tests["test_ingestion_runs"]
    assert runs["verdict"] == "no mutation applies"
    assert runs["skipped"]["write-lost"] == "never read a store"
    removed = tests["test_a_removed_document_is_gone"]
    assert (removed["verdict"], removed["caught"]) == ("real", ["delete-ignored"])
    kept = tests["test_the_language_is_kept"]
    assert (kept["verdict"], kept["caught"]) == ("real", ["metadata-key-lost"])


def test_a_test_asserting_what_the_store_was_sent_catches_the_request_mutations(pytester):
    # The test that alone caught "the tenant filter was deleted" in a real suite.
    pytester.makepyfile(
        test_sent=KNOWLEDGE_BASE
        + """
def search(store, question, tenant):
    return store.query(question, k=3, where={"lang": tenant})

def test_the_tenant_filter_is_sent(fake_vector_store):
    search(fill(fake_vector_store), "refund policy", "hu")
    assert fake_vector_store.last_query.where == {"lang": "hu"}

def test_k_is_sent(fake_vector_store):
    search(fill(fake_vector_store), "refund policy", "en")
    assert fake_vector_store.last_query.k == 3

def test_the_question_is_sent(fake_vector_store):
    search(fill(fake_vector_store), "refund policy", "en")
    assert fake_vector_store.queries[-1].text == "refund policy"
"""
    )

    _, document = audit(pytester)

    tests = by_test(document)
    assert "filter-dropped" in tests["test_the_tenant_filter_is_sent"]["caught"]
    assert "k-dropped" in tests["test_k_is_sent"]["caught"]
    assert "query-changed" in tests["test_the_question_is_sent"]["caught"]
    for test in tests.values():
        assert test["verdict"] == "real"


def test_the_store_log_shows_what_a_request_mutation_sent(pytester, monkeypatch):
    # Under a request-side mutation the log records what the store received, so a test that
    # prints the log sees the mutated request: "the filter never reached the store".
    pytester.makepyfile(
        test_log=KNOWLEDGE_BASE
        + """
import json, os

def test_logs(fake_vector_store):
    fill(fake_vector_store).query("refund policy", k=2, where={"lang": "hu"})
    record = fake_vector_store.last_query
    line = json.dumps([record.text, record.k, record.where])
    with open(os.environ["LOG_PATH"], "a", encoding="utf-8") as out:
        out.write(line + "\\n")
"""
    )
    log = pytester.path / "log.txt"
    monkeypatch.setenv("LOG_PATH", str(log))

    audit(pytester)

    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines[0] == lines[1] == '["refund policy", 2, {"lang": "hu"}]'  # usual, control
    assert '["refund policy", 2, null]' in lines  # filter-dropped: where=None arrived
    assert '["refund policy", 10, {"lang": "hu"}]' in lines  # k-dropped: the default k
    assert f'["{_mutations.OTHER_QUESTION}", 2, {{"lang": "hu"}}]' in lines


def test_a_test_that_only_checks_for_a_non_empty_answer_is_weak(pytester):
    pytester.makepyfile(
        test_weak=KNOWLEDGE_BASE
        + """
def test_something_comes_back(fake_vector_store):
    assert fill(fake_vector_store).query("refund policy", k=2)
"""
    )

    result, document = audit(pytester)

    test = by_test(document)["test_something_comes_back"]
    assert test["verdict"] == "weak"
    assert test["caught"] == []
    assert test["weak"] == ["stale-reads"]
    assert "reversed" in test["survived"]
    result.stdout.fnmatch_lines(
        [
            "weak: test_weak.py::test_something_comes_back",
            "  it notices only an emptied or shortened answer (stale-reads), not which "
            "documents come back",
        ]
    )


def test_a_test_that_counts_its_own_runs_is_not_repeatable_and_credited_nothing(pytester):
    pytester.makepyfile(
        test_counts=KNOWLEDGE_BASE
        + """
RUNS = []

def test_first_run_only(fake_vector_store):
    RUNS.append(1)
    fill(fake_vector_store).query("refund policy", k=2)
    assert len(RUNS) == 1
"""
    )

    result, document = audit(pytester)

    result.assert_outcomes(passed=1)
    test = by_test(document)["test_first_run_only"]
    assert test["verdict"] == "not repeatable"
    assert test["caught"] == test["weak"] == test["survived"] == []
    assert "when run again with nothing changed" in test["note"]


def test_a_thread_a_test_leaves_running_is_charged_to_no_later_test(pytester):
    pytester.makepyfile(
        test_audit_leaked_threads=KNOWLEDGE_BASE
        + """
import threading, time
from placeborag import FakeVectorStore

STARTED = threading.Event()

def test_leaves_a_thread():
    store = fill(FakeVectorStore())
    def keep_querying():
        STARTED.set()
        for _ in range(400):
            store.query("refund policy", k=1)
            time.sleep(0.002)
    threading.Thread(target=keep_querying, daemon=True).start()
    STARTED.wait()

def test_touches_nothing():
    time.sleep(0.2)
    assert True
"""
    )

    result, document = audit(pytester, "--placeborag-audit-strict")

    assert result.ret == pytest.ExitCode.OK  # no decorative test: the session stays green
    assert "test_touches_nothing" not in by_test(document)
    assert document["summary"]["untouched"] == 1


def test_ids_drawn_at_random_give_the_same_report_bytes(pytester):
    pytester.makepyfile(
        test_uuid=KNOWLEDGE_BASE
        + """
import uuid

def ingest(store):
    for _, text, lang in DOCS:
        store.upsert(str(uuid.uuid4()), text, metadata={"lang": lang, "file_name": lang + text[:5]})
    return store

def test_two_come_back(fake_vector_store):
    assert len(ingest(fake_vector_store).query("refund policy", k=2)) == 2

def test_lossy_index(fake_vector_store):
    ingest(fake_vector_store)
    assert len(fake_vector_store.query("refund policy", k=3, where={"lang": "en"})) == 3
"""
    )

    first = None
    for _ in range(3):
        audit(pytester)
        data = (pytester.path / "audit.json").read_bytes()
        first = first or data
        assert data == first
    tests = by_test(json.loads(first))
    two = tests["test_two_come_back"]
    assert two["verdict"] == "real"
    (missed,) = [m for m in two["missed"] if m["mutation"] == "reversed"]
    assert missed["usual"] == ["<file_name='enour r'>", "<file_name='enthe w'>"]
    assert missed["suggest"].startswith(
        "assert [m.metadata['file_name'] for m in matches] == ['enour r', 'enthe w']"
    )


def test_a_test_that_fails_as_usual_is_not_audited_and_still_fails(pytester):
    pytester.makepyfile(
        test_fails=KNOWLEDGE_BASE
        + """
def test_wrong(fake_vector_store):
    assert fill(fake_vector_store).query("refund policy", k=1)[0].id == "shipping"
"""
    )

    result, document = audit(pytester)

    result.assert_outcomes(failed=1)
    assert by_test(document)["test_wrong"]["verdict"] == "not audited"
    assert by_test(document)["test_wrong"]["baseline"] == "failed"


def test_strict_mode_fails_the_session_on_a_decorative_test_and_only_then(pytester):
    pytester.makepyfile(test_rag=DECORATIVE_AND_REAL)

    plain = pytester.runpytest("-p", "no:cacheprovider", "--placeborag-audit")
    strict = pytester.runpytest("-p", "no:cacheprovider", "--placeborag-audit-strict")

    assert plain.ret == pytest.ExitCode.OK
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.stdout.fnmatch_lines(["*the session fails: 1 decorative or blind test(s)*"])
    real_only = pytester.runpytest(
        "-p", "no:cacheprovider", "--placeborag-audit-strict", "-k", "leads"
    )
    assert real_only.ret == pytest.ExitCode.OK


def test_the_json_report_has_a_stable_schema_and_the_same_bytes_on_every_run(pytester):
    pytester.makepyfile(test_rag=DECORATIVE_AND_REAL)

    _, document = audit(pytester)
    first = (pytester.path / "audit.json").read_bytes()
    audit(pytester, "-p", "xdist", "-n", "2")

    assert (pytester.path / "audit.json").read_bytes() == first  # also under xdist
    assert sorted(document) == ["format", "mutations", "summary", "tests", "version"]
    assert (document["format"], document["version"]) == ("placeborag-audit", 2)
    assert list(document["mutations"]) == sorted(m.name for m in _mutations.MUTATIONS)
    for name, record in document["mutations"].items():
        assert sorted(record) == ["code", "does", "log", "side", "stands_for"]
        assert record["code"] == _mutations.by_name(name).code
    for test in document["tests"]:
        assert sorted(test) == [
            "baseline",
            "caught",
            "doubles",
            "missed",
            "nodeid",
            "note",
            "score",
            "seam",
            "skipped",
            "survived",
            "verdict",
            "weak",
        ]
        assert test["score"] == [len(test["caught"]) + len(test["weak"]), len(ran(test))]
        assert set(ran(test)).isdisjoint(test["skipped"])
        assert sorted(ran(test) + list(test["skipped"])) == sorted(STORE_MUTATIONS)
        assert [m["mutation"] for m in test["missed"]] == test["survived"]
    assert [t["nodeid"] for t in document["tests"]] == sorted(
        t["nodeid"] for t in document["tests"]
    )


def test_the_html_page_escapes_every_test_name_and_loads_nothing(pytester):
    pytester.makepyfile(
        test_html=KNOWLEDGE_BASE
        + """
import pytest

@pytest.mark.parametrize("case", ["<script>alert(1)</script>"])
def test_named(fake_vector_store, case):
    assert fill(fake_vector_store).query("refund policy", k=1)[0].id == "refund"
"""
    )

    pytester.runpytest("-p", "no:cacheprovider", "--placeborag-audit-html", "audit.html")

    page = (pytester.path / "audit.html").read_text(encoding="utf-8")
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "src=" not in page and "href=" not in page


def test_a_test_that_builds_the_langchain_adapter_itself_is_audited_also_under_xdist(pytester):
    pytest.importorskip("langchain_core")
    pytester.makepyfile(
        test_lc="""
from placeborag.integrations.langchain import PlaceboEmbeddings, PlaceboVectorStore

TEXTS = [
    "our refund policy allows returns within 30 days",
    "delivery times to remote islands",
    "the warranty covers water damage",
]

def knowledge_base():
    store = PlaceboVectorStore(PlaceboEmbeddings())
    store.add_texts(TEXTS, [{"lang": "en"}] * 3, ids=["refund", "shipping", "warranty"])
    return store

def test_the_retriever_returns_documents():
    found = knowledge_base().as_retriever(search_kwargs={"k": 2}).invoke("refund policy")
    assert all(document.page_content for document in found)

def test_the_retriever_finds_the_refund_policy():
    found = knowledge_base().as_retriever(search_kwargs={"k": 2}).invoke("refund policy")
    assert [d.id for d in found][:1] == ["refund"]
"""
    )

    for args in ((), ("-p", "xdist", "-n", "2")):
        result, document = audit(pytester, *args)
        result.assert_outcomes(passed=2)
        tests = by_test(document)
        assert tests["test_the_retriever_returns_documents"]["verdict"] == "decorative"
        found = tests["test_the_retriever_finds_the_refund_policy"]
        assert found["verdict"] == "real"
        assert found["caught"] == ["shape-only", "reversed"]
        assert found["weak"] == ["stale-reads"]
        assert found["survived"] == ["query-changed", "k-dropped", "metadata-key-lost"]
        assert found["doubles"] == ["FakeEmbedder", "FakeVectorStore"]


def test_a_llama_index_retriever_is_audited_the_same_way(pytester):
    pytest.importorskip("llama_index.core")
    pytester.makepyfile(
        test_llama="""
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.schema import TextNode
from placeborag.integrations.llama_index import PlaceboEmbedding, PlaceboLlamaVectorStore

ROWS = [
    ("refund", "our refund policy allows returns within 30 days"),
    ("shipping", "delivery times to remote islands"),
    ("warranty", "the warranty covers water damage"),
]

def test_the_refund_policy_comes_first():
    vector_store = PlaceboLlamaVectorStore()
    index = VectorStoreIndex(
        [TextNode(id_=i, text=t) for i, t in ROWS],
        storage_context=StorageContext.from_defaults(vector_store=vector_store),
        embed_model=PlaceboEmbedding(vector_store.store.embedder),
    )
    found = index.as_retriever(similarity_top_k=2).retrieve("refund policy")
    assert [item.node.node_id for item in found][0] == "refund"
"""
    )

    result, document = audit(pytester)

    result.assert_outcomes(passed=1)
    test = by_test(document)["test_the_refund_policy_comes_first"]
    assert test["verdict"] == "real"
    assert {"shape-only", "reversed"} <= set(test["caught"])


def test_the_audit_refuses_pdb_which_would_stop_at_every_caught_mutation(pytester):
    pytester.makepyfile(test_rag=DECORATIVE_AND_REAL)

    result = pytester.runpytest("-p", "no:cacheprovider", "--placeborag-audit", "--pdb")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--placeborag-audit cannot run with --pdb: every mutation*"])


def test_a_haystack_document_store_the_test_builds_is_audited_the_same_way(pytester):
    pytest.importorskip("haystack")
    import placeborag.integrations.haystack  # noqa: F401  (loaded before the inner run)

    pytester.makepyfile(
        test_haystack_kb="""
from haystack import Document
from placeborag.integrations.haystack import (
    PlaceboDocumentEmbedder,
    PlaceboDocumentStore,
    PlaceboTextEmbedder,
)

ROWS = {
    "refund": "our refund policy allows returns within 30 days",
    "shipping": "delivery times to remote islands",
    "warranty": "the warranty covers water damage",
}

def retrieve(text):
    store = PlaceboDocumentStore()
    documents = [Document(id=i, content=t) for i, t in ROWS.items()]
    store.write_documents(PlaceboDocumentEmbedder(store.embedder).run(documents)["documents"])
    vector = PlaceboTextEmbedder(store.embedder).run(text)["embedding"]
    return store.embedding_retrieval(vector, top_k=2)

def test_the_retrieval_returns_documents():
    assert all(document.content for document in retrieve("refund policy"))

def test_the_refund_policy_comes_first():
    assert [document.id for document in retrieve("refund policy")][0] == "refund"
"""
    )

    result, document = audit(pytester)

    result.assert_outcomes(passed=2)
    tests = by_test(document)
    assert tests["test_the_retrieval_returns_documents"]["verdict"] == "decorative"
    found = tests["test_the_refund_policy_comes_first"]
    assert found["verdict"] == "real"
    assert "reversed" in found["caught"]
    assert "FakeVectorStore" in found["doubles"]


def test_the_docs_describe_every_mutation_as_its_record_does():
    page = (Path(__file__).resolve().parent.parent / "docs" / "decorative.md").read_text(
        encoding="utf-8"
    )
    for m in _mutations.MUTATIONS:
        row = f"| `{m.name}` | {m.code} | {m.side} | {m.stands_for} | {m.does} | {m.log} |"
        assert row in page, m.name


def test_the_worked_example_shows_one_test_of_each_verdict():
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as out:
        path = Path(out, "audit.json")
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "examples/verdicts",
                f"--placeborag-audit-json={path}",
            ],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PYTHONPATH": str(root)},
        )
        assert done.returncode == 0, done.stdout[-2000:]
        document = json.loads(path.read_text(encoding="utf-8"))
    verdicts = {t["nodeid"].rsplit("::", 1)[1]: t["verdict"] for t in document["tests"]}
    assert verdicts == {
        "test_real_cites_the_refund_article": "real",
        "test_weak_finds_something": "weak",
        "test_decorative_replies_with_text": "decorative",
        "test_blind_with_a_mock_retriever": "blind",
        "test_no_mutation_applies_to_ingestion_alone": "no mutation applies",
        "test_not_repeatable_counts_on_a_cold_cache": "not repeatable",
        "test_not_audited_a_known_bug": "not audited",
    }
