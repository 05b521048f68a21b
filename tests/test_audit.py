"""``pytest --placeborag-audit``: the retrieval mutation audit, driven through pytester."""

from __future__ import annotations

import contextlib
import json

# pytester unloads the modules an inner run imported first; numpy cannot load twice in one
# process, so numpy, the core and the adapters are loaded here, before any inner run.
import numpy  # noqa: F401
import pytest

import placeborag

for _name in placeborag.__all__:
    getattr(placeborag, _name)
for _adapter in ("langchain", "llama_index"):
    with contextlib.suppress(ImportError):
        __import__(f"placeborag.integrations.{_adapter}")

# Every mutation, in the order the audit runs them.
MUTATIONS = (
    "shape-only",
    "reversed",
    "filter-ignored",
    "filter-after-cut",
    "k-ignored",
    "ties-flipped",
    "recall-lost",
    "stale-reads",
)

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


def test_the_audit_names_the_decorative_test_and_credits_the_real_one(pytester):
    pytester.makepyfile(test_rag=DECORATIVE_AND_REAL)

    result, document = audit(pytester, "--placeborag-audit")

    result.assert_outcomes(passed=3)  # the session's outcome is the usual one
    tests = by_test(document)
    assert set(tests) == {"test_the_pipeline_ran", "test_the_refund_document_leads"}
    decorative = tests["test_the_pipeline_ran"]
    assert decorative["verdict"] == "decorative"
    assert decorative["caught"] == []
    assert decorative["survived"] == [
        "shape-only",
        "reversed",
        "k-ignored",
        "recall-lost",
        "stale-reads",
    ]
    real = tests["test_the_refund_document_leads"]
    assert real["verdict"] == "real"
    assert real["caught"] == ["shape-only", "reversed", "k-ignored", "stale-reads"]
    assert real["survived"] == ["recall-lost"]  # the best document survives a lossy index
    assert real["score"] == [4, 5]
    assert document["summary"] == {
        "tests": 2,
        "real": 1,
        "decorative": 1,
        "no_mutation_applies": 0,
        "not_audited": 0,
        "untouched": 1,
    }
    result.stdout.fnmatch_lines(
        [
            "*placeborag audit: retrieval mutations*",
            "SH RV FI FC KI TF RL SR  score  verdict *test",
            " .  .  -  -  .  -  .  .  0/5    DECORATIVE *test_rag.py::test_the_pipeline_ran",
            " x  x  -  -  x  -  .  x  4/5    real *test_rag.py::test_the_refund_document_leads",
            "2 test(s) touched a placeborag double: 1 real, 1 decorative, *; 1 touched no "
            "embedder, vector store or scorer.",
            "Decorative (survive every mutation they ran under):",
            "  test_rag.py::test_the_pipeline_ran",
        ]
    )


def test_mutations_that_cannot_change_an_answer_are_skipped_with_the_reason(pytester):
    pytester.makepyfile(
        test_skips=KNOWLEDGE_BASE
        + """
def test_never_queries(fake_vector_store):
    fill(fake_vector_store)
    assert len(fake_vector_store) == 4

def test_only_scores():
    from placeborag import ScriptedScorer

    scorer = ScriptedScorer.scoring(lambda text: 0.9 if "refund" in text else 0.1)
    scores = scorer.score("refund policy", ["refund policy", "delivery"]).scores
    assert scores[0] > scores[1]

def test_filters_once(fake_vector_store):
    matches = fill(fake_vector_store).query("refund policy", k=1, where={"lang": "hu"})
    assert [m.id for m in matches] == ["hu-refund"]
"""
    )

    result, document = audit(pytester)

    result.assert_outcomes(passed=3)
    tests = by_test(document)
    scorer = tests["test_only_scores"]  # a scorer is a double no mutation changes
    assert (scorer["verdict"], scorer["doubles"]) == ("no mutation applies", ["ScriptedScorer"])
    never = tests["test_never_queries"]
    assert never["verdict"] == "no mutation applies"
    assert never["skipped"] == {
        "shape-only": "never embedded a text or queried a store",
        **{name: "never queried a store" for name in MUTATIONS[1:]},
    }
    filtered = tests["test_filters_once"]
    # One Hungarian document: k ignored, reversed, ties and lost recall change nothing here.
    assert filtered["skipped"] == {
        "k-ignored": "no query's answer changes under it",
        "reversed": "no query's answer changes under it",
        "ties-flipped": "no tie reached an answer",
    }
    assert filtered["caught"] == [
        "filter-ignored",
        "filter-after-cut",
        "recall-lost",
        "stale-reads",
    ]
    assert filtered["survived"] == ["shape-only"]  # the only Hungarian document, other score


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
    real_only = pytester.runpytest(
        "-p", "no:cacheprovider", "--placeborag-audit-strict", "-k", "not pipeline_ran"
    )

    assert plain.ret == pytest.ExitCode.OK
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.assert_outcomes(passed=3)
    strict.stdout.fnmatch_lines(
        ["--placeborag-audit-strict: the session fails: 1 decorative test(s)"]
    )
    assert real_only.ret == pytest.ExitCode.OK


def test_the_json_report_has_a_stable_schema_and_the_same_bytes_on_every_run(pytester):
    pytester.makepyfile(test_rag=DECORATIVE_AND_REAL)

    audit(pytester)
    first = (pytester.path / "audit.json").read_bytes()
    _, document = audit(pytester, "-p", "xdist", "-n", "2")

    assert (pytester.path / "audit.json").read_bytes() == first  # also under xdist
    assert sorted(document) == ["format", "mutations", "summary", "tests", "version"]
    assert (document["format"], document["version"]) == ("placeborag-audit", 1)
    assert list(document["mutations"]) == sorted(MUTATIONS)
    for test in document["tests"]:
        assert sorted(test) == [
            "baseline",
            "caught",
            "doubles",
            "nodeid",
            "score",
            "skipped",
            "survived",
            "verdict",
        ]
        assert test["verdict"] in {"real", "decorative", "no mutation applies", "not audited"}
        ran = test["caught"] + test["survived"]
        assert test["score"] == [len(test["caught"]), len(ran)]
        assert set(ran).isdisjoint(test["skipped"])
        assert sorted(ran + list(test["skipped"])) == sorted(document["mutations"])
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
        assert found["caught"] == ["shape-only", "reversed", "stale-reads"]
        assert found["survived"] == ["k-ignored", "recall-lost"]
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
